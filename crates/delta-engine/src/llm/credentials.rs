//! API credentials: which key and base URL to use, read from `.env` layers and the
//! process environment without ever changing the process environment.

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};

use delta_scenario::ModelApi;
use reqwest::Url;

/// The base URL used when neither `DELTA_BASE_URL` nor `OPENAI_BASE_URL` is set.
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

/// The base URL of `llm.api: anthropic` when neither `ANTHROPIC_BASE_URL` nor
/// `DELTA_BASE_URL` is set: the host without `/v1`, as Anthropic's SDKs take it.
pub const ANTHROPIC_BASE_URL: &str = "https://api.anthropic.com";

/// Variables naming the API key, most preferred first.
pub const API_KEY_VARIABLES: [&str; 2] = ["DELTA_API_KEY", "OPENAI_API_KEY"];

/// Variables naming the base URL, most preferred first.
pub const BASE_URL_VARIABLES: [&str; 2] = ["DELTA_BASE_URL", "OPENAI_BASE_URL"];

/// Variables naming the key of `llm.api: anthropic`, most preferred first: Anthropic's
/// SDKs read `ANTHROPIC_API_KEY`.
pub const ANTHROPIC_KEY_VARIABLES: [&str; 2] = ["ANTHROPIC_API_KEY", "DELTA_API_KEY"];

/// Variables naming the base URL of `llm.api: anthropic`, most preferred first.
pub const ANTHROPIC_BASE_URL_VARIABLES: [&str; 2] = ["ANTHROPIC_BASE_URL", "DELTA_BASE_URL"];

/// Every variable that may hold a model API key: what a run's redactor keeps out of its
/// files even when the run uses another one (tools inherit them all).
pub const KEY_VARIABLES: [&str; 3] = ["DELTA_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY"];

/// The hosts that require a key; any other server (Ollama, vLLM, llama.cpp, mock-llm)
/// may be used without one.
const OPENAI_HOST: &str = "api.openai.com";
const ANTHROPIC_HOST: &str = "api.anthropic.com";

/// Where a credential value was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// `{workspace}/.env`.
    WorkspaceEnvFile(PathBuf),
    /// `{agent_home}/.env`.
    AgentEnvFile(PathBuf),
    /// `.env` in the nearest ancestor of the agent directory that holds `.git`.
    ProjectEnvFile(PathBuf),
    /// The environment of the `delta` process.
    ProcessEnv,
}

impl Source {
    /// The `.env` file, for the three file sources.
    pub fn env_file(&self) -> Option<&Path> {
        match self {
            Source::WorkspaceEnvFile(path)
            | Source::AgentEnvFile(path)
            | Source::ProjectEnvFile(path) => Some(path),
            Source::ProcessEnv => None,
        }
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::WorkspaceEnvFile(path)
            | Source::AgentEnvFile(path)
            | Source::ProjectEnvFile(path) => write!(f, "{}", path.display()),
            Source::ProcessEnv => f.write_str("the process environment"),
        }
    }
}

/// The variable a credential came from and where that variable was set, so the engine can
/// log "API key: OPENAI_API_KEY from /work/.env" without logging the key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Origin {
    pub variable: &'static str,
    pub source: Source,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} from {}", self.variable, self.source)
    }
}

/// An API key. Its `Debug` is redacted and it has no `Display` or `Serialize`, so it cannot
/// reach a log, a journal or an error message by accident.
#[derive(Clone)]
struct ApiKey(String);

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("\"[redacted]\"")
    }
}

/// The base URL and optional API key for one model API.
///
/// `Debug` shows the base URL and where each value came from, never the key.
#[derive(Clone, Debug)]
pub struct Credentials {
    api: ModelApi,
    base_url: String,
    api_key: Option<ApiKey>,
    base_url_origin: Option<Origin>,
    api_key_origin: Option<Origin>,
}

impl Credentials {
    /// Chat-completions credentials given explicitly (no origins). The base URL must be an
    /// absolute `http` or `https` URL; a trailing `/` is dropped. An empty key means no key.
    pub fn new(base_url: &str, api_key: Option<String>) -> Result<Self, CredentialsError> {
        Self::for_api(ModelApi::Chat, base_url, api_key)
    }

