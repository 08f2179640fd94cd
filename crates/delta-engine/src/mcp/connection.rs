//! One live connection to an MCP server: for stdio, the child process (its own process
//! group, stderr pumped into a redacted log) and the MCP client (`delta-mcp`) over its
//! pipes; for HTTP, its streamable-HTTP client with headers read from the environment. [`McpEnv`] is
//! what a connection is opened with: where its files go and what it must not reveal.

use std::os::unix::process::ExitStatusExt as _;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use delta_mcp::{CallError, Client, Headers, Tool};
use nix::sys::signal::{Signal, killpg};
use nix::sys::wait::{Id, WaitPidFlag, WaitStatus, waitid};
use nix::unistd::Pid;
use serde_json::{Map, Value};
use tokio::process::{Child, ChildStderr, Command};

use crate::config::{McpServer, McpTransport};
use crate::environment::{PlacedEnv, Placement, kill_marked};
use crate::secrets::{Redactor, keep_tail, pump_redacted};

/// How long a stopped server may take to exit after its stdin closes before its process
/// group is killed.
const STOP_GRACE: Duration = Duration::from_secs(2);
/// How much of a server's stderr is kept in memory for error messages.
const STDERR_TAIL: usize = 2048;
/// Where servers started for a run keep their files, and what they must not reveal.
#[derive(Debug, Clone)]
pub struct McpEnv {
    /// The workspace: working directory of stdio servers without `cwd:`.
    pub workspace: PathBuf,
    /// `io/mcp/` of the run: `<name>/stderr.log` per stdio server. `None` discards
    /// their stderr (`delta tool expand`).
    pub io_dir: Option<PathBuf>,
    /// Added to the environment of stdio servers (the run's ids).
    pub env: Vec<(String, String)>,
    /// Applied to everything a server writes to its stderr log.
    pub redactor: Redactor,
    /// Where stdio servers run: the run's environment, like its tools.
    pub placement: Placement,
}

/// A server that cannot be used at run start: the run fails before any LLM call.
#[derive(Debug, Clone, thiserror::Error)]
#[error("MCP server '{server}' ({}:{line}) {message}", file.display())]
pub struct StartError {
    /// The server's name.
    pub server: String,
    /// The file that defines it.
    pub file: PathBuf,
    /// The line of its definition.
    pub line: u64,
    /// What went wrong.
    pub message: String,
    /// How to fix it.
    pub help: String,
}

impl StartError {
    /// The same failure as a configuration error pointing at the server's definition.
    pub fn to_config_error(&self) -> crate::config::ConfigError {
        crate::config::ConfigError {
            file: self.file.clone(),
            line: Some(self.line),
            column: None,
            message: format!("MCP server '{}' {}", self.server, self.message),
            help: Some(self.help.clone()),
        }
    }
}

/// The live parts of a server.
#[derive(Debug)]
pub(super) struct Connection {
    client: Client,
    process: Option<Process>,
    /// The transport failed during a call: the server is treated as gone.
    lost: bool,
}

/// A stdio server's process: the leader of its own process group.
#[derive(Debug)]
struct Process {
    child: Child,
    pid: Pid,
    /// A server in a container: the marker its processes there carry.
    marker: Option<String>,
    /// The directory of its `process.json` (for a run), removed once it is stopped.
    record: Option<PathBuf>,
}

