//! The generic merge of a JSON block, for blocks whose merge needs nothing of the
//! protocol that wrote them: it applies if and only if every leaf is a counter or the
//! same on every part. Whole numbers (JSON unsigned integers) are counters and are
//! summed; any other leaf (a string, a bool, null, a fraction) must be equal on every
//! part and is kept; objects merge key by key (a key missing on a part counts as 0 for
//! a counter, so error maps with different kinds add up); arrays merge element by
//! element. Anything else (a rate, a mean, a percentile that differs) is refused: such
//! a block needs its command's own merge (`Entry::block_merge`), never a guess.
//! A whole-number setting that is not a counter (a protocol version, a count per
//! connection) is named to `sum_with_settings`, which keeps it instead of adding it.

use serde_json::{Map, Value};

/// `sum`, but the top-level keys in `settings` are settings, not counters: equal on
/// every part (else the one sentence naming `path.key`) and kept as they are.
pub fn sum_with_settings(path: &str, parts: &[&Value], settings: &[&str]) -> Result<Value, String> {
    let counters: Vec<Value> = parts
        .iter()
        .map(|p| {
            let mut c = (*p).clone();
            if let Some(o) = c.as_object_mut() {
                settings.iter().for_each(|k| drop(o.remove(*k)));
            }
            c
        })
        .collect();
    let mut out = sum(path, &counters.iter().collect::<Vec<_>>())?;
    for k in settings {
        let first = parts.first().map_or(&Value::Null, |p| &p[*k]);
        if parts.iter().any(|p| &p[*k] != first) {
            return Err(format!("{path}.{k} differs between the parts"));
        }
        out[*k] = first.clone();
    }
    Ok(out)
}

/// The merge of `parts` (at least one), or why it cannot be merged exactly; `path`
/// names the block in the refusal.
pub fn sum(path: &str, parts: &[&Value]) -> Result<Value, String> {
    let first = parts
        .first()
        .ok_or_else(|| format!("{path}: nothing to merge"))?;
    if parts.iter().all(|p| p.is_u64() || p.is_null()) && parts.iter().any(|p| p.is_u64()) {
        if parts.iter().any(|p| p.is_null()) && !parts.iter().all(|p| *p == *first) {
            return Err(format!(
                "{path} is a number on some parts and null on others"
            ));
        }
        let mut total: u64 = 0;
        for p in parts {
            total = total
                .checked_add(p.as_u64().unwrap_or(0))
                .ok_or_else(|| format!("{path}: the sum overflows"))?;
        }
        return Ok(Value::from(total));
    }
    match first {
        Value::Object(_) if parts.iter().all(|p| p.is_object()) => {
            let mut keys: Vec<&String> = Vec::new();
            for p in parts {
                for k in p.as_object().into_iter().flat_map(|o| o.keys()) {
                    if !keys.contains(&k) {
                        keys.push(k);
                    }
                }
            }
            let zero = Value::from(0u64);
            let mut out = Map::new();
            for k in keys {
                let here: Vec<&Value> = parts.iter().filter_map(|p| p.get(k)).collect();
                let child = format!("{path}.{k}");
                // A key some parts lack merges only as a counter (absent = none counted).
                let vals: Vec<&Value> = if here.len() == parts.len() {
                    here
                } else if here.iter().all(|v| v.is_u64()) {
                    parts.iter().map(|p| p.get(k).unwrap_or(&zero)).collect()
                } else {
                    return Err(format!(
                        "{child} is on some parts only and is not a counter"
                    ));
                };
                out.insert(k.clone(), sum(&child, &vals)?);
            }
            Ok(Value::Object(out))
        }
        Value::Array(a)
            if parts
                .iter()
                .all(|p| p.as_array().is_some_and(|b| b.len() == a.len())) =>
        {
            let mut out = Vec::with_capacity(a.len());
            for i in 0..a.len() {
                let vals: Vec<&Value> = parts.iter().map(|p| &p[i]).collect();
                out.push(sum(&format!("{path}[{i}]"), &vals)?);
            }
            Ok(Value::Array(out))
        }
        _ if parts.iter().all(|p| *p == *first) => Ok((*first).clone()),
        _ => Err(format!(
            "{path} differs between the parts and is not a counter, so it cannot be merged exactly"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn counters_add_settings_stay_and_anything_else_is_refused() {
        let a = json!({"2xx": 5, "mode": "churn", "ratio": 0.5, "by": {"x": 1}, "l": [1, 2]});
        let b = json!({"2xx": 7, "mode": "churn", "ratio": 0.5, "by": {"y": 2}, "l": [3, 4]});
        assert_eq!(
            sum("b", &[&a, &b]).unwrap(),
            json!({"2xx": 12, "mode": "churn", "ratio": 0.5, "by": {"x": 1, "y": 2}, "l": [4, 6]})
        );
        let c = json!({"2xx": 1, "mode": "publish", "ratio": 0.5, "by": {}, "l": [0, 0]});
        assert_eq!(
            sum("b", &[&a, &c]).unwrap_err(),
            "b.mode differs between the parts and is not a counter, so it cannot be merged exactly"
        );
        let rate = json!({"per_s": 1.5});
        let rate2 = json!({"per_s": 2.5});
        assert!(sum("r", &[&rate, &rate2])
            .unwrap_err()
            .starts_with("r.per_s differs"));
        assert_eq!(
            sum("o", &[&json!({"a": "x"}), &json!({})]).unwrap_err(),
            "o.a is on some parts only and is not a counter"
        );
        assert_eq!(
            sum("n", &[&json!(u64::MAX), &json!(1)]).unwrap_err(),
            "n: the sum overflows"
        );
    }
}
