//! `wirebench compare A B [--threshold PCT]`: the differences between two results
//! directories, each told from the noise of the rounds; exit 1 on a row that is
//! worse beyond the noise and past the threshold (or a point missing in B); exit 2
//! when they share no point at all. A point measured under interference or whose
//! rounds disagree is `inconclusive`, never better or worse.

use crate::cli::CompareArgs;
use crate::error::{Error, Result};
use crate::report::suite::compare::{compare, Verdict};
use crate::report::suite::dataset::{load_dir, Dataset};
use crate::report::suite::marks::DISAGREE;
use crate::report::suite::noise::LEVEL;
use crate::stats::interference::THRESHOLD;

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
    if lines.iter().all(|l| l.verdict == Verdict::Missing) {
        return Err(Error::usage(format!(
            "{} and {} share no point to compare (loads {} against {}): compare two runs of one suite",
            a.a.display(),
            a.b.display(),
            load_names(&da),
            load_names(&db)
        )));
    }
    println!(
        "{:<58} {:<10} {:>12} {:>12} {:>8} {:>6} {:<14}  verdict",
        "point", "metric", "A", "B", "change", "rounds", "test"
    );
    let (mut worse, mut missing, mut inconclusive) = (0, 0, 0);
    for l in &lines {
        match l.verdict {
            Verdict::Worse => worse += 1,
            Verdict::Missing => missing += 1,
            Verdict::Inconclusive(..) => inconclusive += 1,
            _ => {}
        }
        println!(
            "{:<58} {:<10} {:>12} {:>12} {:>+7.1}% {:>6} {:<14}  {}",
            l.what,
            l.metric,
            l.a,
            l.b,
            l.change_pct,
            l.rounds,
            l.evidence.label(),
            l.verdict.label()
        );
    }
    println!(
        "test: Mann-Whitney U, two-sided, at {:.0}% with 4 or more rounds a side; with 2 or 3, the rounds' min..max ranges must not overlap (as critcmp), which noise alone does 1 time in 3 at 2 rounds a side and 1 in 10 at 3: use rounds = 4 or more to be sure",
        LEVEL * 100.0
    );
    if worse + missing > 0 {
        return Err(Error::ShortFall(format!(
            "{worse} rows worse past {}% and beyond the noise of the rounds, {missing} points missing in {}",
            a.threshold,
            a.b.display()
        )));
    }
    if inconclusive > 0 {
        println!(
            "{inconclusive} rows inconclusive: measured while other processes took more than {:.0}% of a CPU the run used, or rounds that disagree by more than {:.0}%; run those points again on a quiet machine",
            THRESHOLD * 100.0,
            DISAGREE * 100.0
        );
    }
    println!(
        "no regression past {}% (threshold) beyond the noise of the rounds{}",
        a.threshold,
        if inconclusive > 0 {
            " among the rows that count"
        } else {
            ""
        }
    );
    Ok(())
}

/// "connections, http-post-echo": a results directory's loads.
fn load_names(d: &Dataset) -> String {
    let names: Vec<&str> = d.loads.iter().map(|l| l.name.as_str()).collect();
    names.join(", ")
}
