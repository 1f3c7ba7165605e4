//! Protocols: each owns its bytes (codec, client session, server session) and its
//! config, in its folder; `plugin::Protocol` is what the commands see of it, and what
//! a suite and the schema see (`entry::Entry`, `registered.rs`); `base.rs` is what
//! every protocol's load shares, `generator.rs` the external generators a protocol
//! may declare.

pub mod amqp;
pub mod base;
pub mod echo;
pub mod entry;
pub mod generator;
pub mod grpc;
pub mod h2;
pub mod http;
pub mod plugin;
pub mod proxied;
pub mod redis;
pub mod registered;
pub mod suite_point;
pub mod ws;

#[cfg(test)]
mod tests {
    use super::grpc::plugin::Grpc;
    use super::plugin::{Aim, Protocol};
    use super::ws::plugin::Ws;
    use super::{amqp::plugin::Amqp, echo::plugin::Echo, http::plugin::Http, redis::plugin::Redis};
    use crate::cli::{Cli, Command};
    use crate::registry::REGISTRY;
    use clap::{CommandFactory, Parser};

    #[test]
    fn the_registry_lists_each_protocol_once_with_its_load_and_serve_commands() {
        let mut names = crate::registry::names();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), REGISTRY.len(), "a protocol registered twice");
        let cli = Cli::command();
        let serve = cli.find_subcommand("serve").expect("serve command");
        for e in REGISTRY {
            let name = e.name();
            assert!(cli.find_subcommand(name).is_some(), "no `wirebench {name}`");
            assert_eq!(
                serve.find_subcommand(name).is_some(),
                e.serves(),
                "`serve {name}` and its entry disagree"
            );
        }
        // Every served protocol is registered.
        let served = REGISTRY.iter().filter(|e| e.serves()).count();
        assert_eq!(serve.get_subcommands().count(), served);
        // Each protocol's entry is its `Protocol` impl (`registered.rs`): the typed
        // list below is the registry's protocols, no more, no fewer.
        let typed = [
            Echo::NAME,
            Http::NAME,
            Amqp::NAME,
            Redis::NAME,
            Ws::NAME,
            Grpc::NAME,
        ];
        for name in typed {
            assert_eq!(crate::registry::find(name).map(|e| e.name()), Some(name));
        }
        let mut served: Vec<&str> = REGISTRY
            .iter()
            .filter(|e| e.serves())
            .map(|e| e.name())
            .collect();
        served.sort_unstable();
        let mut typed = typed.to_vec();
        typed.sort_unstable();
        assert_eq!(
            typed, served,
            "a registered protocol this module's tests do not name"
        );
    }

    #[test]
    fn a_block_merge_is_found_by_the_results_kind() {
        // An unknown kind merges by the counter sum: no merge of its own.
        let l = crate::stats::Latency::new();
        let r = crate::stats::RunResult::builder(crate::stats::Measured {
            kind: "x",
            target: String::new(),
            config: serde_json::json!({}),
            started_unix_ms: 0,
            elapsed_s: 1.0,
            totals: Default::default(),
            errors: Default::default(),
            unit: crate::stats::Unit::new("x", "x", true),
            latency: &l,
            client_cpu_s: 0.0,
        })
        .finish(None);
        let v = serde_json::json!({});
        assert!(crate::registry::block_merge("echo")("echo", &[&v], &r).is_none());
        assert!(crate::registry::block_merge("connect")("connect", &[&v], &r).is_some());
        assert!(crate::registry::block_merge("amqp")("amqp", &[&v], &r).is_some());
        assert!(crate::registry::block_merge("amqp")("suite", &[&v], &r).is_none());
    }

    fn parse(args: &[&str]) -> Command {
        let argv = ["wirebench"].iter().chain(args).copied();
        Cli::try_parse_from(argv).expect("flags parse").command
    }

    fn aim() -> Aim {
        Aim {
            addr: crate::net::unix::Dest::Tcp("127.0.0.1:9".parse().expect("literal address")),
            host: "127.0.0.1".into(),
            builtin: false,
            tls: false,
        }
    }

    fn row<'a>(rows: &'a [(&'static str, String)], name: &str) -> &'a str {
        rows.iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.as_str())
            .unwrap_or_else(|| panic!("no {name} row in {rows:?}"))
    }

    #[test]
    fn each_protocols_plan_line_renders_from_its_config() {
        let Command::Echo(c) = parse(&["echo", "127.0.0.1:9", "-n", "500", "--size", "100"]) else {
            panic!("not echo")
        };
        let cfg = Echo::config(&c.proto, &c.load).expect("valid echo flags");
        let rows = Echo::plan_rows(&cfg, &aim());
        assert_eq!(row(&rows, "plan"), "500 requests");
        assert_eq!(row(&rows, "size"), "100 payload bytes (128-byte frames)");
        assert_eq!(row(&rows, "target"), "127.0.0.1:9");

        let Command::Http(c) = parse(&[
            "http",
            "http://127.0.0.1:9/x",
            "-d",
            "3s",
            "--body-size",
            "10",
        ]) else {
            panic!("not http")
        };
        let cfg = Http::config(&c.proto, &c.load).expect("valid http flags");
        let rows = Http::plan_rows(&cfg, &aim());
        assert_eq!(row(&rows, "plan"), "for 3.000s");
        assert_eq!(row(&rows, "target"), "http://127.0.0.1:9/x (127.0.0.1:9)");
        assert!(row(&rows, "request").starts_with("POST with body 10 bytes (a-z pattern), "));

        let Command::Amqp(c) = parse(&[
            "amqp",
            "amqp://guest:guest@127.0.0.1:9/",
            "--mode",
            "churn",
            "--clients",
            "6",
            "--messages",
            "4",
            "--concurrency",
            "2",
            "-t",
            "1",
        ]) else {
            panic!("not amqp")
        };
        let cfg = Amqp::config(&c.proto, &c.load).expect("valid amqp flags");
        let rows = Amqp::plan_rows(&cfg, &aim());
        assert_eq!(row(&rows, "plan"), "6 clients, 2 at once, 4 messages each");
        assert_eq!(row(&rows, "mode"), "churn");
        // AMQP's own flags decided the shared load shape, validated once.
        let l = &cfg.base.load;
        assert_eq!((l.shape.threads, l.shape.connections), (1, 2));
        assert_eq!(l.shape.plan, crate::engine::Plan::Count(24));

        let Command::Redis(c) = parse(&[
            "redis",
            "127.0.0.1:9",
            "-n",
            "70",
            "--command",
            "mixed:9:1",
            "--distribution",
            "zipf",
            "--resp3",
            "--db",
            "2",
        ]) else {
            panic!("not redis")
        };
        let cfg = Redis::config(&c.proto, &c.load).expect("valid redis flags");
        let rows = Redis::plan_rows(&cfg, &aim());
        assert_eq!(row(&rows, "plan"), "70 requests");
        assert_eq!(row(&rows, "keys"), "10,000 keys, zipf:0.99");
        assert_eq!(
            row(&rows, "protocol"),
            "RESP3, each connection opens with HELLO 3, SELECT 2"
        );

        let Command::Ws(c) = parse(&["ws", "ws://127.0.0.1:9/chat", "-n", "30", "--size", "10"])
        else {
            panic!("not ws")
        };
        let cfg = Ws::config(&c.proto, &c.load).expect("valid ws flags");
        let rows = Ws::plan_rows(&cfg, &aim());
        assert_eq!(row(&rows, "plan"), "30 requests");
        assert_eq!(row(&rows, "target"), "ws://127.0.0.1:9/chat (127.0.0.1:9)");
        assert_eq!(row(&rows, "messages"), "binary, 10 bytes, one frame each");

        let Command::Grpc(c) = parse(&[
            "grpc",
            "127.0.0.1:9",
            "--call",
            "a.B/C",
            "-n",
            "5",
            "-m",
            "4",
        ]) else {
            panic!("not grpc")
        };
        let cfg = Grpc::config(&c.proto, &c.load).expect("valid grpc flags");
        let rows = Grpc::plan_rows(&cfg, &aim());
        assert_eq!(row(&rows, "plan"), "5 requests");
        assert_eq!(
            row(&rows, "target"),
            "http://127.0.0.1:9/a.B/C (127.0.0.1:9)"
        );
        assert_eq!(row(&rows, "message"), "empty (0 bytes)");
        assert_eq!(
            row(&rows, "protocol"),
            "gRPC unary over h2c, 4 calls in flight per connection (streams)"
        );
    }

    /// Every protocol's config table holds the shared rows, once each, after its own
    /// (`Base::rows`), and its target row first.
    #[test]
    fn every_protocols_plan_holds_the_shared_rows() {
        fn names(argv: &[&str]) -> Vec<&'static str> {
            let cli = Cli::try_parse_from(["wirebench"].iter().chain(argv)).expect("flags parse");
            match cli.command {
                Command::Echo(c) => rows::<Echo>(&Echo::config(&c.proto, &c.load).unwrap()),
                Command::Http(c) => rows::<Http>(&Http::config(&c.proto, &c.load).unwrap()),
                Command::Redis(c) => rows::<Redis>(&Redis::config(&c.proto, &c.load).unwrap()),
                Command::Ws(c) => rows::<Ws>(&Ws::config(&c.proto, &c.load).unwrap()),
                Command::Grpc(c) => rows::<Grpc>(&Grpc::config(&c.proto, &c.load).unwrap()),
                _ => panic!("not a load"),
            }
        }
        fn rows<P: Protocol>(cfg: &super::plugin::ConfigOf<P>) -> Vec<&'static str> {
            P::plan_rows(cfg, &aim())
                .into_iter()
                .map(|(k, _)| k)
                .collect()
        }
        let shared = [
            "threads",
            "connections",
            "pipeline",
            "plan",
            "rate",
            "timeout",
            "warmup",
            "tls",
            "nodelay",
            "coalesce",
        ];
        for (argv, own) in [
            (&["echo", "127.0.0.1:9"][..], &["size"][..]),
            (
                &["http", "http://127.0.0.1:9/"],
                &["request", "keep-alive", "expect"],
            ),
            (
                &["redis", "127.0.0.1:9"],
                &["command", "keys", "size", "protocol"],
            ),
            (&["ws", "ws://127.0.0.1:9/"], &["messages", "subprotocol"]),
            (
                &["grpc", "127.0.0.1:9", "--call", "a.B/C"],
                &["message", "protocol", "metadata", "deadline"],
            ),
        ] {
            let got = names(argv);
            let want: Vec<&str> = ["target"]
                .iter()
                .chain(own)
                .chain(&shared)
                .copied()
                .collect();
            assert_eq!(got, want, "{argv:?}");
        }
    }

    #[test]
    fn amqp_says_its_ramp_inside_its_plan_line_like_every_protocol() {
        let Command::Amqp(c) = parse(&[
            "amqp",
            "amqp://guest:guest@127.0.0.1:9/",
            "-n",
            "100",
            "--ramp",
            "2s",
        ]) else {
            panic!("not amqp")
        };
        let cfg = Amqp::config(&c.proto, &c.load).expect("valid amqp flags");
        let rows = Amqp::plan_rows(&cfg, &aim());
        assert!(
            row(&rows, "plan")
                .starts_with("100 messages; ramp: connection starts spread over 2.000s, "),
            "{rows:?}"
        );
        assert!(
            rows.iter().all(|(k, _)| *k != "ramp"),
            "a ramp row of its own: {rows:?}"
        );
        let Command::Echo(c) = parse(&["echo", "127.0.0.1:9", "-n", "100", "--ramp", "2s"]) else {
            panic!("not echo")
        };
        let cfg = Echo::config(&c.proto, &c.load).expect("valid echo flags");
        let echo = Echo::plan_rows(&cfg, &aim());
        assert_eq!(
            row(&echo, "plan").strip_prefix("100 requests"),
            row(&rows, "plan").strip_prefix("100 messages"),
            "the ramp reads the same in every protocol's plan line"
        );
    }
}
