//! The echo server protocol: whatever arrives goes back unchanged.

use crate::server::handler::{Handler, HandlerFactory, Reply};

pub struct EchoHandler;

impl Handler for EchoHandler {
    #[inline]
    fn on_bytes(&mut self, _input: &[u8], _out: &mut Vec<u8>) -> Reply {
        // Echo writes straight from the read buffer: no copy at all.
        Reply::EchoInput
    }
}

pub struct EchoHandlerFactory;

impl HandlerFactory for EchoHandlerFactory {
    type Handler = EchoHandler;

    fn handler(&self) -> EchoHandler {
        EchoHandler
    }
}
