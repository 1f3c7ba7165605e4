//! Thin entry point: parse flags, run, map the outcome to an exit code.

fn main() {
    // Like other Unix tools, end quietly when stdout is a pipe closed early (| head)
    // instead of panicking on the failed print. Sockets are unaffected: every socket
    // write passes MSG_NOSIGNAL.
    // SAFETY: setting a signal disposition before any thread starts.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    // A run's memory budget holds for the process only if freed large buffers go back.
    wirebench::sys::malloc::map_large_buffers_alone();
    let cli = match wirebench::cli::parse() {
        Ok(c) => c,
        Err(e) if e.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            // `wirebench` (or `wirebench serve`) alone: the commands it could run, on
            // stderr, and exit 2 (nothing was run).
            eprint!("{}", e.render());
            std::process::exit(2);
        }
        Err(e) if e.use_stderr() => {
            // Bad flags: one sentence, exit 2.
            eprintln!("wirebench: {}", wirebench::cli::error_line(&e));
            std::process::exit(2);
        }
        Err(e) => {
            // Help and version go to stdout with exit 0.
            let _ = e.print();
            std::process::exit(0);
        }
    };
    if let Err(e) = wirebench::run(cli) {
        eprintln!("wirebench: {e}");
        std::process::exit(e.exit_code());
    }
}
