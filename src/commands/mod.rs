//! One module per command; each validates its flags, runs, and reports.

pub mod connect;
pub mod echo;
pub mod ioevent;
pub mod load;
pub mod serve;
pub mod serve_procs;
