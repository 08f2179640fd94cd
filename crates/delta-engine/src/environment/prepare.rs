//! The seam's first half: what a run's environment is prepared from, the checks that can
//! refuse before anything of the run exists, the command lines of each kind (the plan), and
//! starting them.

use std::path::{Path, PathBuf};

use super::running::{Environment, Running};
use super::{
    CALL_MARKER, ContainerPlacement, EnvironmentConfig, EnvironmentError, EnvironmentReport,
    HELPER, KeeperPlacement, Kind, PathMap, Placement, bwrap, container, keeper, kernel_abi,
    landlock,
};
use crate::llm::API_KEY_VARIABLES;
use crate::secrets::Redactor;
use crate::tool::{CommandPart, TemplatePiece, ToolSpec};

/// What the environment of a run is prepared from.
#[derive(Debug)]
pub struct Setting<'a> {
    /// The configuration, the command line's choice applied.
    pub config: &'a EnvironmentConfig,
    /// The agent directory.
    pub agent_home: &'a Path,
    /// The workspace (it exists).
    pub workspace: &'a Path,
    /// The agent's tools.
    pub tools: &'a [ToolSpec],
    /// The `.env` file the API key was read from, if any.
    pub key_file: Option<&'a Path>,
    /// The `.env` files the credentials are looked up in (shown empty inside).
    pub env_files: Vec<PathBuf>,
    /// The run's secrets, kept out of the tools' environment.
    pub redactor: &'a Redactor,
}

/// An environment checked and ready to start: its programs found, its image built.
#[derive(Debug)]
pub struct Prepared {
    config: EnvironmentConfig,
    agent_home: PathBuf,
    workspace: PathBuf,
    env_files: Vec<PathBuf>,
    tool_env: Vec<(String, String)>,
    programs: Vec<(String, String)>,
    kind: Ready,
}

#[derive(Debug)]
enum Ready {
    Host,
    Landlock {
        helper: PathBuf,
    },
    Bwrap {
        helper: PathBuf,
        bwrap: PathBuf,
    },
    Container {
        program: PathBuf,
        image: container::Image,
    },
}

/// Checks that the environment of `setting` can be established, and builds a container's
/// image: everything that can refuse before anything of the run exists.
///
/// # Errors
/// An [`EnvironmentError`] naming the cause and the fix.
pub fn prepare(setting: &Setting<'_>) -> Result<Prepared, EnvironmentError> {
    let config = setting.config;
    let kind = match config.kind {
        Kind::Host => {
            if config.network == Some(false) {
                return Err(EnvironmentError::HostNetwork);
            }
            Ready::Host
        }
        Kind::Landlock => {
            let helper = find_helper(Kind::Landlock)?;
            let abi = kernel_abi();
            if !config.best_effort
                && let Some(reason) = landlock::shortfall(abi)
            {
                return Err(EnvironmentError::Landlock { reason });
            }
            if !landlock::proc_readable(&config.allow_read)
                && let Some(tool) = setting.tools.iter().find(|tool| runs_sessions(tool))
            {
                return Err(EnvironmentError::SessionsNeedProc {
                    tool: tool.name.clone(),
                });
            }
            if let Some(file) = setting.key_file {
                // The workspace stands in for the temporary directory made at start: a
                // fresh directory cannot hold the key file.
                let rules = landlock::rules(
                    &landlock_paths(
                        config,
                        setting.agent_home,
                        setting.workspace,
                        &helper,
                        setting.workspace,
                    ),
                    true,
                    false,
                );
                if landlock::readable(&rules, file) {
                    return Err(EnvironmentError::KeyReadable {
                        file: file.to_path_buf(),
                    });
                }
            }
            Ready::Landlock { helper }
        }
        Kind::Bwrap => {
            let helper = find_helper(Kind::Bwrap)?;
            let bwrap = on_path("bwrap").ok_or(EnvironmentError::BwrapMissing)?;
            Ready::Bwrap { helper, bwrap }
        }
        Kind::Container => {
            let program = container::find_runtime(config.runtime)?;
            let image = match (&config.image, &config.build) {
                (Some(image), _) => container::existing_image(&program, config.runtime, image)?,
                (None, Some(dir)) => container::built_image(&program, config.runtime, dir)?,
                (None, None) => return Err(EnvironmentError::NoImage),
            };
            Ready::Container { program, image }
        }
    };
    Ok(Prepared {
        config: config.clone(),
        agent_home: setting.agent_home.to_path_buf(),
        workspace: setting.workspace.to_path_buf(),
        env_files: setting.env_files.clone(),
        tool_env: tool_env(setting.redactor, &config.pass_env),
        programs: programs(setting.tools, setting.workspace),
        kind,
    })
}

