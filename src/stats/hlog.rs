//! `--hlog FILE`: every interval's histogram, written as the interval ends, in the
//! interval log format of HdrHistogram's own `HistogramLogWriter` (version 1.3): what
//! its log readers (Java, Python's `hdrh.log`, Rust's `interval_log`) and
//! HistogramLogAnalyzer read. Nothing is held: each interval is one line, flushed.
//!
//! ```text
//! #[Histogram log format version 1.3]
//! #[StartTime: 1764239400.123 (seconds since epoch)]
//! #[BaseTime: 1764239400.123 (seconds since epoch)]
//! "StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"
//! Tag=echo,0.000,1.000,0.412,HISTFAAAA...
//! ```
//!
//! StartTime and BaseTime are the measured phase's start on the wall clock, so an
//! interval's timestamp is seconds into the measured phase (the result's `t_s` minus
//! `duration_s`). Values are nanoseconds; `Interval_Max` is in milliseconds, as Java
//! writes it (max / 1,000,000). The tag names the load (`echo`, `http`, ...), or the
//! shard too (`http.shard1`), so logs of several generators can be read as one.

use super::latency::Latency;
use super::observer::Observer;
use super::snapshot::IntervalRow;
use base64::Engine as _;
use hdrhistogram::serialization::{Serializer as _, V2DeflateSerializer};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// Java's default `maxValueUnitRatio`: nanosecond values, millisecond maxima.
const MAX_VALUE_UNIT_RATIO: f64 = 1e6;

pub struct HlogWriter {
    path: PathBuf,
    out: BufWriter<File>,
    tag: String,
    started: Option<SystemTime>,
    /// The first write that failed: the run goes on, the log stops and the error is
    /// said once at the end (`finish`).
    failed: Option<std::io::Error>,
    /// Reused for every line: no allocation per interval once they have grown.
    raw: Vec<u8>,
    text: String,
    serializer: V2DeflateSerializer,
}

impl HlogWriter {
    /// Creates (or truncates) the file before the run: a path that cannot be written is
    /// the caller's bad input. `tag`: what each line is tagged with (no comma, space or
    /// newline: those are replaced by `_`).
    pub fn create(path: &Path, tag: &str) -> Result<Self, String> {
        let file = File::create(path)
            .map_err(|e| format!("cannot write the interval log to {}: {e}", path.display()))?;
        Ok(HlogWriter {
            path: path.to_path_buf(),
            out: BufWriter::new(file),
            tag: tag
                .chars()
                .map(|c| {
                    if c == ',' || c.is_whitespace() {
                        '_'
                    } else {
                        c
                    }
                })
                .collect(),
            started: None,
            failed: None,
            raw: Vec::new(),
            text: String::new(),
            serializer: V2DeflateSerializer::new(),
        })
    }

    fn header(&mut self, start: SystemTime) -> std::io::Result<()> {
        let secs = start
            .duration_since(UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64());
        writeln!(
            self.out,
            "#[Logged with wirebench {}]",
            env!("CARGO_PKG_VERSION")
        )?;
        writeln!(self.out, "#[Histogram log format version 1.3]")?;
        writeln!(self.out, "#[StartTime: {secs:.3} (seconds since epoch)]")?;
        writeln!(self.out, "#[BaseTime: {secs:.3} (seconds since epoch)]")?;
        writeln!(
            self.out,
            "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\""
        )?;
        self.out.flush()
    }

    fn line(&mut self, row: &IntervalRow, latency: &Latency) -> std::io::Result<()> {
        if self.started.is_none() {
            self.start_now()?;
        }
        let h = latency.inner();
        self.raw.clear();
        self.text.clear();
        self.serializer
            .serialize(h, &mut self.raw)
            .map_err(|e| std::io::Error::other(format!("cannot encode a histogram: {e}")))?;
        base64::engine::general_purpose::STANDARD.encode_string(&self.raw, &mut self.text);
        let begin = (row.t_s - row.duration_s).max(0.0);
        writeln!(
            self.out,
            "Tag={},{:.3},{:.3},{:.3},{}",
            self.tag,
            begin,
            row.duration_s,
            h.max() as f64 / MAX_VALUE_UNIT_RATIO,
            self.text
        )?;
        self.out.flush()
    }

    fn start_now(&mut self) -> std::io::Result<()> {
        let now = SystemTime::now();
        self.started = Some(now);
        self.header(now)
    }

    fn write(&mut self, row: &IntervalRow, latency: &Latency) {
        if self.failed.is_none() {
            if let Err(e) = self.line(row, latency) {
                self.failed = Some(e);
            }
        }
    }

    /// After the run: the log is complete, or the one sentence of why not.
    pub fn finish(mut self) -> Result<(), String> {
        if self.failed.is_none() && self.started.is_none() {
            // A run that ended before its measured phase: the header alone.
            if let Err(e) = self.start_now() {
                self.failed = Some(e);
            }
        }
        match self.failed {
            None => Ok(()),
            Some(e) => Err(format!(
                "cannot write the interval log to {}: {e}",
                self.path.display()
            )),
        }
    }
}

impl Observer for HlogWriter {
    fn on_measure_start(&mut self) {
        if self.started.is_none() {
            if let Err(e) = self.start_now() {
                self.failed = Some(e);
            }
        }
    }

    fn on_interval(&mut self, row: &IntervalRow, latency: &Latency) {
        self.write(row, latency);
    }

    fn on_drain(&mut self, row: &IntervalRow, latency: &Latency) {
        self.write(row, latency);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};

    /// The log reads back with the hdrhistogram crate's own interval log parser: one
    /// histogram per row, tagged, with the row's start and length and its exact counts.
    #[test]
    fn the_log_reads_back_with_hdrhistograms_own_parser() {
        let dir = std::env::temp_dir().join(format!("wb-hlog-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("run.hlog");
        let mut w = HlogWriter::create(&path, "echo x,y").unwrap();
        w.on_measure_start();
        let mut l = Latency::new();
        for v in 1..=500u64 {
            l.record(v * 1_000);
        }
        let rows = [
            IntervalRow {
                t_s: 1.0,
                duration_s: 1.0,
                ..Default::default()
            },
            IntervalRow {
                t_s: 2.0,
                duration_s: 1.0,
                ..Default::default()
            },
        ];
        w.on_interval(&rows[0], &l);
        w.on_drain(&rows[1], &Latency::new());
        w.finish().unwrap();
        let text = std::fs::read(&path).unwrap();
        let mut hist = Vec::new();
        let mut start_time = None;
        for e in IntervalLogIterator::new(&text) {
            match e.unwrap() {
                LogEntry::StartTime(t) => start_time = Some(t),
                LogEntry::BaseTime(_) => {}
                LogEntry::Interval(i) => hist.push((
                    i.tag().map(|t| t.as_str().to_string()),
                    i.start_timestamp().as_millis(),
                    i.duration().as_millis(),
                    i.max(),
                    Latency::decode(i.encoded_histogram()).unwrap().count(),
                )),
            }
        }
        assert!(start_time.is_some());
        assert_eq!(
            hist,
            [
                (Some("echo_x_y".into()), 0, 1000, 0.5, 500),
                (Some("echo_x_y".into()), 1000, 1000, 0.0, 0)
            ]
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_path_that_cannot_be_written_is_one_sentence() {
        let e = HlogWriter::create(Path::new("/nonexistent-dir/x.hlog"), "echo")
            .err()
            .unwrap();
        assert_eq!(
            e,
            "cannot write the interval log to /nonexistent-dir/x.hlog: No such file or directory (os error 2)"
        );
    }
}
