//! The configuration files exactly as written: serde types mirroring the YAML, keeping the
//! source location of every value that later validation reports on. The same types
//! generate the published JSON Schemas (`delta_engine::schema`).
//!
//! Nothing here is validated beyond its YAML shape; the engine's `config` module turns
//! these into the types it trusts.

use std::borrow::Cow;
use std::fmt;

use delta_scenario::ModelApi;
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::Deserialize;
use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::{Map, Value};
use serde_saphyr::Spanned;

use crate::keyed::KeyedMap;
use crate::llm::PromptCache;
use crate::names::{CLAUDE_EVENTS_NEVER_FIRED, ClaudeEvent, HookName, OnMissing};
use crate::tool::ToolDef;

/// An agent definition: `agent.yaml` in the agent directory (`config.yaml` is the
/// deprecated name of the same file).
///
/// A key not listed here is an error, unless it starts with `x-` (the user's own,
/// ignored): `config::keys` checks the top-level keys against these fields.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[schemars(
    title = "Delta Engine agent.yaml",
    extend("patternProperties" = {"^x-": {}}, "additionalProperties" = false)
)]
pub struct AgentYaml {
    /// Agent name, recorded in every run's metadata.
    #[schemars(with = "String", length(min = 1))]
    pub name: Spanned<String>,
    /// Version of this agent definition (free text, e.g. `1.0.0`).
    pub version: Option<String>,
    /// What the agent is for.
    pub description: Option<String>,
    /// The language model and its request parameters.
    #[schemars(with = "LlmYaml")]
    pub llm: Spanned<LlmYaml>,
    /// Path of the system prompt file, relative to the agent directory. Default:
    /// `system_prompt.md`.
    #[schemars(with = "Option<String>")]
    pub system_prompt: Option<Spanned<String>>,
    /// Tool files to import, relative to this file. Their tools come first, in order;
    /// tools defined here override imported ones with the same name.
    #[schemars(with = "Option<Vec<String>>")]
    pub imports: Option<Vec<Spanned<String>>>,
    /// Directories outside the agent directory that imports may read from (relative to
    /// the agent directory). Imports must otherwise stay inside the agent directory.
    #[schemars(with = "Option<Vec<String>>")]
    pub import_roots: Option<Vec<Spanned<String>>>,
    /// Tools offered to the model (the built-in `ask_human` is always offered too).
    #[schemars(with = "Option<Vec<ToolDef>>")]
    pub tools: Option<Vec<Spanned<ToolDef>>>,
    /// Default iteration budget of a run (the command line may override it).
    #[schemars(with = "Option<u32>", range(min = 1))]
    pub max_iterations: Option<Spanned<u32>>,
    /// Model Context Protocol servers whose tools are offered as `<server>__<tool>`, by
    /// server name. Servers defined here override imported ones with the same name.
    #[schemars(with = "Option<std::collections::BTreeMap<String, McpServerYaml>>")]
    pub mcp_servers: Option<KeyedMap<Spanned<McpServerYaml>>>,
    /// Hard limits on what a run may spend (the command-line flags win over each).
    #[schemars(with = "Option<BudgetYaml>")]
    pub budget: Option<Spanned<BudgetYaml>>,
    /// A JSON Schema (draft 2020-12) file, relative to the agent directory, that the final
    /// answer must satisfy (`--output-schema` wins). Turns with tool calls are free.
    #[schemars(with = "Option<String>")]
    pub output_schema: Option<Spanned<String>>,
    /// Whether the built-in `ask_human` tool is offered to the model. Default: true;
    /// `false` (or `--no-ask-human`) means a run never pauses for an answer.
    pub ask_human: Option<bool>,
    /// Limits on the sub-agents this agent's agent tools start (docs/subagents.md).
    #[schemars(with = "Option<SubagentsYaml>")]
    pub subagents: Option<Spanned<SubagentsYaml>>,
    /// Where tools run: on the host (default), confined by Landlock, in a bubblewrap
    /// sandbox, or in a container (docs/environments.md). `--environment` on the command
    /// line replaces `kind`.
    #[schemars(with = "Option<EnvironmentYaml>")]
    pub environment: Option<Spanned<EnvironmentYaml>>,
    /// Deprecated: hooks belong in `hooks.yaml`. Read only when `hooks.yaml` is absent.
    #[schemars(with = "Option<HookMap>", extend("deprecated" = true))]
    pub hooks: Option<Spanned<HookMap>>,
    /// Deprecated: hooks belong in `hooks.yaml`. Read only when `hooks.yaml` is absent.
    #[schemars(with = "Option<HookMap>", extend("deprecated" = true))]
    pub lifecycle_hooks: Option<Spanned<HookMap>>,
}

