//! Bad input, table-driven: every subcommand with malformed flags, files and URLs
//! must exit 2 with exactly one line on stderr ("wirebench: ..." naming the problem)
//! and never panic.

use crate::common::*;
use std::path::Path;
use std::time::Duration;

/// One bad command line and a phrase its one line must contain.
struct Row {
    args: Vec<String>,
    phrase: &'static str,
    /// Run under a 4 GB address-space limit: a row that reads an endless file must not
    /// take the machine's memory with it while the fix is missing.
    bounded_memory: bool,
    /// A phrase the line must not contain (the limit above makes an unbounded read
    /// fail "out of memory": that is not the cap the row checks for).
    forbidden: Option<&'static str>,
}

/// A target a pod could reach (k8s render refuses loopback ones).
const POD_TARGET: &str = "10.0.0.5:9000";

/// A `wirebench k8s render ...` row.
fn k8s(args: &[&str], phrase: &'static str) -> Row {
    let mut all = vec!["k8s", "render"];
    all.extend_from_slice(args);
    row(&all, phrase)
}

fn row(args: &[&str], phrase: &'static str) -> Row {
    Row {
        args: args.iter().map(|s| s.to_string()).collect(),
        phrase,
        bounded_memory: false,
        forbidden: None,
    }
}

/// Files the rows point at: made once per test in a private temp directory.
struct Fixtures {
    dir: TempPath,
}

impl Fixtures {
    fn new() -> Fixtures {
        let dir = TempPath::new("bad-input", "");
        std::fs::create_dir(dir.path()).unwrap();
        let f = Fixtures { dir };
        f.write("garbage.toml", "this is [[ not toml\n");
        f.write("bad.proto", "syntax = \"proto3\";\nmessage Req {\n");
        f.write(
            "good.proto",
            "syntax = \"proto3\";\npackage p;\nmessage Req { int32 n = 1; }\n\
             service S { rpc M(Req) returns (Req); rpc Up(stream Req) returns (Req); }\n",
        );
        // 20 x 20 x 20 x 10 = 80,000 points of 1 s each: refused without --yes.
        let list = |n: u32, quote: bool| {
            (1..=n)
                .map(|i| {
                    if quote {
                        format!("\"{i}\"")
                    } else {
                        i.to_string()
                    }
                })
                .collect::<Vec<_>>()
                .join(",")
        };
        f.write(
            "huge.toml",
            &format!(
                "[[server]]\nname = \"s\"\ncommand = \"wirebench serve echo --listen {{addr}}\"\n\n\
                 [[load]]\nprotocol = \"echo\"\nconnections = [{}]\npipeline = [{}]\n\
                 rate = [{}]\nbody_size = [{}]\nduration = \"1s\"\n",
                list(20, false),
                list(20, false),
                (1..=20).map(|i| format!("{i}.0")).collect::<Vec<_>>().join(","),
                list(10, true)
            ),
        );
        std::fs::create_dir_all(f.path("results/points")).unwrap();
        f.write("results/points/a.json", "{not json");
        f.write_shards();
        f
    }

