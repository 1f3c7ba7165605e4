//! When a closed-loop connection sends again: its pipelining policy.
//!
//! `EachReply` keeps the window full: every settled request frees a place that is
//! refilled on the next turn (a sliding window, wirebench's default, as memtier_benchmark
//! pipelines). `WhenEmpty` sends the whole window in one write and sends again only when
//! every reply of it is in, as redis-benchmark's `-P` and evh_perf's pipelined batch do:
//! per connection, with no barrier between the connections of a worker.
//!
//! Open loop (`LoadShape::rate`) sends each request at its scheduled time whatever the
//! policy (`config.rs` refuses `WhenEmpty` with a rate), and a batch plan
//! (`Plan::Batch`) already sends a whole window per iteration.

/// A closed-loop connection's pipelining policy (`--pipeline-mode sliding|burst`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Refill {
    /// Refill every place a reply frees (`sliding`).
    #[default]
    EachReply,
    /// Send a whole window at once, the next only when all of it is answered (`burst`).
    WhenEmpty,
}

impl Refill {
    /// Requests a connection with `in_flight` unsettled ones may add now to a window of
    /// `pipeline`.
    #[inline]
    pub fn room(self, pipeline: usize, in_flight: usize) -> usize {
        match self {
            Refill::EachReply => pipeline.saturating_sub(in_flight),
            Refill::WhenEmpty if in_flight == 0 => pipeline,
            Refill::WhenEmpty => 0,
        }
    }

    /// The flag's word for it (`--pipeline-mode`, the result's `config.pipeline_mode`).
    pub fn name(self) -> &'static str {
        match self {
            Refill::EachReply => "sliding",
            Refill::WhenEmpty => "burst",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sliding_refills_each_free_place_and_burst_only_an_empty_window() {
        assert_eq!(Refill::EachReply.room(16, 0), 16);
        assert_eq!(Refill::EachReply.room(16, 15), 1);
        assert_eq!(Refill::EachReply.room(16, 16), 0);
        assert_eq!(Refill::EachReply.room(16, 17), 0);
        assert_eq!(Refill::WhenEmpty.room(16, 0), 16);
        assert_eq!(Refill::WhenEmpty.room(16, 1), 0);
        assert_eq!(Refill::WhenEmpty.room(16, 15), 0);
        assert_eq!(Refill::WhenEmpty.room(1, 0), 1);
        assert_eq!(Refill::default(), Refill::EachReply);
        assert_eq!(
            [Refill::EachReply.name(), Refill::WhenEmpty.name()],
            ["sliding", "burst"]
        );
    }
}
