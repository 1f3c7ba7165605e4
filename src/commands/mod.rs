//! One module per command; each validates its flags, runs, and reports.

pub mod amqp;
pub mod amqp_config;
pub mod echo;
pub mod ioevent;
pub mod load;
pub mod serve;
