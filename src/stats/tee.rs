//! Several observers of one run, each told everything in turn (the progress display
//! and the interval log, for one).

use super::conn_tally::ConnTally;
use super::latency::Latency;
use super::observer::Observer;
use super::outcome::Counters;
use super::snapshot::IntervalRow;

pub struct Tee<'a>(pub Vec<&'a mut dyn Observer>);

impl Observer for Tee<'_> {
    fn on_measure_start(&mut self) {
        self.0.iter_mut().for_each(|o| o.on_measure_start());
    }

    fn on_interval(&mut self, row: &IntervalRow, latency: &Latency) {
        self.0.iter_mut().for_each(|o| o.on_interval(row, latency));
    }

    fn on_drain(&mut self, row: &IntervalRow, latency: &Latency) {
        self.0.iter_mut().for_each(|o| o.on_drain(row, latency));
    }

    fn on_connections(&mut self, counters: &Counters, conns: &ConnTally, all_up: bool) {
        self.0
            .iter_mut()
            .for_each(|o| o.on_connections(counters, conns, all_up));
    }
}