    /// [`Credentials::new`] for `api` (Anthropic's base URL stops before `/v1`).
    pub fn for_api(
        api: ModelApi,
        base_url: &str,
        api_key: Option<String>,
    ) -> Result<Self, CredentialsError> {
        let base_url = normalize_base_url(base_url, None)?;
        let api_key = match api_key.map(|key| key.trim().to_owned()) {
            Some(key) if !key.is_empty() => Some(validate_key(key, None)?),
            Some(_) | None => None,
        };
        Ok(Credentials {
            api,
            base_url,
            api_key,
            base_url_origin: None,
            api_key_origin: None,
        })
    }

    /// The API these credentials are for.
    pub fn api(&self) -> ModelApi {
        self.api
    }

    /// The base URL without a trailing `/`, e.g. `https://api.openai.com/v1`.
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// Whether requests will carry an `Authorization` header.
    pub fn has_api_key(&self) -> bool {
        self.api_key.is_some()
    }

    /// Where the base URL was set; `None` when it is [`DEFAULT_BASE_URL`] or was given
    /// to [`Credentials::new`].
    pub fn base_url_origin(&self) -> Option<&Origin> {
        self.base_url_origin.as_ref()
    }

    /// Where the API key was set; `None` when there is no key or it was given to
    /// [`Credentials::new`].
    pub fn api_key_origin(&self) -> Option<&Origin> {
        self.api_key_origin.as_ref()
    }

    /// The key itself, for the HTTP client and for redacting it from error text only.
    pub(crate) fn api_key(&self) -> Option<&str> {
        self.api_key.as_ref().map(|key| key.0.as_str())
    }
}

/// Why credentials could not be resolved.
///
/// `Display` follows the project's configuration-error layout after the `error: ` prefix:
/// the problem, then `  --> file:line:column` when a location is known, then
/// `  = help: …`. No variant ever contains the API key or a line of a `.env` file.
#[derive(Debug, thiserror::Error)]
pub enum CredentialsError {
    #[error(
        "no API key is set for {base_url}\n  = help: set {first} (or {second}) in the \
         environment, or add the line `{first}=<your key>` to one of these .env files \
         (earlier ones win over later ones and over the environment): {files}; {local}",
        first = key_variables(*api)[0],
        second = key_variables(*api)[1],
        files = list_paths(env_files),
        local = local_hint(*api)
    )]
    MissingKey {
        /// The API the key is for.
        api: ModelApi,
        base_url: String,
        /// The `.env` files searched, highest priority first.
        env_files: Vec<PathBuf>,
    },

    #[error("cannot read {}: {detail}\n  = help: make the file readable, or remove it", path.display())]
    UnreadableEnvFile { path: PathBuf, detail: String },

    #[error(
        "invalid line in {}\n  --> {}:{line}:{column}\n  = help: write one `NAME=value` per \
         line; quote values containing spaces or `#`, and close every quote",
        path.display(),
        path.display()
    )]
    EnvFileSyntax {
        path: PathBuf,
        line: usize,
        column: usize,
    },

    #[error(
        "invalid base URL `{value}`{from}: {reason}\n  = help: set DELTA_BASE_URL to an \
         absolute http(s) URL ending before /chat/completions, e.g. https://api.openai.com/v1 \
         or http://localhost:11434/v1",
        from = describe_origin(origin.as_ref())
    )]
    InvalidBaseUrl {
        value: String,
        origin: Option<Origin>,
        reason: String,
    },

    #[error(
        "the API key{from} contains characters that cannot be sent in an HTTP header \
         (spaces, control characters or non-ASCII)\n  = help: copy the key again, without \
         surrounding text or line breaks",
        from = describe_origin(origin.as_ref())
    )]
    InvalidKey { origin: Option<Origin> },
}

/// The variables naming `api`'s key, most preferred first.
fn key_variables(api: ModelApi) -> [&'static str; 2] {
    match api {
        ModelApi::Chat | ModelApi::Responses => API_KEY_VARIABLES,
        ModelApi::Anthropic => ANTHROPIC_KEY_VARIABLES,
    }
}

