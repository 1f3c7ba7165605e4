//! AMQP results validate against schema/result.schema.json (with their `amqp` section),
//! and the schema refuses a broken one.

use crate::common::*;
use serde_json::Value;

fn validator() -> jsonschema::Validator {
    schema_validator("result.schema.json")
}

fn errors(v: &jsonschema::Validator, r: &Value) -> Vec<String> {
    v.iter_errors(r)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect()
}

#[test]
fn amqp_results_match_the_schema_and_broken_ones_do_not() {
    let v = validator();
    for args in [
        &[
            "amqp",
            "--mode",
            "churn",
            "--clients",
            "50",
            "--concurrency",
            "5",
            "--confirm",
        ][..],
        &["amqp", "-n", "2000", "-t", "1", "-c", "2"][..],
    ] {
        let r = run_json(args);
        assert_eq!(r.code, 0, "{}", r.explain());
        let j = r.json().clone();
        let errs = errors(&v, &j);
        assert!(errs.is_empty(), "{}\n{j:#}", errs.join("\n"));
        assert_eq!(
            ju(&j, "/amqp/handshake_histogram/count"),
            ju(&j, "/amqp/handshakes")
        );
        let mut broken = j.clone();
        broken["amqp"]["mode"] = Value::from("fast");
        assert!(!errors(&v, &broken).is_empty());
        let mut broken = j.clone();
        broken["amqp"].as_object_mut().unwrap().remove("messages");
        assert!(!errors(&v, &broken).is_empty());
    }
}
