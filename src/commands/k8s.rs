//! `wirebench k8s`: a load command as a Kubernetes Indexed Job (deploy/k8s/README.md).
//!
//! `render` fills deploy/k8s/indexed-job.yaml: N pods, each running its shard of the
//! load (`--shards N` with the JOB_COMPLETION_INDEX Kubernetes sets), all starting the
//! measured phase at one `--start-at` and recording one `--run-id`, so `wirebench
//! merge` can add them up exactly. `run` is the pod's side: there is no shell in the
//! FROM-scratch image, so wirebench itself writes the result file and prints it on one
//! line after a marker, where `kubectl logs` finds it.

use crate::cli::{self, Cli, K8sCommand, K8sRenderArgs, K8sRunArgs};
use crate::error::{Error, Result};
use std::io::Write;
use std::net::IpAddr;
use std::path::Path;

/// The manifest every render fills in: one file, readable on its own.
const TEMPLATE: &str = include_str!("../../deploy/k8s/indexed-job.yaml");

/// At most this many shards: far past what one server under test needs, and small
/// enough that merging that many results stays quick.
pub const MAX_SHARDS: u32 = 1000;

/// Starts a pod's one-line result in its log (deploy/k8s/collect.sh looks for it).
pub const RESULT_MARKER: &str = "WIREBENCH-RESULT ";

/// Where the pods write results (the Job's `results` volume).
const RESULTS_DIR: &str = "/results";

/// Flags render sets on every pod's load command itself.
const SET_BY_RENDER: &[&str] = &["--shard", "--shards", "--start-at", "--run-id", "--json"];

/// Job names stay at most this long: the Job controller puts the name in a label (63
/// characters at most) and the pods' names add an index and a suffix to it.
const MAX_NAME: usize = 52;

/// `dispatch` runs a pod's load command: the command dispatch, handed in by it, so
/// that this module does not import its parent.
pub fn run(c: &K8sCommand, dispatch: fn(Cli) -> Result<()>) -> Result<()> {
    match c {
        K8sCommand::Render(a) => {
            let generated = a.run_id.is_none();
            let (yaml, run_id) = render(a, crate::clock::unix_ms())?;
            if generated {
                eprintln!("k8s render: run id {run_id} (choose one with --run-id)");
            }
            print!("{yaml}");
            Ok(())
        }
        K8sCommand::Run(a) => run_shard(a, dispatch),
    }
}

/// The filled-in manifest and its run id, for a render at `now_ms` (Unix ms).
pub fn render(a: &K8sRenderArgs, now_ms: u64) -> Result<(String, String)> {
    if !a.stray.is_empty() {
        let stray: Vec<String> = a
            .stray
            .iter()
            .map(|w| crate::cli_help::shell_word(w))
            .collect();
        return Err(Error::usage(format!(
            "put the load command after --: {} k8s render --shards {} -- {}",
            crate::cli_help::program(),
            a.shards,
            stray.join(" ")
        )));
    }
    if a.load.is_empty() {
        return Err(Error::usage(format!(
            "k8s render needs the load command after --, e.g. {} k8s render --shards 3 -- echo 10.0.0.5:9000 -d 30s",
            crate::cli_help::program()
        )));
    }
    if a.shards == 0 || a.shards > MAX_SHARDS {
        return Err(Error::usage(format!(
            "--shards must be between 1 and {MAX_SHARDS}, not {}",
            a.shards
        )));
    }
    check_load(&a.load, SET_BY_RENDER)?;
    check_target(&a.load)?;
    let start_at = match (&a.start_at, &a.start_in) {
        (Some(t), _) => check_start_at(t)?,
        (None, d) => {
            let text = d.as_deref().unwrap_or("60s");
            let d = crate::units::parse_duration(text)
                .map_err(|e| Error::usage(format!("--start-in: {e}")))?;
            rfc3339_utc(now_ms + d.as_millis() as u64)
        }
    };
    let run_id = match &a.run_id {
        Some(id) => check_text("--run-id", id)?,
        None => generated_run_id(now_ms),
    };
    let image = match &a.image {
        Some(i) if i.is_empty() || i.chars().any(char::is_whitespace) => {
            return Err(Error::usage(format!(
                "--image {i:?} is not an image reference (e.g. registry.example:5000/wirebench:1.0)"
            )))
        }
        Some(i) => check_text("--image", i)?,
        None => format!("wirebench:{}", env!("CARGO_PKG_VERSION")),
    };
    let namespace = match &a.namespace {
        Some(ns) if !is_dns_label(ns, 63) => {
            return Err(Error::usage(format!(
                "--namespace {ns:?} is not a Kubernetes namespace name (lowercase letters, digits and '-', at most 63)"
            )))
        }
        Some(ns) => format!("  namespace: {}\n", yaml_str(ns)),
        None => String::new(),
    };
    let name = job_name(&run_id);
    let shards = a.shards.to_string();
    let out_dir = format!("{RESULTS_DIR}/{name}");
    let mut args: Vec<&str> = vec!["k8s", "run", "--out", &out_dir, "--"];
    args.extend(a.load.iter().map(String::as_str));
    args.extend([
        "--shards",
        &shards,
        "--start-at",
        &start_at,
        "--run-id",
        &run_id,
    ]);
    let args: String = args
        .iter()
        .map(|s| format!("            - {}\n", arg_str(s)))
        .collect();
    let yaml = TEMPLATE
        .replace("{{name}}", &yaml_str(&name))
        .replace("{{namespace}}", &namespace)
        .replace("{{run_id}}", &yaml_str(&run_id))
        .replace("{{start_at}}", &yaml_str(&start_at))
        .replace("{{shards}}", &shards)
        .replace("{{image}}", &yaml_str(&image))
        .replace("{{args}}\n", &args);
    Ok((yaml, run_id))
}

