//! `context.yaml`: the recipe for the model's context window (seed 000 §2.4.3), required
//! since v1.9.1 and re-read by the engine before every LLM call.

use std::path::{Path, PathBuf};

use serde_saphyr::Spanned;

use super::error::{ConfigError, sanitize};
use super::names::{DEFAULT_TIMEOUT_MS, OnMissing};
use super::raw::{ContextYaml, GeneratorYaml, SourceYaml};
use super::vars::{engine_vars, resolve_path};
use super::{suggest, yaml};
use crate::tool::EngineVars;

/// The validated context recipe: sources in priority order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextManifest {
    /// Sources in the order they are placed in the context.
    pub sources: Vec<ContextSource>,
    /// `total_max_tokens`: the token budget of every request, when set.
    pub total_max_tokens: Option<u64>,
    /// Each source's `max_tokens`, by the source's position in `sources` (kept beside the
    /// sources rather than in them, so the source variants stay as the seed describes).
    pub source_max_tokens: Vec<Option<u64>>,
}

impl ContextManifest {
    /// The `max_tokens` of the source at `index`, when it has one.
    #[must_use]
    pub fn max_tokens(&self, index: usize) -> Option<u64> {
        self.source_max_tokens.get(index).copied().flatten()
    }
}

/// One context source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ContextSource {
    /// A static file, included as a system message.
    File {
        /// Name for debug output and block headers.
        id: Option<String>,
        /// Absolute path (engine variables expanded).
        path: PathBuf,
        /// What to do when the file does not exist.
        on_missing: OnMissing,
    },
    /// A file written by `generator` before every LLM call, then included.
    ComputedFile {
        /// Name for debug output and block headers.
        id: Option<String>,
        /// The command that writes `output_path`.
        generator: Generator,
        /// Absolute path of the generated file (engine variables expanded).
        output_path: PathBuf,
        /// What to do when the generated file does not exist.
        on_missing: OnMissing,
    },
    /// The run's conversation, rebuilt from its journal.
    Journal {
        /// Name for debug output.
        id: Option<String>,
        /// Only the most recent N iterations; `None` means all.
        max_iterations: Option<u32>,
    },
}

/// The command of a `computed_file` source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Generator {
    /// Program and arguments, engine variables expanded. Never empty.
    pub command: Vec<String>,
    /// Kill the generator's process group after this long.
    pub timeout_ms: u64,
}

/// The `type` of a source, once recognised.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    File,
    ComputedFile,
    Journal,
}

impl Kind {
    const ALL: [Kind; 3] = [Kind::File, Kind::ComputedFile, Kind::Journal];

    fn name(self) -> &'static str {
        match self {
            Kind::File => "file",
            Kind::ComputedFile => "computed_file",
            Kind::Journal => "journal",
        }
    }

    /// The keys a source of this type takes.
    fn keys(self) -> &'static [&'static str] {
        match self {
            Kind::File => &["type", "id", "path", "on_missing", "max_tokens"],
            Kind::ComputedFile => &[
                "type",
                "id",
                "generator",
                "output_path",
                "on_missing",
                "max_tokens",
            ],
            Kind::Journal => &["type", "id", "max_iterations", "max_tokens"],
        }
    }
}

/// Read `${agent_home}/context.yaml`.
pub fn load_context(agent_home: &Path, cwd: &Path) -> Result<ContextManifest, ConfigError> {
    let (file, text) = read_context_file(agent_home)?;
    parse_context_yaml(&text, &file, agent_home, cwd)
}

fn read_context_file(agent_home: &Path) -> Result<(PathBuf, String), ConfigError> {
    let file = agent_home.join("context.yaml");
    if !yaml::exists(&file) {
        return Err(ConfigError::new(&file, missing_message(agent_home)));
    }
    let text = yaml::read(&file)?;
    Ok((file, text))
}

/// context.yaml as the loop last read it: the file is read again before every call, and
/// parsed again only when its text (or where it is read for) changed, since parsing is a
/// pure function of those. YAML is parsed by code compiled without optimization
/// (delta-config, the root Cargo.toml): parsed before every call, it cost 100 µs of the
/// loop's 1.2 ms per iteration (bench/README.md).
#[derive(Debug, Default)]
pub struct ContextCache {
    last: Option<CachedContext>,
}

#[derive(Debug)]
struct CachedContext {
    text: String,
    agent_home: PathBuf,
    cwd: PathBuf,
    manifest: ContextManifest,
}

