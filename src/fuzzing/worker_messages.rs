//! Arbitrary text as what wirebench's processes hand each other, read as the reader
//! reads it. The first byte picks which:
//! 0. a `connect` worker's line to its parent (`WorkerMsg`): counts added up with the
//!    ramp's, the histograms of a final report decoded, a step of the series merged;
//! 1. a `serve` worker's line to its parent (`ServerMsg`): counters added up;
//! 2. a `connect` worker's spec from its environment (`WorkerSpec`);
//! 3. a `serve` worker's plan from its environment (`ServePlan::from_text`), for the
//!    protocol the first byte's upper bits pick.
//!
//! Nothing may panic, and a plan that is refused is a runtime error (exit 2).
//! Run: `cargo +nightly fuzz run worker_messages`.

use crate::commands::serve_plan::ServePlan;
use crate::config::ProtocolTiming;
use crate::connect::messages::{Counts, WorkerMsg, WorkerSpec};
use crate::proto::amqp::server::BrokerConfig;
use crate::proto::http::config::ServeHttpConfig;
use crate::proto::redis::config::ServeRedisConfig;
use crate::proto::ws::config::ServeWsConfig;
use crate::server::counters::ServerTotals;
use crate::server::group::{add, ServerMsg};
use crate::stats::Latency;
use serde::de::DeserializeOwned;
use serde::Serialize;

/// One input, as the fuzz target runs it.
pub fn run(data: &[u8]) {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    match pick % 4 {
        0 => connect_line(text),
        1 => {
            if let Ok(ServerMsg::Totals { t, .. } | ServerMsg::Final { t, .. }) =
                serde_json::from_str::<ServerMsg>(text)
            {
                let mut sum = ServerTotals::default();
                add(&mut sum, &t);
                add(&mut sum, &t);
            }
        }
        2 => {
            let _ = serde_json::from_str::<WorkerSpec>(text);
        }
        _ => match (pick >> 2) % 5 {
            0 => plan::<ProtocolTiming>("echo", text),
            1 => plan::<ServeHttpConfig>("http", text),
            2 => plan::<ServeWsConfig>("ws", text),
            3 => plan::<ServeRedisConfig>("redis", text),
            _ => plan::<BrokerConfig>("amqp", text),
        },
    }
}

/// A `connect` worker's line, as its parent takes it in.
fn connect_line(text: &str) {
    let (c, ramp) = match serde_json::from_str::<WorkerMsg>(text) {
        Ok(WorkerMsg::Progress { c }) => (c, None),
        Ok(WorkerMsg::Connected { c, ramp }) => (c, ramp),
        Ok(WorkerMsg::Final {
            c,
            ramp,
            connect_hist,
            echo_hist,
            ..
        }) => {
            let _ = Latency::decode(&connect_hist);
            let _ = Latency::decode(&echo_hist);
            (c, ramp)
        }
        Ok(WorkerMsg::Interval { step, row }) => {
            // As the parent merges it: a step far ahead is refused, not allocated up to.
            let mut steps = crate::connect::steps::Steps::new(1, true);
            let _ = steps.add(0, step, &row);
            steps.finish(&mut crate::connect::steps::Nobody);
            return;
        }
        Ok(WorkerMsg::Ready) | Err(_) => return,
    };
    let mut sum = Counts::default();
    sum.add(&c);
    let whole = sum.with_ramp(ramp.as_ref());
    let _ = (whole.failed(), whole.lost_total(), whole.echo_errors());
}

/// A `serve` worker's plan for `protocol`: read, or refused with exit 2; a plan
/// read is written back as its parent would hand it on.
fn plan<C: Serialize + DeserializeOwned>(protocol: &str, text: &str) {
    match ServePlan::<C>::from_text(protocol, text) {
        Ok(p) => {
            p.to_env().expect("a plan read back writes");
        }
        Err(e) => assert_eq!(e.exit_code(), 2, "{e}"),
    }
}
