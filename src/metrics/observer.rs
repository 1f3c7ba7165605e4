//! `Watched`: an observer that passes every call on to the one it wraps (the progress
//! display) and publishes the run's figures to the metrics endpoint once per
//! interval, on the thread that gathers the workers' snapshots.

use super::endpoint::Endpoint;
use super::figures::LoadFigures;
use crate::stats::{ConnTally, Counters, IntervalRow, Latency, Observer};

pub struct Watched<'a, O> {
    pub inner: &'a mut O,
    pub endpoint: Option<&'a Endpoint>,
}

impl<O: Observer> Observer for Watched<'_, O> {
    fn on_measure_start(&mut self) {
        self.inner.on_measure_start();
    }

    fn on_interval(&mut self, row: &IntervalRow, latency: &Latency) {
        self.inner.on_interval(row, latency);
        if let Some(e) = self.endpoint {
            e.publish(|f| {
                let load = f.load.get_or_insert_with(LoadFigures::default);
                load.add_latency(latency);
                load.rate_achieved = row.ok as f64 / row.duration_s.max(1e-9);
            });
        }
    }

    /// The drain after -d is the progress display's to tell apart; the endpoint gets
    /// the run's final figures from `LiveMetrics::finish`.
    fn on_drain(&mut self, row: &IntervalRow, latency: &Latency) {
        self.inner.on_drain(row, latency);
    }

    fn on_connections(&mut self, counters: &Counters, conns: &ConnTally, all_up: bool) {
        self.inner.on_connections(counters, conns, all_up);
        if let Some(e) = self.endpoint {
            e.publish(|f| {
                let load = f.load.get_or_insert_with(LoadFigures::default);
                load.counters = *counters;
                load.connections_open = conns.open;
            });
        }
    }
}
