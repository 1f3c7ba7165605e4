//! One module per command; each validates its flags, runs, and reports.

pub mod echo;
pub mod ioevent;
pub mod load;
pub mod serve;

// suites and reports (issue 7)
pub mod compare;
pub mod suite;
pub mod suite_report;