/// The `llm:` section. Keys other than those below are sent to the chat completions API
/// unchanged (e.g. `top_p`, `reasoning_effort`).
// Deserialized by hand: serde's `flatten` would buffer the mapping and lose the source
// locations that `temperature` errors point at.
#[derive(Debug, Clone, Default, JsonSchema)]
pub struct LlmYaml {
    /// Model name sent to the API, e.g. `gpt-4o`.
    #[schemars(with = "String", required, length(min = 1))]
    pub model: Option<Spanned<String>>,
    /// Sampling temperature, 0 to 2.
    #[schemars(with = "Option<f64>", range(min = 0.0, max = 2.0))]
    pub temperature: Option<Spanned<f64>>,
    /// Upper bound on tokens generated per response.
    #[schemars(with = "Option<u64>", range(min = 1))]
    pub max_tokens: Option<Spanned<u64>>,
    /// The model's context window in tokens (prompt and answer together). The engine keeps
    /// each request within it, leaving `max_tokens` for the answer. Never sent to the API.
    #[schemars(with = "Option<u64>", range(min = 1))]
    pub context_window: Option<Spanned<u64>>,
    /// Prices used to estimate a run's cost. Never sent to the API.
    #[schemars(with = "Option<PricingYaml>")]
    pub pricing: Option<Spanned<PricingYaml>>,
    /// The wire API the model is asked through: `chat` (OpenAI chat completions and every
    /// compatible server, the default), `responses` (OpenAI's Responses API) or
    /// `anthropic` (Anthropic's Messages API). Never sent to the API.
    #[schemars(with = "Option<ModelApi>")]
    pub api: Option<Spanned<ModelApi>>,
    /// Whether to ask the provider to cache the prompt's prefix: `auto` (the default;
    /// Anthropic `cache_control` breakpoints, a `prompt_cache_key` per run for Responses
    /// and for chat at api.openai.com) or `off`. Never sent to the API.
    #[schemars(with = "Option<PromptCache>")]
    pub prompt_cache: Option<Spanned<PromptCache>>,
    /// Chat only: the assistant-message fields a server needs back on later requests,
    /// e.g. `[reasoning_content]` for DeepSeek's thinking mode, `[reasoning_details]` for
    /// OpenRouter, `[thinking_blocks]` for LiteLLM in front of Claude. Never sent as such.
    #[schemars(with = "Option<Vec<String>>")]
    pub reasoning_passback: Option<Spanned<Vec<String>>>,
    /// Other request parameters, passed through unchanged (with `api: anthropic`,
    /// `thinking`; with `api: responses`, `reasoning`; each in the API's own shape).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
    /// Where each key of `extra` was written, for errors about it.
    #[schemars(skip)]
    pub extra_keys: Vec<Spanned<String>>,
}

impl<'de> Deserialize<'de> for LlmYaml {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct LlmVisitor;

        impl<'de> Visitor<'de> for LlmVisitor {
            type Value = LlmYaml;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a mapping with at least `model`")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<LlmYaml, A::Error> {
                let mut llm = LlmYaml::default();
                while let Some(spanned) = map.next_key::<Spanned<String>>()? {
                    let key = spanned.value.clone();
                    match key.as_str() {
                        "model" => llm.model = Some(map.next_value()?),
                        "temperature" => llm.temperature = Some(map.next_value()?),
                        "max_tokens" => llm.max_tokens = Some(map.next_value()?),
                        "context_window" => llm.context_window = Some(map.next_value()?),
                        "pricing" => llm.pricing = Some(map.next_value()?),
                        "api" => llm.api = Some(map.next_value()?),
                        "prompt_cache" => llm.prompt_cache = Some(map.next_value()?),
                        "reasoning_passback" => {
                            llm.reasoning_passback = Some(map.next_value()?);
                        }
                        _ => {
                            let value = map.next_value::<Value>()?;
                            llm.extra.insert(key, value);
                            llm.extra_keys.push(spanned);
                        }
                    }
                }
                Ok(llm)
            }
        }

        deserializer.deserialize_map(LlmVisitor)
    }
}

