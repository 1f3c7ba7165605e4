//! What the client sends: a command template (`SET key:__rand__ __data__`) or a
//! preset (`ping`, `set`, `get`, `mixed:R:W`), the reply each command must get, and
//! the value a key holds, derived from the key alone so a GET is checked without a
//! map of what was written.
//!
//! Placeholders, inside any argument: `__rand__` (also redis-benchmark's
//! `__rand_int__`) is the request's key number as 12 zero-padded digits, as
//! redis-benchmark writes it; `__data__` is the key's value (a whole argument).

use super::codec::push_header;

/// A key number's digits in a request.
pub const KEY_DIGITS: usize = 12;
/// The largest `--keyspace`: key numbers travel in the request's 32-bit tag.
pub const MAX_KEYSPACE: u64 = u32::MAX as u64;

/// One piece of an argument.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Part {
    Text(Vec<u8>),
    Key,
}

/// One argument of a template.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Arg {
    Parts(Vec<Part>),
    Data,
}

/// The reply a command must get (its type, and for a GET of our own key, its value).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expect {
    /// `+OK` (SET, MSET, SELECT, FLUSHDB).
    Ok,
    /// `+PONG`.
    Pong,
    /// An integer (INCR, DEL, EXISTS, pushes and adds).
    Integer,
    /// A bulk string or nil; `checked`: the value must be the one the key holds.
    BulkOrNull { checked: bool },
    /// An array (MGET, LRANGE, KEYS).
    Aggregate,
    /// Any reply but an error.
    Any,
}

/// One command with its placeholders.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Template {
    args: Vec<Arg>,
    pub expect: Expect,
    /// It names a key (`__rand__`), so each request draws one.
    pub keyed: bool,
    /// As written (the config table, the result).
    pub text: String,
}

fn expect_of(name: &str, args: &[Arg]) -> Expect {
    let n = args.len();
    let first_keyed = matches!(args.get(1), Some(Arg::Parts(p)) if p.contains(&Part::Key));
    match name {
        "PING" if n == 1 => Expect::Pong,
        "PING" | "ECHO" => Expect::BulkOrNull { checked: false },
        "SET" if n == 3 => Expect::Ok,
        "MSET" | "SELECT" | "FLUSHDB" | "FLUSHALL" => Expect::Ok,
        "GET" if n == 2 => Expect::BulkOrNull {
            checked: first_keyed,
        },
        "GETDEL" | "LPOP" | "RPOP" | "HGET" => Expect::BulkOrNull { checked: false },
        "INCR" | "DECR" | "INCRBY" | "DECRBY" | "DEL" | "EXISTS" | "UNLINK" | "LPUSH" | "RPUSH"
        | "SADD" | "SREM" | "HSET" | "HDEL" | "LLEN" | "SCARD" | "ZADD" | "STRLEN" | "APPEND"
        | "EXPIRE" | "TTL" | "DBSIZE" => Expect::Integer,
        "MGET" | "LRANGE" | "KEYS" | "SMEMBERS" | "ZRANGE" | "HGETALL" => Expect::Aggregate,
        _ => Expect::Any,
    }
}

impl Template {
    /// Parses a template: words separated by spaces, the first the command's name.
    pub fn parse(text: &str) -> Result<Template, String> {
        let words: Vec<&str> = text.split_whitespace().collect();
        let Some(name) = words.first() else {
            return Err("the command template is empty".into());
        };
        let mut args = Vec::with_capacity(words.len());
        for w in &words {
            if w.contains("__data__") {
                if *w != "__data__" {
                    return Err(format!(
                        "__data__ must be a whole argument, not part of {w:?}"
                    ));
                }
                args.push(Arg::Data);
                continue;
            }
            let mut parts = Vec::new();
            let mut rest = *w;
            loop {
                let at = [("__rand_int__", 12), ("__rand__", 8)]
                    .iter()
                    .filter_map(|&(p, l)| rest.find(p).map(|i| (i, l)))
                    .min();
                match at {
                    Some((i, l)) => {
                        if i > 0 {
                            parts.push(Part::Text(rest.as_bytes()[..i].to_vec()));
                        }
                        parts.push(Part::Key);
                        rest = &rest[i + l..];
                    }
                    None => {
                        if !rest.is_empty() {
                            parts.push(Part::Text(rest.as_bytes().to_vec()));
                        }
                        break;
                    }
                }
            }
            let unknown = parts.iter().any(
                |p| matches!(p, Part::Text(t) if t.windows(2).filter(|w| w == b"__").count() >= 2),
            );
            if unknown {
                return Err(format!(
                    "{w:?} has an unknown placeholder: use __rand__ (or __rand_int__) and __data__"
                ));
            }
            args.push(Arg::Parts(parts));
        }
        if matches!(args[0], Arg::Data)
            || matches!(&args[0], Arg::Parts(p) if p.contains(&Part::Key))
        {
            return Err("the command's name cannot be a placeholder".into());
        }
        let name = name.to_ascii_uppercase();
        let keyed = args
            .iter()
            .any(|a| matches!(a, Arg::Parts(p) if p.contains(&Part::Key)));
        Ok(Template {
            expect: expect_of(&name, &args),
            keyed,
            args,
            text: words.join(" "),
        })
    }