    /// Results for `wirebench merge`: shards of run "a" (0 and 1 of 2, and shard 0
    /// again), and results that must not merge with them.
    fn write_shards(&self) {
        use wirebench::stats::result::Totals;
        use wirebench::stats::{Latency, Measured, RunResult, ShardInfo, Unit};
        let shard = |index: u32, run: &str, target: &str, kind: &str, n: u64| {
            let mut l = Latency::new();
            l.record(1000);
            let mut r = RunResult::builder(Measured {
                kind,
                target: target.into(),
                config: serde_json::json!({"connections": n}),
                started_unix_ms: 1,
                elapsed_s: 1.0,
                totals: Totals {
                    sent: 1,
                    ok: 1,
                    invariant_holds: Some(true),
                    ..Totals::default()
                },
                errors: Default::default(),
                unit: Unit::new("messages", "echoed", true),
                latency: &l,
                client_cpu_s: 0.1,
            })
            .finish(None);
            r.shard = Some(ShardInfo {
                index,
                count: 2,
                run_id: Some(run.into()),
                start_at_unix_ms: None,
                measured_start_unix_ms: 1,
                portion: serde_json::json!({}),
            });
            serde_json::to_value(r).unwrap()
        };
        let put = |name: &str, v: &serde_json::Value| self.write(name, &v.to_string());
        let t = "127.0.0.1:7";
        put("s0.json", &shard(0, "a", t, "echo", 2));
        put("s1.json", &shard(1, "a", t, "echo", 2));
        put("s0-again.json", &shard(0, "a", t, "echo", 2));
        put("s1-run-b.json", &shard(1, "b", t, "echo", 2));
        put("s1-config.json", &shard(1, "a", t, "echo", 3));
        put("s1-target.json", &shard(1, "a", "127.0.0.1:8", "echo", 2));
        put("s1-kind.json", &shard(1, "a", t, "http", 2));
        let mut v = shard(1, "a", t, "echo", 2);
        v["schema_version"] = serde_json::json!(2);
        put("s1-schema.json", &v);
        let mut v = shard(1, "a", t, "echo", 2);
        v.as_object_mut().unwrap().remove("shard");
        put("not-a-shard.json", &v);
        // Shards of `connect` whose `connect` blocks differ in a setting.
        for (name, index, mode) in [("c0.json", 0, "hold"), ("c1-churn.json", 1, "churn")] {
            let mut v = shard(index, "a", t, "connect", 2);
            v["connect"] = serde_json::json!({"mode": mode, "established": 1});
            // The block's established connection is the totals' (a merge checks it).
            v["totals"]["connections"] = serde_json::json!(1);
            put(name, &v);
        }
        self.write(
            "not-a-result.json",
            "{\"schema_version\": 1, \"kind\": \"echo\"}",
        );
        self.write("no-version.json", "{\"hello\": 1}");
        self.write("someone-elses.json", "{\"mine\": true}");
        std::fs::create_dir_all(self.path("empty-dir")).unwrap();
        let mut v = shard(0, "a", t, "echo", 2);
        v["totals"]["sent"] = serde_json::json!(6);
        put("s0-tampered.json", &v);
        // Two suites' results directories that share no load.
        for (dir, load) in [("suite-out", "echo-sweep"), ("other-out", "http-sweep")] {
            std::fs::create_dir_all(self.path(&format!("{dir}/points"))).unwrap();
            self.write(
                &format!("{dir}/.wirebench-manifest.json"),
                "{\"files\": []}",
            );
            self.write(&format!("{dir}/servers.json"), "[]");
            let point = serde_json::json!({
                "throughput": {"msgs_per_s": 10.0},
                "suite": {"load": load, "server": "s", "point": {"connections": 1}}
            });
            put(&format!("{dir}/points/p.json"), &point);
        }
    }

    fn write(&self, name: &str, text: &str) {
        std::fs::write(self.path(name), text).unwrap();
    }

    fn path(&self, name: &str) -> String {
        self.dir.path().join(name).to_string_lossy().into_owned()
    }
}

