//! `delta completions`: print a shell completion script generated from the argument parser.

use clap::{Args, CommandFactory};
use clap_complete::Shell;

use super::error::CliError;
use super::{Cli, render};
use delta_engine::output::Exit;

/// Arguments of `delta completions`.
#[derive(Debug, Args)]
#[command(after_help = render::examples(&[
    ("bash: load completions in every new shell", "echo 'source <(delta completions bash)' >> ~/.bashrc"),
    ("zsh: install into a directory of your $fpath", "delta completions zsh > ~/.zfunc/_delta"),
    ("fish", "delta completions fish > ~/.config/fish/completions/delta.fish"),
]))]
pub struct CompletionsArgs {
    /// The shell to generate the script for.
    #[arg(value_enum)]
    shell: Shell,
}

impl CompletionsArgs {
    pub(super) fn run(self) -> Result<Exit, CliError> {
        let mut command = Cli::command();
        let mut script = Vec::new();
        // Generated into memory: clap_complete panics on a failed write, and a closed
        // stdout must end the command quietly instead.
        clap_complete::generate(self.shell, &mut command, "delta", &mut script);
        render::stdout(&String::from_utf8_lossy(&script))?;
        Ok(Exit::Success)
    }
}
