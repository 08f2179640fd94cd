//! Model Context Protocol servers as tool sources: starting them (stdio programs in their
//! own process group, streamable-HTTP endpoints), listing their tools, calling them with a
//! timeout, restarting a crashed server once, and stopping them.
//!
//! The protocol itself is the official Rust SDK's (`rmcp`, behind crates/delta-mcp); this
//! module owns what the engine promises around it: bounded waits, process groups, stderr
//! kept in `io/mcp/<name>/stderr.log` (redacted), secrets read from the environment at
//! connect time and never written anywhere.

mod connection;
mod result;

use std::time::Instant;

use serde_json::{Map, Value, json};

pub use connection::{McpEnv, StartError};
pub use delta_mcp::MAX_MESSAGE_BYTES;
pub use result::{CallRecord, McpCallOutcome, write_call_record};

use crate::config::{MCP_TOOL_SEPARATOR, McpServer};
use connection::Connection;
use delta_mcp::CallError;

/// What `delta tool expand` shows of an agent's MCP servers.
#[derive(Debug)]
pub struct Expanded {
    /// Each tool with the name the model sees, where it came from, and its argument
    /// schema, as YAML.
    pub yaml: String,
    /// Tools left out while starting the servers, for the caller to warn about.
    pub warnings: Vec<String>,
}

/// Why the servers could not be listed.
#[derive(Debug, thiserror::Error)]
pub enum ListError {
    /// A server did not start or did not list its tools.
    #[error(transparent)]
    Start(#[from] StartError),
    /// The async runtime could not be built.
    #[error("cannot start the async runtime: {0}")]
    Runtime(#[source] std::io::Error),
}

/// Starts the servers (each within its `startup_timeout_ms`), lists their tools and stops
/// them, on a runtime of its own: the synchronous entry for a caller without one. Awaiting
/// here rather than in the caller keeps the runtime's code for these futures compiled in this
/// crate only (bench/README.md, the first install).
///
/// # Errors
/// [`ListError::Start`] for the first server that does not start; the others are stopped.
pub fn list_tools(
    servers: &[McpServer],
    env: McpEnv,
    command_tools: &[&str],
) -> Result<Expanded, ListError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(ListError::Runtime)?;
    runtime.block_on(async {
        let mut started = McpServers::start(servers, env, command_tools).await?;
        let yaml = render_servers(&started);
        started.stop().await;
        Ok(Expanded {
            yaml,
            warnings: std::mem::take(&mut started.warnings),
        })
    })
}

/// `delta tool expand`'s view of the servers: each tool with the name the model sees,
/// where it came from, and its argument schema, as YAML.
fn render_servers(servers: &McpServers) -> String {
    #[derive(serde::Serialize)]
    struct Listing<'a> {
        mcp_servers: Vec<ServerListing<'a>>,
    }
    #[derive(serde::Serialize)]
    struct ServerListing<'a> {
        name: &'a str,
        transport: String,
        defined_in: String,
        tools: Vec<ToolListing<'a>>,
    }
    #[derive(serde::Serialize)]
    struct ToolListing<'a> {
        name: &'a str,
        from: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        description: Option<&'a str>,
        parameters: &'a Map<String, Value>,
    }
    let listing = Listing {
        mcp_servers: servers
            .servers()
            .map(|(server, tools)| ServerListing {
                name: &server.name,
                transport: server.describe(),
                defined_in: server.origin(),
                tools: tools
                    .iter()
                    .map(|tool| ToolListing {
                        name: &tool.offered,
                        from: format!("tool '{}' of MCP server '{}'", tool.tool, tool.server),
                        description: tool.description.as_deref(),
                        parameters: &tool.input_schema,
                    })
                    .collect(),
            })
            .collect(),
    };
    let options = serde_saphyr::ser_options! { compact_list_indent: false };
    serde_saphyr::to_string_with_options(&listing, options)
        .unwrap_or_else(|e| format!("# could not render the MCP tools: {e}\n"))
}

/// Longest function name the model accepts (OpenAI's limit).
const MAX_FUNCTION_NAME: usize = 64;

/// One tool of one MCP server, as offered to the model.
#[derive(Debug, Clone, PartialEq)]
pub struct McpTool {
    /// The server's name (the key under `mcp_servers:`).
    pub server: String,
    /// The tool's name as the server gives it.
    pub tool: String,
    /// `<server>__<tool>`: the name the model calls.
    pub offered: String,
    /// The server's description of the tool.
    pub description: Option<String>,
    /// The server's JSON Schema for the arguments.
    pub input_schema: Map<String, Value>,
}

impl McpTool {
    /// The chat-completions declaration of this tool.
    pub fn function_schema(&self) -> Value {
        let mut function = Map::new();
        function.insert("name".into(), self.offered.clone().into());
        if let Some(description) = &self.description {
            function.insert("description".into(), description.clone().into());
        }
        function.insert(
            "parameters".into(),
            Value::Object(self.input_schema.clone()),
        );
        json!({"type": "function", "function": function})
    }