/// The variables naming `api`'s base URL, most preferred first.
fn base_url_variables(api: ModelApi) -> [&'static str; 2] {
    match api {
        ModelApi::Chat | ModelApi::Responses => BASE_URL_VARIABLES,
        ModelApi::Anthropic => ANTHROPIC_BASE_URL_VARIABLES,
    }
}

fn local_hint(api: ModelApi) -> &'static str {
    match api {
        ModelApi::Chat | ModelApi::Responses => {
            "a local OpenAI-compatible server needs no key: point DELTA_BASE_URL at it \
             instead, e.g. DELTA_BASE_URL=http://localhost:11434/v1"
        }
        ModelApi::Anthropic => {
            "a gateway that speaks Anthropic's API may need none: point ANTHROPIC_BASE_URL \
             at it instead (the host, without /v1)"
        }
    }
}

fn list_paths(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|path| path.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

fn describe_origin(origin: Option<&Origin>) -> String {
    origin.map_or_else(String::new, |origin| format!(" ({origin})"))
}

/// Resolves the API key and base URL of the chat-completions API: [`resolve_credentials_for`]
/// with [`ModelApi::Chat`].
pub fn resolve_credentials(
    workspace: &Path,
    agent_home: &Path,
    process_env: impl Fn(&str) -> Option<String>,
) -> Result<Credentials, CredentialsError> {
    resolve_credentials_for(ModelApi::Chat, workspace, agent_home, process_env)
}

/// Resolves the API key and base URL of `api`.
///
/// Each variable is looked up through four layers, first hit wins (seed 000 §2.6.7):
/// `{workspace}/.env`, `{agent_home}/.env`, the project root's `.env` (the nearest ancestor
/// of `agent_home`, itself included, that holds a `.git` entry), then `process_env`. The key
/// is `DELTA_API_KEY` if any layer sets it, else `OPENAI_API_KEY`; the base URL likewise
/// `DELTA_BASE_URL`, else `OPENAI_BASE_URL`, else [`DEFAULT_BASE_URL`]. Empty values count
/// as unset. The `.env` files are parsed with dotenvy's iterator, so the process
/// environment is never modified.
///
/// `llm.api: anthropic` reads its key from `ANTHROPIC_API_KEY`, else `DELTA_API_KEY`, and its
/// base URL from `ANTHROPIC_BASE_URL` (the host, as Anthropic's SDKs take it), else
/// `DELTA_BASE_URL` with a trailing `/v1` removed (so one `DELTA_BASE_URL` serves every API
/// of a gateway or mock-llm), else [`ANTHROPIC_BASE_URL`]; `OPENAI_*` are not read for it.
///
/// A key is required only when the base URL's host is `api.openai.com` (or, for Anthropic,
/// `api.anthropic.com`). Both directories are expected to be absolute, as the engine's
/// `${CWD}` and `${AGENT_HOME}` are.
pub fn resolve_credentials_for(
    api: ModelApi,
    workspace: &Path,
    agent_home: &Path,
    process_env: impl Fn(&str) -> Option<String>,
) -> Result<Credentials, CredentialsError> {
    let env_files = env_file_layers(workspace, agent_home);
    let mut layers = Vec::with_capacity(env_files.len());
    for source in &env_files {
        let Some(path) = source.env_file() else {
            continue;
        };
        if let Some(vars) = read_env_file(path)? {
            layers.push((source.clone(), vars));
        }
    }

    let lookup = |variable: &'static str| -> Option<(String, Origin)> {
        let from_files = layers.iter().find_map(|(source, vars)| {
            vars.get(variable)
                .map(|value| value.trim())
                .filter(|value| !value.is_empty())
                .map(|value| (value.to_owned(), source.clone()))
        });
        let (value, source) = from_files.or_else(|| {
            process_env(variable)
                .map(|value| value.trim().to_owned())
                .filter(|value| !value.is_empty())
                .map(|value| (value, Source::ProcessEnv))
        })?;
        Some((value, Origin { variable, source }))
    };
    let first = |variables: [&'static str; 2]| variables.into_iter().find_map(&lookup);

    let (base_url, base_url_origin) = match first(base_url_variables(api)) {
        Some((value, origin)) => {
            let mut base_url = normalize_base_url(&value, Some(&origin))?;
            // DELTA_BASE_URL stops at /v1 for the OpenAI APIs; Anthropic's paths begin
            // there.
            if api == ModelApi::Anthropic
                && origin.variable == "DELTA_BASE_URL"
                && let Some(host) = base_url.strip_suffix("/v1")
            {
                base_url = host.to_owned();
            }
            (base_url, Some(origin))
        }
        None => match api {
            ModelApi::Chat | ModelApi::Responses => (DEFAULT_BASE_URL.to_owned(), None),
            ModelApi::Anthropic => (ANTHROPIC_BASE_URL.to_owned(), None),
        },
    };

    let (api_key, api_key_origin) = match first(key_variables(api)) {
        Some((value, origin)) => (Some(validate_key(value, Some(&origin))?), Some(origin)),
        None => (None, None),
    };

    let needs_key = match api {
        ModelApi::Chat | ModelApi::Responses => is_host(&base_url, OPENAI_HOST),
        ModelApi::Anthropic => is_host(&base_url, ANTHROPIC_HOST),
    };
    if api_key.is_none() && needs_key {
        return Err(CredentialsError::MissingKey {
            api,
            base_url: crate::secrets::url_without_userinfo(&base_url),
            env_files: env_files
                .iter()
                .filter_map(Source::env_file)
                .map(Path::to_path_buf)
                .collect(),
        });
    }

    Ok(Credentials {
        api,
        base_url,
        api_key,
        base_url_origin,
        api_key_origin,
    })
}

/// The `.env` files the credentials are looked up in, highest priority first.
fn env_file_layers(workspace: &Path, agent_home: &Path) -> Vec<Source> {
    let mut env_files = vec![Source::WorkspaceEnvFile(workspace.join(".env"))];
    let mut add = |source: Source| {
        // The workspace may be the agent directory, and the agent directory the project
        // root: one file is one layer, named by its highest-priority role.
        if !env_files
            .iter()
            .any(|known| known.env_file() == source.env_file())
        {
            env_files.push(source);
        }
    };
    add(Source::AgentEnvFile(agent_home.join(".env")));
    if let Some(root) = project_root(agent_home) {
        add(Source::ProjectEnvFile(root.join(".env")));
    }
    env_files
}

/// The paths of the `.env` files [`resolve_credentials`] reads (existing or not), highest
/// priority first: the files a confined tool must not read.
#[must_use]
pub fn env_files(workspace: &Path, agent_home: &Path) -> Vec<PathBuf> {
    env_file_layers(workspace, agent_home)
        .iter()
        .filter_map(Source::env_file)
        .map(Path::to_path_buf)
        .collect()
}

/// The nearest directory at or above `start` holding `.git` (a directory in a normal clone,
/// a file in a worktree or submodule: both mark a project root).
fn project_root(start: &Path) -> Option<&Path> {
    start.ancestors().find(|dir| dir.join(".git").exists())
}

/// Reads one `.env` file; `Ok(None)` when it does not exist. When a name repeats, the last
/// assignment wins, as when a shell sources the file.
fn read_env_file(path: &Path) -> Result<Option<HashMap<String, String>>, CredentialsError> {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(error) => {
            return Err(CredentialsError::UnreadableEnvFile {
                path: path.to_owned(),
                detail: error.to_string(),
            });
        }
    };
    // dotenvy strips a UTF-8 byte-order mark only in its `load*` functions, which would
    // also write to the process environment; its iterator does not, so strip it here.
    let content = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&bytes);

    let mut vars = HashMap::new();
    for item in dotenvy::from_read_iter(content) {
        let (name, value) = item.map_err(|error| {
            // Only the position is reported: the offending text may hold a key.
            if let dotenvy::Error::LineParse(line, index) = &error {
                let (line, column) = locate(content, line, *index);
                CredentialsError::EnvFileSyntax {
                    path: path.to_owned(),
                    line,
                    column,
                }
            } else {
                CredentialsError::UnreadableEnvFile {
                    path: path.to_owned(),
                    detail: error.to_string(),
                }
            }
        })?;
        vars.insert(name, value);
    }
    Ok(Some(vars))
}