/// Token prices in your currency per million tokens.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PricingYaml {
    /// Price of one million prompt (input) tokens.
    #[schemars(with = "f64", range(min = 0.0))]
    pub input_per_million: Spanned<f64>,
    /// Price of one million completion (output) tokens.
    #[schemars(with = "f64", range(min = 0.0))]
    pub output_per_million: Spanned<f64>,
    /// Price of one million prompt tokens read from the provider's cache. Default: 0.1 ×
    /// the input price with `api: anthropic`; otherwise the input price (no discount
    /// assumed, so the cost is an upper bound).
    #[serde(default)]
    #[schemars(with = "Option<f64>", range(min = 0.0))]
    pub cached_input_per_million: Option<Spanned<f64>>,
    /// Price of one million prompt tokens written to the provider's cache. Default: 1.25 ×
    /// the input price with `api: anthropic` (five-minute writes); otherwise the input
    /// price.
    #[serde(default)]
    #[schemars(with = "Option<f64>", range(min = 0.0))]
    pub cache_write_per_million: Option<Spanned<f64>>,
}

/// `subagents:` in agent.yaml: how deep and how wide the tree of sub-agents may grow.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SubagentsYaml {
    /// How deep sub-agents may nest below a top-level run: 1 lets it start children but
    /// not grandchildren. The smallest value along a tree's chain applies. Default: 5.
    #[schemars(with = "Option<u32>", range(min = 1))]
    pub max_depth: Option<Spanned<u32>>,
    /// How many sub-agents one turn of a run may start at once; further agent calls of
    /// the same turn are refused (the model reads why). Default: 4.
    #[schemars(with = "Option<u32>", range(min = 1))]
    pub max_concurrent: Option<Spanned<u32>>,
}

/// `budget:` in agent.yaml: limits over the run's whole life.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BudgetYaml {
    /// Estimated cost in US dollars (needs the model's price: built in, or `llm.pricing`).
    #[schemars(with = "Option<f64>", range(min = 0.0))]
    pub max_cost_usd: Option<Spanned<f64>>,
    /// Input plus output tokens.
    #[schemars(with = "Option<u64>", range(min = 1))]
    pub max_tokens: Option<Spanned<u64>>,
    /// Active wall time: `90s`, `30m`, `2h`, `500ms`, or a number of seconds.
    #[schemars(with = "Option<DurationYaml>")]
    pub max_duration: Option<Spanned<DurationYaml>>,
}