/// Rows whose fix lives on this branch.
fn rows(fx: &Fixtures) -> Vec<Row> {
    let dir = fx.dir.s();
    let garbage = fx.path("garbage.toml");
    let huge = fx.path("huge.toml");
    let results = fx.path("results");
    let long_name = "x".repeat(300);
    vec![
        // ---- echo: numbers, plans, rates
        row(
            &["echo", "-c", "-1"],
            "--connections must be a positive number, not -1",
        ),
        row(&["echo", "-c", "0"], "--connections must be at least 1"),
        row(
            &["echo", "-t", "-3"],
            "--threads must be a positive number, not -3",
        ),
        row(
            &["echo", "-c", "abc"],
            "--connections: 'abc' is not a valid value",
        ),
        row(
            &["echo", "-d", "-1"],
            "--duration must be a positive duration",
        ),
        row(&["echo", "-d", "0s"], "--duration must be longer than zero"),
        row(
            &["echo", "-n", "-1"],
            "--requests must be a positive number, not -1",
        ),
        row(&["echo", "-n", "0"], "-n/--requests must be at least 1"),
        row(
            &["echo", "--rate", "-5"],
            "--rate must be between 0.001 and 100,000,000",
        ),
        row(&["echo", "--rate", "0"], "--rate must be between"),
        row(&["echo", "-R", "1e9", "-d", "1s"], "not 1000000000"),
        row(
            &["echo", "--pipeline-mode", "burst", "-R", "100", "-n", "10"],
            "--pipeline-mode burst is a closed loop's policy",
        ),
        row(
            &[
                "redis",
                "--pipeline",
                "16",
                "--pipeline-mode",
                "burst",
                "-R",
                "100",
            ],
            "--pipeline-mode burst is a closed loop's policy",
        ),
        row(
            &["amqp", "--pipeline-mode", "burst"],
            "--pipeline-mode does not apply to amqp",
        ),
        row(
            &["echo", "--pipeline-mode", "window"],
            "invalid value 'window' for '--pipeline-mode <MODE>'",
        ),
        row(
            &["echo", "--source", "127.0.0.9-127.0.0.2"],
            "runs backwards",
        ),
        row(
            &["echo", "127.0.0.1:9", "--source", "::1"],
            "--source and the target must both be IPv4 or both IPv6",
        ),
        row(
            &["http", "--source", "127.0.0.2,::1"],
            "--source mixes IPv4 and IPv6 addresses",
        ),
        row(&["echo", "-R", "1e300"], "not 1e300"),
        row(&["echo", "-R", "NaN"], "not NaN"),
        row(&["echo", "-R", "inf"], "--rate must be between"),
        row(
            &["echo", "-R", "1e-300", "-n", "1"],
            "--rate must be between 0.001",
        ),
        row(
            &["echo", "--histogram", "-5"],
            "--histogram must be a positive number",
        ),
        row(
            &["echo", "--pipeline", "100000"],
            "--pipeline must be at most",
        ),
        row(&["echo", "--size", "10..3"], "--size"),
        row(
            &["echo", "-d", "5s", "-n", "10"],
            "choose one of -d/--duration and -n/--requests",
        ),
        row(&["echo", "--iterations", "2", "-d", "1s"], "batch plan"),
        // A shared flag a protocol hides is one it does not take.
        row(
            &["http", "--iterations", "2"],
            "--iterations does not apply to http (",
        ),
        row(
            &["redis", "--sleep", "5"],
            "--sleep does not apply to redis",
        ),
        row(
            &["amqp", "--pipeline-mode", "sliding"],
            "--pipeline-mode does not apply to amqp; a publish window",
        ),
        row(&["echo", "--insecure"], "only apply with --tls"),
        row(
            &["echo", "--conections", "3"],
            "a similar argument exists: '--connections'",
        ),
        row(&["echo", "--bogus"], "unexpected argument '--bogus'"),
        // ---- echo: targets and files
        row(&["echo", "127.0.0.1:0"], "'127.0.0.1:0' has port 0"),
        row(&["echo", "[::1]:0"], "has port 0"),
        row(
            &["echo", "notanaddress"],
            "'notanaddress' is not a HOST:PORT address",
        ),
        row(
            &["echo", "127.0.0.1:99999"],
            "'127.0.0.1:99999' is not a HOST:PORT address",
        ),
        row(
            &["echo", "--json", "/nonexistent-dir/x.json", "-n", "1"],
            "/nonexistent-dir/x.json",
        ),
        row(&["echo", "--json", dir, "-n", "1"], "Is a directory"),
        // ---- thresholds and --search (docs/thresholds.md, docs/search.md)
        row(
            &["echo", "--threshold", "p99<200"],
            "threshold 'p99<200': a time limit needs its unit",
        ),
        row(
            &["echo", "--threshold", "p99=200ms"],
            "threshold 'p99=200ms': write FIGURE<LIMIT",
        ),
        row(
            &["echo", "--threshold", "latency<2ms"],
            "there is no figure named latency",
        ),
        row(
            &["echo", "--threshold", "rate>=0.95"],
            "only an open loop (-R) asks one",
        ),
        row(
            &["echo", "127.0.0.1:9", "--threshold", "cpu{server}<5us"],
            "the server's CPU is measured only for the built-in server",
        ),
        row(
            &["amqp", "--threshold", "p99<5ms"],
            "threshold 'p99<5ms' does not apply: amqp's publishes count once written, with no reply to time",
        ),
        row(
            &["http", "--threshold", "status{50x}<1"],
            "http has no figure status{50x}",
        ),
        row(&["echo", "--threshold", "errors{nope}<1"], "there is no error kind nope"),
        row(
            &["echo", "--step-duration", "2s"],
            "--step-duration applies only to --search",
        ),
        row(
            &["echo", "--search", "p99<5ms"],
            "--search needs -R/--rate: the highest rate it tries",
        ),
        row(
            &["echo", "-R", "100", "--search", "p99<<5ms"],
            "threshold 'p99<<5ms': the limit '<5ms' does not start with a number",
        ),
        row(
            &["amqp", "-R", "100", "--search", "p99<5ms"],
            "threshold 'p99<5ms' does not apply: amqp's publishes",
        ),
        row(
            &["echo", "-R", "100", "--search", "p99<5ms", "-d", "5s"],
            "-d and -n do not apply to --search",
        ),
        row(
            &["echo", "-R", "100", "--search", " , "],
            "--search needs at least one condition",
        ),
        row(
            &["echo", "-R", "100", "--search", "p99<5ms", "--hlog", "x.hlog"],
            "--hlog logs one run's intervals: it does not combine with --search",
        ),
        row(
            &["echo", "-R", "100", "--search", "p99<5ms", "--metrics-listen", "127.0.0.1:0"],
            "--metrics-listen serves one run's figures: it does not combine with --search",
        ),
        // ---- http
        row(&["http", "http://127.0.0.1:0/"], "no valid port"),
        row(
            &["http", "ftp://127.0.0.1/"],
            "the URL scheme 'ftp' is not supported",
        ),
        row(
            &["http", "-c", "-1"],
            "--connections must be a positive number",
        ),
        row(&["http", "--rate", "1e300"], "--rate must be between"),
        row(
            &["http", "--body", "/nonexistent-file"],
            "cannot read the --body file",
        ),
        row(&["http", "--body", dir, "-n", "1"], "is a directory"),
        // ---- amqp
        row(&["amqp", "amqp://127.0.0.1:0/"], "has port 0"),
        row(&["amqp", "http://127.0.0.1:5672/"], "is not an AMQP URL"),
        row(&["amqp", "--rate", "-5"], "--rate must be between"),
        row(
            &["amqp", "--publish-wait", "1e-300"],
            "--publish-wait 1e-300 ms over",
        ),
        row(
            &["amqp", "--publish-wait", "-1"],
            "--publish-wait must be a positive number",
        ),
        // ---- grpc
        row(
            &["grpc", "127.0.0.1:9", "--call", "p.S/M", "--proto", &fx.path("bad.proto"), "--data", "{}"],
            "does not compile",
        ),
        row(
            &["grpc", "127.0.0.1:9", "--call", "p.S/Nope", "--proto", &fx.path("good.proto")],
            "service p.S in",
        ),
        row(
            &["grpc", "127.0.0.1:9", "--call", "p.T/M", "--proto", &fx.path("good.proto")],
            "defines no service p.T",
        ),
        row(
            &["grpc", "127.0.0.1:9", "--call", "p.S/Up", "--proto", &fx.path("good.proto")],
            "is a streaming method",
        ),
        row(
            &["grpc", "127.0.0.1:9", "--call", "p.S/M", "--proto", &fx.path("good.proto"), "--data", r#"{"n": "x"}"#],
            "--data is not a p.Req message in JSON",
        ),
        row(
            &["grpc", "127.0.0.1:9", "--call", "p.S/M", "--data", "{}"],
            "give the .proto file that defines the method with --proto",
        ),
        row(&["grpc", "127.0.0.1:9", "--call", "p.S"], "write it as package.Service/Method"),
        row(&["grpc", "127.0.0.1:9"], "give the method to call: --call"),
        row(&["grpc", "-m", "0"], "-m/--max-streams must be at least 1"),
        row(&["grpc", "grpcs://127.0.0.1:9/", "--call", "p.S/M"], "scheme 'grpcs' is not supported"),
        row(&["grpc", "http://127.0.0.1:9/", "--tls", "--call", "p.S/M"], "use https://"),
        row(&["grpc", "--call", "p.S/M", "-H", "te: x"], "-H te is set by wirebench grpc itself"),
        row(&["serve", "grpc", "--max-message", "0"], "--max-message must be between 1 byte and 1 GiB"),
        // ---- ws
        row(
            &["ws", "http://127.0.0.1:80/"],
            "the URL scheme 'http' is not supported: use ws:// or wss://",
        ),
        row(&["ws", "127.0.0.1:80"], "is not a WebSocket URL"),
        row(
            &["ws", "ws://127.0.0.1:0/"],
            "'ws://127.0.0.1:0/' has no valid port",
        ),
        row(
            &["ws", "ws://127.0.0.1:9/", "--tls"],
            "write wss:// instead",
        ),
        row(
            &["ws", "--size", "17m"],
            "--size: at most 16777216 bytes per message",
        ),
        row(
            &["ws", "--fragment", "0"],
            "--fragment must be at least 1 byte",
        ),
        row(&["ws", "--fragment", "lots"], "--fragment: "),
        row(
            &["ws", "--subprotocol", "a b"],
            "--subprotocol 'a b' is not a subprotocol name",
        ),
        row(&["serve", "ws", "--ping-every", "-1s"], "--ping-every"),
        row(
            &["serve", "ws", "--max-message", "0"],
            "--max-message must be between 1 byte and 1 GiB",
        ),
        row(
            &["serve", "ws", "--max-message", "2g"],
            "--max-message must be between 1 byte and 1 GiB",
        ),
        row(
            &["serve", "ws", "--subprotocol", "x,y"],
            "is not a subprotocol name",
        ),
        // ---- redis
        row(
            &["redis", "--command", " "],
            "--command: the command template is empty",
        ),
        row(
            &["redis", "--command", "mixed:0:0"],
            "mixed:R:W wants two whole numbers",
        ),
        row(
            &["redis", "--command", "mixed:a:1"],
            "mixed:R:W wants two whole numbers",
        ),
        row(
            &["redis", "--command", "SET k x__data__"],
            "__data__ must be a whole argument",
        ),
        row(
            &["redis", "--command", "GET __key__"],
            "has an unknown placeholder",
        ),
        row(
            &["redis", "--command", "__rand__ x"],
            "the command's name cannot be a placeholder",
        ),
        row(
            &["redis", "--keyspace", "0"],
            "--keyspace must be between 1 and",
        ),
        row(
            &["redis", "--keyspace", "5000000000"],
            "--keyspace must be between 1 and",
        ),
        row(
            &["redis", "--distribution", "normal"],
            "is not a distribution",
        ),
        row(
            &["redis", "--distribution", "zipf:0"],
            "must be a number above 0",
        ),
        row(
            &["redis", "--distribution", "zipf:x"],
            "must be a number above 0",
        ),
        row(
            &["redis", "--size", "32m"],
            "--size: at most 16777216 value bytes",
        ),
        row(
            &["redis", "--auth", "user:"],
            "--auth: USER:PASS needs both",
        ),
        row(&["redis", "--auth", ""], "--auth: the password is empty"),
        row(&["redis", "127.0.0.1:0"], "has port 0"),
        row(
            &["redis", "127.0.0.1:6379", "--server-threads", "2"],
            "only applies to the built-in server",
        ),
        row(&["serve", "redis", "--listen", "nonsense"], "nonsense"),
        // ---- connect
        row(
            &["connect", "-n", "-5"],
            "--connections must be a positive number, not -5",
        ),
        row(
            &["connect", "-n", "0"],
            "-n/--connections must be at least 1",
        ),
        row(
            &["connect", "--hold", "-1s"],
            "--hold must be a positive duration",
        ),
        row(&["connect", "127.0.0.1:0"], "'127.0.0.1:0' has port 0"),
        row(&["connect", "127.0.0.1-127.0.0.3:0"], "has port 0"),
        row(
            &["connect", "-n", "100000000"],
            "-n 100,000,000 connections would need",
        ),
        row(
            &["connect", "--connect-rate", "-5"],
            "--connect-rate must be a number",
        ),
        row(
            &["connect", "--ramp", "-1s"],
            "--ramp must be a positive duration",
        ),
        row(
            &["connect", "--ramp-measured"],
            "required arguments were not provided: --ramp",
        ),
        // ---- ioevent
        row(&["ioevent", "-w", "100000000000"], "would take at least"),
        row(
            &["ioevent", "-w", "-1"],
            "--writes must be a positive number",
        ),
        row(&["ioevent", "-n", "0"], "at least one socketpair"),
        row(&["ioevent", "--backend", "nope"], "--backend 'nope'"),
        // ---- serve echo|http|amqp
        row(
            &["serve", "echo", "--processes", "5000"],
            "--processes 5000 is more than the 256",
        ),
        row(
            &["serve", "echo", "--processes", "0"],
            "--processes must be at least 1",
        ),
        row(
            &["serve", "echo", "--processes", "-1"],
            "--processes must be a positive number",
        ),
        row(
            &["serve", "echo", "--read-buffer", "1"],
            "--read-buffer must be between",
        ),
        row(
            &["serve", "http", "--threads", "0"],
            "--threads must be at least 1",
        ),
        row(&["serve", "http", "--max-body", "-1"], "--max-body"),
        row(
            &["serve", "amqp", "--frame-max", "10"],
            "--frame-max must be at least 4096",
        ),
        row(
            &["serve", "amqp", "--heartbeat", "-1"],
            "--heartbeat must be a positive number",
        ),
        // ---- suite, report, compare
        row(&["suite"], "required arguments were not provided"),
        row(
            &["suite", "/nonexistent.toml"],
            "cannot read the suite file",
        ),
        row(&["suite", dir], "Is a directory"),
        row(&["suite", &garbage], "garbage.toml:1:"),
        row(
            &["suite", &huge, "--out", dir],
            "80000 runs taking at least",
        ),
        row(
            &["report", "/nonexistent-dir"],
            "is not a results directory",
        ),
        row(&["report", &huge], "is not a results directory"),
        row(
            &["report", &results, "-o", &fx.path("r.html")],
            "is not JSON",
        ),
        row(
            &["compare", "/nonexistent-a", "/nonexistent-b"],
            "is not a results directory",
        ),
        row(&["compare", &results, &results], "is not JSON"),
        row(
            &["compare", &fx.path("suite-out"), &fx.path("other-out")],
            "share no point to compare (loads echo-sweep against http-sweep)",
        ),
        row(
            &["compare", &results, &results, "--threshold", "-5"],
            "--threshold -5",
        ),
        // ---- serve: timeouts, --delay and --stall
        row(
            &["serve", "http", "--header-timeout", "soon"],
            "--header-timeout",
        ),
        row(
            &["serve", "echo", "--idle-timeout", "1 fortnight"],
            "--idle-timeout",
        ),
        row(
            &["serve", "amqp", "--idle-timeout", "5 parsecs"],
            "--idle-timeout",
        ),
        row(&["serve", "echo", "--delay", "gauss:2ms"], "--delay"),
        row(&["serve", "http", "--delay", "uniform:5ms..1ms"], "--delay"),
        row(&["serve", "echo", "--stall", "10s/1s"], "--stall"),
        row(&["serve", "http", "--stall", "1s"], "--stall"),
        // --body of an endless file: refused unread (at most the cap + 1 byte is read).
        Row {
            bounded_memory: true,
            forbidden: Some("out of memory"),
            ..row(&["http", "--body", "/dev/zero", "-n", "1"], "--body")
        },
        // ---- merge: results that do not belong together, files that are no result,
        // an output it did not write (never.json must not exist afterwards)
        merge_row(
            fx,
            &["s0.json", "s1-run-b.json"],
            "only shards of one run merge",
        ),
        merge_row(
            fx,
            &["s0.json", "s1-config.json"],
            "is a different config from",
        ),
        merge_row(
            fx,
            &["s0.json", "s1-target.json"],
            "is aimed at 127.0.0.1:8",
        ),
        merge_row(fx, &["s0.json", "s1-kind.json"], "a http load"),
        merge_row(
            fx,
            &["s0.json", "s1-schema.json"],
            "schema version 2, this wirebench reads version 1",
        ),
        merge_row(fx, &["s0.json"], "shard 1 of 2 is missing"),
        merge_row(
            fx,
            &["s0.json", "s1.json", "s0-again.json"],
            "is shard 0 of 2 again",
        ),
        merge_row(fx, &["s0.json", "not-a-shard.json"], "is not a shard"),
        merge_row(
            fx,
            &["c0.json", "c1-churn.json"],
            "connect.mode differs between the parts",
        ),
        merge_row(fx, &["s0.json", "nowhere.json"], "cannot read"),
        merge_row(fx, &["s0.json", "garbage.toml"], "is not JSON"),
        merge_row(
            fx,
            &["s0.json", "not-a-result.json"],
            "is not a wirebench result",
        ),
        merge_row(
            fx,
            &["no-version.json"],
            "is not a wirebench result (no schema_version)",
        ),
        merge_row(fx, &["empty-dir"], "holds no .json result"),
        merge_row(
            fx,
            &["suite-out"],
            "is a suite's results directory, not shards of one run",
        ),
        merge_row(
            fx,
            &["s0-tampered.json", "s1.json"],
            "s0-tampered.json: totals.sent 6 is not totals.ok 1 + totals.errors 0",
        ),
        row(
            &[
                "merge",
                &fx.path("s0.json"),
                &fx.path("s1.json"),
                "-o",
                &fx.path("someone-elses.json"),
            ],
            "the file exists and is not a merge wirebench wrote",
        ),
        row(
            &[
                "merge",
                &fx.path("s0.json"),
                &fx.path("s1.json"),
                "-o",
                &fx.path("merged.txt"),
            ],
            "its name must end in .json",
        ),
        row(&["merge", &fx.path("s0.json")], "--output"),
        row(
            &[
                "merge",
                &fx.path("s0.json"),
                &fx.path("s1.json"),
                "-o",
                &fx.path("merged-thresholds.json"),
                "--threshold",
                "rate>=0.9",
            ],
            "threshold 'rate>=0.9' does not apply: rate is the achieved share",
        ),
        // AMQP short strings are at most 255 bytes.
        row(&["amqp", "--exchange", &long_name, "-n", "1"], "--exchange"),
        row(
            &["amqp", "--routing-key", &long_name, "-n", "1"],
            "--routing-key",
        ),
        // ---- k8s render: shards, the load command after --, a target a pod can reach
        k8s(
            &["--shards", "0", "--", "echo", POD_TARGET],
            "--shards must be between 1 and 1000, not 0",
        ),
        k8s(
            &["--shards", "1001", "--", "echo", POD_TARGET],
            "--shards must be between 1 and 1000, not 1001",
        ),
        k8s(
            &["--shards", "2", "echo", POD_TARGET],
            "put the load command after --",
        ),
        k8s(
            &["--shards", "2"],
            "k8s render needs the load command after --",
        ),
        k8s(
            &["--shards", "2", "--", "serve", "echo"],
            "'serve' is not a load command (one of: echo, http, amqp, ",
        ),
        k8s(
            &["--shards", "2", "--", "echo", "127.0.0.1:9000"],
            "'127.0.0.1:9000' is a loopback address",
        ),
        k8s(
            &["--shards", "2", "--", "http", "http://localhost:8080/"],
            "is a loopback address",
        ),
        k8s(
            &["--shards", "2", "--", "echo", "-n", "10"],
            "the load command has no target",
        ),
        k8s(
            &["--shards", "2", "--", "echo", POD_TARGET, "-c", "x"],
            "the load command: --connections",
        ),
        k8s(
            &["--shards", "2", "--", "echo", POD_TARGET, "--run-id=a"],
            "leave --run-id out of the load command",
        ),
        k8s(
            &[
                "--shards",
                "2",
                "--start-at",
                "1767225600",
                "--",
                "echo",
                POD_TARGET,
            ],
            "looks like Unix seconds",
        ),
        k8s(
            &[
                "--shards",
                "2",
                "--start-at",
                "noon",
                "--",
                "echo",
                POD_TARGET,
            ],
            "is neither Unix milliseconds nor an RFC 3339 time",
        ),
        k8s(
            &[
                "--shards",
                "2",
                "--namespace",
                "Load_NS",
                "--",
                "echo",
                POD_TARGET,
            ],
            "is not a Kubernetes namespace name",
        ),
        k8s(
            &[
                "--shards", "2", "--run-id", "a\nb", "--", "echo", POD_TARGET,
            ],
            "--run-id",
        ),
        // ---- k8s run: only inside an Indexed Job's pod
        row(
            &["k8s", "run", "--out", dir, "--", "echo", "-n", "1"],
            "JOB_COMPLETION_INDEX; it is not set here",
        ),
        // Shards (docs/shards.md).
        row(
            &["echo", "--shard", "3/2", "-n", "10"],
            "must be below the number of shards (1)",
        ),
        row(&["echo", "--shard", "2", "-n", "10"], "--shard takes I/N"),
        row(
            &["echo", "--shard", "0/0", "-n", "10"],
            "the number of shards must be at least 1",
        ),
        row(
            &["echo", "--shard", "a/b", "-n", "10"],
            "I and N must be whole numbers",
        ),
        row(
            &["http", "--shard", "0/5000", "-n", "10"],
            "at most 4096 shards",
        ),
        row(
            &["echo", "--shards", "3", "-n", "10"],
            "which is not set: give --shard I/N",
        ),
        row(
            &["echo", "--shard", "0/2", "--shards", "2"],
            "choose one of --shard I/N and --shards N",
        ),
        row(
            &["echo", "--shard", "2/3", "-c", "2", "-n", "10"],
            "shard 2 would get none",
        ),
        row(
            &["echo", "--shard", "2/3", "-n", "2"],
            "-n 2 cannot be shared over 3 shards",
        ),
        row(
            &["amqp", "--shard", "1/2", "-n", "1"],
            "-n 1 cannot be shared over 2 shards",
        ),
        row(
            &["echo", "--run-id", "r1", "-n", "10"],
            "give --shard I/N too",
        ),
        row(
            &["echo", "--shard", "0/2", "--run-id", "two words"],
            "printable characters",
        ),
        row(
            &["echo", "--start-at", "yesterday", "-n", "10"],
            "--start-at takes an RFC 3339 time",
        ),
        row(&["echo", "--start-at", "1000", "-n", "10"], "in the past"),
        row(
            &["echo", "--start-at", "2020-01-01T00:00:00Z", "-n", "10"],
            "in the past",
        ),
        row(
            &["http", "--start-at", "99999999999999", "-n", "10"],
            "more than 24 hours ahead",
        ),
        row(
            &["connect", "--shard", "3/2"],
            "must be below the number of shards (1)",
        ),
        row(
            &["connect", "--shard", "2/3", "-n", "2"],
            "-n 2 connections cannot be shared over 3 shards",
        ),
        row(
            &[
                "connect",
                "--shard",
                "0/3",
                "--source",
                "127.0.0.2-127.0.0.3",
            ],
            "--source has 2 addresses",
        ),
        row(
            &["connect", "--start-at", "yesterday"],
            "--start-at takes an RFC 3339 time",
        ),
    ]
}

/// `wirebench merge FILES... -o never.json`, refused for `phrase`.
fn merge_row(fx: &Fixtures, files: &[&str], phrase: &'static str) -> Row {
    let mut args = vec!["merge".to_string()];
    args.extend(files.iter().map(|f| fx.path(f)));
    args.extend(["-o".to_string(), fx.path("never.json")]);
    Row {
        args,
        phrase,
        bounded_memory: false,
        forbidden: None,
    }
}

/// Runs every row and fails once, listing every row that misbehaved.
fn check(rows: Vec<Row>) {
    let mut failures = Vec::new();
    for r in &rows {
        let args: Vec<&str> = r.args.iter().map(String::as_str).collect();
        let what = format!("wirebench {}", r.args.join(" "));
        let mut p = if r.bounded_memory {
            let mut all = vec!["--as=4000000000", bin()];
            all.extend_from_slice(&args);
            Proc::spawn("prlimit", &all, false)
        } else {
            Proc::wirebench(&args)
        };
        let Some(status) = p.wait_for(Duration::from_secs(20)) else {
            failures.push(format!("{what}: still running after 20 s"));
            continue;
        };
        let stderr = p.stderr();
        if stderr.contains("panicked") {
            failures.push(format!("{what}: panicked:\n{stderr}"));
            continue;
        }
        if status.code() != Some(2) {
            failures.push(format!("{what}: exit {status}, want 2; stderr: {stderr}"));
            continue;
        }
        let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
        match lines.as_slice() {
            [one]
                if one.starts_with("wirebench: ")
                    && one.contains(r.phrase)
                    && !r.forbidden.is_some_and(|f| one.contains(f)) => {}
            _ => failures.push(format!(
                "{what}: want one line 'wirebench: ...{}...', got:\n{stderr}",
                r.phrase
            )),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} rows failed:\n{}",
        failures.len(),
        rows.len(),
        failures.join("\n")
    );
}

#[test]
fn bad_input() {
    let fx = Fixtures::new();
    assert!(Path::new(&fx.path("huge.toml")).exists());
    check(rows(&fx));
    assert!(
        !Path::new(&fx.path("never.json")).exists(),
        "a refused merge wrote its output"
    );
}
