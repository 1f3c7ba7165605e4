//! `serve --metrics-listen`: the server's own counters on /metrics, scraped by a real
//! Prometheus while a load runs against it; its last scrape equals the server's final
//! counters line. Bad addresses are refused before the server listens.

use crate::common::{free_port, have, wait_until, Proc, Served, RUN_LIMIT};
use crate::metrics_live::{get, prometheus_scraping, range, sample};

/// The number after `word` in a counters line ("requests 5,000" -> 5000).
pub fn field(line: &str, word: &str) -> f64 {
    let at = line
        .find(word)
        .unwrap_or_else(|| panic!("{word:?} in {line}"))
        + word.len();
    let digits: String = line[at..]
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == ',')
        .filter(char::is_ascii_digit)
        .collect();
    digits.parse().unwrap()
}

/// The load: `n` HTTP requests over 4 connections against `addr`, all answered.
fn http_load(addr: &str, n: &str) {
    let url = format!("http://{addr}/");
    let mut p = Proc::wirebench(&["http", &url, "-n", n, "-c", "4", "-q"]);
    assert_eq!(p.finish(RUN_LIMIT), 0, "{}", p.stderr());
}

#[test]
fn a_real_prometheus_scrapes_serve_and_its_last_point_is_the_final_line() {
    if !have("prometheus") {
        return;
    }
    let port = free_port();
    let (mut prom_proc, prom, _dir) = prometheus_scraping(port);
    let listen = format!("127.0.0.1:{port}");
    let mut served = Served::start_as("http", &["--threads", "2", "--metrics-listen", &listen]);
    http_load(&served.addr(), "6000");
    http_load(&served.addr(), "4000");
    let labels = "{job=\"wb\",protocol=\"http\"}";
    let last = |name: &str| range(&prom, &format!("{name}{labels}")).last().copied();
    // Every connection of both loads closed, and Prometheus has scraped that.
    assert!(
        wait_until(RUN_LIMIT, || last("wirebench_server_requests_total")
            == Some(10_000.0)
            && last("wirebench_server_connections_closed_total") == Some(8.0)),
        "prometheus never saw the final counts: {:?}",
        range(&prom, &format!("wirebench_server_requests_total{labels}"))
    );
    let line = served.stop_final_line();
    for (name, word) in [
        ("wirebench_server_connections_accepted_total", "accepts "),
        ("wirebench_server_connections_closed_total", "closes "),
        ("wirebench_server_requests_total", "requests "),
        ("wirebench_server_reads_total", "reads "),
        ("wirebench_server_bytes_received_total", "bytes in "),
        ("wirebench_server_bytes_sent_total", " out "),
    ] {
        assert_eq!(
            last(name),
            Some(field(&line, word)),
            "{name} against {line}"
        );
    }
    assert_eq!(last("wirebench_server_connections_open"), Some(0.0));
    prom_proc.terminate();
}

#[test]
fn serve_with_processes_publishes_the_sum_of_its_workers() {
    let port = free_port();
    let metrics = format!("127.0.0.1:{port}");
    let mut served = Served::start_as("http", &["--processes", "2", "--metrics-listen", &metrics]);
    http_load(&served.addr(), "3000");
    let scraped = |name: &str| {
        get(&metrics, "/metrics", None)
            .and_then(|(_, _, body)| sample(&body, &format!("{name}{{protocol=\"http\"}}")))
    };
    assert!(wait_until(RUN_LIMIT, || scraped(
        "wirebench_server_connections_closed_total"
    ) == Some(4.0)
        && scraped("wirebench_server_requests_total") == Some(3000.0)));
    let line = served.stop_final_line();
    assert_eq!(field(&line, "requests "), 3000.0, "{line}");
    assert_eq!(field(&line, "accepts "), 4.0, "{line}");
}

#[test]
fn serve_refuses_a_busy_or_remote_metrics_address_before_it_listens() {
    let held = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let busy = held.local_addr().unwrap().to_string();
    let listen = format!("127.0.0.1:{}", free_port());
    for (addr, says) in [
        (busy.as_str(), "cannot listen there: the address is in use"),
        (
            "0.0.0.0:9464",
            "is not a loopback address: add --metrics-allow-remote",
        ),
    ] {
        let mut p = Proc::wirebench(&[
            "serve",
            "echo",
            "--listen",
            &listen,
            "--metrics-listen",
            addr,
        ]);
        assert_eq!(p.finish(RUN_LIMIT), 2, "{addr}");
        let err = p.stderr();
        assert!(err.contains(says), "{addr}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "one sentence: {err}");
        assert!(
            !p.stdout().contains("listening"),
            "never served: {}",
            p.stdout()
        );
    }
    let mut p = Proc::wirebench(&["serve", "echo", "--metrics-linger", "1s"]);
    assert_eq!(p.finish(RUN_LIMIT), 2, "serve takes no --metrics-linger");
}
