//! One task in Harbor's format, read unchanged: `task.toml` with Harbor 0.26's keys and
//! defaults (unknown keys kept and warned about, never fatal), `instruction.md` (leading
//! canary comments stripped, as Harbor does), `environment/`, `tests/test.sh` and
//! `solution/solve.sh`; its content hash, so a changed task is never mixed into an eval.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Harbor's default `[verifier] timeout_sec`.
pub const DEFAULT_VERIFIER_TIMEOUT_SEC: f64 = 600.0;
/// Harbor's default `[environment] build_timeout_sec`.
pub const DEFAULT_BUILD_TIMEOUT_SEC: f64 = 600.0;

/// A task of an eval, as loaded (paths absolute).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Task {
    /// `[task] name`, else the directory's name.
    pub name: String,
    /// The name made safe for files and run ids (`/` becomes `__`).
    pub id: String,
    /// The task directory.
    pub dir: PathBuf,
    /// The content hash of the task directory's files (paths, modes, contents), as the
    /// container environment hashes a build directory.
    pub content_hash: String,
    /// What `task.toml` says that Delta uses.
    pub config: TaskConfig,
}

impl Task {
    /// `instruction.md`.
    #[must_use]
    pub fn instruction_path(&self) -> PathBuf {
        self.dir.join("instruction.md")
    }

    /// `environment/`.
    #[must_use]
    pub fn environment_dir(&self) -> PathBuf {
        self.dir.join("environment")
    }

    /// `tests/`.
    #[must_use]
    pub fn tests_dir(&self) -> PathBuf {
        self.dir.join("tests")
    }

    /// `solution/`.
    #[must_use]
    pub fn solution_dir(&self) -> PathBuf {
        self.dir.join("solution")
    }
}

/// The keys of `task.toml` a trial uses, with Harbor's defaults applied.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskConfig {
    /// `schema_version` (or the legacy `version`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema_version: Option<String>,
    /// `[agent] timeout_sec`: the agent's wall clock; none means no limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_timeout_sec: Option<f64>,
    /// `[verifier] timeout_sec` (default 600).
    pub verifier_timeout_sec: f64,
    /// `[environment] build_timeout_sec` (default 600): building and starting the
    /// environment.
    pub build_timeout_sec: f64,
    /// `[environment] docker_image`: a prebuilt image, used instead of `environment/`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub docker_image: Option<String>,
    /// `[environment] workdir`: where the agent and the verifier work.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workdir: Option<String>,
    /// Whether the environment may reach the network (`allow_internet = true` or
    /// `network_mode = "public"`); off otherwise.
    pub network: bool,
    /// `[environment] cpus`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<f64>,
    /// `[environment] memory_mb` (or `memory = "2G"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_mb: Option<u64>,
    /// `[environment.env]`: the environment's variables, `${VAR}` and `${VAR:-default}`
    /// resolved from the host when the trial runs.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// `[verifier.env]`: test.sh's variables, resolved likewise.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub verifier_env: BTreeMap<String, String>,
    /// `[solution.env]`: solve.sh's variables (the oracle), resolved likewise.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub solution_env: BTreeMap<String, String>,
    /// `[metadata]`, as written.
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub metadata: Value,
    /// Keys Harbor does not define, by dotted path, kept as written.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub extra: BTreeMap<String, Value>,
}

/// A task directory read: the task, or what is wrong with it, and what deserves a warning.
#[derive(Debug, Default)]
pub struct Loaded {
    /// The task, when it has no problem.
    pub task: Option<Task>,
    /// `place: what is wrong; the fix`.
    pub problems: Vec<String>,
    /// `place: what is ignored and why`.
    pub warnings: Vec<String>,
}

