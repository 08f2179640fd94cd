//! The seam's second half: a run's environment while it runs, what it tells the journal,
//! the check of the tools' programs inside, and its end.

use std::path::PathBuf;

use super::{
    CallEnvironment, EnvironmentError, EnvironmentReport, Kind, Placement, container, keeper,
};

/// A run's environment, started.
#[derive(Debug)]
pub struct Environment {
    pub(super) kind: Kind,
    pub(super) placement: Placement,
    pub(super) report: EnvironmentReport,
    pub(super) running: Running,
    pub(super) keep: bool,
    pub(super) note: Option<String>,
    pub(super) programs: Vec<(String, String)>,
    pub(super) image: Option<String>,
}

#[derive(Debug)]
pub(super) enum Running {
    Host,
    Keeper {
        keeper: keeper::Keeper,
        runtime_dir: PathBuf,
    },
    Container(container::Container),
}

/// How a run ended, for what happens to its container.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// The run is over (COMPLETED, FAILED, INTERRUPTED): the container goes unless kept.
    Over,
    /// The run waits for an answer: its container stays for `delta continue`.
    Paused,
}

impl Environment {
    /// The kind.
    #[must_use]
    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// How every tool process of the run starts.
    #[must_use]
    pub fn placement(&self) -> &Placement {
        &self.placement
    }

    /// What is enforced (`None` on the host, whose journals stay as they were).
    #[must_use]
    pub fn report(&self) -> Option<&EnvironmentReport> {
        (self.kind != Kind::Host).then_some(&self.report)
    }

    /// What ACTION_REQUEST records (`None` on the host).
    #[must_use]
    pub fn call_record(&self) -> Option<CallEnvironment> {
        match &self.running {
            Running::Host => None,
            Running::Keeper { .. } => Some(CallEnvironment {
                kind: self.kind,
                container_id: None,
                image_id: None,
            }),
            Running::Container(container) => Some(CallEnvironment {
                kind: self.kind,
                container_id: Some(container.id.clone()),
                image_id: Some(container.image_id.clone()),
            }),
        }
    }

    /// The note for the model when the run's container had to be made anew.
    #[must_use]
    pub fn note(&self) -> Option<&str> {
        self.note.as_deref()
    }

    /// Checks that the tools' programs are found inside.
    ///
    /// # Errors
    /// [`EnvironmentError::ProgramsMissing`] listing each; or when the check cannot run.
    pub async fn check_programs(&self) -> Result<(), EnvironmentError> {
        if self.kind == Kind::Host || self.programs.is_empty() {
            return Ok(());
        }
        let mut argv: Vec<String> = [
            "/bin/sh",
            "-c",
            "for p do command -v \"$p\" >/dev/null 2>&1 || printf '%s\\n' \"$p\"; done",
            "sh",
        ]
        .map(str::to_owned)
        .to_vec();
        argv.extend(self.programs.iter().map(|(_, program)| program.clone()));
        let cwd = match &self.placement {
            Placement::Keeper(keeper) => keeper.paths.host.clone(),
            Placement::Container(container) => container.paths.host.clone(),
            Placement::Host => PathBuf::from("/"),
        };
        let options = crate::process::ProcessOptions {
            cwd,
            env: Vec::new(),
            timeout: std::time::Duration::from_secs(60),
            output: crate::process::OutputPolicy::default(),
            record: None,
        };
        let outcome = crate::process::run_process_in(&self.placement, &argv, None, &options)
            .await
            .map_err(|error| EnvironmentError::Start {
                kind: self.kind,
                message: format!("cannot look for the tools' programs inside: {error}"),
            })?;
        if outcome.exit_code != Some(0) {
            return Err(EnvironmentError::Start {
                kind: self.kind,
                message: format!(
                    "looking for the tools' programs inside failed ({}): {}",
                    outcome.exit_text(),
                    String::from_utf8_lossy(&outcome.stderr.to_vec()).trim()
                ),
            });
        }
        let stdout = String::from_utf8_lossy(&outcome.stdout.to_vec()).into_owned();
        let absent: Vec<&str> = stdout.lines().collect();
        let missing: Vec<(String, String)> = self
            .programs
            .iter()
            .filter(|(_, program)| absent.contains(&program.as_str()))
            .cloned()
            .collect();
        if missing.is_empty() {
            Ok(())
        } else {
            Err(EnvironmentError::ProgramsMissing {
                kind: self.kind,
                missing,
                image: self.image.clone(),
            })
        }
    }

    /// Ends the environment: the keeper stops (and with it everything the run left
    /// running); the container is removed when the run is over, unless `keep: true`.
    pub fn shutdown(self, ending: Ending) {
        match self.running {
            Running::Host => {}
            Running::Keeper {
                keeper,
                runtime_dir,
            } => {
                keeper.stop();
                let _ = std::fs::remove_dir_all(runtime_dir);
            }
            Running::Container(container) => {
                if ending == Ending::Over && !self.keep {
                    container::remove(&container.program, container.runtime, &container.name);
                }
            }
        }
    }
}