/// Turns dotenvy's (logical line text, byte index) into a 1-based line and column: dotenvy
/// reports the offending text, not its position in the file. A logical line may span
/// several physical lines (an unclosed quote), so the index is walked across them.
fn locate(content: &[u8], logical_line: &str, index: usize) -> (usize, usize) {
    let text = String::from_utf8_lossy(content);
    let first = logical_line.lines().next().unwrap_or_default();
    let start_line = text.lines().position(|line| line == first).unwrap_or(0);

    // An unclosed quote makes dotenvy read to the end of the file and report that end;
    // the line where the value began is the useful place to point at.
    if index >= logical_line.len() {
        return (start_line + 1, 1);
    }
    let mut remaining = index;
    let mut line = start_line;
    for physical in logical_line.split_inclusive('\n') {
        if remaining < physical.len() || !physical.ends_with('\n') {
            break;
        }
        remaining -= physical.len();
        line += 1;
    }
    let column = logical_line
        .get(index - remaining..index)
        .map_or(remaining, |prefix| prefix.chars().count())
        + 1;
    (line + 1, column)
}

fn normalize_base_url(value: &str, origin: Option<&Origin>) -> Result<String, CredentialsError> {
    let invalid = |reason: &str| CredentialsError::InvalidBaseUrl {
        value: crate::secrets::url_without_userinfo(value),
        origin: origin.cloned(),
        reason: reason.to_owned(),
    };
    let trimmed = value.trim().trim_end_matches('/');
    let url = Url::parse(trimmed).map_err(|error| invalid(&error.to_string()))?;
    match url.scheme() {
        "http" | "https" => {}
        _ => return Err(invalid("the scheme must be http or https")),
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(invalid("the URL has no host"));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(invalid("the URL must not have a query or fragment"));
    }
    Ok(trimmed.to_owned())
}

