//! Paths written in configuration files: engine variables substituted, relative paths
//! anchored at the directory the file's paths are relative to.

use std::path::{Path, PathBuf};

use crate::tool::EngineVars;

/// `text` with `${AGENT_HOME}`/`${CWD}` substituted, joined to `base` when relative.
pub(crate) fn resolve_path(vars: &EngineVars, text: &str, base: &Path) -> PathBuf {
    base.join(vars.substitute(text))
}

/// The engine variables for an agent at `agent_home` running in `cwd`.
pub(crate) fn engine_vars(agent_home: &Path, cwd: &Path) -> EngineVars {
    EngineVars {
        agent_home: agent_home.to_path_buf(),
        cwd: cwd.to_path_buf(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_join_the_base_and_absolute_ones_stay() {
        let vars = engine_vars(Path::new("/agents/a"), Path::new("/work/w"));
        let base = Path::new("/agents/a");
        assert_eq!(
            resolve_path(&vars, "p.md", base),
            PathBuf::from("/agents/a/p.md")
        );
        assert_eq!(
            resolve_path(&vars, "${CWD}/DELTA.md", base),
            PathBuf::from("/work/w/DELTA.md")
        );
        assert_eq!(
            resolve_path(&vars, "${AGENT_HOME}/../x", Path::new("/elsewhere")),
            PathBuf::from("/agents/a/../x")
        );
    }
}
