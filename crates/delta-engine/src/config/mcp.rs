//! `mcp_servers:` entries checked into [`McpServer`]s: one transport each, names that
//! can prefix a tool name, engine variables expanded, secrets named by environment
//! variable only.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_saphyr::{Location, Spanned};

use super::error::{ConfigError, sanitize};
use super::raw::McpServerYaml;
use super::vars::resolve_path;
use crate::tool::EngineVars;

/// A tool call to an MCP server that takes longer ends with an ERROR observation.
pub const DEFAULT_MCP_TIMEOUT: Duration = Duration::from_secs(120);
/// Starting a server and listing its tools must take less.
pub const DEFAULT_MCP_STARTUP_TIMEOUT: Duration = Duration::from_secs(30);
/// Separates the server's name from its tool's name in the name the model sees.
pub const MCP_TOOL_SEPARATOR: &str = "__";
/// Longest server name: with the separator, leaves 30 of OpenAI's 64 characters for the
/// tool's own name.
const MAX_SERVER_NAME: usize = 32;

/// A validated MCP server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpServer {
    /// The key under `mcp_servers:`; prefixes its tools' names.
    pub name: String,
    /// How the engine talks to it.
    pub transport: McpTransport,
    /// `tools:`: only these tools are offered; `None` offers all.
    pub allowed_tools: Option<Vec<String>>,
    /// Limit of one tool call.
    pub timeout: Duration,
    /// Limit of starting the server and listing its tools.
    pub startup_timeout: Duration,
    /// The file that defines it (agent.yaml or an imported file), for messages.
    pub file: PathBuf,
    /// Line of its definition in `file`.
    pub line: u64,
}

/// How an MCP server is reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpTransport {
    /// A program started by the engine, spoken to over its stdin and stdout.
    Stdio {
        /// Program and arguments, engine variables expanded.
        argv: Vec<String>,
        /// Added to the engine's environment.
        env: Vec<(String, String)>,
        /// Working directory; `None`: the workspace.
        cwd: Option<PathBuf>,
    },
    /// A streamable-HTTP endpoint.
    Http {
        /// The endpoint.
        url: String,
        /// Header name → the environment variable holding its value.
        headers: Vec<(String, String)>,
        /// The environment variable holding the bearer token.
        bearer_token_env: Option<String>,
    },
}

impl McpServer {
    /// How the server is shown in messages and `delta tool expand`.
    pub fn describe(&self) -> String {
        match &self.transport {
            McpTransport::Stdio { argv, .. } => format!("stdio: {}", argv.join(" ")),
            McpTransport::Http { url, .. } => format!("streamable HTTP: {url}"),
        }
    }

    /// Where it is defined, `file:line`.
    pub fn origin(&self) -> String {
        format!("{}:{}", self.file.display(), self.line)
    }
}

