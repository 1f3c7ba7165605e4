//! Thin entry point: parse flags, run, map the outcome to an exit code.

use clap::Parser;

fn main() {
    // Like other Unix tools, end quietly when stdout is a pipe closed early (| head)
    // instead of panicking on the failed print. Sockets are unaffected: every socket
    // write passes MSG_NOSIGNAL.
    // SAFETY: setting a signal disposition before any thread starts.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    let cli = match wirebench::cli::Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            // Help and version go to stdout with exit 0; bad flags exit 2.
            let _ = e.print();
            std::process::exit(if e.use_stderr() { 2 } else { 0 });
        }
    };
    if let Err(e) = wirebench::run(cli) {
        eprintln!("wirebench: {e}");
        std::process::exit(e.exit_code());
    }
}
