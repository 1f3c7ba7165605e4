//! Who is told about a run while it goes on (the progress display, server sampling):
//! the figures flow down from the engine, so the trait lives with the figures and a
//! report implements it without importing the engine.

use super::conn_tally::ConnTally;
use super::latency::Latency;
use super::outcome::Counters;
use super::snapshot::IntervalRow;

pub trait Observer {
    /// The warm-up is over; the measured phase begins.
    fn on_measure_start(&mut self) {}
    /// An interval of the measured phase is complete (`latency` is the interval's).
    fn on_interval(&mut self, _row: &IntervalRow, _latency: &Latency) {}
    /// The connections so far, over every worker (warm-up and measured counters
    /// together, cumulative: what has happened, for progress), once
    /// per interval and when a worker's every connection has had its first attempt
    /// settle; `all_up`: every worker's has.
    fn on_connections(&mut self, _counters: &Counters, _conns: &ConnTally, _all_up: bool) {}
}
