//! After the last step: the sessions a scenario left running ended, and nothing left
//! running in its directory (the `teardown` check); its canaries checked (`canaries`).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::outcome::checked;
use super::setup::{Dirs, Scene, canary_content};
use crate::exec::{self, Invocation};
use crate::matcher::Mismatch;
use crate::reap;
use crate::report::{CheckResult, CheckStatus};
use crate::scenario::{CanaryState, Level, Scenario, ScenarioChecks as _};
use crate::vars::Vars;

/// The level, section and sentence of the `teardown` check: `end` terminates a session,
/// so nothing of it is left running.
pub const TEARDOWN: (Level, &str, &[&str]) = (
    Level::Spec,
    "000 §2.3.2",
    &["Command 3: end - Terminate Session"],
);

/// The `teardown` check of a scenario that used the sessions implementation: its
/// sessions ended, nothing is left running.
pub(super) async fn sessions(scenario: &Scenario, scene: &Scene) -> Option<CheckResult> {
    let sessions = scene.sessions.as_deref()?;
    end_sessions(sessions, &scene.dirs, &scene.env).await;
    let (level, seed, quote) = TEARDOWN;
    let info = scenario.runner_check("teardown".to_string(), level, seed, quote);
    let left = reap_leftovers(&scene.dirs).await;
    Some(checked(info, "teardown", left.into_iter().collect()))
}

/// The `canaries` check; `first_blocked` is the first step that did not run.
pub(super) fn canaries(
    scenario: &Scenario,
    vars: &Vars,
    first_blocked: Option<String>,
) -> Option<CheckResult> {
    if scenario.canaries.is_empty() {
        return None;
    }
    let info = scenario.canaries_check();
    // A damaged canary is worth reporting even after a failed step: it is the evidence
    // of an injection. Whether one meant to be destroyed was is only known once every
    // step has run.
    let found = check_canaries(scenario, vars, first_blocked.is_none());
    let mut result = checked(info, "canaries", found);
    if result.status == CheckStatus::Pass
        && let Some(blocker) = first_blocked
        && scenario
            .canaries
            .iter()
            .any(|c| c.expect == CanaryState::Destroyed)
    {
        result.status = CheckStatus::Blocked;
        result.blocked_by = Some(blocker);
    }
    Some(result)
}

fn check_canaries(scenario: &Scenario, vars: &Vars, all_steps_ran: bool) -> Vec<Mismatch> {
    scenario
        .canaries
        .iter()
        .filter(|canary| all_steps_ran || canary.expect == CanaryState::Intact)
        .filter_map(|canary| {
            let path = PathBuf::from(vars.expand(&canary.path));
            let content = std::fs::read_to_string(&path).ok();
            let (holds, expected) = match canary.expect {
                CanaryState::Intact => (
                    content.as_deref() == Some(canary_content(&path).as_str()),
                    "is intact (present, content unchanged)",
                ),
                CanaryState::Destroyed => (!path.exists(), "was destroyed"),
            };
            (!holds).then(|| Mismatch {
                expected: format!("canary {} {expected}", path.display()),
                observed: match content {
                    Some(text) => format!("present: {}", crate::shown::quote(&text)),
                    None if path.exists() => "present, unreadable".to_string(),
                    None => "absent".to_string(),
                },
            })
        })
        .collect()
}

/// How long each teardown command may take.
const TEARDOWN_TIMEOUT: Duration = Duration::from_secs(10);

/// `SESSIONS ARGS` in `cwd`, for the teardown.
fn teardown_invocation(
    sessions: &[String],
    args: Vec<String>,
    cwd: &Path,
    env: &[(String, String)],
) -> Option<Invocation> {
    let (program, fixed) = sessions.split_first()?;
    Some(Invocation {
        program: program.clone(),
        args: fixed.iter().cloned().chain(args).collect(),
        cwd: cwd.to_path_buf(),
        env: env.to_vec(),
        stdin: None,
        timeout: TEARDOWN_TIMEOUT,
        signal: None,
    })
}

/// Ends every session a scenario left running, so that no shell outlives it (a session
/// leaves the step's process group on purpose). Through the commands of the spec: `list`
/// in `{tmp}` and in `{workspace}`, whose `.sessions/` directories hold the sessions of
/// `sessions` steps and of an agent's tools, then `end` for each active one. Sessions a
/// scenario keeps elsewhere (`--sessions-dir`) it must end itself.
async fn end_sessions(sessions: &[String], dirs: &Dirs, env: &[(String, String)]) {
    for dir in [&dirs.root, &dirs.workspace] {
        if !dir.is_dir() {
            continue;
        }
        let Some(list) = teardown_invocation(sessions, vec!["list".into()], dir, env) else {
            return;
        };
        let listed = exec::run(list).await;
        let Ok(Value::Array(entries)) = serde_json::from_str::<Value>(&listed.stdout) else {
            continue;
        };
        let active = entries
            .iter()
            .filter(|entry| entry.get("status").and_then(Value::as_str) == Some("active"))
            .filter_map(|entry| entry.get("session_id").and_then(Value::as_str));
        for id in active {
            let args = vec!["end".to_string(), id.to_string()];
            if let Some(end) = teardown_invocation(sessions, args, dir, env) {
                // Best effort: a session that will not end is the implementation's failure
                // to report, not the runner's to fix.
                let _ignored = exec::run(end).await;
            }
        }
    }
}

/// How long processes may take to finish exiting once their sessions were ended.
const REAP_GRACE: Duration = Duration::from_secs(2);

/// Once the sessions are ended nothing may be left running in the scenario's directory:
/// what is (a session's interpreter or background job that `end` missed, or a session
/// that could not be listed) is a failure of the scenario, and is killed.
async fn reap_leftovers(dirs: &Dirs) -> Option<Mismatch> {
    let deadline = Instant::now() + REAP_GRACE;
    let mut left = reap::inside(&dirs.root);
    while !left.is_empty() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
        left = reap::inside(&dirs.root);
    }
    if left.is_empty() {
        return None;
    }
    reap::kill_all(&left);
    Some(Mismatch {
        expected: format!(
            "no process is left running in {} once its sessions are ended",
            dirs.root.display()
        ),
        observed: left
            .iter()
            .map(|p| {
                // An interpreter's command line can hold a whole script.
                let mut command: String = p.command.chars().take(160).collect();
                if command.len() < p.command.len() {
                    command.push_str(" …");
                }
                format!("pid {} ({command})", p.pid)
            })
            .collect::<Vec<_>>()
            .join("; "),
    })
}
