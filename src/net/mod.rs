//! Addresses, listeners, socket options and TLS configurations.

pub mod addr;
pub mod alpn_probe;
pub mod connect_to;
pub mod epoll;
pub mod free_port;
pub mod listen;
pub mod loopback;
pub mod proxy;
pub mod range;
pub mod socket;
pub mod tls;
pub mod tls_words;
pub mod unix;
