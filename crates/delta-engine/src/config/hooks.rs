//! Lifecycle hooks: `hooks.yaml` (or the deprecated `hooks:`/`lifecycle_hooks:` of
//! agent.yaml) validated into commands keyed by canonical hook name.

use std::collections::BTreeMap;
use std::path::Path;

use super::error::{ConfigError, sanitize};
use super::names::{DEFAULT_TIMEOUT_MS, HookName};
use super::raw::{HookMap, HooksYaml};
use super::vars::engine_vars;
use super::{suggest, yaml};
use crate::tool::EngineVars;

/// A configured hook command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookSpec {
    /// Program and arguments, engine variables expanded. Never empty.
    pub command: Vec<String>,
    /// Kill the hook's process group after this long.
    pub timeout_ms: u64,
}

/// The hooks an agent configures.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Hooks {
    specs: BTreeMap<HookName, HookSpec>,
}

impl Hooks {
    /// The hook configured for `name`, if any.
    pub fn get(&self, name: HookName) -> Option<&HookSpec> {
        self.specs.get(&name)
    }

    /// Configured hooks in lifecycle order.
    pub fn iter(&self) -> impl Iterator<Item = (HookName, &HookSpec)> {
        self.specs.iter().map(|(name, spec)| (*name, spec))
    }

    /// Whether no hook is configured.
    pub fn is_empty(&self) -> bool {
        self.specs.is_empty()
    }
}

/// Parse and validate the text of a hooks.yaml.
pub fn parse_hooks_yaml(
    text: &str,
    file: &Path,
    agent_home: &Path,
    cwd: &Path,
) -> Result<Hooks, ConfigError> {
    let map: HooksYaml = yaml::parse(text, file)?;
    from_map(map, file, &engine_vars(agent_home, cwd))
}

/// Validate a hook map read from `file`.
pub(crate) fn from_map(map: HookMap, file: &Path, vars: &EngineVars) -> Result<Hooks, ConfigError> {
    if let Some(key) = map.unknown.first() {
        return Err(unknown_hook(&key.value, file).at(key.referenced));
    }
    let mut specs = BTreeMap::new();
    let mut seen: BTreeMap<HookName, String> = BTreeMap::new();
    for (key, hook) in map.entries {
        let name = HookName::from_name(&key.value)
            .ok_or_else(|| unknown_hook(&key.value, file).at(key.referenced))?;
        if let Some(previous) = seen.insert(name, key.value.clone()) {
            return Err(ConfigError::new(
                file,
                format!(
                    "hook `{}` is configured twice (as `{previous}` and `{}`)",
                    name.as_str(),
                    key.value
                ),
            )
            .at(key.referenced)
            .help("keep one of the two entries"));
        }
        let hook = hook.value;
        let command = &hook.command;
        if command.value.first().is_none_or(String::is_empty) {
            return Err(ConfigError::new(
                file,
                format!("hook `{}` has an empty command", key.value),
            )
            .at(command.referenced)
            .help("give the program and its arguments, e.g. command: [\"./hooks/log.sh\"]"));
        }
        let timeout_ms = match hook.timeout_ms {
            None => DEFAULT_TIMEOUT_MS,
            Some(timeout) if timeout.value == 0 => {
                return Err(ConfigError::new(
                    file,
                    format!("hook `{}` has `timeout_ms: 0`", key.value),
                )
                .at(timeout.referenced)
                .help("give a positive number of milliseconds, or omit it for 30000"));
            }
            Some(timeout) => timeout.value,
        };
        let command = command
            .value
            .iter()
            .map(|arg| vars.substitute(arg))
            .collect();
        specs.insert(
            name,
            HookSpec {
                command,
                timeout_ms,
            },
        );
    }
    Ok(Hooks { specs })
}

fn unknown_hook(name: &str, file: &Path) -> ConfigError {
    let valid = HookName::ALL.map(HookName::as_str);
    let aliases = HookName::ALL.into_iter().filter_map(HookName::alias);
    let message = match suggest::closest(name, valid.into_iter().chain(aliases)) {
        Some(best) => format!("unknown hook `{}`; did you mean `{best}`?", sanitize(name)),
        None => format!("unknown hook `{}`", sanitize(name)),
    };
    ConfigError::new(file, message).help(format!("valid hooks: {}", valid.join(", ")))
}
