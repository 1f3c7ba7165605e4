//! Protocols: each owns its bytes (codec, client state, server handler), nothing else.

pub mod amqp;
pub mod echo;
pub mod http;
