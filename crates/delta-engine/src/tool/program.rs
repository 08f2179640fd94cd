//! Whether the program a tool runs can be found: `delta tool expand` warns about a tool
//! whose program is missing, since the model would otherwise learn it only from a failed
//! call in the middle of a run.

use std::ffi::OsStr;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use super::spec::{CommandPart, ToolSpec};

/// A tool whose program is not found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MissingProgram {
    /// The tool's name.
    pub tool: String,
    /// The program, as written in the tool's command.
    pub program: String,
}

impl std::fmt::Display for MissingProgram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.program.contains('/') {
            write!(
                f,
                "tool `{}` runs `{}`, which is not an executable file; the tool fails until it is one",
                self.tool, self.program
            )
        } else {
            write!(
                f,
                "tool `{}` runs `{}`, which is not on PATH; install it or fix the tool's command before a run",
                self.tool, self.program
            )
        }
    }
}

/// The tools of `tools` whose program is not an executable file: looked up in `path` (a
/// `PATH` value) when it is a bare name, taken as it is when absolute. A relative path
/// with a `/` resolves against the workspace of a run, unknown here, and is not checked;
/// neither is a program whose name is filled in per call.
pub fn missing_programs(tools: &[ToolSpec], path: Option<&OsStr>) -> Vec<MissingProgram> {
    tools
        .iter()
        .filter_map(|tool| {
            let CommandPart::Literal(program) = tool.command.first()? else {
                return None;
            };
            let found = if program.contains('/') {
                !Path::new(program).is_absolute() || is_executable(Path::new(program))
            } else {
                path.is_some_and(|path| {
                    std::env::split_paths(path).any(|dir| is_executable(&dir.join(program)))
                })
            };
            (!found).then(|| MissingProgram {
                tool: tool.name.clone(),
                program: program.clone(),
            })
        })
        .collect()
}

fn is_executable(path: &Path) -> bool {
    std::fs::metadata(path)
        .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
}