/// `environment:` in agent.yaml: where every tool call of a run executes. Keys that do not
/// apply to the kind in effect are ignored (so that `--environment` can switch kinds).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EnvironmentYaml {
    /// `host` (default: as the engine, unconfined), `landlock` (Linux Landlock, no root and
    /// no namespaces needed), `bwrap` (a bubblewrap sandbox per run) or `container` (a
    /// container per run).
    #[schemars(with = "Option<crate::environment::Kind>")]
    pub kind: Option<Spanned<crate::environment::Kind>>,
    /// Whether tools may use the network. Default: false for every kind but `host`, which
    /// cannot take it away (`false` with `host` is refused).
    pub network: Option<bool>,
    /// landlock, bwrap: extra paths tools may read (relative to the agent directory;
    /// `${AGENT_HOME}`, `${CWD}` and a leading `~` are expanded). List `/proc` to let
    /// landlock tools read it (and with it other processes' environment).
    #[schemars(with = "Option<Vec<String>>")]
    pub allow_read: Option<Vec<Spanned<String>>>,
    /// landlock, bwrap: extra paths tools may write, as `allow_read`.
    #[schemars(with = "Option<Vec<String>>")]
    pub allow_write: Option<Vec<Spanned<String>>>,
    /// landlock: run with what the kernel supports when it lacks part of Landlock (ABI 6)
    /// instead of refusing; RUN_START records what was and was not enforced. Default false.
    pub best_effort: Option<bool>,
    /// container: the image to run (never pulled), e.g. `localhost/task:1`.
    #[schemars(with = "Option<String>")]
    pub image: Option<Spanned<String>>,
    /// container: a directory with a Dockerfile (relative to the agent directory), built
    /// once per content hash into `localhost/delta-build:HASH`.
    #[schemars(with = "Option<String>")]
    pub build: Option<Spanned<String>>,
    /// container: `podman` (default) or `docker`.
    #[schemars(with = "Option<crate::environment::Runtime>")]
    pub runtime: Option<Spanned<crate::environment::Runtime>>,
    /// bwrap, container: the absolute path where the workspace appears (default: its own
    /// path), e.g. `/app`.
    #[schemars(with = "Option<String>")]
    pub workdir: Option<Spanned<String>>,
    /// container: CPUs (`--cpus`), e.g. 2 or 0.5.
    #[schemars(with = "Option<f64>", range(min = 0.0))]
    pub cpus: Option<Spanned<f64>>,
    /// container: memory limit in MiB (`--memory`).
    #[schemars(with = "Option<u64>", range(min = 6))]
    pub memory_mb: Option<Spanned<u64>>,
    /// container: keep the container when the run ends (default false: removed).
    pub keep: Option<bool>,
    /// Variables of the engine's environment passed to tools even though they hold a
    /// secret (the API key variables, or a value equal to a secret of the run), e.g.
    /// `[DELTA_API_KEY]` for a tool that runs a sub-agent. In a container these are the only
    /// variables of the engine's environment passed in (besides `DELTA_*`).
    #[schemars(with = "Option<Vec<String>>")]
    pub pass_env: Option<Vec<Spanned<String>>>,
}

/// A duration: a number of seconds, or text with a unit (`90s`, `30m`, `2h`, `500ms`).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum DurationYaml {
    /// Seconds.
    Seconds(f64),
    /// With a unit.
    Text(String),
}

/// A tool file listed in `imports:`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "Delta Engine imported tool file")]
pub struct ImportedToolsYaml {
    /// Further tool files to import, relative to this file; their tools come first.
    #[schemars(with = "Option<Vec<String>>")]
    pub imports: Option<Vec<Spanned<String>>>,
    /// The tools this file defines.
    #[schemars(with = "Vec<ToolDef>")]
    #[serde(default)]
    pub tools: Vec<Spanned<ToolDef>>,
    /// MCP servers this file defines (see agent.yaml's `mcp_servers`).
    #[schemars(with = "Option<std::collections::BTreeMap<String, McpServerYaml>>")]
    pub mcp_servers: Option<KeyedMap<Spanned<McpServerYaml>>>,
    /// Accepted only to reject it with a clear message: only agent.yaml may widen where
    /// imports are read from.
    #[schemars(skip)]
    pub import_roots: Option<Spanned<IgnoredAny>>,
}

