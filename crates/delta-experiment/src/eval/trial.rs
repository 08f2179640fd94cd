//! One trial, in its own process (`delta eval trial`), holding the trial's lock: the
//! task's image (built once per content hash, under a lock shared by the eval's trials),
//! the agent's run through the one launch path in a fresh container of that image (or the
//! oracle's `solve.sh` in one), the run's ATIF trajectory at `/logs/agent/trajectory.json`,
//! then `tests/` copied to `/tests` and `test.sh` run under its timeout in the same
//! container, the reward read, the verdict written, the container removed. A signal stops
//! the trial without a verdict, so that the next `eval run` runs it again.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use tokio::sync::watch;

use super::EvalError;
use super::dir::{
    Durations, ErrorClass, EvalDir, Manifest, TrialError, TrialPaths, TrialRef, TrialResult,
    TrialStatus,
};
use super::reward::read_rewards;
use super::task::{Task, resolve_env_value, strip_canary};
use crate::batch::BatchError;
use crate::export::Content;
use delta_engine::budget::Budget;
use delta_engine::engine::Observer;
use delta_engine::environment::container::{self, Image};
use delta_engine::environment::{
    ContainerPlacement, EnvironmentChoice, EnvironmentConfig, Kind, PathMap, Placement, Runtime,
};
use delta_engine::launch::{Frontend, Launch, LaunchError, LaunchSpec, Start};
use delta_engine::process::{OutputPolicy, ProcessOptions, run_process_in};
use delta_engine::run::{ErrorType, RunId, RunLock, RunStatus};
use delta_engine::secrets::Redactor;
use delta_engine::trajectory::Trajectory;

/// The workdir of a task that names none and whose image's WORKDIR is `/`.
const DEFAULT_WORKDIR: &str = "/app";
/// How a trial ended.
#[derive(Debug)]
pub enum TrialEnd {
    /// Its verdict is written and its line appended.
    Verdict(Box<TrialResult>),
    /// A signal stopped it; it has no verdict and runs again.
    Interrupted,
}

/// What the run of a trial's agent reports back to the one who drives it: the CLI's
/// renderer of the live stream and its non-interactive frontend.
pub struct Reporting<'a> {
    /// Every step of the agent's run.
    pub observer: &'a mut dyn Observer,
    /// The launch's warnings.
    pub frontend: &'a mut dyn Frontend,
}

