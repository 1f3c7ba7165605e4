//! What wirebench wrote into a directory, so that a later run removes only that.
//!
//! A suite run (and `report --png`) keeps DIR/.wirebench-manifest.json (`report --png`: .wirebench-charts.json): every file it
//! wrote in the places it owns, with its size and SHA-256. Before a new run writes
//! there, `clear` checks every owned place: a file the manifest does not list, or one
//! changed since it was written, is the user's, and the run is refused (exit 2) before
//! anything is removed. Only listed, unchanged files are deleted; nothing else is.

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Where a writer puts files in its directory: whole folders and single top-level
/// names (a trailing `*` matches any rest, e.g. "flame-*.svg" as "flame-*" + ".svg").
pub struct Places {
    /// The manifest's own name: one per writer, so `report --png` into a results
    /// directory keeps the suite's manifest apart from its own.
    pub manifest: &'static str,
    pub dirs: &'static [&'static str],
    /// (prefix, suffix) of top-level file names.
    pub files: &'static [(&'static str, &'static str)],
}

/// What `wirebench suite` writes into --out.
pub const SUITE: Places = Places {
    manifest: ".wirebench-manifest.json",
    dirs: &["points", "raw"],
    files: &[("servers.json", ""), ("suite.toml", ""), ("flame-", ".svg")],
};

/// What `wirebench report --png DIR` writes into DIR.
pub const CHARTS: Places = Places {
    manifest: ".wirebench-charts.json",
    dirs: &[],
    files: &[("", ".png")],
};

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
struct Entry {
    size: u64,
    sha256: String,
}

#[derive(Serialize, Deserialize, Default, Debug)]
struct OnDisk {
    /// Marks the file as wirebench's (and its layout, should it change).
    wirebench_manifest: u32,
    /// Path relative to the directory (with '/') -> what was written.
    files: BTreeMap<String, Entry>,
}

/// The manifest of one directory, kept up to date while a run writes into it.
pub struct Manifest {
    dir: PathBuf,
    places: &'static Places,
    files: BTreeMap<String, Entry>,
}

/// A manifest larger than this was not written by wirebench (a suite of 100,000
/// points writes about 20 MiB); reading it is refused rather than attempted.
const MAX_MANIFEST: u64 = 64 << 20;

/// Size and SHA-256 of a file, read in pieces (perf.data files can be large).
fn digest(path: &Path) -> std::io::Result<Entry> {
    use std::io::Read as _;
    let mut f = std::fs::File::open(path)?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 64 << 10];
    let mut size = 0u64;
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
        size += n as u64;
    }
    Ok(Entry {
        size,
        sha256: h.finalize().iter().map(|b| format!("{b:02x}")).collect(),
    })
}

fn rel(p: &Path, dir: &Path) -> String {
    p.strip_prefix(dir)
        .unwrap_or(p)
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}

/// Every file (and symlink, never followed) under `p`, depth first.
fn walk(p: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for e in std::fs::read_dir(p)? {
        let e = e?;
        let path = e.path();
        if e.file_type()?.is_dir() {
            walk(&path, out)?;
        } else {
            out.push(path);
        }
    }
    Ok(())
}

impl Places {
    fn owns_top(&self, name: &str) -> bool {
        self.files.iter().any(|(pre, suf)| {
            if suf.is_empty() {
                name == *pre
            } else {
                name.len() >= pre.len() + suf.len() && name.starts_with(pre) && name.ends_with(suf)
            }
        })
    }

    /// Every file now in the owned places of `dir` (the manifest itself excluded).
    fn present(&self, dir: &Path) -> Result<Vec<PathBuf>> {
        let fail = |e: std::io::Error| Error::usage(format!("cannot read {}: {e}", dir.display()));
        let mut out = Vec::new();
        let Ok(rd) = std::fs::read_dir(dir) else {
            return Ok(out);
        };
        for e in rd {
            let e = e.map_err(fail)?;
            let name = e.file_name().to_string_lossy().into_owned();
            let ty = e.file_type().map_err(fail)?;
            if self.dirs.contains(&name.as_str()) {
                if ty.is_dir() {
                    walk(&e.path(), &mut out).map_err(fail)?;
                } else {
                    out.push(e.path());
                }
            } else if self.owns_top(&name) && name != self.manifest {
                out.push(e.path());
            }
        }
        out.sort();
        Ok(out)
    }
}

impl Manifest {
    /// Reads DIR's manifest (an empty one when there is none).
    fn read(dir: &Path, places: &'static Places) -> Result<Manifest> {
        let path = dir.join(places.manifest);
        if std::fs::metadata(&path).is_ok_and(|m| m.len() > MAX_MANIFEST) {
            return Err(Error::usage(format!(
                "{} is larger than {} MiB, so not a manifest wirebench wrote; move it away or choose another directory",
                path.display(),
                MAX_MANIFEST >> 20
            )));
        }
        let files = match std::fs::read_to_string(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => BTreeMap::new(),
            Err(e) => return Err(Error::usage(format!("cannot read {}: {e}", path.display()))),
            Ok(text) => match serde_json::from_str::<OnDisk>(&text) {
                Ok(m) if m.wirebench_manifest == 1 => m.files,
                _ => {
                    return Err(Error::usage(format!(
                        "{} is not a manifest wirebench wrote; move it away or choose another directory",
                        path.display()
                    )))
                }
            },
        };
        Ok(Manifest {
            dir: dir.to_path_buf(),
            places,
            files,
        })
    }

