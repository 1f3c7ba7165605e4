//! The event-loop backends `wirebench ioevent` can run (`--backend`), and how each
//! is made. Its own file so that the config reads it without importing `mod.rs`.

use super::method::{Backend, Pairs};
use super::{epoll, poll, tokio_backend, uring};

/// One event-loop backend of the benchmark.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackendKind {
    Epoll,
    Poll,
    Uring,
    Tokio,
}

impl BackendKind {
    pub const ALL: [BackendKind; 4] = [
        BackendKind::Epoll,
        BackendKind::Poll,
        BackendKind::Uring,
        BackendKind::Tokio,
    ];

    pub fn name(self) -> &'static str {
        match self {
            BackendKind::Epoll => "epoll",
            BackendKind::Poll => "poll",
            BackendKind::Uring => "uring",
            BackendKind::Tokio => "tokio",
        }
    }

    pub fn parse(s: &str) -> Option<Vec<BackendKind>> {
        match s {
            "all" => Some(Self::ALL.to_vec()),
            _ => Self::ALL.iter().find(|b| b.name() == s).map(|b| vec![*b]),
        }
    }

    /// A loop of this kind over `pairs`.
    pub(super) fn make(self, pairs: Pairs) -> std::io::Result<Box<dyn Backend>> {
        Ok(match self {
            BackendKind::Epoll => Box::new(epoll::Epoll::new(pairs)?),
            BackendKind::Poll => Box::new(poll::Poll::new(pairs)),
            BackendKind::Uring => Box::new(uring::Uring::new(pairs)?),
            BackendKind::Tokio => Box::new(tokio_backend::Tokio::new(pairs)?),
        })
    }
}
