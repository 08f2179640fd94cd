//! Crash recovery, repeated: multi-step runs are killed with SIGKILL at random moments —
//! during an LLM call (the mock answers late), during a tool (it sleeps), between journal
//! writes, during a `continue`'s own takeover — and continued until they complete. Every
//! run must end COMPLETED with a sound journal (no line lost, torn or duplicated, seq
//! gapless, every call answered once), each scripted step journaled exactly once, and no
//! tool call run twice (the tool appends its line to a ledger first thing).
//!
//! The kills are random but reproducible: the seed is printed, and `RESUME_CRASH_SEED=N`
//! replays it.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use crate::resume::support::{
    RunDir, assert_sound, delta_command, mock, wait_until, write_recorder,
};
use mock_llm::MockServer;

/// Tool-calling steps per run, before the final answer.
const STEPS: usize = 4;
/// Kills the suite must have made (each of a live process).
const KILLS_WANTED: usize = 60;
/// Runs driven at once.
const WORKERS: usize = 4;
/// A run is killed at most this often; the next continue is left to finish.
const MAX_KILLS_PER_RUN: usize = 4;
/// The longest wait before a kill; a whole run takes about this long.
const MAX_KILL_DELAY_MS: u64 = 260;

/// Step i calls `record` with line `step-i` after an LLM delay; then the final answer.
/// By conversation, so a continued run gets the step its journal has reached.
fn script() -> String {
    let delays = [25, 5, 40, 15];
    let mut text = String::from("mode: by_conversation\nsteps:\n");
    for (step, delay) in delays.iter().enumerate().take(STEPS) {
        text.push_str(&format!(
            "  - message:\n      content: \"step {step}\"\n      delay_ms: {delay}\n      \
             tool_calls:\n        - {{name: record, arguments: {{line: step-{step}, secs: \
             \"0.04\"}}}}\n"
        ));
    }
    text.push_str("  - message: {content: finished, delay_ms: 20}\n");
    text
}

/// One `delta` process with its output in files next to the workspace.
fn spawn(base: &Path, mock: &MockServer, args: &[&str], label: &str) -> Child {
    let out = File::create(base.join(format!("{label}.out"))).unwrap();
    let err = File::create(base.join(format!("{label}.err"))).unwrap();
    delta_command(base, mock)
        .args(args)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn()
        .unwrap()
}

struct Suite {
    base: PathBuf,
    mock: MockServer,
    seed: u64,
    kills: AtomicUsize,
    log: Mutex<Vec<String>>,
}

impl Suite {
    fn note(&self, line: String) {
        self.log.lock().unwrap().push(line);
    }

    /// Drives run `id` to completion through kills and continues.
    fn drive(&self, id: &str, rng: &mut fastrand::Rng) -> Result<(), String> {
        let ws = self.base.join(format!("ws-{id}"));
        let ws_arg = ws.display().to_string();
        let agent = self.base.join("agent").display().to_string();
        let mut label = 0;
        let mut child = spawn(
            &self.base,
            &self.mock,
            &[
                "run",
                "--agent",
                &agent,
                "-w",
                &ws_arg,
                "-m",
                "Record the steps.",
            ]
            .into_iter()
            .chain(["--run-id", id])
            .collect::<Vec<_>>(),
            &format!("{id}.{label}"),
        );
        let metadata = ws.join(".delta").join(id).join("metadata.json");
        // Kills before the run has its metadata would leave nothing to continue: the
        // orchestrator would simply start the run again. Those are not what this tests.
        wait_until("the run's metadata", || {
            metadata.exists() || matches!(child.try_wait(), Ok(Some(_)))
        });
        let mut killed = 0;
        loop {
            let pause = rng.u64(0..=MAX_KILL_DELAY_MS);
            std::thread::sleep(Duration::from_millis(pause));
            if killed < MAX_KILLS_PER_RUN && child.try_wait().unwrap().is_none() {
                child.kill().unwrap();
                child.wait().unwrap();
                killed += 1;
                self.kills.fetch_add(1, Ordering::SeqCst);
                self.note(format!("{id}: process {label} killed after {pause} ms"));
                label += 1;
                child = spawn(
                    &self.base,
                    &self.mock,
                    &["continue", "--run-id", id, "-w", &ws_arg],
                    &format!("{id}.{label}"),
                );
                continue;
            }
            let status = child.wait().unwrap();
            let stderr =
                std::fs::read_to_string(self.base.join(format!("{id}.{label}.err"))).unwrap();
            // A restart loop reading whatever the killed attempt printed: a search.
            let restored_end = status.code() == Some(2) && stderr.contains("Run is COMPLETED.");
            if status.code() == Some(0) || restored_end {
                break;
            }
            return Err(format!("{id}: process {label} exited {status}:\n{stderr}"));
        }
        self.check(&ws, id)
    }

