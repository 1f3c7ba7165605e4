//! ab (ApacheBench): the parser of its report and of its -g file (one line per
//! request; times in whole milliseconds, which is all the resolution ab has).

use super::external::{field_after, Accounting, ExternalRun};

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
