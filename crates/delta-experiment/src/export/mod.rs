//! `delta export`: a run as an interchange document others read — Harbor's Agent
//! Trajectory Interchange Format ([`atif`]) for files, an OTLP/JSON trace with the GenAI
//! semantic conventions ([`otlp`]) for observability back ends.
//!
//! Both are pure functions of a [`Trajectory`]: the same run exports to the same bytes.
//! [`scenario`] turns a finished run into a conformance scenario that replays it.

pub mod atif;
pub mod otlp;
pub mod scenario;

use delta_engine::trajectory::Trajectory;

/// What replaces a prompt, tool argument or output under `--redact-content`.
pub const REDACTED_CONTENT: &str = "[content redacted]";

/// How content is treated in an export or a page.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Content {
    /// Leave out prompts, model text, tool arguments, commands, outputs and answers:
    /// what is left is the shape of the run (names, statuses, exit codes, tokens, times).
    pub redact: bool,
}

impl Content {
    /// `text`, or the placeholder when content is redacted.
    #[must_use]
    pub fn text<'a>(&self, text: &'a str) -> &'a str {
        if self.redact { REDACTED_CONTENT } else { text }
    }

    /// Tool arguments: the keys stay (they name the tool's parameters, not content), the
    /// values are replaced when content is redacted.
    #[must_use]
    pub fn arguments(
        &self,
        arguments: &serde_json::Map<String, serde_json::Value>,
    ) -> serde_json::Map<String, serde_json::Value> {
        if self.redact {
            arguments
                .keys()
                .map(|key| (key.clone(), serde_json::Value::from(REDACTED_CONTENT)))
                .collect()
        } else {
            arguments.clone()
        }
    }

    /// A JSON value (a result): the placeholder when content is redacted.
    #[must_use]
    pub fn value(&self, value: &serde_json::Value) -> serde_json::Value {
        if self.redact {
            serde_json::Value::from(REDACTED_CONTENT)
        } else {
            value.clone()
        }
    }
}

/// The export formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Harbor's ATIF trajectory (JSON).
    Atif,
    /// An OTLP/JSON `ExportTraceServiceRequest`.
    Otlp,
}

/// `trajectory` in `format`, pretty-printed JSON with a trailing newline.
#[must_use]
pub fn render(trajectory: &Trajectory, format: Format, content: Content) -> String {
    match format {
        Format::Atif => {
            let mut text = serde_json::to_string_pretty(&atif::trajectory(trajectory, content))
                .unwrap_or_default();
            text.push('\n');
            text
        }
        Format::Otlp => otlp::to_json(&otlp::trace_request(trajectory, content)),
    }
}
