//! `wirebench compare A B [--threshold PCT]`: the differences between two results
//! directories with the noise of their repeats; exit 1 on a regression.

use crate::cli::CompareArgs;
use crate::error::{Error, Result};
use crate::report::suite::compare::{compare, Verdict};
use crate::report::suite::dataset::load_dir;

pub fn run(a: &CompareArgs) -> Result<()> {
    if !(a.threshold.is_finite() && a.threshold >= 0.0) {
        return Err(Error::usage(format!(
            "--threshold {}: give a percentage of 0 or more",
            a.threshold
        )));
    }
    let da = load_dir(&a.a)?;
    let db = load_dir(&a.b)?;
    let lines = compare(&da, &db, a.threshold);
    println!(
        "{:<58} {:<10} {:>12} {:>12} {:>8} {:>7}  verdict",
        "point", "metric", "A", "B", "change", "noise"
    );
    let mut bad = 0;
    for l in &lines {
        let verdict = match l.verdict {
            Verdict::Same => "same",
            Verdict::Better => "better",
            Verdict::Regression => "REGRESSION",
            Verdict::Missing => "MISSING in B",
        };
        if matches!(l.verdict, Verdict::Regression | Verdict::Missing) {
            bad += 1;
        }
        println!(
            "{:<58} {:<10} {:>12} {:>12} {:>+7.1}% {:>6.1}%  {verdict}",
            l.what, l.metric, l.a, l.b, l.change_pct, l.noise_pct
        );
    }
    if lines.is_empty() {
        return Err(Error::usage(format!(
            "{} and {} share no load to compare",
            a.a.display(),
            a.b.display()
        )));
    }
    if bad > 0 {
        return Err(Error::ShortFall(format!(
            "{bad} regressions past {}% and past the noise of the repeats",
            a.threshold
        )));
    }
    println!(
        "no regression past {}% (threshold) and the noise of the repeats",
        a.threshold
    );
    Ok(())
}