fn landlock_paths<'a>(
    config: &'a EnvironmentConfig,
    agent_home: &'a Path,
    workspace: &'a Path,
    helper: &'a Path,
    tmp: &'a Path,
) -> landlock::RulePaths<'a> {
    landlock::RulePaths {
        workspace,
        tmp,
        agent_home,
        tools_dir: helper.parent(),
        allow_read: &config.allow_read,
        allow_write: &config.allow_write,
    }
}

/// The entries of the agent directory a confined tool may read: all but its `.env` (the
/// API key may be there) and its numbered workspaces (other runs' work). Entry by entry,
/// because neither Landlock nor a container runtime can carve a hole in a granted tree.
pub(super) fn agent_entries(agent_home: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(agent_home) else {
        return Vec::new();
    };
    let mut entries: Vec<PathBuf> = entries
        .flatten()
        .filter(|entry| {
            entry.file_name() != ".env" && entry.file_name() != crate::workspace::WORKSPACES_DIR
        })
        .map(|entry| entry.path())
        .collect();
    entries.sort();
    entries
}

/// Whether `tool`'s command runs delta-sessions.
fn runs_sessions(tool: &ToolSpec) -> bool {
    tool.command.iter().any(|part| match part {
        CommandPart::Literal(text) => text.contains("delta-sessions"),
        CommandPart::Template(pieces) => pieces.iter().any(|piece| match piece {
            TemplatePiece::Text(text) => text.contains("delta-sessions"),
            TemplatePiece::Param(_) => false,
        }),
    })
}

/// The programs of `tools` to look for inside: bare names and absolute paths outside the
/// workspace (a relative path may be made by an earlier call), with the tool's name.
fn programs(tools: &[ToolSpec], workspace: &Path) -> Vec<(String, String)> {
    tools
        .iter()
        .filter_map(|tool| {
            let CommandPart::Literal(program) = tool.command.first()? else {
                return None;
            };
            let checked = !program.contains('/')
                || (Path::new(program).is_absolute() && !Path::new(program).starts_with(workspace));
            checked.then(|| (tool.name.clone(), program.clone()))
        })
        .collect()
}

/// The engine's environment as a confined tool gets it: without the API key variables and
/// without any variable whose value holds a secret of the run, unless `pass_env` names it.
fn tool_env(redactor: &Redactor, pass_env: &[String]) -> Vec<(String, String)> {
    std::env::vars_os()
        .filter_map(|(name, value)| Some((name.into_string().ok()?, value.into_string().ok()?)))
        .filter(|(name, value)| {
            pass_env.contains(name)
                || !(API_KEY_VARIABLES.contains(&name.as_str())
                    || name == CALL_MARKER
                    || redactor.redact(value) != *value)
        })
        .collect()
}

/// `program` on PATH.
#[must_use]
pub fn on_path(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
}

/// `delta-sandbox`: beside the running executable, else on PATH.
///
/// # Errors
/// [`EnvironmentError::HelperMissing`].
pub fn find_helper(kind: Kind) -> Result<PathBuf, EnvironmentError> {
    let beside = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|dir| dir.join(HELPER)));
    if let Some(beside) = beside.as_ref().filter(|path| is_executable(path)) {
        return Ok(beside.clone());
    }
    on_path(HELPER).ok_or_else(|| EnvironmentError::HelperMissing {
        kind,
        beside: beside.map_or_else(|| "unknown".to_owned(), |path| path.display().to_string()),
    })
}

