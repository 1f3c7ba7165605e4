//! Suites: a TOML file of servers and loads; the runner starts each server pinned,
//! sweeps the loads over it with wirebench or an external generator its protocol
//! declares, samples the server's CPU and RSS, and writes one result JSON per point.

pub mod cpuset;
pub mod cx;
pub mod gen;
pub mod interference;
pub mod load;
pub mod manifest;
pub mod plan;
pub mod process;
pub mod profile;
pub mod ready;
pub mod runner;
pub mod sampler;
pub mod shape;
pub mod spec;
