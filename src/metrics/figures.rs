//! What `/metrics` shows: a copy of the run's figures as of the last interval, made by
//! the observer (once per interval) and read by the endpoint's thread.

use super::buckets::Buckets;
use crate::stats::{Counters, ErrorKind, Latency};

/// The labels every sample carries: which protocol, which shard, which run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Labels {
    pub protocol: String,
    /// The shard's index, or empty for a run of its own (Prometheus reads an empty
    /// label as no label).
    pub shard: String,
    pub run_id: String,
}

/// A load's figures so far.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LoadFigures {
    /// Warm-up and measured together: counters only grow (the result's totals are
    /// the measured phase's; without --warmup the two are equal).
    pub counters: Counters,
    /// The measured phase's latency, in the fixed buckets.
    pub latency: Buckets,
    /// Open loop: requests per second asked.
    pub rate_asked: Option<f64>,
    /// Connections established and not closed, as of the last progress report.
    pub connections_open: u64,
    /// Requests per second of the last interval (the final: of the whole measured phase).
    pub rate_achieved: f64,
    /// The run is over and these are its final figures.
    pub finished: bool,
}

impl LoadFigures {
    pub fn add_latency(&mut self, latency: &Latency) {
        self.latency.add(latency);
    }

    /// Errors by kind, with the kind's name in the result.
    pub fn errors(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        ErrorKind::ALL
            .iter()
            .map(|k| (k.name(), self.counters.errors[*k as usize]))
    }
}

/// A server's own counters (`serve --metrics-listen`), in the order they are written;
/// samples of one family (one name) follow each other.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ServerFigures {
    pub samples: Vec<ServerSample>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ServerSample {
    pub name: &'static str,
    pub help: &'static str,
    /// A counter (only grows) or a gauge.
    pub counter: bool,
    /// One label beyond the run's, e.g. `("kind", "too_large")`.
    pub label: Option<(&'static str, String)>,
    pub value: f64,
}

/// What the endpoint serves: a load's figures or a server's, and the labels.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LiveFigures {
    pub labels: Labels,
    pub load: Option<LoadFigures>,
    pub server: Option<ServerFigures>,
}
