//! `agent.yaml` on its own: parsed, its keys and values checked.
//! Imports, tools and sibling files are resolved by `load_agent`.

use std::path::Path;

use serde_json::{Map, Value};
use serde_saphyr::Spanned;

use super::error::{ConfigError, sanitize};
use super::imports::McpServersYaml;
use super::keys;
use super::raw::{
    AgentYaml, BudgetYaml, DurationYaml, EnvironmentYaml, HookMap, LlmYaml, SubagentsYaml,
};
use super::suggest;
use super::yaml::{self, TopLevelKeys};
use crate::budget::{Budget, parse_duration};
pub use crate::llm::Pricing;
use crate::llm::{EXTRA_BODY_KEY, ModelApi, PromptCache, known_parameters};
use crate::tool::ToolDef;

/// The `llm:` section, validated.
#[derive(Debug, Clone, PartialEq)]
pub struct LlmConfig {
    /// Model name sent to the API.
    pub model: String,
    /// Sampling temperature, within 0..=2.
    pub temperature: Option<f64>,
    /// Upper bound on tokens per response.
    pub max_tokens: Option<u64>,
    /// The model's context window in tokens; never sent to the API.
    pub context_window: Option<u64>,
    /// Token prices for cost estimates; never sent to the API.
    pub pricing: Option<Pricing>,
    /// The wire API the model is asked through.
    pub api: ModelApi,
    /// Whether the provider is asked to cache the prompt's prefix.
    pub prompt_cache: PromptCache,
    /// Chat only: assistant-message fields sent back on later requests.
    pub reasoning_passback: Vec<String>,
    /// Every other key of `llm:`, and the entries of `llm.extra_body`, sent to the API
    /// unchanged.
    pub extra: Map<String, Value>,
}

/// agent.yaml checked on its own, before its imports, tools and sibling files are read.
#[derive(Debug, Clone)]
pub struct AgentFile {
    /// `name:`.
    pub name: String,
    /// `version:`.
    pub version: Option<String>,
    /// `description:`.
    pub description: Option<String>,
    /// `llm:`, validated.
    pub llm: LlmConfig,
    /// `system_prompt:` as written (default applied by the loader).
    pub system_prompt: Option<Spanned<String>>,
    /// `imports:` as written.
    pub imports: Vec<Spanned<String>>,
    /// `import_roots:` as written.
    pub import_roots: Vec<Spanned<String>>,
    /// `tools:` as written, not yet expanded.
    pub tools: Vec<Spanned<ToolDef>>,
    /// `max_iterations:`, positive.
    pub max_iterations: Option<u32>,
    /// `mcp_servers:` as written, checked by the importer.
    pub(crate) mcp_servers: McpServersYaml,
    /// `budget:`, checked.
    pub budget: Budget,
    /// `output_schema:` as written (resolved by the loader).
    pub output_schema: Option<Spanned<String>>,
    /// `ask_human:`, default true.
    pub ask_human: bool,
    /// `subagents:`, checked, defaults applied.
    pub subagents: SubagentCaps,
    /// `environment:` as written (checked by the loader, which knows the paths).
    pub environment: Option<Spanned<EnvironmentYaml>>,
    /// Hooks in the deprecated location, with the key they were found under.
    pub legacy_hooks: Option<(&'static str, HookMap)>,
}

/// Parse and check the text of an agent.yaml (or config.yaml) named `file`.
pub fn parse_agent_yaml(text: &str, file: &Path) -> Result<AgentFile, ConfigError> {
    if yaml::is_blank(text) {
        return Err(ConfigError::new(file, "the agent file is empty")
            .help("give at least `name: my-agent` and `llm: {model: gpt-4o}`"));
    }
    let keys: TopLevelKeys = yaml::parse(text, file)?;
    // Issue 30: `tols:` once only warned, and the run started with no tools.
    keys::check_top_level::<AgentYaml, _>(&keys.0, file)?;
    let raw: AgentYaml = yaml::parse(text, file)?;

    if raw.name.value.trim().is_empty() {
        return Err(ConfigError::new(file, "`name` is empty")
            .at(raw.name.referenced)
            .help("give the agent a name, e.g. `name: my-agent`"));
    }
    let max_iterations = match raw.max_iterations {
        Some(max) if max.value == 0 => {
            return Err(
                ConfigError::new(file, "`max_iterations` must be at least 1")
                    .at(max.referenced)
                    .help("give a positive number of iterations, or omit it for the default"),
            );
        }
        max => max.map(|m| m.value),
    };
    let legacy_hooks = match (raw.hooks, raw.lifecycle_hooks) {
        (Some(_), Some(lifecycle)) => {
            return Err(ConfigError::new(
                file,
                "both `hooks` and `lifecycle_hooks` are set in this file",
            )
            .at(lifecycle.referenced)
            .help("move all hooks to hooks.yaml in the agent directory"));
        }
        (Some(hooks), None) => Some(("hooks", hooks.value)),
        (None, Some(lifecycle)) => Some(("lifecycle_hooks", lifecycle.value)),
        (None, None) => None,
    };

    let llm = llm_config(raw.llm, file)?;
    Ok(AgentFile {
        name: raw.name.value,
        version: raw.version,
        description: raw.description,
        llm,
        system_prompt: raw.system_prompt,
        imports: raw.imports.unwrap_or_default(),
        import_roots: raw.import_roots.unwrap_or_default(),
        tools: raw.tools.unwrap_or_default(),
        max_iterations,
        mcp_servers: raw.mcp_servers,
        budget: match raw.budget {
            Some(budget) => budget_config(budget.value, file)?,
            None => Budget::default(),
        },
        output_schema: raw.output_schema,
        ask_human: raw.ask_human.unwrap_or(true),
        subagents: match raw.subagents {
            Some(caps) => subagent_caps(caps.value, file)?,
            None => SubagentCaps::default(),
        },
        environment: raw.environment,
        legacy_hooks,
    })
}

/// How deep and how wide an agent's tree of sub-agents may grow (`subagents:`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SubagentCaps {
    /// Deepest a descendant may be (a child is at depth 1).
    pub max_depth: u32,
    /// Sub-agents one turn may start at once.
    pub max_concurrent: u32,
}