    fn check(&self, ws: &Path, id: &str) -> Result<(), String> {
        let run = RunDir::new(ws, id);
        assert_sound(&run, "COMPLETED").map_err(|e| format!("{id}: {e}"))?;
        if run.metadata()["result"] != "finished" {
            return Err(format!("{id}: result {}", run.metadata()["result"]));
        }
        let thoughts = run.payloads("THOUGHT");
        let mut expected: Vec<String> = (0..STEPS).map(|i| format!("step {i}")).collect();
        expected.push("finished".to_owned());
        let contents: Vec<String> = thoughts
            .iter()
            .map(|t| t["content"].as_str().unwrap_or_default().to_owned())
            .collect();
        if contents != expected {
            return Err(format!("{id}: THOUGHTs {contents:?}"));
        }
        let ledger = std::fs::read_to_string(ws.join("ledger.txt")).unwrap_or_default();
        let lines: Vec<&str> = ledger.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            if lines[..i].contains(line) {
                return Err(format!("{id}: tool ran twice: {line:?} in {lines:?}"));
            }
        }
        let requests = run.payloads("ACTION_REQUEST");
        for result in run.payloads("ACTION_RESULT") {
            let request = requests
                .iter()
                .find(|r| r["action_id"] == result["action_id"])
                .ok_or_else(|| format!("{id}: no request for {result}"))?;
            let line = request["tool_args"]["line"].as_str().unwrap_or_default();
            let observation = result["observation_content"].as_str().unwrap_or_default();
            match result["status"].as_str() {
                Some("SUCCESS") if lines.contains(&line) => {}
                Some("ERROR")
                    if observation.starts_with("Error: interrupted; not re-run.")
                        || observation.starts_with("Error: not run.") => {}
                Some(_) | None => {
                    return Err(format!("{id}: unexpected result {result} for {line}"));
                }
            }
        }
        Ok(())
    }
}

#[test]
fn runs_killed_at_random_moments_always_complete_without_losing_or_repeating_anything() {
    let seed = std::env::var("RESUME_CRASH_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| fastrand::u64(..));
    eprintln!("crash suite seed: {seed} (replay with RESUME_CRASH_SEED={seed})");
    let base = tempfile::Builder::new()
        .prefix("delta-crash-")
        .tempdir()
        .unwrap();
    write_recorder(base.path());
    let suite = Suite {
        base: base.path().to_path_buf(),
        mock: mock(&script()),
        seed,
        kills: AtomicUsize::new(0),
        log: Mutex::new(Vec::new()),
    };
    let outcomes: Vec<Result<usize, String>> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..WORKERS)
            .map(|worker| {
                let suite = &suite;
                scope.spawn(move || {
                    let mut rng = fastrand::Rng::with_seed(suite.seed.wrapping_add(worker as u64));
                    let mut runs = 0;
                    while suite.kills.load(Ordering::SeqCst) < KILLS_WANTED && runs < 40 {
                        suite.drive(&format!("crash-{worker}-{runs}"), &mut rng)?;
                        runs += 1;
                    }
                    Ok(runs)
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    let log = suite.log.lock().unwrap().join("\n");
    let failures: Vec<&String> = outcomes.iter().filter_map(|o| o.as_ref().err()).collect();
    assert!(
        failures.is_empty(),
        "seed {seed}: {failures:#?}\nkills:\n{log}\n(files kept in {})",
        base.keep().display()
    );
    let kills = suite.kills.load(Ordering::SeqCst);
    let runs: usize = outcomes.iter().filter_map(|o| o.as_ref().ok()).sum();
    assert!(kills >= KILLS_WANTED, "seed {seed}: only {kills} kills");
    eprintln!("crash suite: {runs} runs, {kills} kills, all completed");
}
