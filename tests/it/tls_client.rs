//! The client side of TLS against real peers, with a CA, server and client
//! certificates the test makes with openssl: `wirebench http https://` speaking what
//! nginx chooses by ALPN (h2 on an `ssl http2` listener, HTTP/1.1 on a plain `ssl` one;
//! `--http1.1`, `--h2`), mutual TLS (`--cert`/`--key`) against nginx with
//! `ssl_verify_client on`, `serve http --tls --client-ca` against curl, gRPC over TLS
//! against `serve grpc --tls`; counts from nginx's access log, each line's protocol
//! asserted. Bad files and flags: one sentence, exit 2.

use crate::common::*;
use crate::http_support::*;
use std::process::Command;

/// A CA, a server certificate it signed (localhost, wirebench.test, 127.0.0.1) and a client
/// certificate it signed, as PEM files in a temp directory.
struct Pki {
    dir: TempPath,
}

impl Pki {
    fn make() -> Option<Pki> {
        if !have("openssl") {
            missing("openssl is not installed; the TLS peer tests are skipped");
            return None;
        }
        let dir = TempPath::new("pki", "");
        std::fs::create_dir_all(dir.path()).unwrap();
        let p = |f: &str| dir.path().join(f).to_str().unwrap().to_string();
        std::fs::write(
            p("server.ext"),
            "subjectAltName=DNS:localhost,DNS:wirebench.test,IP:127.0.0.1\nbasicConstraints=critical,CA:FALSE\nextendedKeyUsage=serverAuth\n",
        )
        .unwrap();
        std::fs::write(
            p("client.ext"),
            "basicConstraints=critical,CA:FALSE\nextendedKeyUsage=clientAuth\n",
        )
        .unwrap();
        let ec = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
        let steps = [
            format!("req -x509 {ec} -subj /CN=wirebench-test-ca -days 2 -keyout ca.key -out ca.pem"),
            format!("req {ec} -subj /CN=localhost -keyout server.key -out server.csr"),
            "x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -extfile server.ext -out server.pem".into(),
            format!("req {ec} -subj /CN=wirebench-client -keyout client.key -out client.csr"),
            "x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -extfile client.ext -out client.pem".into(),
        ];
        for step in steps {
            let out = Command::new("openssl")
                .args(step.split(' '))
                .current_dir(dir.path())
                .output()
                .expect("run openssl");
            assert!(
                out.status.success(),
                "openssl {step}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        Some(Pki { dir })
    }

    fn path(&self, f: &str) -> String {
        self.dir.path().join(f).to_str().unwrap().to_string()
    }

    /// nginx's server block lines for TLS with the server certificate, and
    /// `extra` (client verification).
    fn nginx_tls(&self, extra: &str) -> String {
        format!(
            "ssl_certificate {};\n    ssl_certificate_key {};\n    {extra}",
            self.path("server.pem"),
            self.path("server.key")
        )
    }
}

fn https(n: &Nginx, path: &str) -> String {
    format!("https://localhost:{}{path}", n.port)
}

/// Every access-log line ends with this protocol (`$server_protocol`).
fn all_over(lines: &[String], protocol: &str) -> bool {
    lines
        .iter()
        .all(|l| l.starts_with("200 ") && l.ends_with(protocol))
}

#[test]
fn https_speaks_what_nginx_chooses_by_alpn() {
    let Some(pki) = Pki::make() else { return };
    if !have("nginx") {
        return missing("nginx is not installed");
    }
    let ca = pki.path("ca.pem");
    let h2 = Nginx::start_with(" ssl http2", &pki.nginx_tls(""));
    let url = https(&h2, "/");

    // Offered h2 and http/1.1, nginx chooses h2: streams, and every line HTTP/2.0.
    let r = run_json(&[
        "http",
        &url,
        "--ca",
        &ca,
        "-n",
        "2000",
        "-t",
        "1",
        "-c",
        "4",
        "--max-streams",
        "8",
    ]);
    r.assert_clean(2000);
    assert_eq!(r.json()["config"]["http_version"], "2", "{}", r.explain());
    assert_eq!(r.json()["config"]["alpn"], "h2");
    assert_eq!(r.json()["config"]["pipeline"], 8);
    assert_eq!(r.u("/totals/connections"), 4, "{}", r.explain());
    let lines = h2.logged(2000);
    assert_eq!(lines.len(), 2000);
    assert!(all_over(&lines, " HTTP/2.0"), "{:?}", &lines[..2]);

    // --h2 offers only h2: the same.
    let r = run_json(&["http", "--h2", &url, "--ca", &ca, "-n", "500", "-c", "2"]);
    r.assert_clean(500);
    let lines = h2.logged(2500);
    assert_eq!(lines.len(), 2500);
    assert!(all_over(&lines[2000..], " HTTP/2.0"));

    // --http1.1 offers only http/1.1.
    let r = run_json(&[
        "http",
        "--http1.1",
        &url,
        "--ca",
        &ca,
        "-n",
        "500",
        "-c",
        "2",
    ]);
    r.assert_clean(500);
    assert_eq!(r.json()["config"]["http_version"], "1.1");
    assert!(r.json()["config"]["alpn"].is_null());
    let lines = h2.logged(3000);
    assert_eq!(lines.len(), 3000);
    assert!(all_over(&lines[2500..], " HTTP/1.1"), "{:?}", &lines[2500]);
    drop(h2);

    // A listener without http2: nginx chooses http/1.1, and so does the load.
    let h1 = Nginx::start_with(" ssl", &pki.nginx_tls(""));
    let r = run_json(&[
        "http",
        &https(&h1, "/"),
        "--ca",
        &ca,
        "-n",
        "500",
        "-c",
        "2",
    ]);
    r.assert_clean(500);
    assert_eq!(r.json()["config"]["http_version"], "1.1");
    assert_eq!(r.json()["config"]["alpn"], "http/1.1");
    let lines = h1.logged(500);
    assert_eq!(lines.len(), 500);
    assert!(all_over(&lines, " HTTP/1.1"));

    // --h2 against it: one sentence, exit 2, nothing sent.
    let p = Proc::wirebench(&["http", "--h2", &https(&h1, "/"), "--ca", &ca, "-n", "10"]);
    let (code, said) = finished(p);
    assert_eq!(code, 2, "{said}");
    assert!(said.contains("does not speak HTTP/2 over TLS"), "{said}");
    // --max-streams with a server that chose HTTP/1.1.
    let p = Proc::wirebench(&["http", &https(&h1, "/"), "--ca", &ca, "--max-streams", "4"]);
    let (code, said) = finished(p);
    assert_eq!(code, 2, "{said}");
    assert!(said.contains("chose http/1.1 by ALPN"), "{said}");
    assert_eq!(h1.logged(500).len(), 500);
}

/// A run that ends, its exit code and its one stderr line.
fn finished(mut p: Proc) -> (i32, String) {
    let code = p.finish(RUN_LIMIT);
    (code, assert_one_line_error(&p.stderr(), "the run"))
}

#[test]
fn mutual_tls_with_nginx_verifying_client_certificates() {
    let Some(pki) = Pki::make() else { return };
    if !have("nginx") {
        return missing("nginx is not installed");
    }
    let (ca, cert, key) = (
        pki.path("ca.pem"),
        pki.path("client.pem"),
        pki.path("client.key"),
    );
    let verify = format!("ssl_verify_client on;\n    ssl_client_certificate {ca};");
    let n = Nginx::start_with(" ssl http2", &pki.nginx_tls(&verify));
    let url = https(&n, "/");
    for (version, extra, protocol, logged) in [
        ("2", "--h2", " HTTP/2.0", 400),
        ("1.1", "--http1.1", " HTTP/1.1", 800),
    ] {
        let r = run_json(&[
            "http", extra, &url, "--ca", &ca, "--cert", &cert, "--key", &key, "-n", "400", "-c",
            "2",
        ]);
        r.assert_clean(400);
        assert_eq!(r.json()["config"]["http_version"], version);
        let lines = n.logged(logged);
        assert_eq!(lines.len(), logged);
        assert!(
            all_over(&lines[logged - 400..], protocol),
            "{:?}",
            lines.last()
        );
    }

    // Without the certificate: nginx answers 400, a failed run (exit 1) whose error
    // text carries nginx's words, never a success.
    let r = run_json(&["http", &url, "--ca", &ca, "-n", "50", "-c", "1"]);
    assert_eq!(r.code, 1, "{}", r.explain());
    assert_eq!(r.u("/totals/ok"), 0);
    assert_eq!(r.u("/errors/status"), 50);
    let said = r.json()["error_texts"]["kept"][0]["text"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        said.starts_with(":status 400: 400 No required SSL certificate"),
        "{said}"
    );
}

#[test]
fn serve_requires_client_certificates_with_client_ca() {
    let Some(pki) = Pki::make() else { return };
    let (ca, cert, key) = (
        pki.path("ca.pem"),
        pki.path("client.pem"),
        pki.path("client.key"),
    );
    let (scert, skey) = (pki.path("server.pem"), pki.path("server.key"));
    let mut s = Served::start_as(
        "http",
        &[
            "--tls",
            "--cert",
            &scert,
            "--key",
            &skey,
            "--client-ca",
            &ca,
            "--threads",
            "1",
        ],
    );
    let url = format!("https://localhost:{}/", s.port);

    // wirebench with and without its certificate.
    let r = run_json(&[
        "http", &url, "--ca", &ca, "--cert", &cert, "--key", &key, "-n", "300", "-c", "3",
    ]);
    r.assert_clean(300);
    let r = run_json(&[
        "http",
        &url,
        "--ca",
        &ca,
        "-n",
        "10",
        "-c",
        "1",
        "--timeout",
        "2s",
    ]);
    assert_ne!(r.code, 0, "{}", r.explain());
    assert_eq!(r.u("/totals/ok"), 0, "{}", r.explain());

    if have("curl") {
        let curl = |with_cert: bool| {
            let mut args = vec![
                "-sS",
                "-o",
                "/dev/null",
                "-w",
                "%{http_code}",
                "--cacert",
                &ca,
            ];
            if with_cert {
                args.extend(["--cert", &cert, "--key", &key]);
            }
            args.push(&url);
            Command::new("curl").args(&args).output().expect("run curl")
        };
        let ok = curl(true);
        assert_eq!(String::from_utf8_lossy(&ok.stdout), "200", "{ok:?}");
        let refused = curl(false);
        assert!(!refused.status.success(), "{refused:?}");
        assert_ne!(String::from_utf8_lossy(&refused.stdout), "200");
    } else {
        missing("curl is not installed");
    }
    let last = s.stop_final_line();
    // wirebench's 300 and curl's one with a certificate; none without.
    assert!(last.contains(" requests 301"), "{last}");
}

#[test]
fn grpc_over_tls_against_serve_grpc() {
    let Some(pki) = Pki::make() else { return };
    let ca = pki.path("ca.pem");
    let (scert, skey) = (pki.path("server.pem"), pki.path("server.key"));
    let s = Served::start_as(
        "grpc",
        &["--tls", "--cert", &scert, "--key", &skey, "--threads", "1"],
    );
    let r = run_json(&[
        "grpc",
        &format!("https://localhost:{}", s.port),
        "--ca",
        &ca,
        "--call",
        "wirebench.Echo/Call",
        "-n",
        "500",
        "-c",
        "2",
        "-m",
        "4",
    ]);
    r.assert_clean(500);
    assert!(r.json()["target"].as_str().unwrap().starts_with("https://"));
    // HOST:PORT with --tls: the same.
    let r = run_json(&[
        "grpc",
        &format!("localhost:{}", s.port),
        "--tls",
        "--ca",
        &ca,
        "--call",
        "wirebench.Echo/Call",
        "-n",
        "100",
    ]);
    r.assert_clean(100);
}

#[test]
fn client_certificate_flags_refused_in_one_sentence() {
    let Some(pki) = Pki::make() else { return };
    let (ca, cert, key) = (
        pki.path("ca.pem"),
        pki.path("client.pem"),
        pki.path("client.key"),
    );
    let skey = pki.path("server.key");
    let missing_file = pki.path("nope.pem");
    let url = "https://localhost:1/";
    for (args, phrase) in [
        (
            vec![
                "http",
                url,
                "--ca",
                &ca,
                "--cert",
                &missing_file,
                "--key",
                &key,
            ],
            "cannot read certificate file",
        ),
        (
            vec![
                "http",
                url,
                "--ca",
                &ca,
                "--cert",
                &cert,
                "--key",
                &missing_file,
            ],
            "cannot read a private key",
        ),
        (
            vec!["http", url, "--ca", &ca, "--cert", &cert, "--key", &skey],
            "do not work together",
        ),
        (
            vec!["http", url, "--cert", &cert],
            "takes both --cert and --key",
        ),
        (
            vec![
                "http",
                "http://127.0.0.1:1/",
                "--cert",
                &cert,
                "--key",
                &key,
            ],
            "are a TLS client certificate",
        ),
        (
            vec!["http", url, "--h2", "--http1.1"],
            "choose one of --h2 and --http1.1",
        ),
        (vec!["serve", "http", "--client-ca", &ca], "add --tls"),
        (
            vec![
                "http",
                "http://wirebench.test:8080/",
                "--connect-to",
                "127.0.0.1",
            ],
            "has no port",
        ),
        (
            vec!["http", "--connect-to", "127.0.0.1:1"],
            "give the target",
        ),
        (
            vec![
                "redis",
                "127.0.0.1:1",
                "--tls",
                "--cert",
                &cert,
                "--key",
                &skey,
            ],
            "do not work together",
        ),
    ] {
        let mut p = Proc::wirebench(&args);
        let code = p.finish(RUN_LIMIT);
        let said = assert_one_line_error(&p.stderr(), &args.join(" "));
        assert_eq!(code, 2, "{args:?}: {said}");
        assert!(said.contains(phrase), "{args:?}: {said}");
    }
}

/// `--connect-to`: nginx on loopback sees the URL's name as Host (and, over TLS, as
/// the server name, with its certificate checked for that name) while `wirebench.test`,
/// a name no resolver knows, is never looked up: a lookup would fail the run.
#[test]
fn connect_to_keeps_the_urls_name() {
    let Some(pki) = Pki::make() else { return };
    if !have("nginx") {
        return missing("nginx is not installed");
    }
    let hello = "location = / { return 200 \"hello\"; }";
    let plain = Nginx::start_conf("", "'$status $host $server_protocol'", hello);
    let r = run_json(&[
        "http",
        &format!("http://wirebench.test:{}/", plain.port),
        "--connect-to",
        &format!("127.0.0.1:{}", plain.port),
        "-n",
        "300",
        "-c",
        "2",
    ]);
    r.assert_clean(300);
    assert_eq!(
        r.json()["target"],
        format!("http://wirebench.test:{}/", plain.port)
    );
    let lines = plain.logged(300);
    assert_eq!(lines.len(), 300);
    assert!(
        lines.iter().all(|l| l == "200 wirebench.test HTTP/1.1"),
        "{:?}",
        lines[0]
    );

    let tls = Nginx::start_conf(
        " ssl http2",
        "'$status $host $ssl_server_name $server_protocol'",
        &format!("{}\n    {hello}", pki.nginx_tls("")),
    );
    // curl's form: the URL's name and port mapped to the loopback address.
    let to = format!("wirebench.test:{0}:127.0.0.1:{0}", tls.port);
    let r = run_json(&[
        "http",
        &format!("https://wirebench.test:{}/", tls.port),
        "--ca",
        &pki.path("ca.pem"),
        "--connect-to",
        &to,
        "-n",
        "300",
        "-c",
        "2",
    ]);
    r.assert_clean(300);
    assert_eq!(r.json()["config"]["alpn"], "h2");
    let lines = tls.logged(300);
    assert_eq!(lines.len(), 300);
    assert!(
        lines
            .iter()
            .all(|l| l == "200 wirebench.test wirebench.test HTTP/2.0"),
        "{:?}",
        lines[0]
    );
}
