//! The same eval on the real single-node Slurm cluster (tests/slurm/start-cluster.sh) as
//! an array job, with podman in the jobs: the per-task results equal the local run's.

use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::{container_ready, examples, results, statuses};
use crate::batch::require_slurm;
use crate::support::harness::{ROOT, Test};
use crate::support::run::{delta, mock};

#[test]
fn the_same_eval_on_slurm_gives_the_local_per_task_results() {
    require_slurm();
    container_ready();
    let model = mock(
        &fs::read_to_string(Path::new(ROOT).join("examples/eval-agent/mock-script.yaml"))
            .expect("script"),
    );
    let agent = format!("{ROOT}/examples/eval-agent");
    let local = delta(Test::new(), &model)
        .args([
            "eval",
            "run",
            &examples(),
            "--agent",
            &agent,
            "--out",
            "local",
            "--jobs",
            "2",
        ])
        .run()
        .code(0);
    let submitted = delta(local.then(), &model)
        .args([
            "eval",
            "run",
            &examples(),
            "--agent",
            &agent,
            "--out",
            "cluster",
            "--executor",
            "slurm",
            "--slurm-arg=--partition=debug",
        ])
        .run()
        .code(0);
    assert!(
        submitted.stderr().contains("submitted job"),
        "{}",
        submitted.stderr()
    );
    let root = submitted.path().to_path_buf();
    let script = fs::read_to_string(root.join("cluster/slurm/eval.sbatch")).expect("the script");
    assert!(script.contains("eval worker"), "{script}");
    // Slurm starts array tasks as its scheduler cycles allow: a hang guard of five minutes.
    let deadline = Instant::now() + Duration::from_secs(300);
    while results(&root.join("cluster")).len() < 8 {
        assert!(Instant::now() < deadline, "the array job did not finish");
        std::thread::sleep(Duration::from_millis(500));
    }
    let local = statuses(&results(&root.join("local")));
    let on_slurm = statuses(&results(&root.join("cluster")));
    assert_eq!(on_slurm, local);
    // compare agrees: no task changed.
    let compare = Test::new()
        .current_dir(&root)
        .args(["eval", "compare", "local", "cluster", "--format", "json"])
        .run()
        .code(0);
    let comparison: Value = serde_json::from_str(compare.stdout()).expect("JSON");
    assert_eq!(comparison["same"], 8, "{comparison:#}");
}
