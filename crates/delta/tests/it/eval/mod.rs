//! `delta eval` (issue 26): Harbor-format task sets run as verified trials in containers,
//! locally and on the Slurm cluster, resumable; the report's statistics and the
//! comparison of two evals against values worked by hand.

mod errors;
mod report;