/// Runs the trial `id` of the eval in `dir` to its verdict.
///
/// # Errors
/// An unknown trial, a trial another process runs, or the eval directory's I/O errors.
pub fn run_trial(
    dir: &EvalDir,
    manifest: &Manifest,
    id: &str,
    reporting: Reporting<'_>,
) -> Result<TrialEnd, EvalError> {
    let trial = manifest.trial(id).ok_or_else(|| EvalError::Problems {
        problems: vec![format!(
            "{id}: no such trial in {}",
            dir.manifest_path().display()
        )],
    })?;
    let trial_dir = dir.trial_dir(id);
    fs_err::create_dir_all(&trial_dir).map_err(io(&trial_dir))?;
    let _lock = RunLock::try_acquire(&dir.lock_path(id)).map_err(|_| EvalError::Problems {
        problems: vec![format!(
            "{}: the trial is running in another process; wait for it",
            trial_dir.display()
        )],
    })?;
    if let Some(verdict) = dir.verdict(id) {
        if !dir.results().contains_key(id) {
            dir.append_result(&verdict)?;
        }
        return Ok(TrialEnd::Verdict(Box::new(verdict)));
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .map_err(io(&trial_dir))?;
    let stop = signals(&runtime).map_err(io(&trial_dir))?;
    let mut run = Trial {
        dir,
        manifest,
        task: &manifest.tasks[trial.task],
        trial: &trial,
        runtime: &runtime,
        stop,
        started: Instant::now(),
        durations: Durations::default(),
        redactor: Redactor::inherited(|name| std::env::var(name).ok()),
        container: None,
    };
    run.clear_lost_try()?;
    let outcome = run.run(reporting);
    let cleanup = Instant::now();
    if let Some((program, name)) = &run.container {
        container::remove(program, Runtime::Podman, name);
    }
    run.durations.cleanup = elapsed_ms(cleanup);
    match outcome? {
        Some(mut result) => {
            result.durations_ms = Durations {
                total: elapsed_ms(run.started),
                ..run.durations
            };
            dir.write_verdict(&result)?;
            dir.append_result(&result)?;
            Ok(TrialEnd::Verdict(Box::new(result)))
        }
        None => Ok(TrialEnd::Interrupted),
    }
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> EvalError + '_ {
    move |source| {
        EvalError::Batch(BatchError::Io {
            path: path.to_path_buf(),
            source,
        })
    }
}

fn elapsed_ms(since: Instant) -> u64 {
    u64::try_from(since.elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// A watch that turns true on the first SIGINT or SIGTERM, for the whole trial: tokio's
/// handlers replace the default action once installed, so one listener must live as long
/// as the process.
fn signals(runtime: &tokio::runtime::Runtime) -> std::io::Result<watch::Receiver<bool>> {
    use tokio::signal::unix::{SignalKind, signal};
    let _entered = runtime.enter();
    let mut interrupt = signal(SignalKind::interrupt())?;
    let mut terminate = signal(SignalKind::terminate())?;
    let (sender, receiver) = watch::channel(false);
    runtime.spawn(async move {
        tokio::select! {
            _ = interrupt.recv() => {}
            _ = terminate.recv() => {}
        }
        let _ = sender.send(true);
        // Keep listening, so that later signals are absorbed rather than ending the
        // process mid-cleanup.
        loop {
            tokio::select! {
                _ = interrupt.recv() => {}
                _ = terminate.recv() => {}
            }
        }
    });
    Ok(receiver)
}

/// Why a trial errored: its class, what happened, and the log that shows it.
#[derive(Debug, Clone)]
struct Failure {
    class: ErrorClass,
    message: String,
    log: Option<PathBuf>,
}

impl Failure {
    fn new(class: ErrorClass, message: impl Into<String>, log: Option<PathBuf>) -> Self {
        Self {
            class,
            message: message.into(),
            log,
        }
    }
}

/// What the agent's (or the oracle's) phase left.
#[derive(Debug, Default)]
struct AgentOutcome {
    /// The agent's run, when one was created.
    run: Option<RunRecord>,
    /// solve.sh's exit code (the oracle).
    exit_code: Option<i32>,
    /// A failure that makes the trial errored whatever the tests say.
    error: Option<Failure>,
    /// Whether there is a container to verify in.
    verify: bool,
}

impl AgentOutcome {
    /// The oracle's container could not be started or given the solution.
    fn start_failed(error: &dyn std::fmt::Display) -> Self {
        AgentOutcome {
            error: Some(Failure::new(
                ErrorClass::EnvironmentStart,
                error.to_string(),
                None,
            )),
            ..AgentOutcome::default()
        }
    }
}

/// The agent's run, for the trial's line.
#[derive(Debug)]
struct RunRecord {
    run_id: String,
    status: String,
    usage: serde_json::Value,
    cost_usd: f64,
    run_dir: PathBuf,
    trajectory: Option<PathBuf>,
}

/// What the verifier left.
#[derive(Debug)]
struct Verified {
    rewards: Result<super::reward::Rewards, Failure>,
    exit_code: Option<i32>,
}

/// A trial being run.
struct Trial<'a> {
    dir: &'a EvalDir,
    manifest: &'a Manifest,
    task: &'a Task,
    trial: &'a TrialRef,
    runtime: &'a tokio::runtime::Runtime,
    stop: watch::Receiver<bool>,
    started: Instant,
    durations: Durations,
    redactor: Redactor,
    /// The container to remove at the end: the runtime's program and its name.
    container: Option<(PathBuf, String)>,
}

/// The image a trial runs in and where its workspace appears.
struct Place {
    program: PathBuf,
    image: Image,
    workdir: String,
}

impl Trial<'_> {
    fn stopped(&self) -> bool {
        *self.stop.borrow()
    }

    fn trial_dir(&self) -> PathBuf {
        self.dir.trial_dir(&self.trial.id)
    }

    fn log(&self) -> PathBuf {
        self.trial_dir().join("trial.log")
    }

    /// Copies the directory `from` to `to` as a batch copies a workspace; what it leaves
    /// out (a FIFO, a socket, a device) is said in the trial's log.
    fn copy_tree(&self, from: &Path, to: &Path) -> Result<(), String> {
        let mut skipped = Vec::new();
        crate::batch::copy_dir(
            from,
            to,
            &delta_engine::engine::Shutdown::never(),
            &mut skipped,
        )
        .map_err(|e| e.to_string())?;
        if !skipped.is_empty() {
            use std::io::Write as _;
            // The log is the trial's stderr too, opened for appending: lines stay whole.
            let mut log = fs_err::OpenOptions::new()
                .create(true)
                .append(true)
                .open(self.log())
                .map_err(|e| e.to_string())?;
            for line in skipped {
                writeln!(log, "{line}").map_err(|e| e.to_string())?;
            }
        }
        Ok(())
    }

    /// Removes what a try that died without a verdict left: its container and its files
    /// (the lock and the log stay).
    fn clear_lost_try(&self) -> Result<(), EvalError> {
        let workspace = self.dir.workspace(&self.trial.id);
        // Only a try that got as far as its workspace can have left a container.
        if workspace.exists()
            && let Some(program) = delta_engine::environment::on_path(Runtime::Podman.program())
        {
            container::remove(
                &program,
                Runtime::Podman,
                &container::name_for(&self.trial.id, &workspace),
            );
        }
        let trial_dir = self.trial_dir();
        for entry in fs_err::read_dir(&trial_dir).map_err(io(&trial_dir))? {
            let entry = entry.map_err(io(&trial_dir))?;
            let name = entry.file_name();
            if name == "trial.lock" || name == "trial.log" {
                continue;
            }
            let path = entry.path();
            let removed = if path.is_dir() {
                fs_err::remove_dir_all(&path)
            } else {
                fs_err::remove_file(&path)
            };
            removed.map_err(io(&path))?;
        }
        Ok(())
    }

    /// `future`, or `None` when a signal comes first.
    fn until_stopped<T>(&self, future: impl std::future::Future<Output = T>) -> Option<T> {
        let mut stop = self.stop.clone();
        self.runtime.block_on(async move {
            tokio::select! {
                value = future => Some(value),
                _ = stop.wait_for(|stopped| *stopped) => None,
            }
        })
    }

    /// The trial's phases; `None` when a signal stopped it.
    fn run(&mut self, reporting: Reporting<'_>) -> Result<Option<TrialResult>, EvalError> {
        let started = Instant::now();
        let place = self.place();
        self.durations.build = elapsed_ms(started);
        let place = match place {
            Ok(Some(place)) => place,
            Ok(None) => return Ok(None),
            Err(failure) => {
                return Ok(Some(self.result(
                    None,
                    &AgentOutcome::default(),
                    None,
                    Some(failure),
                )));
            }
        };
        let workspace = self.dir.workspace(&self.trial.id);
        if let Err(failure) = self.seed_workspace(&place, &workspace) {
            return Ok(Some(self.result(
                Some(&place),
                &AgentOutcome::default(),
                None,
                Some(failure),
            )));
        }
        let started = Instant::now();
        let agent = if self.manifest.oracle {
            self.oracle(&place, &workspace)?
        } else {
            self.agent(&place, &workspace, reporting)?
        };
        self.durations.agent = elapsed_ms(started);
        let Some(agent) = agent else {
            return Ok(None);
        };
        if !agent.verify {
            return Ok(Some(self.result(Some(&place), &agent, None, None)));
        }
        let started = Instant::now();
        let verified = self.verify(&place, &workspace, agent.run.as_ref())?;
        self.durations.verifier = elapsed_ms(started);
        match verified {
            Some(verified) => Ok(Some(self.result(
                Some(&place),
                &agent,
                Some(verified),
                None,
            ))),
            None => Ok(None),
        }
    }

    /// The trial's line from what its phases left.
    fn result(
        &self,
        place: Option<&Place>,
        agent: &AgentOutcome,
        verified: Option<Verified>,
        failure: Option<Failure>,
    ) -> TrialResult {
        let verifier_dir = self.trial_dir().join("verifier");
        let (rewards, verify_failure, verifier_exit_code) = match verified {
            Some(Verified { rewards, exit_code }) => match rewards {
                Ok(rewards) => (Some(rewards), None, exit_code),
                Err(failure) => (None, Some(failure), exit_code),
            },
            None => (None, None, None),
        };
        let error = failure.or_else(|| agent.error.clone()).or(verify_failure);
        let (status, reward) = match (&error, &rewards) {
            (None, Some(rewards)) if rewards.main >= 1.0 => {
                (TrialStatus::Passed, Some(rewards.main))
            }
            (None, Some(rewards)) => (TrialStatus::Failed, Some(rewards.main)),
            (Some(_), _) | (None, None) => (TrialStatus::Errored, None),
        };
        let error = match (error, status) {
            (Some(failure), _) => Some(failure),
            (None, TrialStatus::Errored) => Some(Failure::new(
                ErrorClass::RewardMissing,
                "the verifier did not run",
                Some(self.log()),
            )),
            (None, TrialStatus::Passed | TrialStatus::Failed) => None,
        };
        let run = agent.run.as_ref();
        TrialResult {
            task: self.task.name.clone(),
            attempt: self.trial.attempt,
            trial: self.trial.id.clone(),
            status,
            reward,
            rewards: rewards.map(|r| r.all).unwrap_or_default(),
            error: error.map(|f| TrialError {
                class: f.class,
                message: self.redactor.redact(&f.message),
                log: f.log.map(|log| self.dir.relative(&log)),
            }),
            usage: run.map_or(serde_json::Value::Null, |r| r.usage.clone()),
            cost_usd: run.map_or(0.0, |r| r.cost_usd),
            durations_ms: self.durations,
            run_id: run.map(|r| r.run_id.clone()),
            run_status: run.map(|r| r.status.clone()),
            paths: TrialPaths {
                trial: self.dir.relative(&self.trial_dir()),
                run: run.map(|r| self.dir.relative(&r.run_dir)),
                verifier: verifier_dir
                    .is_dir()
                    .then(|| self.dir.relative(&verifier_dir)),
                trajectory: run
                    .and_then(|r| r.trajectory.as_ref())
                    .map(|t| self.dir.relative(t)),
            },
            image: place.map(|p| p.image.name.clone()),
            verifier_exit_code,
            agent_exit_code: agent.exit_code,
        }
    }

    /// The task's image (built from `environment/` once per content hash, under a lock
    /// the eval's trials share; or `docker_image`) and its workdir. `Ok(None)`: stopped.
    fn place(&self) -> Result<Option<Place>, Failure> {
        let start = |message: String| Failure::new(ErrorClass::EnvironmentStart, message, None);
        // Found on PATH only: `info` (the environment's full check, 1 to 3 s) runs when the
        // agent's run starts, and the oracle's container start says what is wrong.
        let program =
            delta_engine::environment::on_path(Runtime::Podman.program()).ok_or_else(|| {
                start(
                    delta_engine::environment::EnvironmentError::RuntimeMissing {
                        runtime: Runtime::Podman.program().to_owned(),
                    }
                    .to_string(),
                )
            })?;
        let images = self.dir.images_dir();
        fs_err::create_dir_all(&images).map_err(|e| start(e.to_string()))?;
        let log = images.join(format!("{}.log", self.task.id));
        let lock_path = images.join(format!("{}.lock", self.task.id));
        let lock = loop {
            match RunLock::try_acquire(&lock_path) {
                Ok(lock) => break lock,
                Err(_) if self.stopped() => return Ok(None),
                Err(_) => std::thread::sleep(Duration::from_millis(100)),
            }
        };
        let failed_marker = images.join(format!("{}.failed", self.task.id));
        if let Ok(message) = fs_err::read_to_string(&failed_marker) {
            return Err(Failure::new(
                ErrorClass::EnvironmentBuild,
                message,
                Some(log),
            ));
        }
        let timeout = Duration::from_secs_f64(
            self.task.config.build_timeout_sec * self.manifest.timeout_multiplier,
        );
        let image = match &self.task.config.docker_image {
            Some(name) => container::existing_image(&program, Runtime::Podman, name)
                .map_err(|e| Failure::new(ErrorClass::EnvironmentStart, e.to_string(), None)),
            None => container::built_image_logged(
                &program,
                Runtime::Podman,
                &self.task.environment_dir(),
                &log,
                timeout,
            )
            .map_err(|e| {
                Failure::new(
                    ErrorClass::EnvironmentBuild,
                    e.to_string(),
                    Some(log.clone()),
                )
            }),
        };
        if let Err(failure) = &image
            && failure.class == ErrorClass::EnvironmentBuild
        {
            // Built once per eval: the task's other trials are errored with the same log.
            let _ = fs_err::write(&failed_marker, &failure.message);
        }
        drop(lock);
        let image = image?;
        let workdir = match &self.task.config.workdir {
            Some(workdir) => workdir.clone(),
            None => container::image_workdir(&program, &image.name)
                .filter(|w| !w.is_empty() && w != "/")
                .unwrap_or_else(|| DEFAULT_WORKDIR.to_owned()),
        };
        Ok(Some(Place {
            program,
            image,
            workdir,
        }))
    }

    /// The trial's workspace starts as what the image holds at its workdir, since the
    /// workspace is mounted over it: extracted once per image into `images/`.
    fn seed_workspace(&self, place: &Place, workspace: &Path) -> Result<(), Failure> {
        let fail = |message: String| Failure::new(ErrorClass::EnvironmentStart, message, None);
        let short = place.image.id.trim_start_matches("sha256:");
        let cache = self
            .dir
            .images_dir()
            .join(&short[..short.len().min(12)])
            .join("workdir");
        if !cache.is_dir() {
            let partial = cache.with_extension(format!("partial.{}", std::process::id()));
            container::extract(&place.program, &place.image.name, &place.workdir, &partial)
                .map_err(|e| fail(e.to_string()))?;
            // Another trial may have won the race; its copy is the same.
            if fs_err::rename(&partial, &cache).is_err() {
                let _ = fs_err::remove_dir_all(&partial);
            }
        }
        self.copy_tree(&cache, workspace).map_err(fail)?;
        fs_err::create_dir_all(workspace.join(delta_engine::run::DELTA_DIR))
            .map_err(|e| fail(e.to_string()))
    }

    /// The agent's wall clock: `[agent] timeout_sec` × the multiplier, or `--max-duration`
    /// when shorter.
    fn agent_timeout(&self) -> Option<Duration> {
        let task = self
            .task
            .config
            .agent_timeout_sec
            .map(|s| Duration::from_secs_f64(s * self.manifest.timeout_multiplier));
        let asked = self
            .manifest
            .limits
            .max_duration_ms
            .map(Duration::from_millis);
        match (task, asked) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Variables of `[environment.env]` and then `table`, resolved from the host.
    fn env(&self, table: &BTreeMap<String, String>) -> Vec<(String, String)> {
        let lookup = |name: &str| std::env::var(name).ok();
        self.task
            .config
            .env
            .iter()
            .chain(table)
            .map(|(k, v)| (k.clone(), resolve_env_value(v, &lookup).unwrap_or_default()))
            .collect()
    }

    /// The agent's run through the one launch path, in a container of the task's image
    /// kept after the run for the verifier. `Ok(None)`: stopped.
    fn agent(
        &mut self,
        place: &Place,
        workspace: &Path,
        reporting: Reporting<'_>,
    ) -> Result<Option<AgentOutcome>, EvalError> {
        let log = self.log();
        let engine =
            |message: String| Failure::new(ErrorClass::AgentEngine, message, Some(log.clone()));
        let instruction = match fs_err::read_to_string(self.task.instruction_path()) {
            Ok(text) => strip_canary(&text),
            Err(error) => {
                return Ok(Some(AgentOutcome {
                    error: Some(engine(error.to_string())),
                    ..AgentOutcome::default()
                }));
            }
        };
        let Some(agent) = self.manifest.agent.clone() else {
            return Ok(Some(AgentOutcome {
                error: Some(engine("the eval has no agent".to_owned())),
                ..AgentOutcome::default()
            }));
        };
        let run_id = RunId::parse(&self.trial.id).map_err(|e| EvalError::Problems {
            problems: vec![format!("{}: {e}", self.trial.id)],
        })?;
        let limits = &self.manifest.limits;
        let spec = LaunchSpec {
            start: Start::New {
                agent,
                cwd: self.trial_dir(),
                task: instruction,
                workspace: Some(workspace.to_path_buf()),
                run_id: Some(run_id.clone()),
            },
            max_iterations: limits.max_iterations,
            budget: Budget {
                max_cost_usd: limits.max_cost_usd,
                max_tokens: limits.max_tokens,
                max_duration: self.agent_timeout(),
            },
            output_schema: None,
            ask_human: Some(false),
            // The task's container in place of the agent's `environment:`, kept after
            // the run for the verifier.
            environment: EnvironmentChoice {
                replace: Some(Box::new(EnvironmentConfig {
                    kind: Kind::Container,
                    image: Some(place.image.name.clone()),
                    workdir: Some(PathBuf::from(&place.workdir)),
                    network: Some(self.task.config.network),
                    cpus: self.task.config.cpus,
                    memory_mb: self.task.config.memory_mb,
                    keep: true,
                    ..EnvironmentConfig::default()
                })),
                ..EnvironmentChoice::default()
            },
        };
        self.container = Some((
            place.program.clone(),
            container::name_for(&self.trial.id, workspace),
        ));
        let Reporting { observer, frontend } = reporting;
        let launched =
            Launch::prepare(spec, frontend).and_then(|l| l.drive(observer, None, frontend));
        if self.stopped() {
            return Ok(None);
        }
        let paths = delta_engine::run::RunPaths::new(workspace, &run_id);
        let metadata = delta_engine::run::read_metadata(&paths.metadata()).ok();
        let run = metadata.as_ref().map(|m| RunRecord {
            run_id: run_id.as_str().to_owned(),
            status: m.status.to_string(),
            usage: serde_json::to_value(&m.usage).unwrap_or(serde_json::Value::Null),
            cost_usd: m.usage.total_cost_usd,
            run_dir: paths.dir().to_path_buf(),
            trajectory: None,
        });
        let error = match launched {
            Err(LaunchError::Environment(error)) => {
                return Ok(Some(AgentOutcome {
                    run,
                    error: Some(Failure::new(
                        ErrorClass::EnvironmentStart,
                        error.to_string(),
                        Some(log.clone()),
                    )),
                    ..AgentOutcome::default()
                }));
            }
            Err(error) => {
                return Ok(Some(AgentOutcome {
                    run,
                    error: Some(engine(error.to_string())),
                    ..AgentOutcome::default()
                }));
            }
            Ok(_) => metadata.as_ref().and_then(|m| {
                let error = m.error.as_ref()?;
                let class = match (m.status, &error.error_type) {
                    (RunStatus::Failed, ErrorType::LlmError) => ErrorClass::ModelApi,
                    (RunStatus::Failed, _) => ErrorClass::AgentEngine,
                    _ => return None,
                };
                Some(Failure::new(
                    class,
                    error.message.clone(),
                    Some(paths.dir().join("engine.log")),
                ))
            }),
        };
        let mut run = run;
        if let Some(run) = &mut run {
            run.trajectory = self.write_trajectory(&paths);
        }
        Ok(Some(AgentOutcome {
            run,
            exit_code: None,
            error,
            verify: true,
        }))
    }

    /// The run's ATIF trajectory beside the trial's results (`agent/trajectory.json`),
    /// masked like every file the engine writes.
    fn write_trajectory(&self, paths: &delta_engine::run::RunPaths) -> Option<PathBuf> {
        let trajectory = Trajectory::load_paths(paths.clone()).ok()?;
        let atif = crate::export::atif::trajectory(&trajectory, Content { redact: false });
        let text = serde_json::to_string_pretty(&atif).ok()?;
        let path = self.trial_dir().join("agent").join("trajectory.json");
        fs_err::create_dir_all(path.parent()?).ok()?;
        self.redactor.write_masked(&path, text.as_bytes()).ok()?;
        Some(path)
    }

    /// The container as a placement for the trial's own commands: exec'd at the workdir.
    fn placement(&self, place: &Place, workspace: &Path) -> Option<Placement> {
        let (_, name) = self.container.as_ref()?;
        Some(Placement::Container(ContainerPlacement {
            runtime: place.program.clone(),
            name: name.clone(),
            env: Vec::new(),
            paths: PathMap {
                host: workspace.to_path_buf(),
                inside: PathBuf::from(&place.workdir),
            },
        }))
    }

    /// `sh -c script` in the container with `env`, under `timeout`; `None` when stopped.
    fn exec(
        &self,
        placement: &Placement,
        workspace: &Path,
        script: &str,
        env: Vec<(String, String)>,
        timeout: Duration,
    ) -> Option<Result<delta_engine::process::ProcessOutcome, delta_engine::process::ProcessError>>
    {
        let argv = ["sh".to_owned(), "-c".to_owned(), script.to_owned()];
        let options = ProcessOptions {
            cwd: workspace.to_path_buf(),
            env,
            timeout,
            output: OutputPolicy::new(64 * 1024, self.redactor.clone()),
            // Inside the trial's container, which the trial removes (a lost try's too).
            record: None,
        };
        self.until_stopped(async move { run_process_in(placement, &argv, None, &options).await })
    }

    /// The oracle: `solution/` copied to `/solution` and `solve.sh` run in a container of
    /// the task's image, under the agent's timeout. `Ok(None)`: stopped.
    fn oracle(
        &mut self,
        place: &Place,
        workspace: &Path,
    ) -> Result<Option<AgentOutcome>, EvalError> {
        let solution = self.task.solution_dir();
        if !solution.join("solve.sh").is_file() {
            return Ok(Some(AgentOutcome {
                error: Some(Failure::new(
                    ErrorClass::NoSolution,
                    format!("{} has no solve.sh for --oracle", solution.display()),
                    None,
                )),
                ..AgentOutcome::default()
            }));
        }
        let agent_dir = self.trial_dir().join("agent");
        fs_err::create_dir_all(&agent_dir).map_err(io(&agent_dir))?;
        let name = container::name_for(&self.trial.id, workspace);
        let setup = container::Setup {
            program: &place.program,
            runtime: Runtime::Podman,
            name: &name,
            run_id: &self.trial.id,
            image: &place.image,
            workspace,
            workdir: Path::new(&place.workdir),
            agent_home: &agent_dir,
            env_files: &[],
            network: self.task.config.network,
            cpus: self.task.config.cpus,
            memory_mb: self.task.config.memory_mb,
        };
        self.container = Some((place.program.clone(), name.clone()));
        if let Err(error) = setup.start() {
            return Ok(Some(AgentOutcome::start_failed(&error)));
        }
        let Some(placement) = self.placement(place, workspace) else {
            return Ok(Some(AgentOutcome::default()));
        };
        let copied = container::copy_in(&place.program, &name, &solution, "/solution");
        if let Err(error) = copied {
            return Ok(Some(AgentOutcome::start_failed(&error)));
        }
        let mut env = self.env(&self.task.config.solution_env);
        env.insert(
            0,
            ("DEBIAN_FRONTEND".to_owned(), "noninteractive".to_owned()),
        );
        let timeout = self
            .agent_timeout()
            .unwrap_or(Duration::from_secs(24 * 3600));
        let Some(ran) = self.exec(
            &placement,
            workspace,
            "mkdir -p /logs/agent && chmod +x /solution/solve.sh && (/solution/solve.sh) > /logs/agent/oracle.txt 2>&1",
            env,
            timeout,
        ) else {
            return Ok(None);
        };
        let _ = container::copy_out(&place.program, &name, "/logs/agent", &agent_dir);
        let exit_code = ran.ok().and_then(|outcome| outcome.exit_code);
        if let Some(code) = exit_code {
            let _ = fs_err::write(agent_dir.join("exit-code.txt"), format!("{code}\n"));
        }
        Ok(Some(AgentOutcome {
            run: None,
            exit_code,
            error: None,
            verify: true,
        }))
    }

    /// The verifier: the trajectory at `/logs/agent/trajectory.json`, `tests/` at `/tests`
    /// (only now), stale rewards removed, `test.sh` under `[verifier] timeout_sec` × the
    /// multiplier with `[verifier.env]`, `/logs/verifier` copied out, the reward read.
    /// `Ok(None)`: stopped.
    fn verify(
        &self,
        place: &Place,
        workspace: &Path,
        run: Option<&RunRecord>,
    ) -> Result<Option<Verified>, EvalError> {
        let crashed = |message: String| Verified {
            rewards: Err(Failure::new(
                ErrorClass::VerifierCrashed,
                message,
                Some(self.log()),
            )),
            exit_code: None,
        };
        let (Some(placement), Some((_, name))) =
            (self.placement(place, workspace), &self.container)
        else {
            return Ok(Some(crashed(
                "the trial has no container to verify in".to_owned(),
            )));
        };
        // One copy brings /tests and the trajectory in: `stage/` holds them as they go.
        let stage = self.trial_dir().join("stage");
        let staged = self
            .copy_tree(&self.task.tests_dir(), &stage.join("tests"))
            .and_then(|()| match run.and_then(|r| r.trajectory.as_ref()) {
                Some(trajectory) => {
                    let into = stage.join("logs").join("agent");
                    fs_err::create_dir_all(&into)
                        .and_then(|()| fs_err::copy(trajectory, into.join("trajectory.json")))
                        .map(|_| ())
                        .map_err(|e| e.to_string())
                }
                None => Ok(()),
            });
        let copied = staged.and_then(|()| {
            container::copy_in(&place.program, name, &stage, "/").map_err(|e| e.to_string())
        });
        let _ = fs_err::remove_dir_all(&stage);
        if let Err(message) = copied {
            return Ok(Some(crashed(message)));
        }
        let timeout = Duration::from_secs_f64(
            self.task.config.verifier_timeout_sec * self.manifest.timeout_multiplier,
        );
        // Stale rewards go first: the agent could have written them.
        let Some(ran) = self.exec(
            &placement,
            workspace,
            "rm -f /logs/verifier/reward.txt /logs/verifier/reward.json && \
             mkdir -p /logs/verifier && chmod +x /tests/test.sh && \
             (/tests/test.sh) > /logs/verifier/test-stdout.txt 2>&1",
            self.env(&self.task.config.verifier_env),
            timeout,
        ) else {
            return Ok(None);
        };
        let verifier_dir = self.trial_dir().join("verifier");
        fs_err::create_dir_all(&verifier_dir).map_err(io(&verifier_dir))?;
        let copied = container::copy_out(&place.program, name, "/logs/verifier", &verifier_dir);
        let stdout = verifier_dir.join("test-stdout.txt");
        if let Ok(bytes) = fs_err::read(&stdout) {
            let _ = self.redactor.write_masked(&stdout, &bytes);
        }
        let outcome = match ran {
            Ok(outcome) => outcome,
            Err(error) => return Ok(Some(crashed(error.to_string()))),
        };
        if outcome.timed_out {
            return Ok(Some(Verified {
                rewards: Err(Failure::new(
                    ErrorClass::VerifierTimeout,
                    format!(
                        "test.sh ran past [verifier] timeout_sec ({} s) and was killed",
                        timeout.as_secs_f64()
                    ),
                    Some(stdout),
                )),
                exit_code: None,
            }));
        }
        if let Err(error) = copied {
            return Ok(Some(crashed(error.to_string())));
        }
        let rewards = read_rewards(&verifier_dir)
            .map_err(|(class, message)| Failure::new(class, message, Some(stdout)));
        Ok(Some(Verified {
            rewards,
            exit_code: outcome.exit_code,
        }))
    }
}