/// One Model Context Protocol server: a program spoken to over stdio (`command`) or a
/// streamable-HTTP endpoint (`url`). Exactly one of the two.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend("oneOf" = [{"required": ["command"]}, {"required": ["url"]}]))]
pub struct McpServerYaml {
    /// stdio: program and arguments (argv, no shell), started at run start in its own
    /// process group. `${AGENT_HOME}` and `${CWD}` are expanded.
    #[schemars(with = "Option<Vec<String>>", length(min = 1))]
    pub command: Option<Spanned<Vec<String>>>,
    /// stdio: variables added to the engine's environment for the server.
    #[schemars(with = "Option<std::collections::BTreeMap<String, String>>")]
    pub env: Option<KeyedMap<String>>,
    /// stdio: working directory. Default: the workspace. A relative path is relative to
    /// the agent directory; `${AGENT_HOME}` and `${CWD}` are expanded.
    #[schemars(with = "Option<String>")]
    pub cwd: Option<Spanned<String>>,
    /// Streamable HTTP: the endpoint, `http://` or `https://`.
    #[schemars(with = "Option<String>")]
    pub url: Option<Spanned<String>>,
    /// Streamable HTTP: extra request headers, by header name; each value is the NAME of
    /// the environment variable holding the header's value (secrets never sit in files).
    #[schemars(with = "Option<std::collections::BTreeMap<String, String>>")]
    pub headers: Option<KeyedMap<Spanned<String>>>,
    /// Streamable HTTP: the environment variable holding a bearer token, sent as
    /// `Authorization: Bearer <token>`.
    #[schemars(with = "Option<String>")]
    pub bearer_token_env: Option<Spanned<String>>,
    /// Only these tools of the server are offered (names as the server gives them).
    /// Default: all.
    #[schemars(with = "Option<Vec<String>>")]
    pub tools: Option<Vec<Spanned<String>>>,
    /// A tool call that takes longer ends with an ERROR observation. Default: 120000.
    #[schemars(with = "Option<u64>", range(min = 1))]
    pub timeout_ms: Option<Spanned<u64>>,
    /// Starting the server and listing its tools must take less. Default: 30000.
    #[schemars(with = "Option<u64>", range(min = 1))]
    pub startup_timeout_ms: Option<Spanned<u64>>,
}

/// `hooks.yaml`: lifecycle hooks by name, optionally wrapped in `lifecycle_hooks:`.
pub type HooksYaml = HookMap;

/// Hooks keyed by hook name as written (canonical names or their short aliases).
///
/// Kept as written (with key locations) so that unknown names and duplicates are
/// reported where they stand.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HookMap {
    /// Entries in document order; `lifecycle_hooks:` wrappers are flattened into it.
    pub entries: Vec<(Spanned<String>, Spanned<HookYaml>)>,
    /// Keys that name no hook, in document order. Their values are not read: whether
    /// `x: 1` is a badly written hook cannot be judged without knowing which hook was
    /// meant, and "unknown hook" with the valid names is the useful error.
    pub unknown: Vec<Spanned<String>>,
    /// `claude_hooks:`: hooks in Claude Code's protocol, shaped as the `hooks` object of a
    /// `hooks.json` (read by `config::claude_hooks`, not by the seed hooks' validation).
    pub claude: Option<Spanned<ClaudeHookEvents>>,
}

/// The key of hooks.yaml that holds Claude Code hooks.
pub const CLAUDE_HOOKS_KEY: &str = "claude_hooks";

/// The wrapper key accepted around the hook map, as in the seed's own examples.
pub const HOOKS_WRAPPER: &str = "lifecycle_hooks";

/// Reads a hook map; `wrapper` says whether `lifecycle_hooks:` may wrap it (only at the
/// top).
struct HookMapVisitor {
    wrapper: bool,
}

impl<'de> Visitor<'de> for HookMapVisitor {
    type Value = HookMap;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a mapping from hook name to `{command: [...]}`")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<HookMap, A::Error> {
        let mut hooks = HookMap::default();
        while let Some(key) = map.next_key::<Spanned<String>>()? {
            if self.wrapper && key.value == CLAUDE_HOOKS_KEY {
                hooks.claude = Some(map.next_value()?);
            } else if self.wrapper && key.value == HOOKS_WRAPPER {
                let inner = map.next_value::<WrappedHookMap>()?.0;
                hooks.entries.extend(inner.entries);
                hooks.unknown.extend(inner.unknown);
            } else if HookName::from_name(&key.value).is_some() {
                hooks.entries.push((key, map.next_value()?));
            } else if crate::keys::is_extension(&key.value) {
                map.next_value::<IgnoredAny>()?;
            } else {
                map.next_value::<IgnoredAny>()?;
                hooks.unknown.push(key);
            }
        }
        Ok(hooks)
    }

    // An empty hooks.yaml (or one with only comments) configures no hooks.
    fn visit_unit<E: serde::de::Error>(self) -> Result<HookMap, E> {
        Ok(HookMap::default())
    }
}

