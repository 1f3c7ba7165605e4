//! `wirebench report DIR -o report.html [--png DIR] [--markdown FILE]`: draws what a
//! suite wrote; never runs anything.

use crate::cli::ReportArgs;
use crate::error::{Error, Result};
use crate::report::suite::{charts, dataset, guard, html, markdown, verdict};
use crate::suite::manifest::{self, Manifest};

fn write(path: &std::path::Path, text: &str) -> Result<()> {
    std::fs::write(path, text)
        .map_err(|e| Error::runtime(format!("cannot write {}: {e}", path.display())))
}

pub fn run(a: &ReportArgs) -> Result<()> {
    // Every output is checked before anything is written: a refusal leaves no half report.
    guard::check(&a.output, &guard::HTML)?;
    if let Some(md) = &a.markdown {
        guard::check(md, &guard::MARKDOWN)?;
    }
    let d = dataset::load_dir(&a.dir)?;
    write(&a.output, &html::render(&d, &a.dir))?;
    println!(
        "{} ({} result files, {} loads)",
        a.output.display(),
        d.files,
        d.loads.len()
    );
    if let Some(dir) = &a.png {
        std::fs::create_dir_all(dir)
            .map_err(|e| Error::runtime(format!("cannot create {}: {e}", dir.display())))?;
        // PNGs of an earlier report go; any other PNG there stops the report.
        let mut written = Manifest::clear(dir, &manifest::CHARTS, "--png")?;
        let mut n = 0;
        for load in &d.loads {
            let safe: String = load
                .name
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || "-_".contains(c) {
                        c
                    } else {
                        '_'
                    }
                })
                .collect();
            for c in charts(load) {
                crate::report::image::write_png(
                    &c.svg,
                    &dir.join(format!("{safe}-{}.png", c.slug)),
                )?;
                n += 1;
            }
        }
        written.finish()?;
        println!("{} ({n} PNG charts)", dir.display());
    }
    if let Some(md) = &a.markdown {
        write(md, &markdown::render(&d))?;
        println!("{}", md.display());
    }
    for l in verdict::lines(&d) {
        println!("{l}");
    }
    Ok(())
}
