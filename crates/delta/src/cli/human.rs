//! `ask_human` on the terminal (`-i`): the question on stderr, the answer read from stdin,
//! hidden while typed when it is a password or marked sensitive.
//!
//! stdout is reserved for the run's result, so the question never goes there. When stdin
//! is not a terminal the answer is read from it as a line, so a script (or a test) can pipe
//! answers in; end of input means nobody can answer, and the run pauses for an
//! asynchronous answer instead.

use std::io::{self, BufRead, IsTerminal, Write};
use std::os::fd::AsFd;
use std::sync::{Mutex, PoisonError};

use nix::sys::termios::{LocalFlags, SetArg, Termios, tcgetattr, tcsetattr};

use delta_engine::engine::HumanInput;
use delta_engine::output::RunResult;
use delta_engine::quote::quote_path;
use delta_engine::run::{FinalStatus, InputType, InteractionRequest, RunPaths};

/// The terminal settings in force before echo was turned off, while an answer is being
/// typed. Kept here (not only in the reading thread) because a signal can end the run while
/// that thread still blocks in `read`: [`restore_terminal`] then puts echo back.
static SAVED: Mutex<Option<Termios>> = Mutex::new(None);

/// Shows `prompt` on stderr and reads one line from stdin: the answer without its line
/// break, or `None` at end of input. Blocks; call it off the async runtime.
///
/// # Errors
/// When stderr or stdin fail, or the terminal's settings cannot be changed.
pub(crate) fn ask(
    prompt: &str,
    input_type: InputType,
    sensitive: bool,
) -> io::Result<Option<String>> {
    let hidden = sensitive || input_type == InputType::Password;
    let stdin = io::stdin();
    let on_terminal = stdin.is_terminal();
    let hint = match (input_type, hidden && on_terminal) {
        (InputType::Confirmation, _) => " (yes/no)",
        (InputType::Password | InputType::Text, true) => " (typing is hidden)",
        (InputType::Password | InputType::Text, false) => "",
    };
    let mut err = io::stderr().lock();
    write!(err, "\n[ask_human] {prompt}{hint}\n> ")?;
    err.flush()?;
    drop(err);

    if hidden && on_terminal {
        hide_echo(&stdin)?;
    }
    let mut line = String::new();
    let read = stdin.lock().read_line(&mut line);
    if hidden && on_terminal {
        restore_terminal();
        // The Enter that ended the answer was not echoed either.
        super::render::stderr("\n");
    }
    if read? == 0 {
        return Ok(None);
    }
    if line.ends_with('\n') {
        line.pop();
        if line.ends_with('\r') {
            line.pop();
        }
    }
    Ok(Some(line))
}

fn hide_echo(stdin: &io::Stdin) -> io::Result<()> {
    let fd = stdin.as_fd();
    let original = tcgetattr(fd).map_err(io::Error::from)?;
    let mut quiet = original.clone();
    quiet.local_flags.remove(LocalFlags::ECHO);
    *SAVED.lock().unwrap_or_else(PoisonError::into_inner) = Some(original);
    tcsetattr(fd, SetArg::TCSAFLUSH, &quiet).map_err(io::Error::from)
}

/// Puts back the terminal settings changed for a hidden answer, if they still are; safe to
/// call at any time, from any thread.
pub(crate) fn restore_terminal() {
    let saved = SAVED.lock().unwrap_or_else(PoisonError::into_inner).take();
    if let Some(original) = saved {
        // Nothing more can be done if this fails; the run's outcome must not depend on it.
        let _ = tcsetattr(io::stdin().as_fd(), SetArg::TCSANOW, &original);
    }
}

/// The terminal as the engine's [`HumanInput`] for `-i`.
#[derive(Debug)]
pub(super) struct TerminalHuman;

impl HumanInput for TerminalHuman {
    fn ask(&self, request: &InteractionRequest) -> io::Result<Option<String>> {
        ask(&request.prompt, request.input_type, request.sensitive)
    }

    fn abandon(&self) {
        restore_terminal();
    }
}

/// The guidance of seed 000 §2.5.2 on stderr after a run paused for input: where to put the
/// answer, and the command that continues the run.
pub(super) fn print_pause_guidance(result: &RunResult) {
    if result.status != FinalStatus::WaitingForInput {
        return;
    }
    let workspace = &result.metadata.workspace_path;
    let paths = RunPaths::new(workspace, &result.run_id);
    let command = format!(
        "delta continue --run-id {} -w {}",
        result.run_id,
        quote_path(workspace)
    );
    let mut text = String::from("\n");
    if let Some(interaction) = &result.interaction {
        text.push_str(&format!("The agent asks: {}\n", interaction.prompt));
    }
    text.push_str(&format!(
        "Agent paused. Provide response in {}\n  then run: {command}\nOr use: {command} -m <response>\n",
        quote_path(&paths.interaction_response())
    ));
    super::render::stderr(&text);
}
