//! ab (ApacheBench): the parser of its report and of its -g file (one line per
//! request; times in whole milliseconds, which is all the resolution ab has).

use super::super::suite_settings::HttpSuite;
use super::{h1_only, whole_secs, NO_PIPELINE, NO_RATE};
use crate::proto::entry::{RunFor, SuitePoint};
use crate::proto::generator::{
    field_after, with_ext, Accounting, Ask, Command, ExternalRun, Generator,
};
use std::path::Path;

/// ab, set up for a suite load.
pub struct Ab<'a>(pub &'a HttpSuite);

impl Generator for Ab<'_> {
    fn name(&self) -> &'static str {
        "ab"
    }

    fn refuses(&self, ask: Ask) -> Option<&'static str> {
        match ask {
            Ask::Rate => Some(NO_RATE),
            Ask::Pipeline => Some(NO_PIPELINE),
            Ask::Count => None,
        }
    }

    fn refuses_settings(&self) -> Option<&'static str> {
        h1_only(self.0)
    }

    fn command(&self, p: &SuitePoint<'_>, prefix: &Path) -> Command {
        let g = with_ext(prefix, ".tsv");
        let mut c = Command::default();
        let a = &mut c.argv;
        a.extend(["ab", "-k", "-q", "-c"].map(String::from));
        a.push(p.connections.to_string());
        match p.run_for {
            // -t implies -n 50000; a later -n lifts that cap. ab allocates 32 bytes
            // per request up front, so the cap is what 500k requests/s would need.
            RunFor::Duration(d) => {
                let cap = (whole_secs(d) * 500_000).max(50_000);
                a.extend([
                    "-t".into(),
                    whole_secs(d).to_string(),
                    "-n".into(),
                    cap.to_string(),
                ])
            }
            RunFor::Count(n) => a.extend(["-n".into(), n.to_string()]),
        }
        a.extend([
            "-s".into(),
            whole_secs(p.timeout).to_string(),
            "-g".into(),
            g.display().to_string(),
        ]);
        if p.size > 0 {
            let body = with_ext(prefix, ".body");
            let flag = if self.0.method == "PUT" { "-u" } else { "-p" };
            a.extend([
                flag.into(),
                body.display().to_string(),
                "-T".into(),
                "text/plain".into(),
            ]);
            c.inputs.push((body, vec![b'x'; p.size as usize]));
        }
        c.argv.push(self.0.url(p.addr));
        c.aux = Some(g);
        c
    }

    fn parse(
        &self,
        output: &str,
        aux: Option<&str>,
        _p: &SuitePoint<'_>,
    ) -> Result<ExternalRun, String> {
        parse(output, aux)
    }
}

pub fn parse(out: &str, gnuplot: Option<&str>) -> Result<ExternalRun, String> {
    if let Some(l) = out
        .lines()
        .find(|l| l.contains("apr_socket") || l.contains("apr_pollset"))
    {
        let msg = l.rsplit("...").next().unwrap_or(l).trim();
        return Err(format!("ab: {msg}"));
    }
    let complete = field_after(out, "Complete requests:")
        .ok_or("ab printed no 'Complete requests' line (did the run finish?)")?
        as u64;
    let failed = field_after(out, "Failed requests:").unwrap_or(0.0) as u64;
    let non2xx = field_after(out, "Non-2xx responses:").unwrap_or(0.0) as u64;
    let elapsed = field_after(out, "Time taken for tests:").ok_or("ab printed no test time")?;
    let mut run = ExternalRun {
        tool: "ab",
        elapsed_s: elapsed,
        bytes_received: field_after(out, "Total transferred:").unwrap_or(0.0) as u64,
        bytes_sent: field_after(out, "Total body sent:").unwrap_or(0.0) as u64,
        resolution_us: 1000,
        ..Default::default()
    };
    // ab counts failed and non-2xx responses inside "Complete requests".
    let bad = (failed + non2xx).min(complete);
    run.ok = complete - bad;
    run.add_error("status", non2xx.min(complete));
    run.add_error("failed", bad - non2xx.min(complete));
    if let Some(g) = gnuplot {
        let mut lines = 0;
        for l in g.lines().skip(1) {
            lines += 1;
            // starttime (a date with spaces) \t seconds \t ctime \t dtime \t ttime \t wait
            let f: Vec<&str> = l.split('\t').collect();
            let ttime: u64 = f
                .get(4)
                .and_then(|x| x.trim().parse().ok())
                .ok_or_else(|| format!("ab -g line is not understood: '{l}'"))?;
            run.latency.record(ttime * 1_000_000);
        }
        // ab writes one -g line per request it completed, failed or not: the file and
        // "Complete requests" must agree. Without the file nothing can be checked.
        run.accounting = Accounting::check(
            complete,
            lines,
            "'Complete requests' != lines in its -g file",
        );
    }
    Ok(run)
}
