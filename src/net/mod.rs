//! Addresses, listeners, socket options and TLS configurations.

pub mod addr;
pub mod listen;
pub mod range;
pub mod tls;
