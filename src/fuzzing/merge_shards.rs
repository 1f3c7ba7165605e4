//! Shards of one run as `wirebench merge` takes them: two or three result files, each
//! read back as the command reads a file (`merge_inputs::parse`), then checked and
//! merged as the command does (`merge::merge_results`). The first byte picks the form
//! of the rest (bit 0) and `--allow-partial` (bit 1):
//! - files: up to three texts separated by 0xFF (a byte UTF-8 text never holds);
//! - one result, then after a 0xFF its edits: the result becomes shards 0..N of one
//!   run (N = 2 or 3), and each edit of 3 bytes changes one scalar of one shard (which
//!   shard, which leaf in document order, how), so the checks meet files that are
//!   valid but for a field or two.
//!
//! Nothing may panic. Whenever the merge is accepted: its totals keep sent = ok +
//! errors + in flight when they say the invariant holds, its histogram's count and
//! data hold the sum of the shards' counts, it passes the checks a shard passes
//! (`check::own_figures`), and its summary prints and it serializes.
//! Run: `cargo +nightly fuzz run merge_shards`.

use crate::commands::merge::merge_results;
use crate::commands::merge_inputs::parse;
use crate::stats::latency::Latency;
use crate::stats::merge::{check, Part};
use serde_json::{json, Value};

/// Between the files, and between the result and its edits.
const SEP: u8 = 0xFF;

/// One input, as the fuzz target runs it.
pub fn run(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let texts = if mode & 1 == 0 {
        // A file that is not UTF-8 is refused when it is read (read_to_string).
        let files: Option<Vec<String>> = rest
            .split(|&b| b == SEP)
            .take(3)
            .map(|p| std::str::from_utf8(p).ok().map(String::from))
            .collect();
        match files {
            Some(f) => f,
            None => return,
        }
    } else {
        let (text, edits) = match rest.iter().position(|&b| b == SEP) {
            Some(at) => (&rest[..at], &rest[at + 1..]),
            None => (rest, &[][..]),
        };
        match shards_of(text, edits) {
            Some(t) => t,
            None => return,
        }
    };
    merge_checked(&texts, mode & 2 != 0);
}

/// Reads and merges `texts` as `wirebench merge` does; when the merge is accepted,
/// checks what a merge must keep.
fn merge_checked(texts: &[String], allow_partial: bool) {
    let names: Vec<String> = (0..texts.len())
        .map(|i| format!("shard-{i}.json"))
        .collect();
    let mut results = Vec::with_capacity(texts.len());
    for (name, text) in names.iter().zip(texts) {
        match parse(name, text) {
            Ok(r) => results.push(r),
            Err(e) => return refused(&e),
        }
    }
    let merged = match merge_results(&results, &names, allow_partial) {
        Ok(m) => m,
        Err(e) => return refused(&e),
    };
    let t = &merged.totals;
    if t.invariant_holds == Some(true) {
        let parts =
            t.ok.checked_add(t.errors)
                .and_then(|x| x.checked_add(t.in_flight));
        assert_eq!(
            parts,
            Some(t.sent),
            "merged totals break the invariant: {t:?}"
        );
    }
    let counts: Option<u64> = results
        .iter()
        .try_fold(0u64, |a, r| a.checked_add(r.histogram.count));
    assert_eq!(
        counts,
        Some(merged.histogram.count),
        "merged histogram count"
    );
    assert_eq!(held(&merged.histogram.data), merged.histogram.count);
    assert_eq!(merged.latency_us.count, merged.histogram.count);
    if let Some(u) = &merged.histogram_uncorrected {
        assert_eq!(held(&u.data), u.count, "merged uncorrected histogram count");
    }
    let m = merged.merge.as_ref().expect("a merge says what it merged");
    assert_eq!(m.present.len(), results.len());
    let me = [Part {
        name: "merged.json",
        result: &merged,
    }];
    if let Err(why) = check::own_figures(&me) {
        panic!("the merge of accepted shards fails a shard's own checks: {why}");
    }
    let _ = crate::report::text::summary(&merged);
    serde_json::to_string(&merged).expect("a merged result serializes");
}

