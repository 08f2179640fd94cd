//! Engine variables `${AGENT_HOME}` and `${CWD}`, expanded when configuration loads.

use std::path::{Path, PathBuf};

/// The values of the engine variables for one load.
#[derive(Debug, Clone)]
pub(crate) struct Vars {
    agent_home: String,
    cwd: String,
}

impl Vars {
    pub(crate) fn new(agent_home: &Path, cwd: &Path) -> Self {
        Self {
            agent_home: agent_home.to_string_lossy().into_owned(),
            cwd: cwd.to_string_lossy().into_owned(),
        }
    }

    /// `text` with `${AGENT_HOME}` and `${CWD}` replaced.
    ///
    /// Other `${NAME}` sequences are left alone: hook and generator commands may hand them
    /// to a shell of their own (`sh -c 'echo ${RUN_DIR}'`), where they mean something.
    pub(crate) fn expand(&self, text: &str) -> String {
        // One pass, so that a value containing `${CWD}` is never expanded again.
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(start) = rest.find("${") {
            out.push_str(&rest[..start]);
            let tail = &rest[start..];
            if let Some(after) = tail.strip_prefix("${AGENT_HOME}") {
                out.push_str(&self.agent_home);
                rest = after;
            } else if let Some(after) = tail.strip_prefix("${CWD}") {
                out.push_str(&self.cwd);
                rest = after;
            } else {
                out.push_str("${");
                rest = &tail[2..];
            }
        }
        out.push_str(rest);
        out
    }

    /// A configured path: variables expanded, relative paths taken from `base`.
    pub(crate) fn path(&self, text: &str, base: &Path) -> PathBuf {
        base.join(self.expand(text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expands_only_engine_variables() {
        let vars = Vars::new(Path::new("/agents/a"), Path::new("/work/w"));
        assert_eq!(
            vars.expand("${AGENT_HOME}/x ${CWD} ${HOME} $CWD"),
            "/agents/a/x /work/w ${HOME} $CWD"
        );
        let tricky = Vars::new(Path::new("/a/${CWD}"), Path::new("/w"));
        assert_eq!(tricky.expand("${AGENT_HOME}|${"), "/a/${CWD}|${");
    }

    #[test]
    fn relative_paths_join_the_base_and_absolute_ones_stay() {
        let vars = Vars::new(Path::new("/agents/a"), Path::new("/work/w"));
        let base = Path::new("/agents/a");
        assert_eq!(vars.path("p.md", base), PathBuf::from("/agents/a/p.md"));
        assert_eq!(
            vars.path("${CWD}/DELTA.md", base),
            PathBuf::from("/work/w/DELTA.md")
        );
    }
}