impl<'de> Deserialize<'de> for HookMap {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // `any` rather than `map`: only `any` lets a null document reach `visit_unit`.
        deserializer.deserialize_any(HookMapVisitor { wrapper: true })
    }
}

/// The hook map inside `lifecycle_hooks:`, where the wrapper is not accepted again.
struct WrappedHookMap(HookMap);

impl<'de> Deserialize<'de> for WrappedHookMap {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer
            .deserialize_any(HookMapVisitor { wrapper: false })
            .map(WrappedHookMap)
    }
}

impl JsonSchema for HookMap {
    fn schema_name() -> Cow<'static, str> {
        "HookMap".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let hook = Value::from(generator.subschema_for::<HookYaml>());
        let mut properties = Map::new();
        for name in HookName::ALL {
            properties.insert(name.as_str().into(), described(&hook, name.description()));
        }
        for name in HookName::ALL {
            if let Some(alias) = name.alias() {
                let text = format!("Short name of `{}`.", name.as_str());
                properties.insert(alias.into(), described(&hook, &text));
            }
        }
        let plain = Value::Object(Map::from_iter([
            ("type".into(), "object".into()),
            ("properties".into(), Value::Object(properties.clone())),
            ("additionalProperties".into(), false.into()),
        ]));
        properties.insert(
            HOOKS_WRAPPER.into(),
            described(&plain, "Optional wrapper around the hooks (older layout)."),
        );
        let claude = Value::from(generator.subschema_for::<ClaudeHookEvents>());
        properties.insert(
            CLAUDE_HOOKS_KEY.into(),
            described(
                &claude,
                "Hooks in Claude Code's protocol, shaped as the `hooks` object of a hooks.json \
                 (run after those of hooks.json).",
            ),
        );
        let mut schema = Map::new();
        schema.insert(
            "description".into(),
            "Lifecycle hooks: commands the engine runs at fixed points of a run. Keys \
             starting with `x-` are the user's and ignored."
                .into(),
        );
        schema.insert("patternProperties".into(), serde_json::json!({"^x-": {}}));
        schema.insert("type".into(), "object".into());
        schema.insert("properties".into(), Value::Object(properties));
        schema.insert("additionalProperties".into(), false.into());
        Schema::from(schema)
    }
}

/// `schema` with a description attached (kept beside a `$ref`, which 2020-12 allows).
fn described(schema: &Value, description: &str) -> Value {
    let mut object = match schema {
        Value::Object(object) => object.clone(),
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) | Value::Array(_) => {
            Map::from_iter([("allOf".into(), Value::Array(vec![schema.clone()]))])
        }
    };
    object.insert("description".into(), description.into());
    Value::Object(object)
}

/// One hook: a command run with `DELTA_HOOK_IO_PATH` pointing at its I/O directory.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HookYaml {
    /// Program and arguments (argv, no shell). `${AGENT_HOME}` and `${CWD}` are expanded.
    #[schemars(with = "Vec<String>", length(min = 1))]
    pub command: Spanned<Vec<String>>,
    /// Kill the hook after this many milliseconds. Default: 30000.
    #[schemars(with = "Option<u64>", range(min = 1))]
    pub timeout_ms: Option<Spanned<u64>>,
}

/// `hooks.json` in the agent directory: hooks in Claude Code's protocol and shape, as in
/// a Claude Code settings file's `hooks` or a plugin's `hooks/hooks.json`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "Delta Engine hooks.json (Claude Code hooks)")]
pub struct ClaudeHooksJson {
    /// The schema this file follows (ignored).
    #[serde(rename = "$schema", default)]
    pub schema: Option<String>,
    /// What the hooks are for (a Claude Code plugin's hooks.json has one; ignored).
    #[serde(default)]
    pub description: Option<String>,
    /// `true`: none of this file's hooks run.
    #[serde(rename = "disableAllHooks", default)]
    pub disable_all_hooks: bool,
    /// Hooks by event name.
    #[serde(default)]
    pub hooks: ClaudeHookEvents,
}

