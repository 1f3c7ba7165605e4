//! JSON results. The file is opened before the run starts, so a bad path fails early;
//! `-` is stdout (the human text then goes to stderr: `report::console`).

use crate::error::{Error, Result};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

pub struct JsonSink {
    path: PathBuf,
    /// None: stdout.
    file: Option<File>,
}

impl JsonSink {
    pub fn create(path: &Path) -> Result<Self> {
        if super::console::is_stdout(path) {
            return Ok(JsonSink {
                path: PathBuf::from("stdout"),
                file: None,
            });
        }
        let file = File::create(path).map_err(|e| {
            Error::usage(format!(
                "cannot write the JSON result to {}: {e}",
                path.display()
            ))
        })?;
        Ok(JsonSink {
            path: path.to_path_buf(),
            file: Some(file),
        })
    }

    pub fn write<T: serde::Serialize>(self, r: &T) -> Result<()> {
        let out: Box<dyn Write> = match self.file {
            Some(f) => Box::new(f),
            None => Box::new(std::io::stdout().lock()),
        };
        let mut w = BufWriter::new(out);
        serde_json::to_writer_pretty(&mut w, r)
            .map_err(|e| Error::runtime(format!("cannot write {}: {e}", self.path.display())))?;
        w.write_all(b"\n")
            .and_then(|_| w.flush())
            .map_err(|e| Error::runtime(format!("cannot write {}: {e}", self.path.display())))
    }
}
