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
    /// Every interval of the measured phase, in order, once all its workers reported:
    /// `row` is what the result's `intervals` holds for it (counts, rates, count, p50,
    /// p90, p99, p99.9, max), `latency` the interval's own histogram, every worker's
    /// merged (a borrowed table, recycled once this returns: copy what is kept).
    fn on_interval(&mut self, _row: &IntervalRow, _latency: &Latency) {}
    /// An interval after a duration plan's end (replies still coming in): in the
    /// result's series so the rows add up to the totals, but no interval of the load's
    /// progress. As `on_interval` otherwise.
    fn on_drain(&mut self, _row: &IntervalRow, _latency: &Latency) {}
    /// The connections so far, over every worker (warm-up and measured counters
    /// together, cumulative: what has happened, for progress), once
    /// per interval and when a worker's every connection has had its first attempt
    /// settle; `all_up`: every worker's has.
    fn on_connections(&mut self, _counters: &Counters, _conns: &ConnTally, _all_up: bool) {}
}
