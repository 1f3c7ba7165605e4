//! All integration tests in one binary: one link instead of one per file, and one
//! copy of the shared helpers (`common`: the binary, schema validation, `have()`).

mod amqp_common;
mod common;
mod http_support;

mod amqp;
mod amqp_hard;
mod amqp_peers;
mod amqp_schema;
mod bad_input;
mod bounds_echo;
mod bounds_http;
mod cli_errors;
mod connect;
mod connect_defaults;
mod echo_batch;
mod echo_foreign;
mod echo_server_death;
mod echo_server_robust;
mod echo_tls;
mod http_load;
mod http_peers;
mod ioevent;
mod k8s_render;
mod merge;
mod output_truth;
mod ramp;
mod redis;
mod result_typed;
mod runs_cli;
mod schema;
mod serve_figures;
mod serve_plan;
mod server_pacing;
mod server_timeouts;
mod session_plugin;
mod shards;
mod shards_netns;
mod shards_slurm;
mod suite_out_safety;
mod suite_parsers;
mod suite_report;
mod suite_runner;
mod suite_verdict;
mod ws;
mod ws_peers;