/// Inside a pod: runs the load with `--json DIR/shard-INDEX.json`, then prints that
/// result on one line after `RESULT_MARKER` (also when the run fell short, exit 1).
fn run_shard(a: &K8sRunArgs, dispatch: fn(Cli) -> Result<()>) -> Result<()> {
    if a.load.is_empty() {
        return Err(Error::usage("k8s run needs the load command after --"));
    }
    let index = std::env::var("JOB_COMPLETION_INDEX").map_err(|_| {
        Error::usage(
            "k8s run belongs in a pod of a Kubernetes Indexed Job, which sets JOB_COMPLETION_INDEX; it is not set here (run the load command itself)",
        )
    })?;
    let index: u32 = index.parse().map_err(|_| {
        Error::usage(format!(
            "JOB_COMPLETION_INDEX={index:?} is not a shard index"
        ))
    })?;
    check_load(&a.load, &["--json"])?;
    std::fs::create_dir_all(&a.out)
        .map_err(|e| Error::usage(format!("cannot create {}: {e}", a.out.display())))?;
    let file = a.out.join(format!("shard-{index}.json"));
    // A file left by an earlier attempt must not pass for this one's result.
    let _ = std::fs::remove_file(&file);
    let argv = std::iter::once("wirebench".to_string())
        .chain(a.load.iter().cloned())
        .chain(["--json".to_string(), file.to_string_lossy().into_owned()]);
    let parsed = cli::parse_from(argv)
        .map_err(|e| Error::usage(format!("the load command: {}", cli::error_line(&e))))?;
    let outcome = dispatch(parsed);
    print_result(&file)?;
    outcome
}

/// The result file as one line after the marker; nothing when the load wrote none.
fn print_result(file: &Path) -> Result<()> {
    let Ok(text) = std::fs::read_to_string(file) else {
        return Ok(());
    };
    let value: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| Error::runtime(format!("{} is not JSON: {e}", file.display())))?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "{RESULT_MARKER}{value}")
        .and_then(|_| out.flush())
        .map_err(|e| Error::runtime(format!("cannot print the result: {e}")))
}

/// The load command names a load (a registered protocol or `connect`), leaves the
/// flags in `forbidden` to k8s, and parses as the command itself would.
fn check_load(load: &[String], forbidden: &[&str]) -> Result<()> {
    let name = load[0].as_str();
    // The registry lists every load command, connect included.
    let loads = crate::registry::names();
    if !loads.contains(&name) {
        return Err(Error::usage(format!(
            "'{name}' is not a load command (one of: {})",
            loads.join(", ")
        )));
    }
    for arg in load {
        let flag = arg.split('=').next().unwrap_or(arg);
        if let Some(f) = forbidden.iter().find(|f| **f == flag) {
            return Err(Error::usage(format!(
                "leave {f} out of the load command: k8s sets it for every pod"
            )));
        }
    }
    Ok(())
}

/// The load parses, and its target is one a pod can reach: given (no built-in server
/// per pod) and not loopback (a pod's loopback is the pod, not this machine).
fn check_target(load: &[String]) -> Result<()> {
    let argv = std::iter::once("wirebench".to_string()).chain(load.iter().cloned());
    let matches = cli::matches_from(argv)
        .map_err(|e| Error::usage(format!("the load command: {}", cli::error_line(&e))))?;
    let cmd = <cli::Cli as clap::CommandFactory>::command();
    let (Some((name, sub)), Some(def)) = (matches.subcommand(), cmd.find_subcommand(&load[0]))
    else {
        return Err(Error::usage(format!("'{}' is not a load command", load[0])));
    };
    let target = def
        .get_positionals()
        .find_map(|p| sub.get_raw(p.get_id().as_str()).and_then(|mut v| v.next()));
    let Some(target) = target.map(|t| t.to_string_lossy().into_owned()) else {
        return Err(Error::usage(format!(
            "the load command has no target, so each pod would measure a built-in server of its own: give the server's address as the pods see it (wirebench {name} ADDRESS ...)"
        )));
    };
    if is_loopback(&target) {
        return Err(Error::usage(format!(
            "'{target}' is a loopback address: in a pod that is the pod itself, not this machine; give the server's address as the pods see it (a Service name or an IP)"
        )));
    }
    Ok(())
}