    /// The "command" journaled for a call: names the server and the tool.
    pub fn resolved_command(&self) -> String {
        format!("mcp:{}/{}", self.server, self.tool)
    }
}

/// A server's slot: its configuration, its connection while it is up, its tools.
#[derive(Debug)]
struct Slot {
    config: McpServer,
    connection: Option<Connection>,
    tools: Vec<McpTool>,
    /// Whether the one restart after a crash was used.
    restarted: bool,
}

/// The MCP servers of one run (or of one `delta tool expand`).
#[derive(Debug)]
pub struct McpServers {
    slots: Vec<Slot>,
    env: McpEnv,
    /// Tools a server offers that cannot be offered to the model (name too long or not a
    /// valid function name), for the CLI to warn about.
    pub warnings: Vec<String>,
}

impl McpServers {
    /// No servers: the agent has none.
    pub fn none(env: McpEnv) -> Self {
        Self {
            slots: Vec::new(),
            env,
            warnings: Vec::new(),
        }
    }

    /// Starts every server and lists its tools, each within its `startup_timeout_ms`.
    /// `command_tools` are the names of the agent's command tools: an MCP tool offered
    /// under one of them is left out (the command tool wins), as is a tool a server
    /// lists twice, each with a warning, so that the model never gets a name twice.
    ///
    /// # Errors
    /// The first server that does not start or does not list its tools; the servers
    /// already started are stopped.
    pub async fn start(
        servers: &[McpServer],
        env: McpEnv,
        command_tools: &[&str],
    ) -> Result<Self, StartError> {
        let mut started = Self::none(env);
        if let Some(io_dir) = &started.env.io_dir {
            let swept = crate::process::orphans::sweep(io_dir, "MCP server");
            started.warnings.extend(swept);
        }
        for config in servers {
            match Connection::open(config, &started.env).await {
                Ok((connection, listed)) => {
                    let tools = started.offer(config, listed, command_tools);
                    started.slots.push(Slot {
                        config: config.clone(),
                        connection: Some(connection),
                        tools,
                        restarted: false,
                    });
                }
                Err(error) => {
                    started.stop().await;
                    return Err(error);
                }
            }
        }
        Ok(started)
    }

    /// The listed tools kept for the model: the allow-list applied, names checked, and
    /// no name offered twice (a command tool's name, or one this server listed before).
    fn offer(
        &mut self,
        config: &McpServer,
        listed: Vec<delta_mcp::Tool>,
        command_tools: &[&str],
    ) -> Vec<McpTool> {
        let mut tools: Vec<McpTool> = Vec::new();
        for tool in listed {
            if let Some(allowed) = &config.allowed_tools
                && !allowed.contains(&tool.name)
            {
                continue;
            }
            let offered = format!("{}{MCP_TOOL_SEPARATOR}{}", config.name, tool.name);
            let valid = offered.len() <= MAX_FUNCTION_NAME
                && offered
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
            if !valid {
                self.warnings.push(format!(
                    "MCP server '{}' ({}): tool '{}' is not offered: `{offered}` is not a valid \
                     function name (letters, digits, `_`, `-`, at most 64 characters); \
                     shorten the server's name in {}",
                    config.name,
                    config.origin(),
                    tool.name.escape_debug(),
                    config.file.display()
                ));
                continue;
            }
            if command_tools.contains(&offered.as_str()) {
                self.warnings.push(format!(
                    "MCP server '{}' ({}): tool '{}' is not offered: `{offered}` is the name of \
                     a command tool of the agent, which wins; rename one of them",
                    config.name,
                    config.origin(),
                    tool.name.escape_debug()
                ));
                continue;
            }
            if tools.iter().any(|known| known.offered == offered) {
                self.warnings.push(format!(
                    "MCP server '{}' ({}): the server lists tool '{}' more than once; only \
                     its first definition is offered",
                    config.name,
                    config.origin(),
                    tool.name.escape_debug()
                ));
                continue;
            }
            tools.push(McpTool {
                server: config.name.clone(),
                tool: tool.name,
                offered,
                description: tool.description,
                input_schema: tool.input_schema,
            });
        }
        if let Some(allowed) = &config.allowed_tools {
            for name in allowed {
                if !tools.iter().any(|t| &t.tool == name) {
                    self.warnings.push(format!(
                        "MCP server '{}' ({}): `tools:` lists '{}', which the server does not \
                         offer",
                        config.name,
                        config.origin(),
                        name.escape_debug()
                    ));
                }
            }
        }
        tools
    }

    /// Every offered tool, server by server, in the server's order.
    pub fn tools(&self) -> impl Iterator<Item = &McpTool> {
        self.slots.iter().flat_map(|slot| slot.tools.iter())
    }

    /// The servers, each with its tools (for `delta tool expand`).
    pub fn servers(&self) -> impl Iterator<Item = (&McpServer, &[McpTool])> {
        self.slots
            .iter()
            .map(|slot| (&slot.config, slot.tools.as_slice()))
    }

