//! The engine variables (`${AGENT_HOME}`, `${CWD}`) and their substitution, shared by every
//! template form: `exec:` and `shell:` templates (`template`, `shell`) and the `command:`
//! arrays of tools, hooks and context generators.

use std::path::PathBuf;

/// Values of the engine variables substituted into templates when the config loads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineVars {
    /// Absolute path of the agent directory (`${AGENT_HOME}`).
    pub agent_home: PathBuf,
    /// Absolute path of the workspace (`${CWD}`).
    pub cwd: PathBuf,
}

impl EngineVars {
    /// Replaces every `${AGENT_HOME}` and `${CWD}` in `text` by its value, touching no
    /// other text: for argv elements written by the user (`command:` arrays of tools,
    /// hooks and context generators), where any other `${…}` belongs to someone else.
    pub fn substitute(&self, text: &str) -> String {
        // One pass, so that a value containing `${CWD}` is not substituted again.
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(start) = rest.find("${") {
            out.push_str(&rest[..start]);
            let tail = &rest[start..];
            if let Some(after) = tail.strip_prefix("${AGENT_HOME}") {
                out.push_str(&self.agent_home.to_string_lossy());
                rest = after;
            } else if let Some(after) = tail.strip_prefix("${CWD}") {
                out.push_str(&self.cwd.to_string_lossy());
                rest = after;
            } else {
                out.push_str("${");
                rest = &tail[2..];
            }
        }
        out.push_str(rest);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[rstest::rstest]
    #[case("${AGENT_HOME}/x ${CWD}", "/a/${CWD}/x /w")]
    #[case("${HOME} $CWD ${CWD:raw} ${", "${HOME} $CWD ${CWD:raw} ${")]
    #[case("${${CWD}}", "${/w}")]
    #[case("é${CWD}é", "é/wé")]
    fn substitutes_only_engine_variables_once(#[case] text: &str, #[case] expected: &str) {
        let vars = EngineVars {
            agent_home: PathBuf::from("/a/${CWD}"),
            cwd: PathBuf::from("/w"),
        };
        assert_eq!(vars.substitute(text), expected);
    }
}
