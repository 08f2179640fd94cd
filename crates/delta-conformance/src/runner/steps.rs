//! The steps of a scenario in order: each one blocked by a failed check it depends on,
//! or run (its command line built, executed, its run directory and ids found) and
//! checked.

use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use super::config::RunnerConfig;
use super::outcome::checked;
use super::setup::Scene;
use crate::check::{self, StepContext, StepFindings, flag_value};
use crate::exec::{self, Invocation, PlannedSignal};
use crate::matcher::Mismatch;
use crate::report::{CheckResult, CheckStatus};
use crate::scenario::{Action, CheckInfo, Command, Expect, Scenario, ScenarioChecks as _, Step};
use crate::vars::Vars;

/// Runs the steps, adding their checks to `checks`; returns the id of the first step
/// that was blocked.
pub(super) async fn run_all(
    scenario: &Scenario,
    config: &RunnerConfig,
    scene: &mut Scene,
    checks: &mut Vec<CheckResult>,
) -> Option<String> {
    let mut first_blocked: Option<String> = None;
    for (index, step) in scenario.steps.iter().enumerate() {
        let label = crate::scenario::label(step, index);
        let main = scenario.step_check(index);
        let named = scenario.named_checks(index);
        let blocker = step.depends_on.iter().find(|dep| {
            checks
                .iter()
                .any(|c| &c.id == *dep && c.status != CheckStatus::Pass)
        });
        if let Some(blocker) = blocker {
            first_blocked.get_or_insert_with(|| main.id.clone());
            let infos = std::iter::once(main).chain(named.into_iter().map(|(info, _)| info));
            checks.extend(infos.map(|info| blocked(info, blocker)).collect::<Vec<_>>());
            continue;
        }
        let expects: Vec<&Expect> = named.iter().map(|(_, e)| *e).collect();
        let findings = run_step(step, &expects, config, scene).await;
        let step_id = main.id.clone();
        let mut push = |info: CheckInfo, mismatches: Vec<Mismatch>| {
            checks.push(checked(info, &label, mismatches));
        };
        push(main, findings.expect);
        for ((info, _), mismatches) in named.into_iter().zip(findings.named) {
            push(info, mismatches);
        }
        for (check, mismatches) in findings.runner {
            let (level, seed, quote) = check.citation();
            let id = format!("{step_id}/{}", check.name());
            let info = scenario.runner_check(id, level, seed, quote);
            push(info, mismatches);
        }
    }
    first_blocked
}

/// A check not run because `blocker` did not pass.
fn blocked(info: CheckInfo, blocker: &str) -> CheckResult {
    CheckResult {
        id: info.id,
        level: info.level,
        reference: info.reference,
        status: CheckStatus::Blocked,
        blocked_by: Some(blocker.to_string()),
        failures: Vec::new(),
    }
}

/// The command line a step runs: the implementation's (or the sessions
/// implementation's) with the step's words, or `sh -c` for a `shell` step.
struct CommandLine {
    /// The implementation command, or `None` for a `shell` step.
    command: Option<Command>,
    /// The step's own words, placeholders substituted.
    words: Vec<String>,
    program: String,
    args: Vec<String>,
}

impl CommandLine {
    /// `step`'s command line, or why the step cannot run.
    fn of(step: &Step, config: &RunnerConfig, vars: &Vars) -> Result<Self, Mismatch> {
        let action = step
            .action()
            .map_err(|err| Mismatch::new("the step", "is valid", err))?;
        let (command, args) = match action {
            Action::Impl(command, args) => (command, args),
            Action::Shell(script) => {
                return Ok(Self {
                    command: None,
                    words: Vec::new(),
                    program: "sh".to_string(),
                    args: vec!["-c".to_string(), vars.expand(script)],
                });
            }
        };
        let words: Vec<String> = crate::scenario::words(args)
            .map_err(|err| Mismatch::new("the step's arguments", "split into words", err))?
            .iter()
            .map(|w| vars.expand(w))
            .collect();
        let base = match command {
            Command::Sessions => config.sessions.as_deref().unwrap_or_default(),
            Command::Run
            | Command::Continue
            | Command::ListRuns
            | Command::ToolExpand
            | Command::Exec => config.implementation.as_slice(),
        };
        let Some((program, fixed)) = base.split_first() else {
            let what = if command == Command::Sessions {
                "the sessions implementation"
            } else {
                "the implementation"
            };
            return Err(Mismatch::new(what, "is a command", "none"));
        };
        let mut all: Vec<String> = fixed.to_vec();
        all.extend(config.commands.prefix(command));
        all.extend(words.iter().cloned());
        Ok(Self {
            command: Some(command),
            words,
            program: program.clone(),
            args: all,
        })
    }
}