/// Claude Code hooks by event name, each event a list of matcher groups run in order.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct ClaudeHookEvents(pub std::collections::BTreeMap<String, Vec<ClaudeMatcherGroup>>);

impl JsonSchema for ClaudeHookEvents {
    fn schema_name() -> Cow<'static, str> {
        "ClaudeHookEvents".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let groups = Value::from(generator.subschema_for::<Vec<ClaudeMatcherGroup>>());
        let mut properties = Map::new();
        for event in ClaudeEvent::ALL {
            properties.insert(
                event.as_str().into(),
                described(&groups, event.description()),
            );
        }
        for (name, why) in CLAUDE_EVENTS_NEVER_FIRED {
            let text = format!("Accepted, never fired: {why}.");
            properties.insert(name.into(), described(&groups, &text));
        }
        let mut schema = Map::new();
        schema.insert(
            "description".into(),
            "Claude Code hook events, each a list of matcher groups.".into(),
        );
        schema.insert("type".into(), "object".into());
        schema.insert("properties".into(), Value::Object(properties));
        schema.insert("additionalProperties".into(), false.into());
        Schema::from(schema)
    }
}

/// Hooks that fire together, for the firings their matcher selects.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClaudeMatcherGroup {
    /// Which firings: for tool events the tool name (MCP tools `mcp__<server>__<tool>`), for
    /// SessionStart the source, Notification the notification_type, PreCompact the
    /// trigger, SessionEnd the reason. `*`, empty or absent: all; only letters, digits,
    /// `_`, `-`, spaces, `,` and `|`: exact names separated by `|` or `,`; anything else:
    /// a regular expression, unanchored. Ignored for UserPromptSubmit and Stop.
    #[serde(default)]
    pub matcher: Option<String>,
    /// The hooks, run in this order.
    pub hooks: Vec<ClaudeHandlerYaml>,
}

/// One hook: a shell command line (or a program and its `args`) that reads the event as
/// JSON on stdin and answers with its exit code and stdout.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClaudeHandlerYaml {
    /// `command` (the only type Delta runs).
    #[serde(rename = "type")]
    pub kind: String,
    /// The shell command line, run with `sh -c` in the workspace; with `args`, the program.
    pub command: Option<String>,
    /// Run `command` with these arguments, without a shell.
    #[serde(default)]
    pub args: Option<Vec<String>>,
    /// Seconds before the hook's process group is killed. Default: 60.
    #[serde(default)]
    #[schemars(range(min = 0.001))]
    pub timeout: Option<f64>,
    /// `sh` (default) or `bash`: the shell that runs `command`.
    #[serde(default)]
    pub shell: Option<String>,
    /// Claude Code's spinner text (ignored).
    #[serde(rename = "statusMessage", default)]
    pub status_message: Option<String>,
    /// Claude Code's run-once flag for skills (ignored).
    #[serde(default)]
    pub once: Option<bool>,
    /// Claude Code's permission-rule condition; refused (Delta has no permission rules).
    #[serde(rename = "if", default)]
    pub condition: Option<String>,
    /// Claude Code's background hooks; refused (a hook's answer is always awaited).
    #[serde(rename = "async", default)]
    pub run_async: Option<bool>,
    /// Claude Code's background hooks that wake the model; refused.
    #[serde(rename = "asyncRewake", default)]
    pub async_rewake: Option<bool>,
    /// Delta only: pass the API key variables to the hook (default: they are emptied).
    #[serde(default)]
    pub pass_api_key: Option<bool>,
}

/// `context.yaml`: how the model's context window is built before every LLM call.
///
/// Unknown top-level keys are refused by `config::keys` (which lets `x-` keys through),
/// not by serde.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[schemars(
    title = "Delta Engine context.yaml",
    extend("patternProperties" = {"^x-": {}}, "additionalProperties" = false)
)]
pub struct ContextYaml {
    /// Token budget of every request (messages and tool definitions; the answer's room
    /// comes on top). When the sources do not fit, the journal's oldest iterations are
    /// left out first. Default: no budget (the window learned from the server's
    /// context-length errors, or `llm.context_window` of agent.yaml, still applies).
    #[schemars(with = "Option<u64>", range(min = 1))]
    pub total_max_tokens: Option<Spanned<u64>>,
    /// Context sources in priority order: earlier sources come first.
    #[schemars(with = "Vec<SourceShape>")]
    pub sources: Vec<Spanned<SourceYaml>>,
}

