//! The suite file under validation: every problem becomes `FILE:LINE: sentence naming
//! the key`, exit 2, with the line of the value's span.

use super::cpuset::CpuSet;
use crate::error::{Error, Result};
use crate::units::parse_duration;
use std::ops::Range;
use std::path::Path;
use std::time::Duration;
use toml::Spanned;

/// 1-based line of a byte offset.
pub fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

pub struct Ctx<'a> {
    pub file: &'a Path,
    pub text: &'a str,
}

impl Ctx<'_> {
    pub fn err(&self, span: Range<usize>, msg: impl std::fmt::Display) -> Error {
        Error::usage(format!(
            "{}:{}: {msg}",
            self.file.display(),
            line_of(self.text, span.start)
        ))
    }

    pub fn duration(&self, what: &str, v: &Spanned<String>) -> Result<Duration> {
        parse_duration(v.get_ref()).map_err(|e| self.err(v.span(), format!("key `{what}`: {e}")))
    }

    pub fn cpus(&self, what: &str, v: &Option<Spanned<String>>) -> Result<Option<CpuSet>> {
        match v {
            None => Ok(None),
            Some(s) => CpuSet::parse_usable(s.get_ref())
                .map(Some)
                .map_err(|e| self.err(s.span(), format!("{what} key `cpus`: {e}"))),
        }
    }
}
