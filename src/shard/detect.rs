//! Which shard this process is: from `--shard I/N`, or from the environment a
//! scheduler gives its tasks (a Kubernetes Indexed Job with `--shards N`, Slurm's
//! srun, Open MPI's mpirun); and which run it belongs to (`--run-id`, or the
//! scheduler's job id). The environment is read through a function so the rules are
//! tested without touching the process's own.

use crate::error::{Error, Result};

/// Where the shard's index and count came from (the plan line says it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    Flag,
    Kubernetes,
    Slurm,
    Mpi,
}

impl Source {
    pub fn describe(self) -> &'static str {
        match self {
            Source::Flag => "--shard",
            Source::Kubernetes => "JOB_COMPLETION_INDEX with --shards",
            Source::Slurm => "SLURM_PROCID/SLURM_NTASKS",
            Source::Mpi => "OMPI_COMM_WORLD_RANK/OMPI_COMM_WORLD_SIZE",
        }
    }
}

/// Most shards a run may have: the connection ids keep 12 bits for the shard index
/// (`Shard::connection_id_base`).
pub const MAX_SHARDS: u32 = 4096;

/// The longest `--run-id` (it is compared and printed, never parsed).
pub const MAX_RUN_ID: usize = 128;

/// This shard's index and count, or None when nothing says the run is sharded.
pub fn position(
    shard: Option<&str>,
    shards: Option<u32>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<(u32, u32, Source)>> {
    if let (Some(_), Some(_)) = (shard, shards) {
        return Err(Error::usage(
            "choose one of --shard I/N and --shards N (which takes the index from JOB_COMPLETION_INDEX)",
        ));
    }
    if let Some(text) = shard {
        let (i, n) = parse_pair(text)?;
        return checked(i, n, Source::Flag).map(Some);
    }
    if let Some(n) = shards {
        let Some(i) = env("JOB_COMPLETION_INDEX") else {
            return Err(Error::usage(
                "--shards N takes this shard's index from JOB_COMPLETION_INDEX (set by a Kubernetes Indexed Job), which is not set: give --shard I/N instead",
            ));
        };
        let i = number("JOB_COMPLETION_INDEX", &i)?;
        return checked(i, n, Source::Kubernetes).map(Some);
    }
    for (rank, size, source) in [
        ("SLURM_PROCID", "SLURM_NTASKS", Source::Slurm),
        ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", Source::Mpi),
    ] {
        if let (Some(r), Some(s)) = (env(rank), env(size)) {
            let (i, n) = (number(rank, &r)?, number(size, &s)?);
            return checked(i, n, source).map(Some);
        }
    }
    Ok(None)
}

/// The run this shard belongs to: `--run-id`, else `WIREBENCH_RUN_ID` (what a
/// Kubernetes manifest sets, e.g. from the pod's job-name label), else Slurm's
/// `SLURM_JOB_ID` with `.SLURM_STEP_ID` when there is one; None when nothing names it.
pub fn run_id(flag: Option<&str>, env: &dyn Fn(&str) -> Option<String>) -> Result<Option<String>> {
    let (id, from) = match (flag, env("WIREBENCH_RUN_ID"), env("SLURM_JOB_ID")) {
        (Some(f), _, _) => (f.to_string(), "--run-id"),
        (None, Some(w), _) => (w, "WIREBENCH_RUN_ID"),
        (None, None, Some(job)) => match env("SLURM_STEP_ID") {
            Some(step) => (format!("{job}.{step}"), "SLURM_JOB_ID"),
            None => (job, "SLURM_JOB_ID"),
        },
        (None, None, None) => return Ok(None),
    };
    let fine = |c: char| c.is_ascii_graphic();
    if id.is_empty() || id.len() > MAX_RUN_ID || !id.chars().all(fine) {
        return Err(Error::usage(format!(
            "{from} must be 1 to {MAX_RUN_ID} printable characters without spaces"
        )));
    }
    Ok(Some(id))
}

fn parse_pair(text: &str) -> Result<(u32, u32)> {
    let Some((i, n)) = text.split_once('/') else {
        return Err(Error::usage(format!(
            "--shard takes I/N (this shard's 0-based index, then the number of shards), e.g. --shard 0/3, not '{text}'"
        )));
    };
    match (i.trim().parse::<u32>(), n.trim().parse::<u32>()) {
        (Ok(i), Ok(n)) => Ok((i, n)),
        _ => Err(Error::usage(format!(
            "--shard {text}: I and N must be whole numbers, e.g. --shard 0/3"
        ))),
    }
}

fn number(var: &str, text: &str) -> Result<u32> {
    text.trim()
        .parse::<u32>()
        .map_err(|_| Error::usage(format!("{var} must be a whole number, not '{text}'")))
}

fn checked(i: u32, n: u32, source: Source) -> Result<(u32, u32, Source)> {
    let from = source.describe();
    if n == 0 {
        return Err(Error::usage(format!(
            "shard {i}/{n} (from {from}): the number of shards must be at least 1"
        )));
    }
    if n > MAX_SHARDS {
        return Err(Error::usage(format!(
            "shard {i}/{n} (from {from}): at most {MAX_SHARDS} shards"
        )));
    }
    if i >= n {
        return Err(Error::usage(format!(
            "shard {i}/{n} (from {from}): the index counts from 0 and must be below the number of shards ({})",
            n - 1
        )));
    }
    Ok((i, n, source))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let m: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| m.get(k).cloned()
    }

    fn usage(r: Result<Option<(u32, u32, Source)>>) -> String {
        match r {
            Err(Error::Usage(m)) => m,
            other => panic!("expected a usage error, got {other:?}"),
        }
    }

    #[test]
    fn the_flag_wins_over_every_scheduler() {
        let e = env(&[("SLURM_PROCID", "1"), ("SLURM_NTASKS", "4")]);
        assert_eq!(
            position(Some("2/3"), None, &e).unwrap(),
            Some((2, 3, Source::Flag))
        );
        assert_eq!(
            position(None, None, &e).unwrap(),
            Some((1, 4, Source::Slurm))
        );
    }

    #[test]
    fn each_scheduler_is_read() {
        let k = env(&[
            ("JOB_COMPLETION_INDEX", "4"),
            ("SLURM_PROCID", "0"),
            ("SLURM_NTASKS", "2"),
        ]);
        assert_eq!(
            position(None, Some(5), &k).unwrap(),
            Some((4, 5, Source::Kubernetes))
        );
        let m = env(&[("OMPI_COMM_WORLD_RANK", "3"), ("OMPI_COMM_WORLD_SIZE", "8")]);
        assert_eq!(position(None, None, &m).unwrap(), Some((3, 8, Source::Mpi)));
        // Slurm before mpirun when both are set (srun --mpi=pmix sets both alike).
        let both = env(&[
            ("SLURM_PROCID", "1"),
            ("SLURM_NTASKS", "2"),
            ("OMPI_COMM_WORLD_RANK", "0"),
            ("OMPI_COMM_WORLD_SIZE", "2"),
        ]);
        assert_eq!(
            position(None, None, &both).unwrap(),
            Some((1, 2, Source::Slurm))
        );
        // Half a pair, or an index without --shards, says nothing.
        assert_eq!(
            position(None, None, &env(&[("SLURM_PROCID", "1")])).unwrap(),
            None
        );
        assert_eq!(
            position(None, None, &env(&[("JOB_COMPLETION_INDEX", "1")])).unwrap(),
            None
        );
        assert_eq!(position(None, None, &env(&[])).unwrap(), None);
    }

    #[test]
    fn bad_positions_are_one_sentence() {
        let none = env(&[]);
        assert!(
            usage(position(Some("3/2"), None, &none)).contains("below the number of shards (1)")
        );
        assert!(usage(position(Some("2"), None, &none)).starts_with("--shard takes I/N"));
        assert!(usage(position(Some("0/0"), None, &none)).contains("at least 1"));
        assert!(usage(position(Some("a/b"), None, &none)).contains("whole numbers"));
        assert!(usage(position(None, Some(3), &none)).contains("JOB_COMPLETION_INDEX"));
        assert!(usage(position(Some("0/2"), Some(2), &none)).starts_with("choose one of"));
        let k = env(&[("JOB_COMPLETION_INDEX", "x")]);
        assert!(usage(position(None, Some(3), &k)).starts_with("JOB_COMPLETION_INDEX must be"));
        let s = env(&[("SLURM_PROCID", "2"), ("SLURM_NTASKS", "2")]);
        assert!(usage(position(None, None, &s)).contains("from SLURM_PROCID/SLURM_NTASKS"));
    }

    #[test]
    fn run_ids_come_from_the_flag_or_the_job() {
        let s = env(&[("SLURM_JOB_ID", "42"), ("SLURM_STEP_ID", "0")]);
        assert_eq!(run_id(None, &s).unwrap().as_deref(), Some("42.0"));
        assert_eq!(run_id(Some("mine"), &s).unwrap().as_deref(), Some("mine"));
        let j = env(&[("SLURM_JOB_ID", "42")]);
        assert_eq!(run_id(None, &j).unwrap().as_deref(), Some("42"));
        let k = env(&[("WIREBENCH_RUN_ID", "bench-7"), ("SLURM_JOB_ID", "42")]);
        assert_eq!(run_id(None, &k).unwrap().as_deref(), Some("bench-7"));
        assert_eq!(run_id(None, &env(&[])).unwrap(), None);
        assert!(run_id(Some("has space"), &env(&[])).is_err());
        assert!(run_id(Some(""), &env(&[])).is_err());
    }
}
