//! Every producer's result reads back as the typed `RunResult` (what `suite` does with
//! each point) and writes out again unchanged: no field lost, the protocols' own blocks
//! (`status_classes`, `amqp`, `connect`) kept whole by name, and the counts exact.

use crate::common::run_json;
use serde_json::Value;
use wirebench::stats::RunResult;

fn round_trip(args: &[&str], block: Option<&str>) -> RunResult {
    let r = run_json(args);
    assert_eq!(r.code, 0, "{}", r.explain());
    let j = r.json();
    let typed: RunResult = serde_json::from_value(j.clone())
        .unwrap_or_else(|e| panic!("{args:?}: the result does not read back: {e}"));
    let again: Value = serde_json::to_value(&typed).unwrap();
    assert_eq!(&again, j, "{args:?}: written again, the result changed");
    if let Some(name) = block {
        assert_eq!(typed.extra(name), j.get(name), "{args:?}: block {name}");
        assert!(typed.extra(name).is_some(), "{args:?}: no {name} block");
    }
    assert_eq!(typed.totals.invariant_holds, Some(true), "{args:?}");
    typed
}

#[test]
fn every_producer_reads_back_typed_and_unchanged() {
    let echo = round_trip(&["echo", "-n", "300", "-c", "3"], None);
    assert_eq!((echo.totals.sent, echo.totals.ok), (300, 300));
    assert!(echo.extras.is_empty(), "{:?}", echo.extras.keys());

    let http = round_trip(&["http", "-n", "300", "-c", "3"], Some("status_classes"));
    assert_eq!(http.totals.ok, 300);
    assert_eq!(http.extra("status_classes").unwrap()["2xx"], 300);

    let amqp = round_trip(&["amqp", "-n", "300", "-t", "1", "-c", "2"], Some("amqp"));
    assert_eq!(amqp.totals.ok, 300);
    assert_eq!(amqp.extra("amqp").unwrap()["messages"], 300);

    let connect = round_trip(&["connect", "-n", "40", "--hold", "100ms"], Some("connect"));
    assert_eq!(connect.extra("connect").unwrap()["established"], 40);
    assert_eq!(connect.totals.in_flight, 0);
}