impl Connection {
    /// Starts (or connects to) the server and lists its tools, within its startup timeout.
    pub(super) async fn open(
        config: &McpServer,
        env: &McpEnv,
    ) -> Result<(Self, Vec<Tool>), StartError> {
        let fail = |message: String, help: String| StartError {
            server: config.name.clone(),
            file: config.file.clone(),
            line: config.line,
            message,
            help,
        };
        let timeout = config.startup_timeout;
        let tail = Arc::new(Mutex::new(Vec::new()));
        let (client, mut process) = match &config.transport {
            McpTransport::Stdio {
                argv,
                env: vars,
                cwd,
            } => {
                let mut process = spawn(config, argv, vars, cwd.as_deref(), env, &tail)
                    .map_err(|(message, help)| fail(message, help))?;
                let stdout = process.child.stdout.take();
                let stdin = process.child.stdin.take();
                let (Some(stdout), Some(stdin)) = (stdout, stdin) else {
                    process.kill();
                    return Err(fail(
                        "could not be connected to".into(),
                        "this is a bug: the server's pipes were not created".into(),
                    ));
                };
                let served = tokio::time::timeout(timeout, Client::over_pipes(stdout, stdin)).await;
                match served {
                    Ok(Ok(client)) => (client, Some(process)),
                    Ok(Err(error)) => {
                        let exit = process.finish().await;
                        return Err(fail(
                            format!(
                                "did not complete the MCP handshake: {error} ({exit}){}",
                                stderr_hint(&tail)
                            ),
                            stdio_help(config, env),
                        ));
                    }
                    Err(_) => {
                        let exit = process.finish().await;
                        return Err(fail(
                            format!(
                                "did not complete the MCP handshake within {} ms ({exit}){}",
                                timeout.as_millis(),
                                stderr_hint(&tail)
                            ),
                            format!(
                                "{}; or raise `startup_timeout_ms` for a slow server",
                                stdio_help(config, env)
                            ),
                        ));
                    }
                }
            }
            McpTransport::Http {
                url,
                headers,
                bearer_token_env,
            } => {
                let (headers, bearer) = http_headers(headers, bearer_token_env.as_deref())
                    .map_err(|(message, help)| fail(message, help))?;
                let help = || {
                    format!(
                        "check that the server answers at {url} and that `url` in {} is right",
                        config.origin()
                    )
                };
                match tokio::time::timeout(timeout, Client::over_http(url, headers, bearer)).await {
                    Ok(Ok(client)) => (client, None),
                    Ok(Err(error)) => {
                        return Err(fail(format!("could not be reached: {error}"), help()));
                    }
                    Err(_) => {
                        return Err(fail(
                            format!("did not answer within {} ms", timeout.as_millis()),
                            help(),
                        ));
                    }
                }
            }
        };
        let listed = match tokio::time::timeout(timeout, client.list_tools()).await {
            Ok(Ok(tools)) => tools,
            Ok(Err(error)) => {
                close_parts(client, process.take()).await;
                return Err(fail(
                    format!("did not list its tools: {error}"),
                    "check the server's own logs; the engine needs `tools/list` to work".into(),
                ));
            }
            Err(_) => {
                close_parts(client, process.take()).await;
                return Err(fail(
                    format!("did not list its tools within {} ms", timeout.as_millis()),
                    "raise `startup_timeout_ms`, or check the server".into(),
                ));
            }
        };
        Ok((
            Self {
                client,
                process,
                lost: false,
            },
            listed,
        ))
    }

    /// Calls one tool; the result as JSON, as the server sent it.
    pub(super) async fn call(
        &mut self,
        tool: &str,
        arguments: Map<String, Value>,
    ) -> Result<Value, CallError> {
        match self.client.call(tool, arguments).await {
            Err(CallError::Lost(detail)) => {
                self.lost = true;
                // A killed server closes its pipes before it becomes a zombie: give its
                // exit a moment to be seen, for the observation.
                if let Some(process) = &self.process {
                    let deadline = tokio::time::Instant::now() + Duration::from_secs(1);
                    while !process.has_exited() && tokio::time::Instant::now() < deadline {
                        tokio::time::sleep(Duration::from_millis(10)).await;
                    }
                }
                Err(CallError::Lost(detail))
            }
            answered => answered,
        }
    }

    /// The protocol revision the server answered the handshake with.
    pub(super) fn protocol(&self) -> Option<String> {
        self.client.protocol()
    }

    /// Whether the server is gone: its process exited or its connection closed.
    pub(super) fn is_down(&self) -> bool {
        self.lost
            || self.client.is_closed()
            || self.process.as_ref().is_some_and(Process::has_exited)
    }

    /// How a dead stdio server ended, for observations.
    /// `detail` is the transport's error, said when the server did not exit.
    pub(super) fn exit_text(&self, detail: &str) -> String {
        match &self.process {
            Some(process) if process.has_exited() => process.exit_text(),
            Some(_) | None => format!("its connection was lost: {detail}"),
        }
    }