/// Runs one step and checks what it left; placeholders it defines (`{run_id}`,
/// `{session_id}`) are set in `scene.vars` for the steps after it.
async fn run_step(
    step: &Step,
    named: &[&Expect],
    config: &RunnerConfig,
    scene: &mut Scene,
) -> StepFindings {
    let line = match CommandLine::of(step, config, &scene.vars) {
        Ok(line) => line,
        Err(m) => {
            return StepFindings {
                runner: Vec::new(),
                expect: vec![m.clone()],
                named: named.iter().map(|_| vec![m.clone()]).collect(),
            };
        }
    };
    let workspace = flag_value(&line.words, &["-w", "--work-dir"])
        .map(|w| scene.dirs.root.join(w))
        .unwrap_or_else(|| scene.dirs.workspace.clone());
    let delta_dir = workspace.join(".delta");
    let before = check::run_dirs(&delta_dir);
    let timeout = step
        .timeout_secs
        .map_or(config.step_timeout, Duration::from_secs);
    let outcome = exec::run(invocation(step, &line, scene, timeout)).await;
    let run_dir = match line.command {
        Some(c) if c.is_run() => {
            let run_id = find_run_id(&line.words, &outcome.stdout, &before, &delta_dir);
            if let Some(run_id) = &run_id {
                scene.vars.set("run_id", run_id.as_str());
            }
            // Only a plain name can be a run directory; a refused `--run-id ../x` must not
            // send the checks outside `.delta/`.
            run_id
                .filter(|id| !id.contains('/') && crate::scenario::is_relative_inside(id))
                .map(|id| delta_dir.join(id))
                .filter(|dir| dir.is_dir())
        }
        Some(_) | None => None,
    };
    if line.command == Some(Command::Sessions)
        && outcome.code == Some(0)
        && check::sessions_subcommand(&line.words) == Some("start")
        && let Ok(started) = serde_json::from_str::<Value>(&outcome.stdout)
        && let Some(id) = started.get("session_id").and_then(Value::as_str)
    {
        scene.vars.set("session_id", id);
    }
    let ctx = StepContext {
        command: line.command,
        words: &line.words,
        outcome: &outcome,
        run_dir,
        delta_dir,
        record_file: scene.record.as_deref(),
        schemas: &config.schemas,
        vars: &scene.vars,
        timeout,
    };
    let mut findings = check::check_step(&ctx, &step.expect, named);
    if let (Some(spec), Some(note)) = (&step.signal, &outcome.signal_note)
        && !note.ends_with("sent to the process group")
    {
        findings.expect.push(Mismatch::new(
            &format!("{:?}", spec.signal),
            "is sent while the command runs",
            note.clone(),
        ));
    }
    findings
}

/// The process a step starts: its command line in `{tmp}`, with the step's environment,
/// stdin, time limit and signal.
fn invocation(step: &Step, line: &CommandLine, scene: &Scene, timeout: Duration) -> Invocation {
    let vars = &scene.vars;
    let mut env = scene.env.clone();
    env.extend(step.env.iter().map(|(k, v)| (k.clone(), vars.expand(v))));
    let signal = step.signal.as_ref().map(|s| PlannedSignal {
        signal: s.signal,
        after_lines: (s.after_requests > 0)
            .then(|| scene.record.as_ref().map(|r| (r.clone(), s.after_requests)))
            .flatten(),
        delay: Duration::from_millis(s.after_ms),
    });
    Invocation {
        program: line.program.clone(),
        args: line.args.clone(),
        cwd: scene.dirs.root.clone(),
        env,
        stdin: step.stdin.as_ref().map(|s| vars.expand(s)),
        timeout,
        signal,
    }
}

/// The run id of a `run`/`continue` step: `--run-id`, else `run_id` in JSON stdout, else
/// the one new directory in `.delta/`.
fn find_run_id(
    words: &[String],
    stdout: &str,
    before: &[String],
    delta_dir: &Path,
) -> Option<String> {
    if let Some(id) = flag_value(words, &["--run-id"]) {
        return Some(id.to_string());
    }
    if let Ok(value) = serde_json::from_str::<Value>(stdout)
        && let Some(id) = value.get("run_id").and_then(Value::as_str)
    {
        return Some(id.to_string());
    }
    let after = check::run_dirs(delta_dir);
    let new: Vec<&String> = after.iter().filter(|d| !before.contains(d)).collect();
    match new.as_slice() {
        [one] => Some((*one).clone()),
        _ => None,
    }
}