impl Default for SubagentCaps {
    fn default() -> Self {
        Self {
            max_depth: 5,
            max_concurrent: 4,
        }
    }
}

fn subagent_caps(caps: SubagentsYaml, file: &Path) -> Result<SubagentCaps, ConfigError> {
    let defaults = SubagentCaps::default();
    let positive = |value: Option<Spanned<u32>>, key: &str, default: u32| match value {
        Some(value) if value.value == 0 => Err(ConfigError::new(
            file,
            format!("`subagents.{key}` must be at least 1"),
        )
        .at(value.referenced)
        .help(format!(
            "give a positive number, or omit it for the default ({default})"
        ))),
        value => Ok(value.map_or(default, |v| v.value)),
    };
    Ok(SubagentCaps {
        max_depth: positive(caps.max_depth, "max_depth", defaults.max_depth)?,
        max_concurrent: positive(
            caps.max_concurrent,
            "max_concurrent",
            defaults.max_concurrent,
        )?,
    })
}

fn budget_config(budget: BudgetYaml, file: &Path) -> Result<Budget, ConfigError> {
    let max_cost_usd = match budget.max_cost_usd {
        Some(cost) if !(cost.value.is_finite() && cost.value > 0.0) => {
            return Err(ConfigError::new(
                file,
                format!(
                    "`budget.max_cost_usd` must be a positive number, found {}",
                    cost.value
                ),
            )
            .at(cost.referenced)
            .help("give a limit in US dollars, e.g. `max_cost_usd: 0.50`"));
        }
        cost => cost.map(|c| c.value),
    };
    let max_tokens =
        match budget.max_tokens {
            Some(tokens) if tokens.value == 0 => {
                return Err(ConfigError::new(file, "`budget.max_tokens` must be at least 1")
                .at(tokens.referenced)
                .help("give a number of tokens (input plus output), e.g. `max_tokens: 200000`"));
            }
            tokens => tokens.map(|t| t.value),
        };
    let max_duration = match budget.max_duration {
        None => None,
        Some(duration) => {
            let parsed = match &duration.value {
                DurationYaml::Seconds(seconds) => parse_duration(&seconds.to_string()),
                DurationYaml::Text(text) => parse_duration(text),
            };
            Some(parsed.map_err(|problem| {
                ConfigError::new(file, format!("`budget.max_duration`: {problem}"))
                    .at(duration.referenced)
                    .help("e.g. `max_duration: 30m`")
            })?)
        }
    };
    Ok(Budget {
        max_cost_usd,
        max_tokens,
        max_duration,
    })
}