impl Prepared {
    /// The kind that will run.
    #[must_use]
    pub fn kind(&self) -> Kind {
        self.config.kind
    }

    /// The environment of `setting` as it would be prepared, without checking anything or
    /// building an image: for showing the wrapped commands (`delta tool expand`).
    #[must_use]
    pub fn unchecked(setting: &Setting<'_>) -> Self {
        let config = setting.config;
        let helper = || find_helper(config.kind).unwrap_or_else(|_| PathBuf::from(HELPER));
        let kind = match config.kind {
            Kind::Host => Ready::Host,
            Kind::Landlock => Ready::Landlock { helper: helper() },
            Kind::Bwrap => Ready::Bwrap {
                helper: helper(),
                bwrap: on_path("bwrap").unwrap_or_else(|| PathBuf::from("bwrap")),
            },
            Kind::Container => Ready::Container {
                program: on_path(config.runtime.program())
                    .unwrap_or_else(|| PathBuf::from(config.runtime.program())),
                image: container::Image {
                    name: config
                        .image
                        .clone()
                        .unwrap_or_else(|| "localhost/delta-build:<HASH>".to_owned()),
                    id: String::new(),
                    built: false,
                },
            },
        };
        Self {
            config: config.clone(),
            agent_home: setting.agent_home.to_path_buf(),
            workspace: setting.workspace.to_path_buf(),
            env_files: setting.env_files.clone(),
            tool_env: Vec::new(),
            programs: Vec::new(),
            kind,
        }
    }

    fn workdir(&self) -> PathBuf {
        self.config
            .workdir
            .clone()
            .unwrap_or_else(|| self.workspace.clone())
    }

    /// The command lines of the environment of the run `run_id` with its runtime directory
    /// at `runtime_dir`: what starts the run's sandbox or container, and how each call is
    /// wrapped.
    #[must_use]
    pub fn plan(&self, run_id: &str, runtime_dir: &Path) -> Plan {
        let config = &self.config;
        let workdir = self.workdir();
        match &self.kind {
            Ready::Host => Plan {
                start: None,
                placement: Placement::Host,
            },
            Ready::Landlock { helper } => {
                let tmp = runtime_dir.join("tmp");
                let socket = runtime_dir.join("keeper.sock");
                let rules = landlock::rules(
                    &landlock_paths(config, &self.agent_home, &self.workspace, helper, &tmp),
                    !config.network(),
                    config.best_effort,
                );
                // Plain paths and flags: serializing them cannot fail.
                let json = serde_json::to_string(&rules).unwrap_or_default();
                let mut env = self.tool_env.clone();
                env.push(("TMPDIR".to_owned(), tmp.display().to_string()));
                Plan {
                    start: Some(vec![
                        helper.display().to_string(),
                        "keep".to_owned(),
                        "--socket".to_owned(),
                        socket.display().to_string(),
                        "--landlock".to_owned(),
                        json,
                    ]),
                    placement: Placement::Keeper(KeeperPlacement {
                        helper: helper.clone(),
                        socket,
                        env,
                        paths: PathMap::same(&self.workspace),
                    }),
                }
            }
            Ready::Bwrap { helper, bwrap } => {
                let home = std::env::var_os("HOME").map(PathBuf::from);
                let sandbox = bwrap::Sandbox {
                    workspace: &self.workspace,
                    workdir: &workdir,
                    agent_home: &self.agent_home,
                    tools_dir: helper.parent(),
                    runtime_dir,
                    home: home.as_deref(),
                    allow_read: &config.allow_read,
                    allow_write: &config.allow_write,
                    env_files: &self.env_files,
                    network: config.network(),
                };
                let mut start = vec![bwrap.display().to_string()];
                start.extend(sandbox.args());
                start.extend([
                    helper.display().to_string(),
                    "keep".to_owned(),
                    "--socket".to_owned(),
                    format!("{}/keeper.sock", bwrap::RUNTIME_INSIDE),
                ]);
                Plan {
                    start: Some(start),
                    placement: Placement::Keeper(KeeperPlacement {
                        helper: helper.clone(),
                        socket: runtime_dir.join("keeper.sock"),
                        env: self.tool_env.clone(),
                        paths: PathMap {
                            host: self.workspace.clone(),
                            inside: workdir,
                        },
                    }),
                }
            }
            Ready::Container { program, image } => {
                let name = container::name_for(run_id, &self.workspace);
                let setup = self.container_setup(program, image, &name, run_id, &workdir);
                let mut start = vec![program.display().to_string()];
                start.extend(setup.run_args());
                let env: Vec<(String, String)> = config
                    .pass_env
                    .iter()
                    .filter_map(|name| Some((name.clone(), std::env::var(name).ok()?)))
                    .collect();
                Plan {
                    start: Some(start),
                    placement: Placement::Container(ContainerPlacement {
                        runtime: program.clone(),
                        name,
                        env,
                        paths: PathMap {
                            host: self.workspace.clone(),
                            inside: workdir,
                        },
                    }),
                }
            }
        }
    }

