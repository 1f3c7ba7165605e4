//! A load's `--metrics-listen` endpoint around its run: started before the run (a busy
//! address is refused before anything connects), fed by the observer while it goes,
//! given the final figures after it, and kept up `--metrics-linger`.

use crate::config::LoadConfig;
use crate::engine::EngineOutput;
use crate::error::Result;
use crate::flags::MetricsArgs;
use crate::metrics::buckets::Buckets;
use crate::metrics::figures::LoadFigures;
use crate::metrics::{Endpoint, Labels, LiveFigures, MetricsConfig};

pub struct LiveMetrics {
    endpoint: Endpoint,
    linger: std::time::Duration,
}

impl LiveMetrics {
    /// The endpoint `args` ask for, listening, or None without `--metrics-listen`.
    pub fn start(args: &MetricsArgs, protocol: &str, load: &LoadConfig) -> Result<Option<Self>> {
        let Some(cfg) = MetricsConfig::from_args(args)? else {
            return Ok(None);
        };
        let shard = load.coordination.shard.as_ref();
        let labels = Labels {
            protocol: protocol.to_string(),
            shard: shard.map(|s| s.index.to_string()).unwrap_or_default(),
            run_id: shard.and_then(|s| s.run_id.clone()).unwrap_or_default(),
        };
        let initial = LiveFigures {
            labels,
            load: Some(LoadFigures {
                rate_asked: load.shape.rate,
                ..LoadFigures::default()
            }),
            server: None,
        };
        let endpoint = Endpoint::start(cfg.addr, initial)?;
        Ok(Some(LiveMetrics {
            endpoint,
            linger: cfg.linger,
        }))
    }

    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    /// The run's final figures, exactly the result's: the counters of both phases, the
    /// measured phase's whole histogram and rate.
    pub fn finish<X>(&self, out: &EngineOutput<X>) {
        self.endpoint.publish(|f| {
            let load = f.load.get_or_insert_with(LoadFigures::default);
            let mut counters = out.measured;
            counters.add(&out.warmup);
            load.counters = counters;
            load.latency = Buckets::of(&out.latency);
            load.rate_achieved = out.measured.ok as f64 / out.elapsed.as_secs_f64().max(1e-9);
            // The engine has closed every connection by now.
            load.connections_open = 0;
            load.finished = true;
        });
    }

    /// Keeps serving `--metrics-linger`, then stops.
    pub fn linger(self) {
        self.endpoint.linger_and_stop(self.linger);
    }
}