/// The validated `llm:` section.
fn llm_config(llm: Spanned<LlmYaml>, file: &Path) -> Result<LlmConfig, ConfigError> {
    let at = llm.referenced;
    let mut llm = llm.value;
    let model = match llm.model {
        Some(model) if model.value.trim().is_empty() => {
            return Err(ConfigError::new(file, "`llm.model` is empty")
                .at(model.referenced)
                .help("name the model, e.g. `model: gpt-4o`"));
        }
        Some(model) => model.value,
        None => {
            return Err(ConfigError::new(file, "`llm` has no `model`")
                .at(at)
                .help("name the model under `llm:`, e.g. `model: gpt-4o`"));
        }
    };
    if let Some(temperature) = &llm.temperature
        && !(0.0..=2.0).contains(&temperature.value)
    {
        return Err(ConfigError::new(
            file,
            format!(
                "`temperature` must be between 0 and 2, found {}",
                temperature.value
            ),
        )
        .at(temperature.referenced)
        .help("use a value from 0 (deterministic) to 2 (most random)"));
    }
    if let Some(max_tokens) = &llm.max_tokens
        && max_tokens.value == 0
    {
        return Err(ConfigError::new(file, "`max_tokens` must be at least 1")
            .at(max_tokens.referenced)
            .help("give a positive number of tokens, or omit it"));
    }
    if let Some(window) = &llm.context_window {
        if window.value == 0 {
            return Err(ConfigError::new(file, "`context_window` must be at least 1")
                .at(window.referenced)
                .help("give the model's context window in tokens, e.g. `context_window: 8192`, or omit it"));
        }
        if let Some(max_tokens) = &llm.max_tokens
            && max_tokens.value >= window.value
        {
            return Err(ConfigError::new(
                file,
                format!(
                    "`max_tokens` ({}) leaves no room for the prompt in `context_window` ({})",
                    max_tokens.value, window.value
                ),
            )
            .at(max_tokens.referenced)
            .help("lower `max_tokens` (the answer's room) below `context_window`"));
        }
    }
    let pricing = match llm.pricing {
        None => None,
        Some(pricing) => {
            let optional = [
                &pricing.value.cached_input_per_million,
                &pricing.value.cache_write_per_million,
            ];
            for price in [
                &pricing.value.input_per_million,
                &pricing.value.output_per_million,
            ]
            .into_iter()
            .chain(optional.into_iter().flatten())
            {
                if !(price.value.is_finite() && price.value >= 0.0) {
                    return Err(ConfigError::new(
                        file,
                        format!("price must be a non-negative number, found {}", price.value),
                    )
                    .at(price.referenced)
                    .help("give the price of one million tokens, e.g. 2.5"));
                }
            }
            Some(Pricing {
                input_per_million: pricing.value.input_per_million.value,
                output_per_million: pricing.value.output_per_million.value,
                cached_input_per_million: pricing.value.cached_input_per_million.map(|p| p.value),
                cache_write_per_million: pricing.value.cache_write_per_million.map(|p| p.value),
            })
        }
    };
    let extra_body = match llm.extra.remove(EXTRA_BODY_KEY) {
        None => Map::new(),
        Some(Value::Object(body)) => body,
        Some(_) => {
            return Err(ConfigError::new(file, "`llm.extra_body` must be a mapping")
                .at(at)
                .help(
                    "list provider-specific request parameters under it, e.g. \
                         `extra_body: {top_a: 0.1}`",
                ));
        }
    };
    let api = llm.api.as_ref().map(|api| api.value).unwrap_or_default();
    let reasoning_passback = match llm.reasoning_passback.take() {
        None => Vec::new(),
        Some(fields) if api != ModelApi::Chat => {
            return Err(ConfigError::new(
                file,
                format!(
                    "`llm.reasoning_passback` is for chat-completions servers; with `api: {api}` \
                     the engine passes the reasoning back itself"
                ),
            )
            .at(fields.referenced)
            .help("remove `reasoning_passback`, or use `api: chat`"));
        }
        Some(fields) => fields.value,
    };
    thinking_budget(&llm.extra, llm.max_tokens.as_ref(), api, file)?;
    let prompt_cache = llm.prompt_cache.as_ref().map(|cache| cache.value);
    let known = known_parameters(api);
    if let Some(key) = llm
        .extra_keys
        .iter()
        .find(|key| key.value != EXTRA_BODY_KEY && !known.contains(&key.value.as_str()))
    {
        return Err(unknown_llm_key(file, key, api));
    }
    let mut extra = llm.extra;
    extra.extend(extra_body);
    let config = LlmConfig {
        model,
        temperature: llm.temperature.map(|t| t.value),
        max_tokens: llm.max_tokens.map(|m| m.value),
        context_window: llm.context_window.map(|w| w.value),
        pricing,
        api,
        prompt_cache: prompt_cache.unwrap_or_default(),
        reasoning_passback,
        extra,
    };
    Ok(config)
}