    fn container_setup<'a>(
        &'a self,
        program: &'a Path,
        image: &'a container::Image,
        name: &'a str,
        run_id: &'a str,
        workdir: &'a Path,
    ) -> container::Setup<'a> {
        container::Setup {
            program,
            runtime: self.config.runtime,
            name,
            run_id,
            image,
            workspace: &self.workspace,
            workdir,
            agent_home: &self.agent_home,
            env_files: &self.env_files,
            network: self.config.network(),
            cpus: self.config.cpus,
            memory_mb: self.config.memory_mb,
        }
    }

    /// Starts the environment of the run `run_id`. `had_container`: the run's record says
    /// it ran in a container before, so a container made now comes with a note that the
    /// state outside the workspace was lost.
    ///
    /// # Errors
    /// When the sandbox or container cannot be started.
    pub fn start(
        &self,
        run_id: &str,
        had_container: bool,
    ) -> Result<Environment, EnvironmentError> {
        let config = &self.config;
        let workdir = self.workdir();
        let mut environment = Environment {
            kind: config.kind,
            placement: Placement::Host,
            report: EnvironmentReport::of(config.kind, config.network(), &workdir),
            running: Running::Host,
            keep: config.keep,
            note: None,
            programs: self.programs.clone(),
            image: None,
        };
        let report = &mut environment.report;
        match &self.kind {
            Ready::Host => {}
            Ready::Landlock { .. } => {
                let runtime_dir = runtime_dir()?;
                fs_err::create_dir(runtime_dir.join("tmp"))?;
                let plan = self.plan(run_id, &runtime_dir);
                let keeper = keeper::spawn(
                    plan.start.as_deref().unwrap_or_default(),
                    &keeper_env(),
                    &runtime_dir.join("keeper.log"),
                )
                .map_err(|message| EnvironmentError::Landlock { reason: message })?;
                let abi = keeper.landlock.as_ref().map_or(0, |outcome| outcome.abi);
                let (enforced, not_enforced) = landlock::report(
                    abi,
                    !config.network(),
                    !landlock::proc_readable(&config.allow_read),
                );
                report.enforced = enforced;
                report.not_enforced = not_enforced;
                report.landlock_abi = Some(abi);
                report.best_effort = config.best_effort;
                environment.placement = plan.placement;
                environment.running = Running::Keeper {
                    keeper,
                    runtime_dir,
                };
            }
            Ready::Bwrap { bwrap, .. } => {
                let runtime_dir = runtime_dir()?;
                fs_err::write(runtime_dir.join(bwrap::EMPTY_FILE), "")?;
                let plan = self.plan(run_id, &runtime_dir);
                let keeper = keeper::spawn(
                    plan.start.as_deref().unwrap_or_default(),
                    &keeper_env(),
                    &runtime_dir.join("keeper.log"),
                )
                .map_err(|message| {
                    let _ = std::fs::remove_dir_all(&runtime_dir);
                    bwrap::failure(&message)
                })?;
                report.enforced = bwrap_guarantees(config.network());
                report.not_enforced = network_not_enforced(config.network());
                report.bwrap_version = bwrap::version(bwrap);
                environment.placement = plan.placement;
                environment.running = Running::Keeper {
                    keeper,
                    runtime_dir,
                };
            }
            Ready::Container { program, image } => {
                let plan = self.plan(run_id, Path::new("/"));
                let Placement::Container(placement) = &plan.placement else {
                    return Err(EnvironmentError::NoImage);
                };
                let name = placement.name.clone();
                let running = self
                    .container_setup(program, image, &name, run_id, &workdir)
                    .start()?;
                if running.created && had_container {
                    environment.note = Some(format!(
                        "The container of this run ({name}) was gone when the run continued, \
                         so a new one was made from the image {}. The workspace ({}) is as it \
                         was; everything else in the container (installed packages, files \
                         outside the workspace, running processes) was lost.",
                        image.name,
                        workdir.display()
                    ));
                }
                report.enforced = container_guarantees(config);
                report.not_enforced = network_not_enforced(config.network());
                report.runtime = Some(config.runtime.program().to_owned());
                report.container = Some(name);
                report.container_id = Some(running.id.clone());
                report.image = Some(image.name.clone());
                report.image_id = Some(image.id.clone());
                report.image_built = Some(image.built);
                report.container_created = Some(running.created);
                environment.placement = plan.placement;
                environment.image = Some(image.name.clone());
                environment.running = Running::Container(running);
            }
        }
        Ok(environment)
    }
}

