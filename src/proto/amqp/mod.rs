//! AMQP 0-9-1: framing over the amq-protocol crate (codec), the publisher the engine
//! drives (client, one lane per channel), its confirm bookkeeping (confirms), the
//! dummy broker (server) and target URLs (url).

pub mod client;
pub mod client_figures;
pub mod codec;
pub mod config;
pub mod confirms;
pub mod figures;
pub mod figures_merge;
pub mod plugin;
pub mod server;
pub mod url;

#[cfg(test)]
mod conversation_tests;
#[cfg(test)]
mod frame_max_tests;
#[cfg(test)]
mod lane_tests;