/// What the data of a histogram blob hold (the merge wrote it: it decodes).
fn held(data: &str) -> u64 {
    if data.is_empty() {
        return 0;
    }
    Latency::decode(data)
        .expect("a merged histogram decodes")
        .count()
}

/// A refusal is one line, as the command prints it, with the bad-input exit code.
fn refused(e: &crate::Error) {
    let msg = e.to_string();
    assert_eq!(e.exit_code(), 2, "{msg}");
    assert!(!msg.contains('\n'), "more than one line: {msg:?}");
}

/// The result `text` as shards 0..N of run "fuzz", each with the `edits` that name it
/// applied; None when `text` is not a JSON object (the files form covers that).
fn shards_of(text: &[u8], edits: &[u8]) -> Option<Vec<String>> {
    let base: Value = serde_json::from_slice(text).ok()?;
    base.as_object()?;
    let count = 2 + edits.first().map_or(0, |&b| u32::from(b % 2));
    let mut shards: Vec<Value> = (0..count).map(|i| shard(&base, i, count)).collect();
    for e in edits.get(1..).unwrap_or(&[]).chunks_exact(3) {
        let n = shards.len();
        let s = &mut shards[usize::from(e[0]) % n];
        let leaves = leaves(s);
        if leaves.is_empty() {
            continue;
        }
        let at = leaves[usize::from(e[1]) % leaves.len()].clone();
        edit(s, &at, e[2]);
    }
    Some(shards.iter().map(Value::to_string).collect())
}

/// `base` as shard `index` of `count` of run "fuzz": its own shard block's start and
/// portion when it has one, else measured from its start.
fn shard(base: &Value, index: u32, count: u32) -> Value {
    let mut v = base.clone();
    let own = base.get("shard").filter(|s| s.is_object());
    let start = own
        .and_then(|s| s.get("measured_start_unix_ms"))
        .or_else(|| base.get("started_unix_ms"))
        .cloned()
        .unwrap_or(json!(0));
    let portion = own
        .and_then(|s| s.get("portion"))
        .cloned()
        .unwrap_or(json!({}));
    v["shard"] = json!({
        "index": index, "count": count, "run_id": "fuzz", "start_at_unix_ms": null,
        "measured_start_unix_ms": start, "portion": portion,
    });
    v
}

/// JSON pointers of every scalar (number, bool, null, string) of `v`, in document order.
fn leaves(v: &Value) -> Vec<String> {
    fn walk(v: &Value, at: &mut String, out: &mut Vec<String>) {
        let len = at.len();
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    at.push('/');
                    at.push_str(&k.replace('~', "~0").replace('/', "~1"));
                    walk(x, at, out);
                    at.truncate(len);
                }
            }
            Value::Array(a) => {
                for (i, x) in a.iter().enumerate() {
                    at.push_str(&format!("/{i}"));
                    walk(x, at, out);
                    at.truncate(len);
                }
            }
            _ => out.push(at.clone()),
        }
    }
    let mut out = Vec::new();
    walk(v, &mut String::new(), &mut out);
    out
}

/// One edit of the scalar at `at`: `how`'s low 3 bits pick the change, its high 5
/// bits a small number for it.
fn edit(v: &mut Value, at: &str, how: u8) {
    let n = u64::from(how >> 3);
    if how & 7 == 7 {
        // The key left out altogether.
        if let Some((parent, key)) = at.rsplit_once('/') {
            if let Some(Value::Object(m)) = v.pointer_mut(parent) {
                m.remove(&key.replace("~1", "/").replace("~0", "~"));
            }
        }
        return;
    }
    let Some(x) = v.pointer_mut(at) else {
        return;
    };
    *x = match how & 7 {
        0 => json!(n),
        1 => match x.as_u64() {
            Some(u) => json!(u.wrapping_add(n + 1)),
            None => json!(x.as_f64().unwrap_or(0.0) + n as f64 + 0.5),
        },
        2 => match x.as_u64() {
            Some(u) => json!(u.saturating_sub(n + 1)),
            None => json!(-(n as f64) - 0.5),
        },
        3 => json!(u64::MAX - n),
        4 => Value::Null,
        5 => json!(!x.as_bool().unwrap_or(false)),
        _ => json!(1e300 * (n as f64 + 1.0)),
    };
}