/// Whether a target (HOST:PORT, RANGE:PORT, or a URL) names this machine's loopback.
fn is_loopback(target: &str) -> bool {
    let rest = target.split_once("://").map_or(target, |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or(rest);
    let hostport = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = match hostport.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(v6),
        None => hostport.rsplit_once(':').map_or(hostport, |(h, _)| h),
    };
    // A range (127.0.0.1-127.0.0.20) is loopback when its first address is.
    let first = host.split('-').next().unwrap_or(host);
    let lower = host.to_ascii_lowercase();
    lower == "localhost"
        || lower.ends_with(".localhost")
        || first.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// `--start-at` as the shards take it: Unix milliseconds or an RFC 3339 time (its
/// calendar is checked where it is used, by the load command's own parser).
fn check_start_at(t: &str) -> Result<String> {
    let digits = |s: &[u8]| !s.is_empty() && s.iter().all(u8::is_ascii_digit);
    let b = t.as_bytes();
    if digits(b) {
        // Seconds since 1970 would read as milliseconds in January 1970.
        if b.len() < 12 {
            return Err(Error::usage(format!(
                "--start-at {t} looks like Unix seconds: give Unix milliseconds or an RFC 3339 time"
            )));
        }
        return Ok(t.to_string());
    }
    let shaped = b.len() >= 20
        && [0..4, 5..7, 8..10, 11..13, 14..16, 17..19]
            .into_iter()
            .all(|r| digits(&b[r]))
        && (b[4], b[7], b[13], b[16]) == (b'-', b'-', b':', b':')
        && matches!(b[10], b'T' | b't' | b' ')
        && {
            let rest = &b[19..];
            let rest = match rest.strip_prefix(b".") {
                Some(f) => {
                    let n = f.iter().take_while(|c| c.is_ascii_digit()).count();
                    if n == 0 {
                        return Err(bad_start(t));
                    }
                    &f[n..]
                }
                None => rest,
            };
            matches!(rest, b"Z" | b"z")
                || (rest.len() == 6
                    && matches!(rest[0], b'+' | b'-')
                    && digits(&rest[1..3])
                    && rest[3] == b':'
                    && digits(&rest[4..6]))
        };
    if shaped {
        Ok(t.to_string())
    } else {
        Err(bad_start(t))
    }
}

fn bad_start(t: &str) -> Error {
    Error::usage(format!(
        "--start-at {t:?} is neither Unix milliseconds nor an RFC 3339 time (2026-05-01T12:00:00Z)"
    ))
}

/// A user string that goes into the manifest as it is: not empty, no control characters.
fn check_text(flag: &str, s: &str) -> Result<String> {
    if s.is_empty() || s.chars().any(char::is_control) {
        return Err(Error::usage(format!(
            "{flag} {s:?} must be one line of printable text"
        )));
    }
    Ok(s.to_string())
}

/// A DNS label as Kubernetes names want it: lowercase letters, digits and '-', starting
/// and ending with a letter or digit.
fn is_dns_label(s: &str, max: usize) -> bool {
    let ok = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    !s.is_empty()
        && s.len() <= max
        && s.chars().all(|c| ok(c) || c == '-')
        && s.starts_with(ok)
        && s.ends_with(ok)
}

/// `wirebench-` and the run id as a DNS label (other characters become '-').
fn job_name(run_id: &str) -> String {
    let mut slug = String::new();
    for c in run_id.chars().map(|c| c.to_ascii_lowercase()) {
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            slug.push(c);
        } else if !slug.is_empty() && !slug.ends_with('-') {
            slug.push('-');
        }
    }
    slug.truncate(MAX_NAME - "wirebench-".len());
    let slug = slug.trim_end_matches('-');
    if slug.is_empty() {
        "wirebench-run".to_string()
    } else {
        format!("wirebench-{slug}")
    }
}