/// Reads the task directory `dir`, shown in messages as `shown`.
#[must_use]
pub fn load_task(dir: &Path, shown: &Path) -> Loaded {
    let mut loaded = Loaded::default();
    let toml_path = dir.join("task.toml");
    let shown_toml = shown.join("task.toml");
    let config = match fs_err::read_to_string(&toml_path) {
        Ok(text) => parse_config(&text, &shown_toml, &mut loaded),
        Err(_) if !toml_path.exists() => {
            loaded.problems.push(format!(
                "{}: no task.toml; a task directory holds task.toml, instruction.md and \
                 tests/test.sh (Harbor's format, docs/eval.md)",
                shown.display()
            ));
            None
        }
        Err(error) => {
            loaded.problems.push(format!("{error}; make it readable"));
            None
        }
    };
    for (file, fix) in [
        ("instruction.md", "write the task given to the agent there"),
        (
            "tests/test.sh",
            "write the verifier there: it writes /logs/verifier/reward.txt or reward.json",
        ),
    ] {
        if !dir.join(file).is_file() {
            loaded
                .problems
                .push(format!("{}: missing {file}; {fix}", shown.display()));
        }
    }
    let Some((config, name)) = config else {
        return loaded;
    };
    if config.docker_image.is_none() && !dir.join("environment").join("Dockerfile").is_file() {
        loaded.problems.push(format!(
            "{}: no environment/Dockerfile and no [environment] docker_image; give the \
             task's image one way or the other",
            shown.display()
        ));
    }
    let name = name.unwrap_or_else(|| {
        dir.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    });
    let id = task_id(&name);
    if let Err(problem) = delta_engine::run::RunId::parse(&format!("{id}.1")) {
        loaded.problems.push(format!(
            "{}: the task name {name:?} cannot name its trials ({problem}); give [task] name \
             letters, digits, '.', '_', '-' or '/'",
            shown_toml.display()
        ));
    }
    for (table, env) in [
        ("environment.env", &config.env),
        ("verifier.env", &config.verifier_env),
        ("solution.env", &config.solution_env),
    ] {
        for (key, value) in env {
            if let Err(missing) = resolve_env_value(value, &|name| std::env::var(name).ok()) {
                loaded.problems.push(format!(
                    "{}: [{table}] {key} needs ${{{missing}}}, which is not set; set it, or \
                     write ${{{missing}:-default}}",
                    shown_toml.display()
                ));
            }
        }
    }
    if !loaded.problems.is_empty() {
        return loaded;
    }
    match delta_engine::environment::container::content_hash(dir) {
        Ok(content_hash) => {
            loaded.task = Some(Task {
                name,
                id,
                dir: dir.to_path_buf(),
                content_hash,
                config,
            });
        }
        Err(error) => loaded
            .problems
            .push(format!("{error}; make the task readable")),
    }
    loaded
}

/// A task name made safe for file names and run ids.
#[must_use]
pub fn task_id(name: &str) -> String {
    name.replace('/', "__")
}