    /// Makes DIR ready for a new run: refuses (exit 2, nothing removed) when an owned
    /// place holds a file wirebench did not write or one changed since; otherwise
    /// removes exactly the files the manifest lists and returns an empty manifest.
    pub fn clear(dir: &Path, places: &'static Places, flag: &str) -> Result<Manifest> {
        let mut m = Manifest::read(dir, places)?;
        let present = places.present(dir)?;
        for p in &present {
            let name = rel(p, dir);
            let is_link = std::fs::symlink_metadata(p).is_ok_and(|md| md.file_type().is_symlink());
            let Some(listed) = m.files.get(&name).filter(|_| !is_link) else {
                return Err(Error::usage(format!(
                    "{flag} {}: it holds {name}, which wirebench did not write; move it away or choose another directory",
                    dir.display()
                )));
            };
            if digest(p).ok().as_ref() != Some(listed) {
                return Err(Error::usage(format!(
                    "{flag} {}: {name} was changed after wirebench wrote it; move it away or choose another directory",
                    dir.display()
                )));
            }
        }
        for p in &present {
            std::fs::remove_file(p)
                .map_err(|e| Error::runtime(format!("cannot remove {}: {e}", p.display())))?;
        }
        // Folders left empty go too; a folder still holding anything stays.
        for d in places.dirs {
            remove_empty_dirs(&dir.join(d));
        }
        m.files.clear();
        m.save()?;
        Ok(m)
    }

    /// Records every file now in the owned places (new or grown since the last call)
    /// and forgets the ones gone, then saves: call after each step of a run, so a run
    /// that is killed leaves a manifest of nearly all it wrote.
    pub fn sync(&mut self) -> Result<()> {
        let present = self.places.present(&self.dir)?;
        let names: Vec<String> = present.iter().map(|p| rel(p, &self.dir)).collect();
        self.files.retain(|k, _| names.contains(k));
        for (p, name) in present.iter().zip(names) {
            let size = std::fs::symlink_metadata(p).map(|m| m.len()).ok();
            if self.files.get(&name).map(|e| e.size) != size {
                if let Ok(e) = digest(p) {
                    self.files.insert(name, e);
                }
            }
        }
        self.save()
    }

    /// Re-digests every file (a log may change without changing size) and saves.
    pub fn finish(&mut self) -> Result<()> {
        self.files.clear();
        self.sync()
    }

    fn save(&self) -> Result<()> {
        let path = self.dir.join(self.places.manifest);
        let text = serde_json::to_string_pretty(&OnDisk {
            wirebench_manifest: 1,
            files: self.files.clone(),
        })
        .map_err(|e| Error::runtime(e.to_string()))?;
        std::fs::write(&path, text + "\n")
            .map_err(|e| Error::runtime(format!("cannot write {}: {e}", path.display())))
    }
}

fn remove_empty_dirs(d: &Path) {
    let Ok(rd) = std::fs::read_dir(d) else {
        return;
    };
    for e in rd.flatten() {
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            remove_empty_dirs(&e.path());
        }
    }
    let _ = std::fs::remove_dir(d);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("wb-manifest-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn removes_only_listed_unchanged_files() {
        let d = tmp("listed");
        std::fs::write(d.join("notes.txt"), "mine").unwrap();
        let mut m = Manifest::clear(&d, &SUITE, "--out").unwrap();
        std::fs::create_dir_all(d.join("raw/sub")).unwrap();
        std::fs::create_dir_all(d.join("points")).unwrap();
        std::fs::write(d.join("raw/sub/log"), "x").unwrap();
        std::fs::write(d.join("points/a.json"), "{}").unwrap();
        std::fs::write(d.join("servers.json"), "[]").unwrap();
        m.sync().unwrap();
        let mut m = Manifest::clear(&d, &SUITE, "--out").unwrap();
        assert!(!d.join("raw").exists() && !d.join("points").exists());
        assert!(!d.join("servers.json").exists());
        assert_eq!(
            std::fs::read_to_string(d.join("notes.txt")).unwrap(),
            "mine"
        );
        // A file put into an owned place by someone else is refused; nothing goes.
        std::fs::write(d.join("suite.toml"), "a").unwrap();
        m.finish().unwrap();
        std::fs::create_dir_all(d.join("points")).unwrap();
        std::fs::write(d.join("points/my.json"), "{}").unwrap();
        let e = Manifest::clear(&d, &SUITE, "--out").err().expect("refused");
        assert!(
            e.to_string()
                .contains("points/my.json, which wirebench did not write"),
            "{e}"
        );
        assert!(d.join("suite.toml").exists());
        std::fs::remove_file(d.join("points/my.json")).unwrap();
        // A listed file changed since is refused too.
        std::fs::write(d.join("suite.toml"), "b").unwrap();
        let e = Manifest::clear(&d, &SUITE, "--out").err().expect("refused");
        assert!(e.to_string().contains("suite.toml was changed"), "{e}");
        assert!(d.join("suite.toml").exists());
        let _ = std::fs::remove_dir_all(&d);
    }
}
