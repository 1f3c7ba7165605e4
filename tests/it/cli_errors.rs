//! Bad input that needs a setup of its own (a port held, a network namespace): exit
//! code 2 and one sentence on stderr, never a panic. Plain bad flags, files and URLs
//! are rows of the table in bad_input.rs.

use crate::common::*;
use std::net::TcpListener;
use std::process::Command;

/// Runs the binary (optionally through `wrapper`) and checks the usage failure.
fn refuse_via(wrapper: &[&str], args: &[&str], phrase: &str) -> String {
    let what = format!("wirebench {}", args.join(" "));
    let mut p = match wrapper.split_first() {
        None => Proc::wirebench(args),
        Some((prog, pre)) => {
            let mut all: Vec<&str> = pre.to_vec();
            all.push(bin());
            all.extend_from_slice(args);
            Proc::spawn(prog, &all, false)
        }
    };
    let code = p.finish(RUN_LIMIT);
    let stderr = p.stderr();
    assert_eq!(
        code,
        2,
        "{what}: exit code\nstdout:\n{}\nstderr:\n{stderr}",
        p.stdout()
    );
    let line = assert_one_line_error(&stderr, &what);
    assert!(line.contains(phrase), "{what}: want {phrase:?} in {line:?}");
    line
}

fn refuse(args: &[&str], phrase: &str) -> String {
    refuse_via(&[], args, phrase)
}

#[test]
fn listen_port_in_use() {
    let held = TcpListener::bind("127.0.0.1:0").unwrap();
    let listen = held.local_addr().unwrap().to_string();
    let line = refuse(
        &["serve", "echo", "--listen", &listen, "--threads", "1"],
        "already in use",
    );
    assert!(line.contains(&listen), "{line}");
    drop(held);
}

#[test]
fn listen_address_that_is_not_an_address() {
    // 999.1.1.1 is no IPv4 address. If wirebench handed it to the resolver it would make
    // a DNS query; run it in an empty network namespace when we can so nothing leaves
    // this machine whatever the binary does.
    // (-n as root; -rn through a user namespace otherwise.)
    let works = |flag: &str| {
        Command::new("unshare")
            .args([flag, "true"])
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false)
    };
    let wrapper: &[&str] = if works("-n") {
        &["unshare", "-n"]
    } else if works("-rn") {
        &["unshare", "-rn"]
    } else {
        &[]
    };
    let line = refuse_via(
        wrapper,
        &["serve", "echo", "--listen", "999.1.1.1:80"],
        "999.1.1.1",
    );
    // It must be refused as an address, not looked up as a host name.
    assert!(
        !line.contains("lookup address") && !line.contains("name resolution"),
        "999.1.1.1 was sent to the resolver: {line}"
    );
}
