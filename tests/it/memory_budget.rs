//! The run's memory budget (`--memory-budget`) seen from its legitimate side: the
//! largest messages a load may send pass with the default on every load loop, the
//! budget is stated in the result's config, and bad values are one sentence and exit
//! 2. Its hostile side (endless replies on many connections, bounded and counted) is
//! in `hostile_peers`.

use crate::common::*;
use crate::hostile_peers::{run_on, LOOPS};

/// 16 MiB echoes and WebSocket messages (each protocol's largest) on 20 connections
/// of one thread, one each, all in flight at once: they may keep up to ~960 MiB
/// together, and pass the default budget (1 GiB) on both loops. A fixed 256 MiB
/// refused them as too_large.
#[test]
fn the_largest_messages_on_twenty_connections_pass_the_default_budget() {
    for which in LOOPS {
        for proto in ["echo", "ws"] {
            // A long timeout: 640 MiB each way through one process on a loaded
            // machine may take longer than the default 10 s, and this is no test of it.
            let args = [
                proto,
                "--size",
                "16m",
                "-c",
                "20",
                "-t",
                "1",
                "-n",
                "20",
                "--timeout",
                "120s",
            ];
            let (r, _) = run_on(which, &args);
            let why = format!("{which} {proto}: {}", r.explain());
            r.assert_clean(20);
            assert_eq!(r.u("/totals/over_budget"), 0, "{why}");
            assert_eq!(r.u("/config/memory_budget_bytes"), 1 << 30, "{why}");
            assert!(!r.stdout.contains("memory budget:"), "{why}");
        }
    }
}

#[test]
fn a_memory_budget_that_is_not_a_size_or_under_a_megabyte_is_refused() {
    for (value, want) in [
        (
            "lots",
            "wirebench: --memory-budget: 'lots' is not a byte count (try 64, 4k, 1m)",
        ),
        (
            "1t",
            "wirebench: --memory-budget: '1t' has an unknown size unit 't' (use k, m or g)",
        ),
        (
            "512k",
            "wirebench: --memory-budget must be at least 1m (one megabyte), not 512k",
        ),
        (
            "0",
            "wirebench: --memory-budget must be at least 1m (one megabyte), not 0",
        ),
    ] {
        let file = TempPath::new("budget", ".json");
        let args = [
            "echo",
            "-n",
            "1",
            "--memory-budget",
            value,
            "--json",
            file.s(),
        ];
        let mut p = Proc::wirebench(&args);
        let code = p.finish(std::time::Duration::from_secs(30));
        assert_eq!(code, 2, "--memory-budget {value}: {}", p.stderr());
        assert_eq!(assert_one_line_error(&p.stderr(), value), want);
        assert!(
            !file.path().exists(),
            "--memory-budget {value} wrote a result"
        );
    }
}
