//! The four ways a wirebench command ends badly, each with its exit code.

use std::fmt;

/// An error that reaches the user as one sentence and an exit code.
#[derive(Debug)]
pub enum Error {
    /// Bad input: flags, files, addresses, impossible plans. Exit code 2.
    Usage(String),
    /// Something failed while running (I/O, a thread that died). Exit code 2.
    Runtime(String),
    /// The run completed but missed its target (errors, missing replies). Exit code 1.
    ShortFall(String),
    /// The run completed and a `--threshold` it was held to failed (whether or not it
    /// also fell short: the thresholds are the verdict the user asked for). Exit code 3.
    Threshold(String),
}

impl Error {
    pub fn usage(msg: impl Into<String>) -> Self {
        Error::Usage(msg.into())
    }

    pub fn runtime(msg: impl Into<String>) -> Self {
        Error::Runtime(msg.into())
    }

    pub fn exit_code(&self) -> i32 {
        match self {
            Error::ShortFall(_) => 1,
            Error::Threshold(_) => 3,
            Error::Usage(_) | Error::Runtime(_) => 2,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Usage(m) | Error::Runtime(m) | Error::ShortFall(m) | Error::Threshold(m) => {
                f.write_str(m)
            }
        }
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;
