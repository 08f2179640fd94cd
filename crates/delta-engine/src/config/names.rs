//! The vocabulary both layers of the configuration share: the names and defaults that
//! the YAML mirror (`raw`) parses into and the validated types (`hooks`, `context`) keep.

use schemars::JsonSchema;
use serde::Deserialize;

/// Timeout of a hook (and of a context generator) when none is configured.
pub const DEFAULT_TIMEOUT_MS: u64 = 30_000;

/// The lifecycle points at which a hook can run (seed 000 §2.7.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum HookName {
    /// Before each LLM call; may replace the request.
    PreLlmRequest,
    /// After each LLM response.
    PostLlmResponse,
    /// Before each tool call; may skip it.
    PreToolExecution,
    /// After each tool call.
    PostToolExecution,
    /// On any error.
    OnError,
    /// When the run ends, whatever its outcome.
    OnRunEnd,
    /// At the start of each Think-Act-Observe iteration.
    OnIterationStart,
    /// At the end of each Think-Act-Observe iteration.
    OnIterationEnd,
    /// When a sub-agent run one of the run's agent tools started ends its part, before
    /// the call's `post_tool_execution` (an extension: docs/subagents.md).
    OnSubagentEnd,
}

impl HookName {
    /// Every hook, in lifecycle order.
    pub const ALL: [HookName; 9] = [
        HookName::PreLlmRequest,
        HookName::PostLlmResponse,
        HookName::PreToolExecution,
        HookName::PostToolExecution,
        HookName::OnError,
        HookName::OnRunEnd,
        HookName::OnIterationStart,
        HookName::OnIterationEnd,
        HookName::OnSubagentEnd,
    ];

    /// The canonical name, as written in hooks.yaml and in `io/hooks/` directory names.
    pub fn as_str(self) -> &'static str {
        match self {
            HookName::PreLlmRequest => "pre_llm_request",
            HookName::PostLlmResponse => "post_llm_response",
            HookName::PreToolExecution => "pre_tool_execution",
            HookName::PostToolExecution => "post_tool_execution",
            HookName::OnError => "on_error",
            HookName::OnRunEnd => "on_run_end",
            HookName::OnIterationStart => "on_iteration_start",
            HookName::OnIterationEnd => "on_iteration_end",
            HookName::OnSubagentEnd => "on_subagent_end",
        }
    }

    /// The short name accepted for compatibility with earlier configurations.
    pub fn alias(self) -> Option<&'static str> {
        match self {
            HookName::PreLlmRequest => Some("pre_llm_req"),
            HookName::PostLlmResponse => Some("post_llm_resp"),
            HookName::PreToolExecution => Some("pre_tool_exec"),
            HookName::PostToolExecution => Some("post_tool_exec"),
            HookName::OnError
            | HookName::OnRunEnd
            | HookName::OnIterationStart
            | HookName::OnIterationEnd
            | HookName::OnSubagentEnd => None,
        }
    }

    /// The hook a name (canonical or alias) refers to.
    pub fn from_name(name: &str) -> Option<HookName> {
        HookName::ALL
            .into_iter()
            .find(|hook| hook.as_str() == name || hook.alias() == Some(name))
    }

    /// When the hook runs, for documentation and schemas.
    pub(crate) fn description(self) -> &'static str {
        match self {
            HookName::PreLlmRequest => {
                "Before each LLM call; output/payload_override.dat replaces the request."
            }
            HookName::PostLlmResponse => "After each LLM response.",
            HookName::PreToolExecution => {
                "Before each tool call; output/control.json may say {\"skip\": true}."
            }
            HookName::PostToolExecution => "After each tool call.",
            HookName::OnError => "On any error.",
            HookName::OnRunEnd => "When the run ends, whatever its outcome.",
            HookName::OnIterationStart => "At the start of each Think-Act-Observe iteration.",
            HookName::OnIterationEnd => "At the end of each Think-Act-Observe iteration.",
            HookName::OnSubagentEnd => {
                "When a sub-agent run started by one of the run's agent tools ends its part."
            }
        }
    }
}

/// What to do when a source's file does not exist.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OnMissing {
    /// Fail (the default).
    #[default]
    Error,
    /// Leave the source out.
    Skip,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_aliases_round_trip() {
        for hook in HookName::ALL {
            assert_eq!(HookName::from_name(hook.as_str()), Some(hook));
            if let Some(alias) = hook.alias() {
                assert_eq!(HookName::from_name(alias), Some(hook));
            }
        }
        assert_eq!(
            HookName::from_name("pre_tool_exec"),
            Some(HookName::PreToolExecution)
        );
        assert_eq!(HookName::from_name("pre_tool"), None);
    }
}