/// The command lines of a run's environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// What starts the run's sandbox (keeper) or container; `None` on the host.
    pub start: Option<Vec<String>>,
    /// How each call is wrapped.
    pub placement: Placement,
}

fn network_not_enforced(network: bool) -> Vec<String> {
    if network {
        vec!["network_denied".to_owned()]
    } else {
        Vec::new()
    }
}

fn bwrap_guarantees(network: bool) -> Vec<String> {
    let mut all = vec![
        "fs_root_read_only",
        "homes_hidden",
        "tmp_private",
        "delta_read_only",
        "env_files_hidden",
        "pid_namespace",
        "ipc_namespace",
        "uts_namespace",
        "capabilities_dropped",
        "processes_contained",
    ];
    if !network {
        all.push("network_namespace");
    }
    all.into_iter().map(str::to_owned).collect()
}

fn container_guarantees(config: &EnvironmentConfig) -> Vec<String> {
    let mut all = vec![
        "container_filesystem",
        "delta_read_only",
        "env_files_hidden",
        "pid_namespace",
        "processes_contained",
    ];
    if !config.network() {
        all.push("network_none");
    }
    if config.cpus.is_some() {
        all.push("cpu_limit");
    }
    if config.memory_mb.is_some() {
        all.push("memory_limit");
    }
    all.into_iter().map(str::to_owned).collect()
}

/// The keeper's own environment: nothing of the engine's but PATH (under Landlock, tools
/// can read the keeper's `/proc` entry).
fn keeper_env() -> Vec<(String, String)> {
    std::env::var("PATH")
        .map(|path| vec![("PATH".to_owned(), path)])
        .unwrap_or_default()
}

/// A fresh private directory for the keeper's socket, log and (landlock) temporary files.
fn runtime_dir() -> Result<PathBuf, EnvironmentError> {
    use std::os::unix::fs::DirBuilderExt;
    let base = std::env::temp_dir();
    for _ in 0..16 {
        let dir = base.join(format!("delta-env-{:08x}", fastrand::u32(..)));
        match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => return Ok(dir),
            Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(error) => {
                return Err(EnvironmentError::Io(crate::path_error::failed(
                    "create directory",
                    &dir,
                    error,
                )));
            }
        }
    }
    Err(EnvironmentError::Io(std::io::Error::other(format!(
        "cannot make a fresh directory in {}",
        base.display()
    ))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_stay_out_of_a_confined_tools_environment_unless_passed() {
        let redactor = Redactor::new(["sk-0123456789"]);
        let env = tool_env(&redactor, &[]);
        assert!(env.iter().all(|(name, value)| {
            !API_KEY_VARIABLES.contains(&name.as_str()) && !value.contains("sk-0123456789")
        }));
    }
}
