//! Numbered record directories, `{step:03}_{name}/`, one per hook invocation: the seed
//! hooks' `io/hooks/` and the Claude Code hooks' `io/claude_hooks/` are numbered alike.

use std::io;
use std::path::{Path, PathBuf};

/// The directories of one kind of hook record, and the step the next one gets.
#[derive(Debug)]
pub(crate) struct StepDirs {
    dir: PathBuf,
    next: u32,
}

impl StepDirs {
    /// The records under `dir`. Steps continue after the highest `{step}_*` entry already
    /// there, so a continued run never reuses one.
    pub(crate) fn new(dir: PathBuf) -> Self {
        Self {
            next: last_step(&dir).map_or(1, |step| step.saturating_add(1)),
            dir,
        }
    }

    /// The step number the next record will get.
    pub(crate) fn next(&self) -> u32 {
        self.next
    }

    /// Creates the next `{step}_{name}/` directory. A directory of that name left by an
    /// earlier process is never reused: the step moves on until a fresh one is created.
    pub(crate) fn allocate(&mut self, name: &str) -> (u32, Result<PathBuf, String>) {
        if let Err(e) = fs_err::create_dir_all(&self.dir) {
            let step = self.take();
            return (step, Err(e.to_string()));
        }
        loop {
            let step = self.take();
            let dir = self.dir.join(dir_name(step, name));
            match fs_err::create_dir(&dir) {
                Ok(()) => return (step, Ok(dir)),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists && step < u32::MAX => {}
                Err(e) => return (step, Err(e.to_string())),
            }
        }
    }

    fn take(&mut self) -> u32 {
        let step = self.next;
        self.next = step.saturating_add(1);
        step
    }
}

/// `{step}_{name}`: the step zero-padded to at least three digits.
pub(crate) fn dir_name(step: u32, name: &str) -> String {
    format!("{step:03}_{name}")
}

/// The highest step among the `{step}_{name}` entries of `dir`.
fn last_step(dir: &Path) -> Option<u32> {
    std::fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let name = entry.file_name();
            let (digits, _) = name.to_str()?.split_once('_')?;
            digits.parse::<u32>().ok()
        })
        .max()
}
