//! [`Places`]: the run's workspace and agent directory written as the runner's
//! placeholders, so that recorded paths point into a replay's own directory.

use std::path::Path;

use serde_json::Value;

/// The run's absolute places, written as the runner's placeholders so that a recorded
/// path points into the scenario's own directory when it is replayed.
pub(super) struct Places {
    /// Longest first: a numbered workspace lies inside its agent's directory.
    replacements: Vec<(String, &'static str)>,
}

impl Places {
    pub(super) fn new(workspace: &Path, agent_home: &Path) -> Self {
        let mut replacements: Vec<(String, &'static str)> =
            [(workspace, "{workspace}"), (agent_home, "{agent}")]
                .into_iter()
                .map(|(path, placeholder)| (path.display().to_string(), placeholder))
                .filter(|(path, _)| path.len() > 1)
                .collect();
        replacements.sort_by_key(|(path, _)| std::cmp::Reverse(path.len()));
        Self { replacements }
    }

    /// `text` with the run's places replaced by their placeholders.
    pub(super) fn abstracted(&self, text: &str) -> String {
        self.replacements
            .iter()
            .fold(text.to_string(), |text, (path, placeholder)| {
                text.replace(path.as_str(), placeholder)
            })
    }

    /// Every string of `value` (keys included) [`abstracted`](Self::abstracted).
    pub(super) fn value(&self, value: &Value) -> Value {
        match value {
            Value::String(text) => Value::String(self.abstracted(text)),
            Value::Array(items) => Value::Array(items.iter().map(|v| self.value(v)).collect()),
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(key, v)| (self.abstracted(key), self.value(v)))
                    .collect(),
            ),
            Value::Null | Value::Bool(_) | Value::Number(_) => value.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_run_s_paths_become_placeholders_longest_first() {
        let places = Places::new(Path::new("/a/agent/workspaces/W001"), Path::new("/a/agent"));
        assert_eq!(
            places.abstracted("cat /a/agent/workspaces/W001/x /a/agent/tools.yaml"),
            "cat {workspace}/x {agent}/tools.yaml"
        );
    }
}