    /// Closes the connection; a stdio server gets its stdin closed, [`STOP_GRACE`] to
    /// exit, then its process group killed.
    pub(super) async fn close(self) {
        close_parts(self.client, self.process).await;
    }

    /// Kills a stdio server's process group at once (the engine is going away).
    pub(super) fn kill_now(self) {
        if let Some(mut process) = self.process {
            process.kill();
        }
    }
}

async fn close_parts(client: Client, process: Option<Process>) {
    let _ = tokio::time::timeout(STOP_GRACE, client.close()).await;
    if let Some(process) = process {
        process.finish().await;
    }
}

impl Process {
    /// Whether the leader exited, without reaping it: while it is unreaped its pid (the
    /// group id) cannot be reused, so the group can still be signalled safely.
    fn has_exited(&self) -> bool {
        let flags = WaitPidFlag::WEXITED | WaitPidFlag::WNOHANG | WaitPidFlag::WNOWAIT;
        match waitid(Id::Pid(self.pid), flags) {
            Ok(WaitStatus::StillAlive) => false,
            Ok(_) | Err(_) => true,
        }
    }

    fn exit_text(&self) -> String {
        let flags = WaitPidFlag::WEXITED | WaitPidFlag::WNOHANG | WaitPidFlag::WNOWAIT;
        match waitid(Id::Pid(self.pid), flags) {
            Ok(WaitStatus::Exited(_, code)) => format!("exit code {code}"),
            Ok(WaitStatus::Signaled(_, signal, _)) => format!("killed by {signal}"),
            Ok(_) | Err(_) => "still running".into(),
        }
    }

    fn kill(&mut self) {
        // ESRCH (the group is already gone) is the outcome we want anyway.
        let _ = killpg(self.pid, Signal::SIGKILL);
        if let Some(marker) = &self.marker {
            kill_marked(marker);
        }
        if let Some(dir) = &self.record {
            crate::process::orphans::forget(dir);
        }
    }

    /// Waits up to [`STOP_GRACE`] for the leader to exit, kills what is left of the group,
    /// reaps the leader; says how it ended.
    async fn finish(mut self) -> String {
        let deadline = tokio::time::Instant::now() + STOP_GRACE;
        while !self.has_exited() && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let text = self.exit_text();
        self.kill();
        match self.child.wait().await {
            Ok(status) if text == "still running" => status
                .code()
                .map(|c| format!("exit code {c}"))
                .or_else(|| status.signal().map(|s| format!("killed by signal {s}")))
                .unwrap_or(text),
            Ok(_) | Err(_) => text,
        }
    }
}

