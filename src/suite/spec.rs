//! The suite file as written (TOML): servers to start and loads to sweep over them.
//! Unknown keys are refused (a server's by deny_unknown_fields; a load's against
//! `load_keys`, since a load also holds its protocol's own block, named after it);
//! values that need checking keep their span so an error can name the line.
//! Validation lives in `plan.rs`.

use serde::Deserialize;
use std::collections::BTreeMap;
use toml::Spanned;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SuiteFile {
    /// Shown in the report's title.
    pub name: Option<String>,
    /// Run every server this many times in turn (A B A B ...), so slow drift of the
    /// machine spreads over all servers instead of biasing one; default 1.
    pub rounds: Option<Spanned<u32>>,
    /// The server the report's verdict compares the others with; default the first.
    pub baseline: Option<Spanned<String>>,
    #[serde(rename = "server", default)]
    pub servers: Vec<Spanned<ServerSpec>>,
    #[serde(rename = "load", default)]
    pub loads: Vec<Spanned<LoadSpecFile>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerSpec {
    pub name: Spanned<String>,
    /// Run with /bin/sh -c; `{port}`, `{addr}`, `{host}` and `{wirebench}` are filled in.
    pub command: Spanned<String>,
    /// Run once before the server starts (a build step), in the same directory.
    pub setup: Option<Spanned<String>>,
    /// Relative paths are relative to the suite file.
    pub cwd: Option<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// A fixed port; by default a free one is picked for each start.
    pub port: Option<Spanned<u16>>,
    #[serde(default = "default_host")]
    pub host: Spanned<String>,
    /// CPU list for sched_setaffinity, e.g. "0" or "0-1" or "0,2".
    pub cpus: Option<Spanned<String>>,
    /// A readiness check in a protocol's words, `{ NAME = VALUE }` (the protocol's
    /// entry reads VALUE); without it, a TCP connect.
    pub ready: Option<Spanned<toml::Table>>,
    /// How long readiness may take, e.g. "10s".
    #[serde(default = "default_ready_timeout")]
    pub ready_timeout: Spanned<String>,
    /// Time between SIGTERM and SIGKILL.
    #[serde(default = "default_grace")]
    pub grace: Spanned<String>,
}

/// A load's keys (`load_keys` checks them): the shared ones below, and the block of
/// its protocol's own settings, named after it (`http = { method = "PUT" }`).
#[derive(Debug, Deserialize)]
pub struct LoadSpecFile {
    pub name: Option<String>,
    /// A registered load command's name (`registry::REGISTRY`: echo, http, amqp, ...).
    pub protocol: Spanned<String>,
    /// wirebench, or an external generator the protocol declares.
    #[serde(default = "default_generator")]
    pub generator: Spanned<String>,
    /// Only these servers (by name); all by default.
    pub servers: Option<Vec<String>>,
    /// Sweep axes: every combination is one point.
    #[serde(default = "one")]
    pub connections: Spanned<Vec<u64>>,
    pub body_size: Option<Spanned<Vec<String>>>,
    pub pipeline: Option<Spanned<Vec<u64>>>,
    pub rate: Option<Spanned<Vec<f64>>>,
    pub duration: Option<Spanned<String>>,
    pub count: Option<Spanned<u64>>,
    pub warmup: Option<Spanned<String>>,
    #[serde(default = "one_repeat")]
    pub repeat: Spanned<u32>,
    /// Generator threads (split the connections); default 1.
    #[serde(default = "one_thread")]
    pub threads: Spanned<u64>,
    pub cpus: Option<Spanned<String>>,
    /// A reply later than this is an error (the game-server test's 10 s rule).
    #[serde(default = "default_timeout")]
    pub timeout: Spanned<String>,
    /// Extra arguments appended to the generator's command line.
    #[serde(default)]
    pub extra_args: Vec<String>,
    /// The load's shape by stages, as `--stages` reads it (`"10s:1000,20s:5000"`):
    /// every point runs them instead of `duration`, `count` and `rate`.
    pub stages: Option<Spanned<String>>,
    /// Limits every point's result is held to, in `--threshold`'s grammar
    /// (`["p99<5ms", "errors<0.1%"]`, docs/thresholds.md).
    pub thresholds: Option<Spanned<Vec<String>>>,
    /// A capacity search at every point, its conditions as `--search` reads them
    /// (`"p99<5ms,errors<0.1%"`): `rate` is its upper bound, `duration` each step's.
    pub search: Option<Spanned<String>>,
}

fn default_host() -> Spanned<String> {
    Spanned::new(0..0, "127.0.0.1".into())
}
fn default_ready_timeout() -> Spanned<String> {
    Spanned::new(0..0, "30s".into())
}
fn default_grace() -> Spanned<String> {
    Spanned::new(0..0, "3s".into())
}
fn default_generator() -> Spanned<String> {
    Spanned::new(0..0, "wirebench".into())
}
fn default_timeout() -> Spanned<String> {
    Spanned::new(0..0, "10s".into())
}
fn one() -> Spanned<Vec<u64>> {
    Spanned::new(0..0, vec![1])
}
fn one_repeat() -> Spanned<u32> {
    Spanned::new(0..0, 1)
}
fn one_thread() -> Spanned<u64> {
    Spanned::new(0..0, 1)
}

/// Every key of every load, as written, with its span: a second read of the same text,
/// for the keys `LoadSpecFile` does not hold (its protocol's block, or a stranger).
#[derive(Debug, Deserialize)]
pub struct LoadTables {
    #[serde(rename = "load", default)]
    pub loads: Vec<BTreeMap<String, Spanned<toml::Value>>>,
}

/// The keys `LoadSpecFile` holds, as serde names them: asked of its `Deserialize`, so
/// the list cannot drift from the struct.
pub fn load_keys() -> &'static [&'static str] {
    use serde::de::{self, Visitor};
    /// A deserializer that only records the fields a struct asks for.
    struct Fields(&'static [&'static str]);
    #[derive(Debug)]
    struct Asked;
    impl std::fmt::Display for Asked {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("asked")
        }
    }
    impl std::error::Error for Asked {}
    impl de::Error for Asked {
        fn custom<T: std::fmt::Display>(_: T) -> Self {
            Asked
        }
    }
    impl<'de> de::Deserializer<'de> for &mut Fields {
        type Error = Asked;
        fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Asked> {
            Err(Asked)
        }
        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, Asked> {
            self.0 = fields;
            Err(Asked)
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
            byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map
            enum identifier ignored_any
        }
    }
    let mut f = Fields(&[]);
    let _ = LoadSpecFile::deserialize(&mut f);
    f.0
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_loads_keys_are_its_structs_fields() {
        let keys = super::load_keys();
        for k in [
            "protocol",
            "generator",
            "connections",
            "body_size",
            "extra_args",
        ] {
            assert!(keys.contains(&k), "{k} in {keys:?}");
        }
        assert!(
            !keys.contains(&"method") && !keys.contains(&"path"),
            "{keys:?}"
        );
    }
}