    /// Whether any argument is the value (`__data__`).
    pub fn has_data(&self) -> bool {
        self.args.contains(&Arg::Data)
    }

    /// Appends the command for key `key` to `out` as a RESP array.
    #[inline]
    pub fn encode(&self, key: u64, values: &Values, out: &mut Vec<u8>) {
        let digits = key_digits(key);
        push_header(out, b'*', self.args.len() as i64);
        for a in &self.args {
            match a {
                Arg::Data => {
                    push_header(out, b'$', values.len_of(key) as i64);
                    values.write(key, out);
                }
                Arg::Parts(parts) => {
                    let len: usize = parts
                        .iter()
                        .map(|p| match p {
                            Part::Text(t) => t.len(),
                            Part::Key => KEY_DIGITS,
                        })
                        .sum();
                    push_header(out, b'$', len as i64);
                    for p in parts {
                        match p {
                            Part::Text(t) => out.extend_from_slice(t),
                            Part::Key => out.extend_from_slice(&digits),
                        }
                    }
                }
            }
            out.extend_from_slice(b"\r\n");
        }
    }
}

/// A key number as 12 zero-padded digits (`key:000000000042`, redis-benchmark's form).
#[inline]
pub fn key_digits(mut key: u64) -> [u8; KEY_DIGITS] {
    let mut d = [b'0'; KEY_DIGITS];
    for slot in d.iter_mut().rev() {
        *slot = b'0' + (key % 10) as u8;
        key /= 10;
    }
    d
}

/// What the client asks: one template, or GETs and SETs in a fixed ratio.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Workload {
    /// Request i of a connection is `cycle[i % cycle.len()]`.
    pub templates: Vec<Template>,
    /// Per cycle of `reads + writes` requests: the template index of each.
    pub cycle: Vec<u8>,
    pub text: String,
}

impl Workload {
    /// `--command` (a template) or a preset: `ping`, `set`, `get`, `mixed:R:W`.
    pub fn parse(text: &str) -> Result<Workload, String> {
        let one = |t: &str| -> Result<Workload, String> {
            Ok(Workload {
                templates: vec![Template::parse(t)?],
                cycle: vec![0],
                text: text.to_string(),
            })
        };
        match text {
            "ping" => one("PING"),
            "set" => one("SET key:__rand__ __data__"),
            "get" => one("GET key:__rand__"),
            _ => match text.strip_prefix("mixed:") {
                Some(ratio) => {
                    let bad = || {
                        format!("{text:?}: mixed:R:W wants two whole numbers, reads and writes per cycle (e.g. mixed:9:1), at most 1000 together")
                    };
                    let (r, w) = ratio.split_once(':').ok_or_else(bad)?;
                    let (r, w) = (
                        r.parse::<usize>().map_err(|_| bad())?,
                        w.parse::<usize>().map_err(|_| bad())?,
                    );
                    if r + w == 0 || r + w > 1000 {
                        return Err(bad());
                    }
                    // Writes first in each cycle, so the reads after them can hit.
                    let mut cycle = vec![0u8; w];
                    cycle.extend(std::iter::repeat(1u8).take(r));
                    Ok(Workload {
                        templates: vec![
                            Template::parse("SET key:__rand__ __data__")?,
                            Template::parse("GET key:__rand__")?,
                        ],
                        cycle,
                        text: text.to_string(),
                    })
                }
                None => one(text),
            },
        }
    }

    /// The template of request `seq` of a connection.
    #[inline]
    pub fn template(&self, seq: u64) -> &Template {
        let i = self.cycle[(seq % self.cycle.len() as u64) as usize];
        &self.templates[i as usize]
    }

    pub fn keyed(&self) -> bool {
        self.templates.iter().any(|t| t.keyed)
    }

    pub fn has_data(&self) -> bool {
        self.templates.iter().any(Template::has_data)
    }
}

/// The value each key holds when this tool wrote it: its length drawn from the size
/// range by the key, its first bytes the key's 12 digits (so one key's value is never
/// another's), then `a..z` from a phase set by the key. A GET checks the bytes, not
/// the length: a key an earlier run wrote with another `--size` still checks, while
/// another key's value, a foreign value or a changed byte does not.
#[derive(Clone, Debug)]
pub struct Values {
    min: u64,
    max: u64,
    /// `a..z` repeated: at least `PATTERN_CHUNK + 26` bytes, so any phase can be sliced.
    pattern: Vec<u8>,
}

/// Bytes of the pattern compared at once (a multiple of 26, so the phase repeats).
const PATTERN_CHUNK: usize = 26 * 64;

