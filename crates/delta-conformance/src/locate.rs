//! Finding what the runner needs when the command line does not say: the repository's
//! `fixtures/` and `schemas/` (searched upwards from the runner's own executable, then from
//! the current directory) and programs (next to the runner, then on `PATH`).

use std::path::{Path, PathBuf};

/// The first ancestor of the runner's directory, then of the current directory, holding
/// `rel` for which `accept` holds; returns `ancestor/rel`.
pub fn find_upwards(rel: &str, accept: impl Fn(&Path) -> bool) -> Option<PathBuf> {
    let exe_dir = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(Path::to_path_buf));
    let cwd = std::env::current_dir().ok();
    [exe_dir, cwd]
        .into_iter()
        .flatten()
        .flat_map(|start| {
            start
                .ancestors()
                .map(|dir| dir.join(rel))
                .collect::<Vec<_>>()
        })
        .find(|candidate| accept(candidate))
}

/// The `fixtures/` directory with a `scenarios/` subdirectory.
pub fn default_fixtures() -> Option<PathBuf> {
    find_upwards("fixtures", |dir| dir.join("scenarios").is_dir())
}

/// The `schemas/` directory holding at least one `*.schema.json`.
pub fn default_schemas() -> Option<PathBuf> {
    find_upwards("schemas", |dir| {
        std::fs::read_dir(dir).is_ok_and(|entries| {
            entries.flatten().any(|e| {
                e.file_name()
                    .to_str()
                    .is_some_and(|n| n.ends_with(crate::schemas::SUFFIX))
            })
        })
    })
}

/// A program next to the runner's executable, else on `PATH`.
pub fn sibling_or_on_path(name: &str) -> Option<PathBuf> {
    let sibling = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|dir| dir.join(name)))
        .filter(|path| is_executable(path));
    sibling.or_else(|| on_path(name))
}

/// The default sessions implementation for an implementation command line: `name`
/// beside the first word of `words` that is a path to a file (`target/debug/delta` →
/// `target/debug/delta-sessions`; `sh wrapper.sh /x/delta` → `/x/delta-sessions`), else
/// `name` on `PATH`. Bare program names (`node`) are not looked beside: the sessions
/// program of some other installation would be tested instead.
pub fn beside_implementation(words: &[String], name: &str) -> Option<PathBuf> {
    words
        .iter()
        .filter(|word| word.contains('/') && Path::new(word).is_file())
        .filter_map(|word| Path::new(word).parent().map(|dir| dir.join(name)))
        .find(|candidate| is_executable(candidate))
        .or_else(|| on_path(name))
}

/// A program on `PATH`.
pub fn on_path(name: &str) -> Option<PathBuf> {
    if name.contains('/') {
        let path = PathBuf::from(name);
        return is_executable(&path).then_some(path);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    path.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The implementation's command line with relative paths made absolute: every word that
/// names an existing file or directory relative to the current directory (e.g.
/// `dist/index.js` in `node dist/index.js`). Scenarios run in their own directories, where
/// relative paths would no longer resolve; bare program names (`node`) stay for `PATH`.
pub fn absolutize_command(words: &[String]) -> Vec<String> {
    absolutize_command_in(words, std::env::current_dir().ok().as_deref())
}

/// [`absolutize_command`] relative to `base` (an adapter file's directory).
pub fn absolutize_command_in(words: &[String], base: Option<&Path>) -> Vec<String> {
    words
        .iter()
        .map(|word| match base {
            Some(cwd)
                if word.contains('/')
                    && !word.starts_with('-')
                    && Path::new(word).is_relative()
                    && cwd.join(word).exists() =>
            {
                cwd.join(word).to_string_lossy().into_owned()
            }
            Some(_) | None => word.clone(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programs_are_found_on_path() {
        assert!(on_path("sh").is_some());
        assert!(on_path("no-such-program-delta-conformance").is_none());
    }

    #[test]
    fn a_program_is_found_beside_the_first_file_of_the_command() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        let write = |path: &Path, mode: u32| {
            use std::os::unix::fs::PermissionsExt as _;
            std::fs::write(path, "#!/bin/sh\n").unwrap();
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
        };
        write(&dir.path().join("wrapper.sh"), 0o644);
        write(&bin.join("engine"), 0o755);
        write(&bin.join("helper"), 0o755);
        let text = |p: &Path| p.to_string_lossy().into_owned();
        let words = [
            "sh".to_string(),
            text(&dir.path().join("wrapper.sh")),
            text(&bin.join("engine")),
        ];
        assert_eq!(
            beside_implementation(&words, "helper"),
            Some(bin.join("helper"))
        );
        assert_eq!(beside_implementation(&words[..2], "helper-nowhere"), None);
        // Not beside a bare name: `sh` is on PATH, but its directory is not searched.
        assert_eq!(beside_implementation(&words[..1], "helper"), None);
        assert_eq!(
            beside_implementation(&words[..1], "sh"),
            on_path("sh"),
            "PATH is the fallback"
        );
    }

    #[test]
    fn existing_relative_paths_become_absolute() {
        let cwd = std::env::current_dir().unwrap();
        let words: Vec<String> = ["sh", "src/lib.rs", "--flag", "missing/x.js"]
            .iter()
            .map(ToString::to_string)
            .collect();
        let abs = absolutize_command(&words);
        assert_eq!(abs[0], "sh");
        assert_eq!(abs[1], cwd.join("src/lib.rs").to_string_lossy());
        assert_eq!(abs[2..], words[2..]);
    }
}