/// `task.toml`'s sections as Harbor 0.26 defines them (unknown keys ignored here, found by
/// [`unknown_keys`]).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct RawToml {
    schema_version: Option<String>,
    version: Option<String>,
    task: Option<RawPackage>,
    metadata: Option<toml::Table>,
    agent: RawAgent,
    verifier: RawVerifier,
    environment: RawEnvironment,
    solution: RawSolution,
    steps: Option<toml::Value>,
    artifacts: Option<toml::Value>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct RawPackage {
    name: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct RawAgent {
    timeout_sec: Option<f64>,
    user: Option<toml::Value>,
    network_mode: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct RawVerifier {
    timeout_sec: Option<f64>,
    env: BTreeMap<String, String>,
    user: Option<toml::Value>,
    environment_mode: Option<String>,
    environment: Option<toml::Table>,
    collect: Option<Vec<toml::Value>>,
    network_mode: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct RawEnvironment {
    build_timeout_sec: Option<f64>,
    docker_image: Option<String>,
    os: Option<String>,
    cpus: Option<f64>,
    memory_mb: Option<u64>,
    memory: Option<String>,
    storage_mb: Option<u64>,
    storage: Option<String>,
    gpus: Option<u64>,
    gpu_types: Option<Vec<String>>,
    tpu: Option<toml::Value>,
    network_mode: Option<String>,
    allowed_hosts: Option<Vec<String>>,
    allow_internet: Option<bool>,
    env: BTreeMap<String, String>,
    workdir: Option<String>,
    healthcheck: Option<toml::Value>,
    mcp_servers: Option<Vec<toml::Value>>,
    skills_dir: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct RawSolution {
    env: BTreeMap<String, String>,
}

/// Every key Harbor 0.26 defines, by table (`metadata` is free-form, so absent).
const KNOWN_KEYS: &[(&str, &[&str])] = &[
    (
        "",
        &[
            "schema_version",
            "version",
            "source",
            "multi_step_reward_strategy",
            "steps",
            "artifacts",
            "task",
            "metadata",
            "agent",
            "verifier",
            "environment",
            "solution",
        ],
    ),
    (
        "task",
        &["name", "version", "description", "authors", "keywords"],
    ),
    (
        "agent",
        &["timeout_sec", "user", "network_mode", "allowed_hosts"],
    ),
    (
        "verifier",
        &[
            "timeout_sec",
            "env",
            "user",
            "environment_mode",
            "environment",
            "collect",
            "network_mode",
            "allowed_hosts",
        ],
    ),
    (
        "environment",
        &[
            "build_timeout_sec",
            "docker_image",
            "os",
            "cpus",
            "memory_mb",
            "storage_mb",
            "memory",
            "storage",
            "gpus",
            "gpu_types",
            "tpu",
            "network_mode",
            "allowed_hosts",
            "allow_internet",
            "env",
            "workdir",
            "healthcheck",
            "mcp_servers",
            "skills_dir",
        ],
    ),
    ("solution", &["env"]),
];

/// Parses `task.toml`'s text: the config and `[task] name`, or `None` with the problems
/// recorded; warnings for what is kept but not used.
fn parse_config(
    text: &str,
    shown: &Path,
    loaded: &mut Loaded,
) -> Option<(TaskConfig, Option<String>)> {
    let place = |span: Option<std::ops::Range<usize>>| match span {
        Some(span) => {
            let (line, column) = line_column(text, span.start);
            format!("{}:{line}:{column}", shown.display())
        }
        None => shown.display().to_string(),
    };
    let table: toml::Table = match toml::from_str(text) {
        Ok(table) => table,
        Err(error) => {
            loaded.problems.push(format!(
                "{}: {}; fix the TOML syntax",
                place(error.span()),
                error.message().trim_end()
            ));
            return None;
        }
    };
    let raw: RawToml = match toml::from_str(text) {
        Ok(raw) => raw,
        Err(error) => {
            loaded.problems.push(format!(
                "{}: {}; see Harbor's task.toml keys in docs/eval.md",
                place(error.span()),
                error.message().trim_end()
            ));
            return None;
        }
    };
    let mut extra = BTreeMap::new();
    for (path, value) in unknown_keys(&table) {
        loaded.warnings.push(format!(
            "{}: unknown key `{path}` kept in eval.json and not used (not one of Harbor \
             0.26's task.toml keys)",
            place(key_span(text, &path)),
        ));
        extra.insert(path, serde_json::to_value(value).unwrap_or(Value::Null));
    }
    let mut problems = Vec::new();
    let mut problem = |key: &str, what: String| {
        problems.push(format!("{}: {key}: {what}", place(key_span(text, key))));
    };
    if raw.steps.is_some() {
        problem(
            "steps",
            "multi-step tasks are not supported by delta eval; split the steps into tasks"
                .to_owned(),
        );
    }
    if let Some(os) = &raw.environment.os
        && !os.eq_ignore_ascii_case("linux")
    {
        problem(
            "environment.os",
            format!("{os:?}: only linux tasks run in delta eval's containers"),
        );
    }
    if raw.verifier.environment_mode.as_deref() == Some("separate")
        || raw.verifier.environment.is_some()
    {
        problem(
            "verifier.environment",
            "a separate verifier environment is not supported; the verifier runs in the \
             trial's environment (drop [verifier.environment])"
                .to_owned(),
        );
    }
    for (key, value) in [
        ("agent.timeout_sec", raw.agent.timeout_sec),
        ("verifier.timeout_sec", raw.verifier.timeout_sec),
        (
            "environment.build_timeout_sec",
            raw.environment.build_timeout_sec,
        ),
        ("environment.cpus", raw.environment.cpus),
    ] {
        if let Some(value) = value
            && !(value.is_finite() && value > 0.0)
        {
            problem(
                key,
                format!("{value} is not a positive number of seconds or cpus"),
            );
        }
    }
    let memory_mb = match (&raw.environment.memory, raw.environment.memory_mb) {
        (Some(text), explicit) => match parse_size_mb(text) {
            Some(mb) if explicit.is_none_or(|e| e == mb) => Some(mb),
            Some(mb) => {
                problem(
                    "environment.memory",
                    format!("{text:?} ({mb} MB) conflicts with memory_mb; keep one of them"),
                );
                None
            }
            None => {
                problem(
                    "environment.memory",
                    format!("{text:?} is not a size like \"2G\", \"512M\" or \"1024K\""),
                );
                None
            }
        },
        (None, explicit) => explicit,
    };
    if let Some(workdir) = &raw.environment.workdir
        && !workdir.starts_with('/')
    {
        problem(
            "environment.workdir",
            format!("{workdir:?} is not an absolute path; write it like \"/app\""),
        );
    }
    let network = match (
        raw.environment.network_mode.as_deref(),
        raw.environment.allow_internet,
    ) {
        (Some("public"), _) => true,
        (Some("no-network"), _) => false,
        (Some("allowlist"), _) => {
            loaded.warnings.push(format!(
                "{}: network_mode \"allowlist\" cannot be enforced per host; the trial runs \
                 without network",
                place(key_span(text, "environment.network_mode"))
            ));
            false
        }
        (Some(other), _) => {
            problem(
                "environment.network_mode",
                format!("{other:?} is not \"public\", \"no-network\" or \"allowlist\""),
            );
            false
        }
        (None, allow) => allow.unwrap_or(false),
    };
    for (key, ignored, why) in [
        (
            "agent.user",
            raw.agent.user.is_some(),
            "the agent runs as the image's user",
        ),
        (
            "verifier.user",
            raw.verifier.user.is_some(),
            "test.sh runs as the image's user",
        ),
        (
            "agent.network_mode",
            raw.agent.network_mode.is_some(),
            "the network is the environment's for every phase",
        ),
        (
            "verifier.network_mode",
            raw.verifier.network_mode.is_some(),
            "the network is the environment's for every phase",
        ),
        (
            "verifier.collect",
            raw.verifier.collect.as_ref().is_some_and(|c| !c.is_empty()),
            "collect commands are not run",
        ),
        (
            "artifacts",
            raw.artifacts
                .is_some_and(|a| a.as_array().is_none_or(|a| !a.is_empty())),
            "artifacts are not collected; the workspace is kept in the trial's directory",
        ),
        (
            "environment.storage_mb",
            raw.environment.storage_mb.is_some() || raw.environment.storage.is_some(),
            "a storage limit is not enforced",
        ),
        (
            "environment.gpus",
            raw.environment.gpus.is_some_and(|g| g > 0)
                || raw.environment.gpu_types.is_some()
                || raw.environment.tpu.is_some(),
            "accelerators are not passed to the container",
        ),
        (
            "environment.healthcheck",
            raw.environment.healthcheck.is_some(),
            "the healthcheck is not run",
        ),
        (
            "environment.mcp_servers",
            raw.environment
                .mcp_servers
                .as_ref()
                .is_some_and(|m| !m.is_empty()),
            "give MCP servers in the agent's agent.yaml",
        ),
        (
            "environment.skills_dir",
            raw.environment.skills_dir.is_some(),
            "skills are not uploaded",
        ),
        (
            "environment.allowed_hosts",
            raw.environment.allowed_hosts.is_some(),
            "per-host network rules are not enforced",
        ),
    ] {
        if ignored {
            loaded.warnings.push(format!(
                "{}: {key} is Harbor's but not supported by delta eval and is ignored: {why}",
                place(key_span(text, key))
            ));
        }
    }
    if !problems.is_empty() {
        loaded.problems.extend(problems);
        return None;
    }
    let metadata = raw.metadata.map_or(Value::Null, |m| {
        serde_json::to_value(m).unwrap_or(Value::Null)
    });
    let config = TaskConfig {
        schema_version: raw.schema_version.or(raw.version),
        agent_timeout_sec: raw.agent.timeout_sec,
        verifier_timeout_sec: raw
            .verifier
            .timeout_sec
            .unwrap_or(DEFAULT_VERIFIER_TIMEOUT_SEC),
        build_timeout_sec: raw
            .environment
            .build_timeout_sec
            .unwrap_or(DEFAULT_BUILD_TIMEOUT_SEC),
        docker_image: raw.environment.docker_image,
        workdir: raw.environment.workdir,
        network,
        cpus: raw.environment.cpus,
        memory_mb,
        env: raw.environment.env,
        verifier_env: raw.verifier.env,
        solution_env: raw.solution.env,
        metadata,
        extra,
    };
    Some((config, raw.task.and_then(|t| t.name)))
}

/// The keys of `table` Harbor does not define, as dotted paths with their values.
fn unknown_keys(table: &toml::Table) -> Vec<(String, toml::Value)> {
    let known = |section: &str, key: &str| {
        KNOWN_KEYS
            .iter()
            .find(|(name, _)| *name == section)
            .is_some_and(|(_, keys)| keys.contains(&key))
    };
    let mut unknown = Vec::new();
    for (key, value) in table {
        if !known("", key) {
            unknown.push((key.clone(), value.clone()));
            continue;
        }
        let checked = matches!(
            key.as_str(),
            "task" | "agent" | "verifier" | "environment" | "solution"
        );
        if let (true, Some(section)) = (checked, value.as_table()) {
            for (inner, value) in section {
                if !known(key, inner) {
                    unknown.push((format!("{key}.{inner}"), value.clone()));
                }
            }
        }
    }
    unknown
}

/// Where the dotted `path` (`environment.cpus`, `steps`) is written in `text`: the span
/// of its key, when the document says it plainly.
fn key_span(text: &str, path: &str) -> Option<std::ops::Range<usize>> {
    let document = toml::de::DeTable::parse(text).ok()?;
    let mut table = document.get_ref();
    let mut parts = path.split('.').peekable();
    while let Some(part) = parts.next() {
        let (key, value) = table.get_key_value(part)?;
        if parts.peek().is_none() {
            return Some(key.span());
        }
        table = value.get_ref().as_table()?;
    }
    None
}

/// 1-based line and column of byte `offset` in `text`.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

/// Harbor's deprecated size strings: `"2G"` (×1024), `"512M"`, `"1024K"` (÷1024), case
/// insensitive, in MB.
fn parse_size_mb(text: &str) -> Option<u64> {
    let text = text.trim();
    let split = text.len().checked_sub(1)?;
    let (number, unit) = text.split_at(split);
    let number: f64 = number.trim().parse().ok()?;
    let mb = match unit.to_ascii_uppercase().as_str() {
        "G" => number * 1024.0,
        "M" => number,
        "K" => number / 1024.0,
        _ => return None,
    };
    (mb.is_finite() && mb >= 0.0).then_some(mb as u64)
}

/// `value` with `${NAME}` and `${NAME:-default}` replaced from `lookup`, as Harbor resolves
/// its env tables from the host; `Err(NAME)` for a variable that is not set and has no
/// default.
///
/// # Errors
/// The name of the first variable without a value.
pub fn resolve_env_value(
    value: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<String, String> {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[start..]);
            return Ok(out);
        };
        let inner = &after[..end];
        let (name, default) = match inner.split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (inner, None),
        };
        match (lookup(name), default) {
            (Some(found), _) => out.push_str(&found),
            (None, Some(default)) => out.push_str(default),
            (None, None) => return Err(name.to_owned()),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// The instruction given to the agent: `instruction.md` without its leading canary lines
/// (HTML or `#` comments that mention "canary", and the blank lines after them), as
/// Harbor's `strip_canary` does.
#[must_use]
pub fn strip_canary(text: &str) -> String {
    let mut lines = text.lines().peekable();
    let mut stripped = false;
    while let Some(line) = lines.peek() {
        let trimmed = line.trim();
        let comment = trimmed.starts_with('#') || trimmed.starts_with("<!--");
        if comment && trimmed.to_ascii_lowercase().contains("canary") {
            stripped = true;
            lines.next();
        } else if stripped && trimmed.is_empty() {
            lines.next();
        } else {
            break;
        }
    }
    if !stripped {
        return text.to_owned();
    }
    let mut rest: String = lines.collect::<Vec<_>>().join("\n");
    if text.ends_with('\n') && !rest.is_empty() {
        rest.push('\n');
    }
    rest
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> (Option<TaskConfig>, Loaded) {
        let mut loaded = Loaded::default();
        let config = parse_config(text, Path::new("t/task.toml"), &mut loaded).map(|c| c.0);
        (config, loaded)
    }

    #[test]
    fn harbors_defaults_apply_and_network_is_off_unless_asked() {
        let (config, loaded) = parse("");
        let config = config.expect("an empty task.toml is valid");
        assert_eq!(config.agent_timeout_sec, None);
        assert_eq!(config.verifier_timeout_sec, 600.0);
        assert_eq!(config.build_timeout_sec, 600.0);
        assert!(!config.network);
        assert!(loaded.warnings.is_empty() && loaded.problems.is_empty());
    }

    #[test]
    fn a_tb2_task_toml_reads_unchanged() {
        let text = r#"schema_version = "1.1"
artifacts = []
[task]
name = "terminal-bench/fix-ocaml-gc"
description = "x"
keywords = ["a"]
[[task.authors]]
name = "A"
[metadata]
difficulty = "hard"
tags = ["x"]
[verifier]
timeout_sec = 3600.0
[agent]
timeout_sec = 3600
[environment]
build_timeout_sec = 600.0
docker_image = "alexgshaw/fix-ocaml-gc:20251031"
cpus = 1
memory_mb = 2048
storage_mb = 10240
gpus = 0
allow_internet = true
mcp_servers = []
[verifier.env]
[environment.env]
[solution.env]
"#;
        let (config, loaded) = parse(text);
        let config = config.expect("valid");
        assert_eq!(config.schema_version.as_deref(), Some("1.1"));
        assert_eq!(config.agent_timeout_sec, Some(3600.0));
        assert_eq!(config.cpus, Some(1.0));
        assert_eq!(config.memory_mb, Some(2048));
        assert!(config.network);
        assert_eq!(config.metadata["difficulty"], "hard");
        assert_eq!(
            loaded.warnings,
            vec![
                "t/task.toml:21:1: environment.storage_mb is Harbor's but not supported by \
                 delta eval and is ignored: a storage limit is not enforced"
            ]
        );
    }

    #[test]
    fn unknown_keys_are_kept_and_warned_with_their_line() {
        let text = "bogus_root = 1\n[verifier]\ntimeout_sec = 5\nbogus = \"x\"\n\
                    [environment]\nfrobnicate = true\n";
        let (config, loaded) = parse(text);
        let config = config.expect("unknown keys are never fatal");
        assert_eq!(config.extra["bogus_root"], 1);
        assert_eq!(config.extra["verifier.bogus"], "x");
        assert_eq!(config.extra["environment.frobnicate"], true);
        assert_eq!(config.verifier_timeout_sec, 5.0);
        let lines: Vec<&str> = loaded
            .warnings
            .iter()
            .map(|w| w.split(": ").next().unwrap_or_default())
            .collect();
        assert_eq!(
            lines,
            ["t/task.toml:1:1", "t/task.toml:6:1", "t/task.toml:4:1"]
        );
    }

    #[test]
    fn harbors_legacy_spellings_are_read() {
        let (config, _) =
            parse("version = \"1.0\"\n[environment]\nmemory = \"2G\"\nallow_internet = false\n");
        let config = config.expect("valid");
        assert_eq!(config.schema_version.as_deref(), Some("1.0"));
        assert_eq!(config.memory_mb, Some(2048));
        assert!(!config.network);
        assert_eq!(parse_size_mb("512m"), Some(512));
        assert_eq!(parse_size_mb("1024K"), Some(1));
        assert_eq!(parse_size_mb("2T"), None);
        let (config, _) =
            parse("[environment]\nnetwork_mode = \"public\"\nallow_internet = false\n");
        assert!(
            config.expect("valid").network,
            "network_mode wins over allow_internet"
        );
    }

    #[test]
    fn syntax_and_type_errors_name_line_and_column() {
        let (config, loaded) = parse("[agent]\ntimeout_sec = \n");
        assert!(config.is_none());
        assert!(
            loaded.problems[0].starts_with("t/task.toml:2:15: "),
            "{:?}",
            loaded.problems
        );
        assert!(loaded.problems[0].ends_with("; fix the TOML syntax"));
        let (config, loaded) = parse("[verifier]\ntimeout_sec = \"soon\"\n");
        assert!(config.is_none());
        assert!(
            loaded.problems[0].starts_with("t/task.toml:2:15: "),
            "{:?}",
            loaded.problems
        );
    }

    #[test]
    fn unsupported_shapes_are_problems() {
        let (config, loaded) = parse(
            "[[steps]]\nname = \"a\"\n[environment]\nos = \"windows\"\ncpus = 0\nworkdir = \"app\"\n",
        );
        assert!(config.is_none());
        assert_eq!(loaded.problems.len(), 4, "{:?}", loaded.problems);
    }

    #[test]
    fn env_values_resolve_from_the_host_like_harbors() {
        let lookup = |name: &str| (name == "HOME").then(|| "/root".to_owned());
        assert_eq!(
            resolve_env_value("${HOME}/x", &lookup),
            Ok("/root/x".to_owned())
        );
        assert_eq!(resolve_env_value("${NOPE:-d}", &lookup), Ok("d".to_owned()));
        assert_eq!(resolve_env_value("plain", &lookup), Ok("plain".to_owned()));
        assert_eq!(
            resolve_env_value("a${NOPE}b", &lookup),
            Err("NOPE".to_owned())
        );
    }

    #[test]
    fn canary_lines_are_stripped() {
        let text = "<!-- BENCHMARK DATA SHOULD NEVER APPEAR. canary GUID 1234 -->\n\n\
                    # terminal-bench-canary GUID x\nDo the thing.\n";
        assert_eq!(strip_canary(text), "Do the thing.\n");
        assert_eq!(strip_canary("# Title\nDo it.\n"), "# Title\nDo it.\n");
    }
}
