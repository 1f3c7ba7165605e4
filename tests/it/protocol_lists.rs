//! Every list of protocols a user reads outside the code (Cargo's description, the
//! README's jobs table, docs/serve.md's title, `k8s render`'s help) names every
//! registered command (`registry::REGISTRY`): a protocol added without them fails here.

use clap::CommandFactory;
use std::path::Path;
use wirebench::cli::Cli;
use wirebench::registry::REGISTRY;

/// How prose names each registered protocol (Cargo's description). A name missing here
/// fails the first test: a new protocol says its prose name once, here.
const PROSE: &[(&str, &str)] = &[
    ("echo", "echo"),
    ("http", "HTTP"),
    ("amqp", "AMQP"),
    ("redis", "Redis"),
    ("ws", "WebSocket"),
    ("grpc", "gRPC"),
    ("connect", "connection"),
];

fn read(rel: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {rel}: {e}"))
}

/// The registered names, in registration order; `served`: only those `serve` runs.
fn names(served: bool) -> Vec<&'static str> {
    REGISTRY
        .iter()
        .filter(|e| !served || e.serves())
        .map(|e| e.name())
        .collect()
}

#[test]
fn cargos_description_names_every_registered_command() {
    let prose: Vec<&str> = PROSE.iter().map(|(n, _)| *n).collect();
    assert_eq!(prose, names(false), "PROSE and REGISTRY disagree");
    let cargo = read("Cargo.toml");
    let description = cargo
        .lines()
        .find_map(|l| l.strip_prefix("description = "))
        .expect("Cargo.toml has a description");
    for (name, word) in PROSE {
        assert!(
            description.contains(word),
            "Cargo.toml's description leaves out {name} ({word:?}): {description}"
        );
    }
}

#[test]
fn the_readme_jobs_table_has_a_row_for_every_command_and_server() {
    let readme = read("README.md");
    let rows: Vec<&str> = readme.lines().filter(|l| l.starts_with("| ")).collect();
    for name in names(false) {
        let command = format!("`wirebench {name} ");
        assert!(
            rows.iter().any(|r| r.contains(&command)),
            "README's jobs table has no row for `wirebench {name}`"
        );
    }
    let serve = format!("`wirebench serve {}`", names(true).join("\\|"));
    assert!(
        rows.iter().any(|r| r.contains(&serve)),
        "README's jobs table has no row for {serve}"
    );
}

#[test]
fn serve_md_is_titled_with_every_server() {
    let serve = read("docs/serve.md");
    let title = serve.lines().next().unwrap_or_default();
    let want = format!(
        "# `wirebench serve {}`: the built-in servers",
        names(true).join("|")
    );
    assert_eq!(title, want);
}

#[test]
fn k8s_renders_help_names_every_load_command() {
    let mut cli = Cli::command();
    cli.build();
    let render = cli
        .find_subcommand("k8s")
        .and_then(|k| k.find_subcommand("render"))
        .expect("k8s render");
    let load = render
        .get_arguments()
        .find(|a| a.get_id() == "load")
        .expect("k8s render's load argument");
    let help = load.get_help().map(|h| h.to_string()).unwrap_or_default();
    let want = format!("{} TARGET", names(false).join("|"));
    assert!(
        help.contains(&want),
        "k8s render's help: {help:?}, want {want:?}"
    );
}
