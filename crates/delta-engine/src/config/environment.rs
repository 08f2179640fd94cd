//! `environment:` of agent.yaml checked: its values in range, its paths absolute (relative
//! to the agent directory, engine variables and `~` expanded), a missing allowed path
//! reported as a warning (allowing nothing more is never less safe).

use std::path::{Path, PathBuf};

use serde_saphyr::Spanned;

use super::error::ConfigError;
use super::raw::EnvironmentYaml;
use super::vars;
use crate::environment::EnvironmentConfig;
use crate::tool::EngineVars;

/// The validated `environment:` (the host when absent) and the warnings about it.
pub(crate) fn from_yaml(
    raw: Option<Spanned<EnvironmentYaml>>,
    file: &Path,
    engine_vars: &EngineVars,
    home: &Path,
) -> Result<(EnvironmentConfig, Vec<String>), ConfigError> {
    let Some(raw) = raw else {
        return Ok((EnvironmentConfig::default(), Vec::new()));
    };
    let raw = raw.value;
    let mut warnings = Vec::new();
    let path_of = |written: &Spanned<String>| expand(&written.value, engine_vars, home);
    let mut allowed = |list: Option<Vec<Spanned<String>>>, key: &str| -> Vec<PathBuf> {
        let mut paths = Vec::new();
        for written in list.unwrap_or_default() {
            let path = path_of(&written);
            if path.exists() {
                paths.push(path);
            } else {
                warnings.push(format!(
                    "{}:{}:{}: `environment.{key}` lists {}, which does not exist; it is \
                     left out",
                    file.display(),
                    written.referenced.line(),
                    written.referenced.column(),
                    path.display()
                ));
            }
        }
        paths
    };
    let allow_read = allowed(raw.allow_read, "allow_read");
    let allow_write = allowed(raw.allow_write, "allow_write");
    let workdir = match raw.workdir {
        Some(workdir) if !Path::new(&workdir.value).is_absolute() => {
            return Err(ConfigError::new(
                file,
                format!(
                    "`environment.workdir` must be an absolute path, found {:?}",
                    workdir.value
                ),
            )
            .at(workdir.referenced)
            .help("give where the workspace appears inside, e.g. `workdir: /app`"));
        }
        workdir => workdir.map(|w| PathBuf::from(w.value)),
    };
    let cpus = match raw.cpus {
        Some(cpus) if !(cpus.value.is_finite() && cpus.value > 0.0) => {
            return Err(ConfigError::new(
                file,
                format!(
                    "`environment.cpus` must be a positive number, found {}",
                    cpus.value
                ),
            )
            .at(cpus.referenced)
            .help("give the CPUs the container may use, e.g. `cpus: 2` or `cpus: 0.5`"));
        }
        cpus => cpus.map(|c| c.value),
    };
    let memory_mb = match raw.memory_mb {
        Some(memory) if memory.value < 6 => {
            return Err(ConfigError::new(
                file,
                format!(
                    "`environment.memory_mb` must be at least 6 (MiB), found {}",
                    memory.value
                ),
            )
            .at(memory.referenced)
            .help("give the container's memory limit in MiB, e.g. `memory_mb: 4096`"));
        }
        memory => memory.map(|m| m.value),
    };
    let image = match raw.image {
        Some(image) if image.value.trim().is_empty() => {
            return Err(ConfigError::new(file, "`environment.image` is empty")
                .at(image.referenced)
                .help("name an image, e.g. `image: localhost/task:1`, or remove the key"));
        }
        image => image.map(|i| i.value),
    };
    if let (Some(_), Some(build)) = (&image, &raw.build) {
        return Err(
            ConfigError::new(file, "`environment` sets both `image` and `build`")
                .at(build.referenced)
                .help("keep one: an image to run, or a directory with a Dockerfile to build"),
        );
    }
    let build = match raw.build {
        None => None,
        Some(written) => {
            let dir = path_of(&written);
            if !dir.join("Dockerfile").is_file() {
                return Err(ConfigError::new(
                    file,
                    format!(
                        "`environment.build` names {}, which holds no Dockerfile",
                        dir.display()
                    ),
                )
                .at(written.referenced)
                .help("give a directory (relative to the agent directory) with a Dockerfile"));
            }
            Some(dir)
        }
    };
    let config = EnvironmentConfig {
        kind: raw.kind.map(|k| k.value).unwrap_or_default(),
        network: raw.network,
        allow_read,
        allow_write,
        best_effort: raw.best_effort.unwrap_or(false),
        image,
        build,
        runtime: raw.runtime.map(|r| r.value).unwrap_or_default(),
        workdir,
        cpus,
        memory_mb,
        keep: raw.keep.unwrap_or(false),
        pass_env: raw
            .pass_env
            .unwrap_or_default()
            .into_iter()
            .map(|name| name.value)
            .collect(),
    };
    Ok((config, warnings))
}

/// `text` as a path: `~` for `$HOME`, engine variables substituted, relative to `home`.
fn expand(text: &str, engine_vars: &EngineVars, home: &Path) -> PathBuf {
    let user_home = std::env::var_os("HOME").map(PathBuf::from);
    match (text.strip_prefix('~'), user_home) {
        (Some(rest), Some(user_home)) if rest.is_empty() || rest.starts_with('/') => {
            user_home.join(rest.trim_start_matches('/'))
        }
        _ => vars::resolve_path(engine_vars, text, home),
    }
}
