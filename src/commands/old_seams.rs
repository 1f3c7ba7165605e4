//! Transition only: `engine::run` still takes the old seam (`ProtocolFactory`) while
//! protocols are given to the commands on the new one (`SessionFactory`) through the
//! adapter `engine::legacy::LegacyFactory`; this trait unwraps it back. Deleted with
//! the adapter, once the engine drives sessions.

use crate::engine::legacy::LegacyFactory;
use crate::engine::protocol::ProtocolFactory;
use crate::engine::session::SessionFactory;

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