fn validate_key(key: String, origin: Option<&Origin>) -> Result<ApiKey, CredentialsError> {
    if key.bytes().all(|byte| byte.is_ascii_graphic()) {
        Ok(ApiKey(key))
    } else {
        Err(CredentialsError::InvalidKey {
            origin: origin.cloned(),
        })
    }
}

/// Whether `base_url`'s host is `host`.
fn is_host(base_url: &str, host: &str) -> bool {
    Url::parse(base_url)
        .ok()
        .and_then(|url| url.host_str().map(|known| known.eq_ignore_ascii_case(host)))
        .unwrap_or(false)
}

/// Whether requests to `endpoint` go to OpenAI itself (it takes a `prompt_cache_key` on
/// chat completions; other compatible servers may refuse one).
#[must_use]
pub fn is_openai_endpoint(endpoint: &str) -> bool {
    is_host(endpoint, OPENAI_HOST)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locate_points_at_the_physical_line_and_column() {
        let content = b"A=1\nB=\"open\nstill open\n";
        // dotenvy reports the whole logical line from `B=` on and an index at its end.
        let logical = "B=\"open\nstill open\n";
        assert_eq!(locate(content, logical, logical.len()), (2, 1));
        assert_eq!(locate(content, logical, 0), (2, 1));
        assert_eq!(locate(content, logical, 3), (2, 4));
        assert_eq!(locate(content, logical, 9), (3, 2));
    }

    #[test]
    fn base_url_loses_its_trailing_slash_and_must_be_http() {
        assert_eq!(
            normalize_base_url(" http://localhost:8080/v1/ ", None).unwrap(),
            "http://localhost:8080/v1"
        );
        assert!(normalize_base_url("ftp://example.com", None).is_err());
        assert!(normalize_base_url("localhost:8080", None).is_err());
    }

    #[test]
    fn openai_is_recognised_by_host_only() {
        assert!(is_openai_endpoint("https://api.openai.com/v1"));
        assert!(is_openai_endpoint("https://API.OpenAI.com/v1"));
        assert!(!is_openai_endpoint("https://api.openai.com.example.net/v1"));
        assert!(!is_openai_endpoint("http://127.0.0.1:8080/v1"));
        assert!(is_host("https://api.anthropic.com", ANTHROPIC_HOST));
    }
}