/// One context source as written, every field of every type optional.
///
/// A flat struct rather than an internally tagged enum: serde buffers tagged enums and
/// loses the key locations that errors about misspelt keys must show. Which fields a
/// `type` allows is checked in `context`; the schema (`SourceShape`) states it per type.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SourceYaml {
    /// `file`, `computed_file` or `journal`.
    #[serde(rename = "type")]
    pub kind: Spanned<String>,
    /// Name shown in debug output and context block headers.
    pub id: Option<String>,
    /// `file`: the file to include.
    pub path: Option<Spanned<String>>,
    /// `file`, `computed_file`: what to do when the file does not exist.
    pub on_missing: Option<Spanned<OnMissing>>,
    /// `computed_file`: the command that writes `output_path`.
    pub generator: Option<Spanned<GeneratorYaml>>,
    /// `computed_file`: the file the generator writes.
    pub output_path: Option<Spanned<String>>,
    /// `journal`: include only the most recent N iterations.
    pub max_iterations: Option<Spanned<u32>>,
    /// Any type: the most tokens this source may take.
    pub max_tokens: Option<Spanned<u64>>,
}

/// The command of a `computed_file` source.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GeneratorYaml {
    /// Program and arguments (argv, no shell), run in the workspace. `${AGENT_HOME}` and
    /// `${CWD}` are expanded.
    #[schemars(with = "Vec<String>", length(min = 1))]
    pub command: Spanned<Vec<String>>,
    /// Kill the generator after this many milliseconds. Default: 30000.
    #[schemars(with = "Option<u64>", range(min = 1))]
    pub timeout_ms: Option<Spanned<u64>>,
}

/// One context source; `type` decides which other keys it takes.
// Never built: parsing goes through `SourceYaml` (see there why); this type only
// describes the YAML, per `type`, for the schema.
#[derive(JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
#[expect(
    dead_code,
    reason = "describes the YAML for schemars; never constructed"
)]
enum SourceShape {
    /// A static file, included as a system message.
    File {
        /// Name shown in debug output and context block headers.
        id: Option<String>,
        /// File to include. `${AGENT_HOME}` and `${CWD}` are expanded; a relative path is
        /// relative to the agent directory.
        path: String,
        /// `error` (default) fails the run when the file is missing; `skip` leaves it out.
        on_missing: Option<OnMissing>,
        /// The most tokens this file may take; a longer file is cut, keeping its start,
        /// with a marker. Default: included whole.
        #[schemars(range(min = 1))]
        max_tokens: Option<u64>,
    },
    /// A file written by a command before every LLM call, then included.
    ComputedFile {
        /// Name shown in debug output and context block headers.
        id: Option<String>,
        /// The command that writes `output_path`.
        generator: GeneratorYaml,
        /// File the generator writes. `${AGENT_HOME}` and `${CWD}` are expanded; a
        /// relative path is relative to the agent directory.
        output_path: String,
        /// `error` (default) fails the run when the file is missing; `skip` leaves it out.
        on_missing: Option<OnMissing>,
        /// The most tokens the generated file may take; a longer one is cut, keeping its
        /// start, with a marker. Default: included whole.
        #[schemars(range(min = 1))]
        max_tokens: Option<u64>,
    },
    /// The run's conversation, rebuilt from its journal.
    Journal {
        /// Name shown in debug output.
        id: Option<String>,
        /// Include only the most recent N iterations. Default: all.
        #[schemars(range(min = 1))]
        max_iterations: Option<u32>,
        /// The most tokens the conversation may take; the oldest complete iterations are
        /// left out first (never the task), with one marker message saying how many.
        /// Default: what the other sources leave of `total_max_tokens`.
        #[schemars(range(min = 1))]
        max_tokens: Option<u64>,
    },
}