    /// The protocol revision server `name` works at, while it is connected.
    pub fn protocol(&self, name: &str) -> Option<String> {
        let slot = self.slots.iter().find(|slot| slot.config.name == name)?;
        slot.connection.as_ref()?.protocol()
    }

    /// The tool offered as `name`.
    pub fn find(&self, name: &str) -> Option<&McpTool> {
        self.tools().find(|tool| tool.offered == name)
    }

    /// Whether `server` is a program the engine started (stdio), not an HTTP endpoint.
    #[must_use]
    pub fn is_stdio(&self, server: &str) -> bool {
        self.slots.iter().any(|slot| {
            slot.config.name == server
                && matches!(
                    slot.config.transport,
                    crate::config::McpTransport::Stdio { .. }
                )
        })
    }

    /// Calls `tool` (as returned by [`find`](Self::find)) with `arguments`, within the
    /// server's `timeout_ms`. Never fails: every failure is an outcome the model reads.
    /// A stdio server found dead is restarted once, for this call or the next.
    pub async fn call(&mut self, tool: &McpTool, arguments: Map<String, Value>) -> McpCallOutcome {
        let started = Instant::now();
        let env = self.env.clone();
        let Some(slot) = self.slots.iter_mut().find(|s| s.config.name == tool.server) else {
            return McpCallOutcome::error(
                format!("Error: there is no MCP server named '{}'.", tool.server),
                "error",
                started.elapsed(),
            );
        };
        if slot.connection.as_ref().is_none_or(Connection::is_down)
            && let Some(failed) = slot.restart(&env).await
        {
            return McpCallOutcome::error(failed, "not started", started.elapsed());
        }
        let Some(connection) = slot.connection.as_mut() else {
            return McpCallOutcome::error(
                format!("Error: MCP server '{}' is not running.", tool.server),
                "not started",
                started.elapsed(),
            );
        };
        let timeout = slot.config.timeout;
        let result = tokio::time::timeout(timeout, connection.call(&tool.tool, arguments)).await;
        let elapsed = started.elapsed();
        match result {
            Ok(Ok(result)) => McpCallOutcome::from_result(result, elapsed),
            Ok(Err(CallError::Lost(detail))) => {
                let exit = connection.exit_text(&detail);
                let restart = if slot.restarted {
                    "It was already restarted once and will not be again in this run."
                } else {
                    "It will be restarted for the next call."
                };
                McpCallOutcome::error(
                    format!(
                        "Error: MCP server '{}' stopped during the call to '{}' ({exit}); the \
                         call's effects are unknown. {restart}",
                        tool.server, tool.tool
                    ),
                    "crashed",
                    elapsed,
                )
            }
            Ok(Err(CallError::TooLarge { bytes })) => McpCallOutcome::error(
                format!(
                    "Error: MCP server '{}' answered the call to '{}' with a message {}over \
                     the limit of {MAX_MESSAGE_BYTES} bytes (16 MiB); the answer was dropped. \
                     Ask the tool for less at a time (a page, a range, a summary).",
                    tool.server,
                    tool.tool,
                    bytes.map_or_else(String::new, |bytes| format!("of {bytes} bytes, "))
                ),
                "too large",
                elapsed,
            ),
            Ok(Err(CallError::Refused(error))) => McpCallOutcome::error(
                format!(
                    "Error: MCP server '{}' refused the call to '{}': {error}. Check the \
                     tool's name and its arguments against its schema.",
                    tool.server, tool.tool
                ),
                "error",
                elapsed,
            ),
            Err(_) => McpCallOutcome::error(
                format!(
                    "Error: MCP server '{}' did not answer the call to '{}' within {} ms; the \
                     call was abandoned and its effects are unknown.",
                    tool.server,
                    tool.tool,
                    timeout.as_millis()
                ),
                "timeout",
                elapsed,
            ),
        }
    }

    /// Stops every server: stdio servers' process groups are killed. Idempotent.
    pub async fn stop(&mut self) {
        for slot in &mut self.slots {
            if let Some(connection) = slot.connection.take() {
                connection.close().await;
            }
        }
    }
}

impl Slot {
    /// Restarts a dead server once; returns the observation when it cannot be used.
    async fn restart(&mut self, env: &McpEnv) -> Option<String> {
        let name = &self.config.name;
        if self.restarted {
            return Some(format!(
                "Error: MCP server '{name}' stopped and was already restarted once in this \
                 run; its tools are unavailable until the run is continued."
            ));
        }
        self.restarted = true;
        if let Some(old) = self.connection.take() {
            old.close().await;
        }
        match Connection::open(&self.config, env).await {
            Ok((connection, _)) => {
                self.connection = Some(connection);
                None
            }
            Err(error) => Some(format!(
                "Error: MCP server '{name}' stopped, and restarting it failed: {}",
                error.message
            )),
        }
    }
}

impl Drop for McpServers {
    fn drop(&mut self) {
        for slot in &mut self.slots {
            if let Some(connection) = slot.connection.take() {
                connection.kill_now();
            }
        }
    }
}
