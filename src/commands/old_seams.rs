//! Transition only: `engine::run` and the server runtime on main still take the old
//! seams (`ProtocolFactory`, `HandlerFactory`) while protocols are given to the
//! commands on the new ones (`SessionFactory`, `ServerFactory`) through the adapters
//! `engine::legacy::LegacyFactory` and `server::session::LegacyHandlerFactory`. These
//! two traits unwrap an adapter back for the runtime that still wants the old seam.
//! Deleted with the adapters, once the engine and the server runtime drive sessions:
//! then `run_load.rs` and `serve.rs` pass the factories straight through.

use crate::engine::legacy::LegacyFactory;
use crate::engine::protocol::ProtocolFactory;
use crate::engine::session::SessionFactory;
use crate::server::handler::HandlerFactory;
use crate::server::session::{LegacyHandlerFactory, ServerFactory};

/// A client factory the current engine can run.
pub trait OnOldEngine: SessionFactory {
    type Old: ProtocolFactory;
    fn into_old(self) -> Self::Old;
}

impl<F: ProtocolFactory> OnOldEngine for LegacyFactory<F> {
    type Old = F;
    fn into_old(self) -> F {
        self.0
    }
}

/// A server factory the current server runtime can run.
pub trait OnOldServer: ServerFactory {
    type Old: HandlerFactory;
    fn into_old(self) -> Self::Old;
}

impl<F: HandlerFactory> OnOldServer for LegacyHandlerFactory<F> {
    type Old = F;
    fn into_old(self) -> F {
        self.0
    }
}
