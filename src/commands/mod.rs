//! One module per command; each validates its flags, runs, and reports.

pub mod amqp;
pub mod amqp_config;
pub mod connect;
pub mod echo;
pub mod harness;
pub mod http;
pub mod ioevent;
pub mod load;
pub mod serve;
pub mod serve_procs;

// suites and reports (issue 7)
pub mod compare;
pub mod suite;
pub mod suite_report;