impl Values {
    pub fn new(min: usize, max: usize) -> Values {
        let len = max.max(PATTERN_CHUNK) + 26;
        Values {
            min: min as u64,
            max: max as u64,
            pattern: (0..len).map(|i| b'a' + (i % 26) as u8).collect(),
        }
    }

    /// The length of key `key`'s value.
    #[inline]
    pub fn len_of(&self, key: u64) -> usize {
        let span = self.max - self.min + 1;
        let mixed = key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 17;
        (self.min + mixed % span) as usize
    }

    /// `len` bytes of key `key`'s pattern (`len` at most the longest value).
    #[inline]
    fn tail(&self, key: u64, len: usize) -> &[u8] {
        let phase = (key % 26) as usize;
        &self.pattern[phase..phase + len]
    }

    /// Appends key `key`'s value.
    #[inline]
    pub fn write(&self, key: u64, out: &mut Vec<u8>) {
        let len = self.len_of(key);
        let digits = key_digits(key);
        let head = len.min(KEY_DIGITS);
        out.extend_from_slice(&digits[..head]);
        out.extend_from_slice(self.tail(key, len - head));
    }

    /// Whether `value` holds key `key`'s bytes (its digits, then its pattern), at
    /// whatever length it was written.
    #[inline]
    pub fn matches(&self, key: u64, value: &[u8]) -> bool {
        let head = value.len().min(KEY_DIGITS);
        if value[..head] != key_digits(key)[..head] {
            return false;
        }
        value[head..]
            .chunks(PATTERN_CHUNK)
            .all(|c| *c == *self.tail(key, c.len()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_encode_exact_bytes() {
        let w = Workload::parse("set").expect("preset");
        let values = Values::new(16, 16);
        let mut out = Vec::new();
        w.template(0).encode(42, &values, &mut out);
        assert_eq!(
            String::from_utf8(out).expect("ascii"),
            "*3\r\n$3\r\nSET\r\n$16\r\nkey:000000000042\r\n$16\r\n000000000042qrst\r\n"
        );
        let t = Template::parse("HSET h:__rand_int__ f __data__").expect("valid");
        let mut out = Vec::new();
        t.encode(7, &Values::new(3, 3), &mut out);
        assert_eq!(
            out,
            b"*4\r\n$4\r\nHSET\r\n$14\r\nh:000000000007\r\n$1\r\nf\r\n$3\r\n000\r\n"
        );
        assert_eq!(t.expect, Expect::Integer);
    }

    #[test]
    fn values_are_the_keys_own_and_no_other() {
        let v = Values::new(1, 100);
        for key in [0u64, 1, 25, 26, 999_999, MAX_KEYSPACE - 1] {
            let mut out = Vec::new();
            v.write(key, &mut out);
            assert_eq!(out.len(), v.len_of(key));
            assert!(v.matches(key, &out));
            if out.len() >= KEY_DIGITS {
                assert!(!v.matches(key + 1, &out), "key {key}");
            }
            if out.len() > 1 {
                let mut bad = out.clone();
                let last = bad.len() - 1;
                bad[last] ^= 1;
                assert!(!v.matches(key, &bad));
            }
        }
        // A value written with another size still checks, at any length.
        let long = Values::new(5000, 5000);
        let mut out = Vec::new();
        long.write(77, &mut out);
        assert!(v.matches(77, &out));
        out[4000] ^= 1;
        assert!(!v.matches(77, &out));
        // Lengths cover the range.
        let lens: std::collections::BTreeSet<usize> = (0..10_000).map(|k| v.len_of(k)).collect();
        assert_eq!(
            (lens.first(), lens.last(), lens.len()),
            (Some(&1), Some(&100), 100)
        );
    }

    #[test]
    fn presets_and_expectations() {
        let m = Workload::parse("mixed:3:1").expect("valid");
        let names: Vec<&str> = (0..8).map(|s| m.template(s).text.as_str()).collect();
        assert_eq!(
            names[..4],
            [
                "SET key:__rand__ __data__",
                "GET key:__rand__",
                "GET key:__rand__",
                "GET key:__rand__"
            ]
        );
        assert_eq!(
            Workload::parse("ping").unwrap().templates[0].expect,
            Expect::Pong
        );
        assert_eq!(
            Workload::parse("get").unwrap().templates[0].expect,
            Expect::BulkOrNull { checked: true }
        );
        assert_eq!(
            Template::parse("GET fixed").unwrap().expect,
            Expect::BulkOrNull { checked: false }
        );
        assert_eq!(
            Template::parse("mget a b").unwrap().expect,
            Expect::Aggregate
        );
        assert_eq!(Template::parse("CLIENT LIST").unwrap().expect, Expect::Any);
        for bad in [
            "",
            "  ",
            "mixed:0:0",
            "mixed:1",
            "mixed:a:b",
            "__rand__ x",
            "SET k x__data__",
            "GET __foo__",
        ] {
            assert!(Workload::parse(bad).is_err(), "{bad:?}");
        }
    }
}
