//! Thin entry point: parse flags, run, map the outcome to an exit code.

use clap::Parser;

fn main() {
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
