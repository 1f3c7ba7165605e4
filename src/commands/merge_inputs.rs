//! What `wirebench merge` reads and where it may write: the result files named (a
//! directory stands for its `*.json` files), each read as a wirebench result of this
//! schema version, and an output that is new or a merge wirebench wrote before.
//! Everything here is checked before anything is written.

use crate::error::{Error, Result};
use crate::stats::result::SCHEMA_VERSION;
use crate::stats::RunResult;
use std::path::{Path, PathBuf};

/// A result file larger than this is not one wirebench wrote (a result with its
/// histograms and a day of interval rows is a few MiB); it is refused unread.
const MAX_RESULT_BYTES: u64 = 256 << 20;

/// The files `inputs` name, in order; a directory's `*.json` files by name, leaving
/// out `output` (a merge written into the directory of its shards).
pub fn files(inputs: &[PathBuf], output: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for p in inputs {
        if p.is_dir() {
            refuse_suite_dir(p)?;
            let rd = std::fs::read_dir(p).map_err(|e| {
                Error::usage(format!("cannot read the directory {}: {e}", p.display()))
            })?;
            let mut found: Vec<PathBuf> = rd
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|f| f.extension().is_some_and(|x| x == "json") && !same_file(f, output))
                // Hidden files are no one's shards (a manifest, an editor's backup).
                .filter(|f| {
                    !f.file_name()
                        .is_some_and(|n| n.to_string_lossy().starts_with('.'))
                })
                .collect();
            if found.is_empty() {
                return Err(Error::usage(format!(
                    "{} holds no .json result",
                    p.display()
                )));
            }
            found.sort();
            out.extend(found);
        } else {
            out.push(p.clone());
        }
    }
    Ok(out)
}

/// A suite's results directory (its manifest, or `points/` beside `servers.json`) holds
/// rounds of suite points, not the shards of one run: said in one sentence, with what
/// reads it.
fn refuse_suite_dir(dir: &Path) -> Result<()> {
    let suite = dir.join(crate::suite::manifest::SUITE.manifest).is_file()
        || (dir.join("points").is_dir() && dir.join("servers.json").is_file());
    if suite {
        return Err(Error::usage(format!(
            "{0} is a suite's results directory, not shards of one run: draw it with `wirebench report {0} -o report.html` or judge it against another with `wirebench compare`",
            dir.display()
        )));
    }
    Ok(())
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}

/// One result file read back, or the one sentence saying why it is not one.
pub fn read(path: &Path) -> Result<RunResult> {
    let name = path.display();
    let size = std::fs::metadata(path)
        .map_err(|e| Error::usage(format!("cannot read {name}: {e}")))?
        .len();
    if size > MAX_RESULT_BYTES {
        return Err(Error::usage(format!(
            "{name} is {size} bytes, more than any wirebench result ({MAX_RESULT_BYTES})"
        )));
    }
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::usage(format!("cannot read {name}: {e}")))?;
    parse(&name.to_string(), &text)
}

/// The text of the result file `name`, read back, or the one sentence saying why it is
/// not a result.
pub fn parse(name: &str, text: &str) -> Result<RunResult> {
    let v: serde_json::Value =
        serde_json::from_str(text).map_err(|e| Error::usage(format!("{name} is not JSON: {e}")))?;
    // The version first: a result of another version may not read as this one.
    match v.get("schema_version").and_then(serde_json::Value::as_u64) {
        Some(n) if n == u64::from(SCHEMA_VERSION) => {}
        Some(n) => {
            return Err(Error::usage(format!(
                "{name} is a result of schema version {n}, this wirebench reads version {SCHEMA_VERSION}"
            )))
        }
        None => return Err(Error::usage(format!("{name} is not a wirebench result (no schema_version)"))),
    }
    serde_json::from_value(v)
        .map_err(|e| Error::usage(format!("{name} is not a wirebench result: {e}")))
}

/// Ok when `-o path` may be written: a `.json` name, and no file there unless it is a
/// merge wirebench wrote (a result with a `merge` block), as `report -o` refuses to
/// overwrite anything but a report.
pub fn check_output(path: &Path) -> Result<()> {
    if path
        .extension()
        .map_or(true, |e| !e.eq_ignore_ascii_case("json"))
    {
        return Err(Error::usage(format!(
            "-o {}: the merge is a JSON result, so its name must end in .json",
            path.display()
        )));
    }
    let Ok(md) = std::fs::symlink_metadata(path) else {
        return Ok(());
    };
    let ours = md.is_file()
        && md.len() <= MAX_RESULT_BYTES
        && std::fs::read_to_string(path)
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .is_some_and(|v| v.get("merge").is_some_and(serde_json::Value::is_object));
    if ours {
        Ok(())
    } else {
        Err(Error::usage(format!(
            "-o {}: the file exists and is not a merge wirebench wrote; remove it or choose another name",
            path.display()
        )))
    }
}
