//! Interference: what other processes and the hypervisor took from the CPUs a run
//! used while it was measured. `figures.rs` is what a result says (`machine`), its
//! marks and its exact merge; `probe.rs` measures it over a window from /proc.

mod figures;
mod probe;

pub use figures::{CpuUse, Interference, LoadAverage, Machine, Mark, THRESHOLD};
pub use probe::{attribute, our_process, this_process_tree, tree, OurProcess, Reaped, Window};