/// Starts a stdio server in its own process group, stderr pumped into its log.
fn spawn(
    config: &McpServer,
    argv: &[String],
    vars: &[(String, String)],
    cwd: Option<&Path>,
    env: &McpEnv,
    tail: &Arc<Mutex<Vec<u8>>>,
) -> Result<Process, (String, String)> {
    let (program, _) = argv.split_first().ok_or_else(|| {
        (
            "has an empty `command`".to_owned(),
            "give the program and its arguments".to_owned(),
        )
    })?;
    let server_dir = env.io_dir.as_ref().map(|dir| dir.join(&config.name));
    let log = match &server_dir {
        Some(dir) => {
            let opened = std::fs::create_dir_all(dir).and_then(|()| {
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(dir.join("stderr.log"))
            });
            match opened {
                Ok(file) => Some(tokio::fs::File::from_std(file)),
                Err(error) => {
                    return Err((
                        format!("cannot write its stderr log in {}: {error}", dir.display()),
                        "check that the workspace is writable".into(),
                    ));
                }
            }
        }
        None => None,
    };
    let mut variables = env.env.clone();
    variables.extend(vars.iter().cloned());
    let placed = env
        .placement
        .place(argv, cwd.unwrap_or(&env.workspace), &variables);
    let (placed_program, placed_args) = placed.argv.split_first().ok_or_else(|| {
        (
            "has an empty `command`".to_owned(),
            "give the program and its arguments".to_owned(),
        )
    })?;
    let mut command = Command::new(placed_program);
    match &placed.env {
        PlacedEnv::Inherit(extra) => command.envs(extra.iter().map(|(k, v)| (k, v))),
        PlacedEnv::Exactly(all) => command.env_clear().envs(all.iter().map(|(k, v)| (k, v))),
    };
    command
        .args(placed_args)
        .current_dir(&placed.cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut child = command.spawn().map_err(|error| {
        (
            format!("cannot be started: cannot run '{program}': {error}"),
            format!(
                "check `command` of MCP server '{}' in {}: is '{program}' installed and on \
                 PATH (or given by absolute path)?{}",
                config.name,
                config.origin(),
                cwd.map(|c| format!(" Its `cwd` is {}.", c.display()))
                    .unwrap_or_default()
            ),
        )
    })?;
    let pid = child
        .id()
        .and_then(|id| i32::try_from(id).ok())
        .map(Pid::from_raw);
    let Some(pid) = pid else {
        return Err((
            "exited as soon as it started".into(),
            format!("run `{}` by hand to see why", argv.join(" ")),
        ));
    };
    if let Some(stderr) = child.stderr.take() {
        tokio::spawn(pump_stderr(
            stderr,
            log,
            env.redactor.clone(),
            Arc::clone(tail),
        ));
    }
    if let Some(dir) = &server_dir {
        crate::process::orphans::record(dir, pid.as_raw().unsigned_abs(), placed.marker.as_deref());
    }
    Ok(Process {
        child,
        pid,
        marker: placed.marker,
        record: server_dir,
    })
}

/// Copies a server's stderr into its log (redacted) and keeps its tail for messages.
async fn pump_stderr(
    stderr: ChildStderr,
    log: Option<tokio::fs::File>,
    redactor: Redactor,
    tail: Arc<Mutex<Vec<u8>>>,
) {
    pump_redacted(stderr, log, &redactor, |bytes| {
        if let Ok(mut tail) = tail.lock() {
            keep_tail(&mut tail, bytes, STDERR_TAIL);
        }
    })
    .await;
}

/// The end of what the server wrote on stderr, for a start failure's message.
fn stderr_hint(tail: &Mutex<Vec<u8>>) -> String {
    let text = tail
        .lock()
        .map(|tail| String::from_utf8_lossy(&tail).trim().to_owned())
        .unwrap_or_default();
    if text.is_empty() {
        String::new()
    } else {
        format!("; its stderr ends with: {text}")
    }
}

fn stdio_help(config: &McpServer, env: &McpEnv) -> String {
    let log = env
        .io_dir
        .as_ref()
        .map(|dir| {
            format!(
                " (its stderr is in {})",
                dir.join(&config.name).join("stderr.log").display()
            )
        })
        .unwrap_or_default();
    format!(
        "check that `command` of MCP server '{}' in {} starts an MCP server speaking on \
         stdin/stdout{log}",
        config.name,
        config.origin()
    )
}

/// The streamable-HTTP transport's headers and bearer token, read from the environment now
/// (they are never stored in the configuration or written anywhere).
fn http_headers(
    headers: &[(String, String)],
    bearer_token_env: Option<&str>,
) -> Result<(Headers, Option<String>), (String, String)> {
    crate::http::install_crypto_provider();
    let variable = |name: &str, what: &str| {
        std::env::var(name).map_err(|_| {
            (
                format!("needs the environment variable {name} ({what}), which is not set"),
                format!("export {name} before the run"),
            )
        })
    };
    let mut custom = Headers::new();
    for (header, name) in headers {
        let value = variable(name, &format!("header {header}"))?;
        let parsed = (
            http::HeaderName::from_bytes(header.as_bytes()),
            http::HeaderValue::from_str(&value),
        );
        let (Ok(header_name), Ok(mut header_value)) = parsed else {
            return Err((
                format!(
                    "cannot send header {header}: the value of {name} is not a valid header value"
                ),
                format!("set {name} to printable ASCII text"),
            ));
        };
        header_value.set_sensitive(true);
        custom.insert(header_name, header_value);
    }
    let bearer = bearer_token_env
        .map(|name| variable(name, "bearer_token_env"))
        .transpose()?;
    Ok((custom, bearer))
}