/// Checks one `mcp_servers:` entry of `file`.
pub(crate) fn validate(
    name: &Spanned<String>,
    server: &Spanned<McpServerYaml>,
    file: &Path,
    home: &Path,
    vars: &EngineVars,
) -> Result<McpServer, ConfigError> {
    let error = |message: String, at: Location| ConfigError::new(file, message).at(at);
    let shown = sanitize(&name.value);
    check_name(&name.value).map_err(|why| {
        error(format!("MCP server name `{shown}` {why}"), name.referenced).help(
            "name servers with letters, digits, `-` and single `_` (at most 32 characters), \
             e.g. `files` or `web-search`",
        )
    })?;
    let raw = &server.value;
    let transport = match (&raw.command, &raw.url) {
        (Some(_), Some(url)) => {
            return Err(error(
                format!("MCP server `{shown}` has both `command` and `url`"),
                url.referenced,
            )
            .help("give `command:` for a stdio server or `url:` for an HTTP one, not both"));
        }
        (None, None) => {
            return Err(error(
                format!("MCP server `{shown}` has neither `command` nor `url`"),
                server.referenced,
            )
            .help(
                "give `command: [program, args...]` for a stdio server, or `url: https://...` \
                 for a streamable-HTTP one",
            ));
        }
        (Some(command), None) => {
            for (key, present) in [
                ("headers", raw.headers.is_some()),
                ("bearer_token_env", raw.bearer_token_env.is_some()),
            ] {
                if present {
                    return Err(error(
                        format!("`{key}` of MCP server `{shown}` applies only to HTTP servers"),
                        command.referenced,
                    )
                    .help(format!("remove `{key}`, or replace `command` by `url`")));
                }
            }
            if command.value.is_empty() || command.value[0].is_empty() {
                return Err(error(
                    format!("`command` of MCP server `{shown}` is empty"),
                    command.referenced,
                )
                .help("give the program and its arguments, e.g. `command: [npx, my-server]`"));
            }
            let env = raw
                .env
                .iter()
                .flat_map(|env| env.0.iter())
                .map(|(key, value)| {
                    is_env_name(&key.value).then_some(()).ok_or_else(|| {
                        error(
                            format!(
                                "`{}` is not an environment variable name",
                                sanitize(&key.value)
                            ),
                            key.referenced,
                        )
                        .help("use letters, digits and `_`, not starting with a digit")
                    })?;
                    Ok((key.value.clone(), vars.substitute(value)))
                })
                .collect::<Result<_, ConfigError>>()?;
            McpTransport::Stdio {
                argv: command.value.iter().map(|a| vars.substitute(a)).collect(),
                env,
                cwd: raw
                    .cwd
                    .as_ref()
                    .map(|cwd| resolve_path(vars, &cwd.value, home)),
            }
        }
        (None, Some(url)) => {
            for (key, present) in [("env", raw.env.is_some()), ("cwd", raw.cwd.is_some())] {
                if present {
                    return Err(error(
                        format!("`{key}` of MCP server `{shown}` applies only to stdio servers"),
                        url.referenced,
                    )
                    .help(format!("remove `{key}`, or replace `url` by `command`")));
                }
            }
            let expanded = vars.substitute(&url.value);
            let scheme_ok = expanded.starts_with("http://") || expanded.starts_with("https://");
            let host = expanded.split("://").nth(1).unwrap_or_default();
            let authority = host.split(['/', '?', '#']).next().unwrap_or_default();
            if !scheme_ok || authority.is_empty() {
                return Err(error(
                    format!("`url` of MCP server `{shown}` is not an http(s) URL"),
                    url.referenced,
                )
                .help("write the endpoint, e.g. `url: https://mcp.example.org/mcp`"));
            }
            if authority.contains('@') {
                return Err(error(
                    format!("`url` of MCP server `{shown}` carries credentials"),
                    url.referenced,
                )
                .help(
                    "remove `user:password@` from the URL; give a token with \
                     `bearer_token_env:` or `headers:` (by environment variable)",
                ));
            }
            let headers = raw
                .headers
                .iter()
                .flat_map(|headers| headers.0.iter())
                .map(|(header, variable)| {
                    check_header_name(&header.value).map_err(|()| {
                        error(
                            format!("`{}` is not an HTTP header name", sanitize(&header.value)),
                            header.referenced,
                        )
                        .help("use letters, digits and `-`, e.g. `X-Api-Key`")
                    })?;
                    env_reference(variable, "a header's value", file)?;
                    Ok((header.value.clone(), variable.value.clone()))
                })
                .collect::<Result<_, ConfigError>>()?;
            let bearer_token_env = raw
                .bearer_token_env
                .as_ref()
                .map(|variable| {
                    env_reference(variable, "`bearer_token_env`", file)?;
                    Ok::<_, ConfigError>(variable.value.clone())
                })
                .transpose()?;
            McpTransport::Http {
                url: expanded,
                headers,
                bearer_token_env,
            }
        }
    };
    Ok(McpServer {
        name: name.value.clone(),
        transport,
        allowed_tools: raw
            .tools
            .as_ref()
            .map(|tools| tools.iter().map(|t| t.value.clone()).collect()),
        timeout: duration(
            raw.timeout_ms.as_ref(),
            DEFAULT_MCP_TIMEOUT,
            file,
            "timeout_ms",
        )?,
        startup_timeout: duration(
            raw.startup_timeout_ms.as_ref(),
            DEFAULT_MCP_STARTUP_TIMEOUT,
            file,
            "startup_timeout_ms",
        )?,
        file: file.to_path_buf(),
        line: name.referenced.line(),
    })
}

/// A value that must name an environment variable (secrets are never written in files).
fn env_reference(variable: &Spanned<String>, what: &str, file: &Path) -> Result<(), ConfigError> {
    is_env_name(&variable.value).then_some(()).ok_or_else(|| {
        ConfigError::new(
            file,
            format!(
                "{what} must name an environment variable; `{}` is not a variable name",
                sanitize(&variable.value)
            ),
        )
        .at(variable.referenced)
        .help(
            "write the NAME of the variable that holds the secret (e.g. `MY_SERVICE_TOKEN`) \
             and export it before the run; secrets are never written in agent files",
        )
    })
}

fn duration(
    value: Option<&Spanned<u64>>,
    default: Duration,
    file: &Path,
    key: &str,
) -> Result<Duration, ConfigError> {
    match value {
        None => Ok(default),
        Some(ms) if ms.value == 0 => Err(ConfigError::new(
            file,
            format!("`{key}` must be at least 1"),
        )
        .at(ms.referenced)
        .help("give a positive number of milliseconds, or omit it for the default")),
        Some(ms) => Ok(Duration::from_millis(ms.value)),
    }
}

fn check_name(name: &str) -> Result<(), &'static str> {
    if name.is_empty() || name.len() > MAX_SERVER_NAME {
        return Err("must have 1 to 32 characters");
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return Err("may hold only letters, digits, `-` and `_`");
    }
    if name.contains(MCP_TOOL_SEPARATOR) {
        return Err("may not contain `__`, which separates it from its tools' names");
    }
    Ok(())
}

/// Whether `name` is an environment variable name (letters, digits and `_`, not starting
/// with a digit): MCP servers' `env:` and batch tasks' `env` take only these.
pub fn is_env_name(name: &str) -> bool {
    let mut chars = name.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    first_ok && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn check_header_name(name: &str) -> Result<(), ()> {
    if !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_!#$%&'*+.^`|~".contains(c))
    {
        Ok(())
    } else {
        Err(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_names_can_prefix_tool_names() {
        assert!(check_name("files").is_ok());
        assert!(check_name("web_search-2").is_ok());
        assert!(check_name("a__b").is_err());
        assert!(check_name("a.b").is_err());
        assert!(check_name(&"x".repeat(33)).is_err());
    }

    #[test]
    fn only_variable_names_are_env_references() {
        assert!(is_env_name("MY_TOKEN"));
        assert!(is_env_name("_x1"));
        assert!(!is_env_name("1X"));
        assert!(!is_env_name("Bearer abc"));
    }
}
