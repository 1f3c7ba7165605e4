//! One module per command; each validates its flags, runs, and reports. Every
//! protocol's load runs through `run_load`, its server through `serve`.

pub mod connect;
pub mod harness;
pub mod ioevent;
pub mod k8s;
pub mod load;
pub mod merge;
pub mod merge_inputs;
pub mod run_load;
pub mod serve;
pub mod serve_plan;
pub mod serve_procs;
pub mod serve_stats;

// suites and reports (issue 7)
pub mod compare;
pub mod suite;
pub mod suite_report;