/// wb-YYYYMMDD-HHMMSS-XXXX: sorts by time, a valid Job name, unique enough per user.
fn generated_run_id(now_ms: u64) -> String {
    let t = rfc3339_utc(now_ms);
    let seed = now_ms ^ (u64::from(std::process::id()) << 32);
    let tag = crate::rng::Rng::new(seed).next_u64() & 0xffff;
    format!(
        "wb-{}{}{}-{}{}{}-{tag:04x}",
        &t[0..4],
        &t[5..7],
        &t[8..10],
        &t[11..13],
        &t[14..16],
        &t[17..19]
    )
}

/// Unix milliseconds as RFC 3339 in UTC with milliseconds (2026-11-22T21:30:00.000Z).
pub fn rfc3339_utc(ms: u64) -> String {
    let secs = ms / 1000;
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (year, month, day) = crate::clock::civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        ms % 1000
    )
}

/// `s` as a YAML double-quoted scalar that reads back as exactly `s`: `\` and `"`
/// escaped, and every control character, with the few others YAML 1.1 readers refuse
/// raw (U+2028, U+2029, U+FEFF, U+FFFE, U+FFFF), written as an escape.
pub fn yaml_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control()
                || matches!(
                    c,
                    '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}'
                ) =>
            {
                out.push_str(&format!("\\u{:04x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A container argument: Kubernetes expands `$(VAR)` in args and reads `$$` as `$`,
/// so every `$` is doubled to reach the program as typed.
fn arg_str(s: &str) -> String {
    yaml_str(&s.replace('$', "$$"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_k8s_flags_satisfy_clap() {
        // A positional before a `last` one is a shape clap checks only in debug builds.
        <cli::Cli as clap::CommandFactory>::command().debug_assert();
    }

    #[test]
    fn civil_dates_round_the_calendar() {
        assert_eq!(rfc3339_utc(0), "1970-01-01T00:00:00.000Z");
        // 2000-02-29 (a leap day of a century leap year) 12:34:56.789.
        assert_eq!(rfc3339_utc(951_827_696_789), "2000-02-29T12:34:56.789Z");
        assert_eq!(rfc3339_utc(1_767_225_599_999), "2025-12-31T23:59:59.999Z");
        assert_eq!(rfc3339_utc(4_107_542_400_000), "2100-03-01T00:00:00.000Z");
    }

    #[test]
    fn yaml_strings_escape_what_yaml_would_misread() {
        assert_eq!(yaml_str("a: \"b\"\n#c"), r#""a: \"b\"\n#c""#);
        assert_eq!(
            yaml_str("x\\y\u{7f}\u{85}\u{2028}é"),
            r#""x\\y\u007f\u0085\u2028é""#
        );
        assert_eq!(arg_str("$(HOME)$$"), r#""$$(HOME)$$$$""#);
    }

    #[test]
    fn loopback_targets_in_every_form() {
        for t in [
            "127.0.0.1:9000",
            "127.0.0.2-127.0.0.20:9000",
            "[::1]:80",
            "localhost:80",
            "http://127.0.0.1:8080/x",
            "http://LOCALHOST/",
            "amqp://guest:guest@127.0.0.1:5672/%2f",
            "amqp://u:p@[::1]:5672",
        ] {
            assert!(is_loopback(t), "{t}");
        }
        for t in [
            "10.0.0.5:9000",
            "echo.bench.svc:9000",
            "http://web.default.svc.cluster.local/",
            "amqp://guest:guest@rabbit:5672/",
            "[fd00::1]:80",
            "198.18.0.1-198.18.0.9:9000",
        ] {
            assert!(!is_loopback(t), "{t}");
        }
    }

    #[test]
    fn job_names_are_dns_labels() {
        assert_eq!(
            job_name("wb-20261122-213000-1a2b"),
            "wirebench-wb-20261122-213000-1a2b"
        );
        assert_eq!(job_name("Run \"7\": a/b\n"), "wirebench-run-7-a-b");
        assert_eq!(job_name("::"), "wirebench-run");
        let long = job_name(&"x".repeat(200));
        assert!(long.len() <= MAX_NAME && is_dns_label(&long, 63), "{long}");
        let id = generated_run_id(1_767_225_599_999);
        assert!(
            id.starts_with("wb-20251231-235959-") && id.len() == 23,
            "{id}"
        );
        assert!(is_dns_label(&job_name(&id), 63));
    }

    #[test]
    fn start_times_in_both_forms() {
        for ok in [
            "1767225600000",
            "2026-05-01T12:00:00Z",
            "2026-05-01T12:00:00.250+02:00",
            "2026-05-01 12:00:00z",
        ] {
            assert_eq!(check_start_at(ok).ok().as_deref(), Some(ok));
        }
        for bad in [
            "1767225600",
            "soon",
            "2026-05-01",
            "2026-05-01T12:00:00",
            "2026-05-01T12:00:00.Z",
        ] {
            assert!(check_start_at(bad).is_err(), "{bad}");
        }
    }
}
