//! Protocols: each owns its bytes (codec, client session, server session) and its
//! config, in its folder; `plugin::Protocol` is what the commands see of it.

pub mod amqp;
pub mod echo;
pub mod http;
pub mod plugin;
pub mod redis;

/// Every protocol, once: its name (`wirebench NAME`, `serve NAME`). Adding a protocol
/// adds one line here, as in the command enums (cli.rs) and the dispatch (lib.rs).
pub const REGISTRY: &[&str] = &[
    <echo::plugin::Echo as plugin::Protocol>::NAME,
    <http::plugin::Http as plugin::Protocol>::NAME,
    <amqp::plugin::Amqp as plugin::Protocol>::NAME,
    <redis::plugin::Redis as plugin::Protocol>::NAME,
];

#[cfg(test)]
mod tests {
    use super::plugin::{Aim, Protocol};
    use super::{
        amqp::plugin::Amqp, echo::plugin::Echo, http::plugin::Http, redis::plugin::Redis, REGISTRY,
    };
    use crate::cli::{Cli, Command};
    use clap::{CommandFactory, Parser};

    #[test]
    fn the_registry_lists_each_protocol_once_with_its_load_and_serve_commands() {
        let mut names = REGISTRY.to_vec();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), REGISTRY.len(), "a protocol registered twice");
        let cli = Cli::command();
        let serve = cli.find_subcommand("serve").expect("serve command");
        for name in REGISTRY {
            assert!(cli.find_subcommand(name).is_some(), "no `wirebench {name}`");
            assert!(serve.find_subcommand(name).is_some(), "no `serve {name}`");
        }
        // Every served protocol is registered.
        assert_eq!(serve.get_subcommands().count(), REGISTRY.len());
    }

    fn parse(args: &[&str]) -> Command {
        let argv = ["wirebench"].iter().chain(args).copied();
        Cli::try_parse_from(argv).expect("flags parse").command
    }

    fn aim() -> Aim {
        Aim {
            addr: "127.0.0.1:9".parse().expect("literal address"),
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
        let l = Amqp::load(&cfg);
        assert_eq!((l.threads, l.connections), (1, 2));
        assert_eq!(l.plan, crate::engine::Plan::Count(24));

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
    }
}