impl ContextCache {
    /// [`load_context`], reusing the last manifest when nothing it depends on changed.
    ///
    /// # Errors
    /// As [`load_context`]; a failure forgets nothing, so the next call parses again.
    pub fn load(&mut self, agent_home: &Path, cwd: &Path) -> Result<ContextManifest, ConfigError> {
        let (file, text) = read_context_file(agent_home)?;
        if let Some(last) = &self.last
            && last.text == text
            && last.agent_home == agent_home
            && last.cwd == cwd
        {
            return Ok(last.manifest.clone());
        }
        let manifest = parse_context_yaml(&text, &file, agent_home, cwd)?;
        self.last = Some(CachedContext {
            text,
            agent_home: agent_home.to_path_buf(),
            cwd: cwd.to_path_buf(),
            manifest: manifest.clone(),
        });
        Ok(manifest)
    }
}

/// Parse and validate the text of a context.yaml. Relative paths are taken from
/// `agent_home`, where context.yaml lives.
pub fn parse_context_yaml(
    text: &str,
    file: &Path,
    agent_home: &Path,
    cwd: &Path,
) -> Result<ContextManifest, ConfigError> {
    if yaml::is_blank(text) {
        return Err(ConfigError::new(file, "context.yaml is empty")
            .help("list the context sources under `sources:`, e.g. `sources: [{type: journal}]`"));
    }
    let keys: yaml::TopLevelKeys = yaml::parse(text, file)?;
    super::keys::check_top_level::<ContextYaml, _>(&keys.0, file)?;
    let raw: ContextYaml = yaml::parse(text, file)?;
    let vars = engine_vars(agent_home, cwd);
    let total_max_tokens = positive_tokens(raw.total_max_tokens, "total_max_tokens", file)?;
    let mut sources = Vec::with_capacity(raw.sources.len());
    let mut source_max_tokens = Vec::with_capacity(raw.sources.len());
    for source in raw.sources {
        source_max_tokens.push(positive_tokens(
            source.value.max_tokens.clone(),
            "max_tokens",
            file,
        )?);
        sources.push(validate_source(source, file, &vars, agent_home)?);
    }
    Ok(ContextManifest {
        sources,
        total_max_tokens,
        source_max_tokens,
    })
}

/// A token count that must be positive when given.
fn positive_tokens(
    value: Option<Spanned<u64>>,
    key: &str,
    file: &Path,
) -> Result<Option<u64>, ConfigError> {
    match value {
        Some(tokens) if tokens.value == 0 => Err(ConfigError::new(
            file,
            format!("`{key}` must be at least 1"),
        )
        .at(tokens.referenced)
        .help(format!(
            "give a positive number of tokens, or omit `{key}` for no limit"
        ))),
        value => Ok(value.map(|tokens| tokens.value)),
    }
}

fn validate_source(
    source: Spanned<SourceYaml>,
    file: &Path,
    vars: &EngineVars,
    agent_home: &Path,
) -> Result<ContextSource, ConfigError> {
    let at = source.referenced;
    let source = source.value;
    let Some(kind) = Kind::ALL
        .into_iter()
        .find(|kind| kind.name() == source.kind.value)
    else {
        let names = Kind::ALL.map(Kind::name);
        let given = sanitize(&source.kind.value);
        let message = match suggest::closest(&given, names) {
            Some(best) => format!("unknown context source type `{given}`; did you mean `{best}`?"),
            None => format!("unknown context source type `{given}`"),
        };
        return Err(ConfigError::new(file, message)
            .at(source.kind.referenced)
            .help(format!("valid types: {}", names.join(", "))));
    };
    let allowed = kind.keys();
    let name = kind.name();
    // Keys that belong to another source type: a shape error, reported at the key's value.
    let present = [
        ("path", source.path.as_ref().map(|p| p.referenced)),
        (
            "on_missing",
            source.on_missing.as_ref().map(|o| o.referenced),
        ),
        ("generator", source.generator.as_ref().map(|g| g.referenced)),
        (
            "output_path",
            source.output_path.as_ref().map(|o| o.referenced),
        ),
        (
            "max_iterations",
            source.max_iterations.as_ref().map(|m| m.referenced),
        ),
    ];
    for (key, location) in present {
        if let Some(location) = location
            && !allowed.contains(&key)
        {
            return Err(ConfigError::new(
                file,
                format!("`{key}` does not apply to a `{name}` source"),
            )
            .at(location)
            .help(format!("a `{name}` source takes: {}", allowed.join(", "))));
        }
    }
    let missing = |key: &str| {
        ConfigError::new(file, format!("`{name}` source is missing `{key}`"))
            .at(at)
            .help(format!("a `{name}` source takes: {}", allowed.join(", ")))
    };
    let on_missing = source.on_missing.map(|o| o.value).unwrap_or_default();
    Ok(match kind {
        Kind::File => ContextSource::File {
            id: source.id,
            path: resolve_path(
                vars,
                &source.path.ok_or_else(|| missing("path"))?.value,
                agent_home,
            ),
            on_missing,
        },
        Kind::ComputedFile => ContextSource::ComputedFile {
            id: source.id,
            generator: generator(
                source.generator.ok_or_else(|| missing("generator"))?,
                file,
                vars,
            )?,
            output_path: resolve_path(
                vars,
                &source
                    .output_path
                    .ok_or_else(|| missing("output_path"))?
                    .value,
                agent_home,
            ),
            on_missing,
        },
        Kind::Journal => ContextSource::Journal {
            id: source.id,
            max_iterations: match source.max_iterations {
                Some(max) if max.value == 0 => {
                    return Err(
                        ConfigError::new(file, "`max_iterations` must be at least 1")
                            .at(max.referenced)
                            .help("omit `max_iterations` to include the whole conversation"),
                    );
                }
                max => max.map(|m| m.value),
            },
        },
    })
}