/// Anthropic's rule (A-SDK `thinking_config_enabled_param.py`): `thinking.budget_tokens`
/// below `max_tokens` when both are given, so the mistake is caught before a request.
fn thinking_budget(
    extra: &Map<String, Value>,
    max_tokens: Option<&Spanned<u64>>,
    api: ModelApi,
    file: &Path,
) -> Result<(), ConfigError> {
    let budget = extra
        .get("thinking")
        .and_then(|thinking| thinking.get("budget_tokens"))
        .and_then(Value::as_u64);
    match (api, budget, max_tokens) {
        (ModelApi::Anthropic, Some(budget), Some(max_tokens)) if budget >= max_tokens.value => {
            Err(ConfigError::new(
                file,
                format!(
                    "`thinking.budget_tokens` ({budget}) must be below `max_tokens` ({})",
                    max_tokens.value
                ),
            )
            .at(max_tokens.referenced)
            .help("raise `max_tokens` above the thinking budget, or lower the budget"))
        }
        (ModelApi::Chat | ModelApi::Responses | ModelApi::Anthropic, _, _) => Ok(()),
    }
}

/// A key under `llm:` that is neither the engine's nor a known request parameter of the
/// agent's API: most often a typo, which a server would reject or, worse, silently ignore.
/// Parameters only a provider knows go under `llm.extra_body`, the section's extension
/// namespace.
fn unknown_llm_key(file: &Path, key: &Spanned<String>, api: ModelApi) -> ConfigError {
    let engine = engine_llm_keys();
    let name = sanitize(&key.value);
    let known = known_parameters(api)
        .iter()
        .copied()
        .chain(engine.iter().map(String::as_str))
        .chain([EXTRA_BODY_KEY]);
    let suggestion = suggest::closest(&name, known)
        .map(|best| format!("; did you mean `{best}`?"))
        .unwrap_or_default();
    let (what, parameters) = match api {
        ModelApi::Chat => (
            "a request parameter the engine knows".to_owned(),
            "OpenAI's chat-completions parameters".to_owned(),
        ),
        ModelApi::Responses | ModelApi::Anthropic => (
            format!("a request parameter of the `{api}` API the engine knows"),
            format!("the `{api}` API's request parameters"),
        ),
    };
    ConfigError::new(
        file,
        format!("unknown key `llm.{name}`: not {what}{suggestion}"),
    )
    .at(key.referenced)
    .help(format!(
        "`llm:` takes the engine's keys ({}) and {parameters}; put a parameter only your \
         provider knows under `llm.{EXTRA_BODY_KEY}`, which is sent as written",
        engine.join(", ")
    ))
}

/// The engine's own keys of `llm:`: the properties of its generated schema, so a key added
/// to `LlmYaml` is known here with nothing to register.
fn engine_llm_keys() -> Vec<String> {
    let schema = schemars::schema_for!(LlmYaml);
    schema
        .get("properties")
        .and_then(serde_json::Value::as_object)
        .map(|properties| properties.keys().cloned().collect())
        .unwrap_or_default()
}
