//! The published result schema, schema/result.schema.json, assembled: the base that
//! every result shares (src/stats/result.schema.base.json) plus each registered
//! command's own top-level blocks (`Entry::result_blocks_schema`, a JSON file in its
//! folder), and the registered names as the enum of `kind` and `suite.protocol`.
//! A test keeps the committed file equal to it, byte for byte.

use super::REGISTRY;
use serde_json::{Map, Value};

/// The shape every result has, whatever produced it.
const BASE: &str = include_str!("../stats/result.schema.base.json");

/// The committed file, relative to the repository root.
pub const PUBLISHED: &str = "schema/result.schema.json";

/// The command that rewrites the published file from the base and the blocks.
pub const REGENERATE: &str =
    "WIREBENCH_WRITE_SCHEMA=1 cargo test --profile ci --lib -- registry::schema";

/// The result schema as published: pretty JSON (keys sorted), one trailing newline.
/// Err names the command whose block does not parse or takes a name already taken.
pub fn result_schema() -> Result<String, String> {
    let mut schema: Value =
        serde_json::from_str(BASE).map_err(|e| format!("the base schema: {e}"))?;
    let names: Vec<Value> = REGISTRY.iter().map(|e| e.name().into()).collect();
    let props = schema
        .get_mut("properties")
        .and_then(Value::as_object_mut)
        .ok_or("the base schema has no properties")?;
    set_enum(props, &["kind"], &names)?;
    set_enum(props, &["suite", "properties", "protocol"], &names)?;
    for e in REGISTRY {
        let blocks: Map<String, Value> = serde_json::from_str(e.result_blocks_schema())
            .map_err(|err| format!("{}'s result blocks schema: {err}", e.name()))?;
        for (block, s) in blocks {
            if props.contains_key(&block) {
                return Err(format!(
                    "{}'s result block `{block}` takes a name already in the schema",
                    e.name()
                ));
            }
            props.insert(block, s);
        }
    }
    let text = serde_json::to_string_pretty(&schema).map_err(|e| e.to_string())?;
    Ok(text + "\n")
}

/// Sets `enum` on the property at `path` (inside `properties`).
fn set_enum(props: &mut Map<String, Value>, path: &[&str], names: &[Value]) -> Result<(), String> {
    let mut at = props;
    let (last, parents) = path.split_last().ok_or("empty path")?;
    for p in parents {
        at = at
            .get_mut(*p)
            .and_then(Value::as_object_mut)
            .ok_or_else(|| format!("the base schema has no {}", path.join(".")))?;
    }
    let slot = at
        .get_mut(*last)
        .and_then(Value::as_object_mut)
        .ok_or_else(|| format!("the base schema has no {}", path.join(".")))?;
    slot.insert("enum".into(), Value::Array(names.to_vec()));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_published_schema_is_the_assembled_one() {
        let want = result_schema().expect("the schema assembles");
        let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(PUBLISHED);
        if std::env::var_os("WIREBENCH_WRITE_SCHEMA").is_some() {
            std::fs::write(&file, &want).expect("write the schema");
        }
        let have = std::fs::read_to_string(&file).unwrap_or_default();
        assert!(
            have == want,
            "{PUBLISHED} is not the schema assembled from src/stats/result.schema.base.json and each registered command's blocks; regenerate it with:\n  {REGENERATE}"
        );
    }

    #[test]
    fn every_command_names_its_kind_and_a_block_cannot_shadow_the_base() {
        let v: Value = serde_json::from_str(&result_schema().expect("assembles")).expect("JSON");
        let kinds = &v["properties"]["kind"]["enum"];
        for e in REGISTRY {
            assert!(kinds
                .as_array()
                .is_some_and(|k| k.contains(&e.name().into())));
        }
        // A block named like a base property is refused, not merged.
        let base: Value = serde_json::from_str(BASE).expect("base JSON");
        assert!(base["properties"].get("totals").is_some());
        for e in REGISTRY {
            let blocks: Map<String, Value> =
                serde_json::from_str(e.result_blocks_schema()).expect("blocks JSON");
            for b in blocks.keys() {
                assert!(base["properties"].get(b).is_none(), "{b} shadows the base");
            }
        }
    }
}
