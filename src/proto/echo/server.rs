//! The echo server protocol: whatever arrives goes back unchanged.

use crate::server::session::{Reply, ServerFactory, ServerSession};

pub struct EchoSession;

impl ServerSession for EchoSession {
    type Figures = ();

    #[inline]
    fn on_bytes(&mut self, input: &[u8], _out: &mut Vec<u8>, _figures: &mut ()) -> Reply {
        // The reply is the input itself: written from where it was read, no copy.
        Reply::Reflect(input.len())
    }
}

pub struct EchoHandlerFactory;

impl ServerFactory for EchoHandlerFactory {
    type Session = EchoSession;
    type Thread = ();

    fn thread_state(&self) {}

    fn session(&self) -> EchoSession {
        EchoSession
    }
}