fn generator(
    generator: Spanned<GeneratorYaml>,
    file: &Path,
    vars: &EngineVars,
) -> Result<Generator, ConfigError> {
    let GeneratorYaml {
        command,
        timeout_ms,
    } = generator.value;
    if command.value.first().is_none_or(String::is_empty) {
        return Err(ConfigError::new(file, "generator `command` is empty")
            .at(command.referenced)
            .help("give the program and its arguments, e.g. command: [\"python3\", \"${AGENT_HOME}/tools/summarize.py\"]"));
    }
    let timeout_ms = match timeout_ms {
        None => DEFAULT_TIMEOUT_MS,
        Some(timeout) if timeout.value == 0 => {
            return Err(ConfigError::new(file, "generator has `timeout_ms: 0`")
                .at(timeout.referenced)
                .help("give a positive number of milliseconds, or omit it for 30000"));
        }
        Some(timeout) => timeout.value,
    };
    Ok(Generator {
        command: command
            .value
            .iter()
            .map(|arg| vars.substitute(arg))
            .collect(),
        timeout_ms,
    })
}

/// Seed 000 §2.7.7's message for a missing context.yaml, word for word but its last line:
/// the seed cites `docs/architecture/v1.9-unified-agent-structure.md`, a page no user has,
/// so it cites this repository's README instead (issue 12 item 15).
fn missing_message(agent_home: &Path) -> String {
    format!(
        "context.yaml not found in {}

Delta Engine requires an explicit context.yaml file to define how
the agent's attention window is constructed.

Quick fix - Create context.yaml with default content:

sources:
  - type: file
    id: system_prompt
    path: '${{AGENT_HOME}}/system_prompt.md'
  - type: file
    id: workspace_guide
    path: '${{CWD}}/DELTA.md'
    on_missing: skip
  - type: journal
    id: conversation_history

For more information, see:
README.md#an-agent-directory (the Delta Engine README), or `delta init --help`",
        agent_home.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guide_path(manifest: &ContextManifest) -> Option<&Path> {
        manifest.sources.iter().find_map(|source| match source {
            ContextSource::File { path, .. } => Some(path.as_path()),
            ContextSource::ComputedFile { .. } | ContextSource::Journal { .. } => None,
        })
    }

    #[test]
    fn the_cache_parses_again_whenever_the_text_or_the_workspace_changes() {
        let dir = tempfile::tempdir().unwrap();
        let (home, first, second) = (dir.path(), dir.path().join("w1"), dir.path().join("w2"));
        let file = home.join("context.yaml");
        let mut cache = ContextCache::default();

        std::fs::write(&file, "sources:\n  - type: file\n    path: '${CWD}/A.md'\n").unwrap();
        let manifest = cache.load(home, &first).unwrap();
        assert_eq!(guide_path(&manifest), Some(first.join("A.md").as_path()));
        assert_eq!(cache.load(home, &first).unwrap(), manifest);
        let moved = cache.load(home, &second).unwrap();
        assert_eq!(guide_path(&moved), Some(second.join("A.md").as_path()));

        std::fs::write(&file, "sources:\n  - type: file\n    path: '${CWD}/B.md'\n").unwrap();
        let edited = cache.load(home, &second).unwrap();
        assert_eq!(guide_path(&edited), Some(second.join("B.md").as_path()));

        std::fs::write(&file, "sources:\n  - type: nonsense\n").unwrap();
        let err = cache.load(home, &second).unwrap_err();
        assert!(err.message.contains("unknown context source type"), "{err}");

        std::fs::remove_file(&file).unwrap();
        assert!(cache.load(home, &second).is_err());
    }
}
