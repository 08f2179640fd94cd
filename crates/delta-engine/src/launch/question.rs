//! The workspace question of `delta run` without `-w`: reuse the workspace used last, or
//! create a new one? The library owns what the question says and what an answer means;
//! the caller owns the terminal and hands its input and output in.

use std::io::{BufRead, Write};

use super::error::LaunchError;
use crate::workspace::{MAX_QUESTIONS, Reuse};

/// What an answer to the workspace question means: only explicit answers count (Enter
/// alone takes the default shown in capitals, reuse), and `None` asks again. Anything
/// else used to count as "reuse", so a typo such as `nw` ran in the old workspace.
fn parse_reuse_answer(answer: &str) -> Option<Reuse> {
    match answer.trim().to_ascii_lowercase().as_str() {
        "" | "y" | "yes" | "r" | "reuse" => Some(Reuse::Last),
        "n" | "no" | "new" => Some(Reuse::New),
        _ => None,
    }
}

/// Asks on `output` whether to reuse workspace `previous`, reading answers from `input`.
///
/// End of input means nobody is there to answer: a new workspace, as without a terminal.
/// After [`MAX_QUESTIONS`] unclear answers nothing is guessed.
///
/// # Errors
/// [`LaunchError::NoAnswer`] after [`MAX_QUESTIONS`] unclear answers, with nothing
/// created; [`LaunchError::Prompt`] when `input` cannot be read.
pub fn ask_reuse(
    previous: &str,
    input: &mut impl BufRead,
    output: &mut impl Write,
) -> Result<Reuse, LaunchError> {
    // The question goes to the caller's output (stderr); when that fails there is nowhere
    // to report it, and the answer is still read.
    let mut say = |text: String| {
        let _ = output
            .write_all(text.as_bytes())
            .and_then(|()| output.flush());
    };
    for _ in 0..MAX_QUESTIONS {
        say(format!(
            "Reuse workspace {previous} (last used)? [Y/n: y reuses it, n creates a new one] "
        ));
        let mut answer = String::new();
        if input.read_line(&mut answer).map_err(LaunchError::Prompt)? == 0 {
            say("\nNo answer (end of input): creating a new workspace.\n".to_owned());
            return Ok(Reuse::New);
        }
        match parse_reuse_answer(&answer) {
            Some(reuse) => return Ok(reuse),
            None => say(format!(
                "Please answer y (reuse {previous}) or n (create a new workspace).\n"
            )),
        }
    }
    Err(LaunchError::NoAnswer {
        previous: previous.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_explicit_answers_decide_the_workspace_question() {
        for answer in [
            "", "\n", "y\n", "Y", "yes", " YES \n", "r", "reuse\n", "Reuse",
        ] {
            assert_eq!(parse_reuse_answer(answer), Some(Reuse::Last), "{answer:?}");
        }
        for answer in ["n", "N\n", "no", "No\n", "new", " NEW "] {
            assert_eq!(parse_reuse_answer(answer), Some(Reuse::New), "{answer:?}");
        }
        for answer in ["nw", "yes please", "0", "q", "W001", "y n", "nope"] {
            assert_eq!(parse_reuse_answer(answer), None, "{answer:?}");
        }
    }

    /// The question asked with `input` as the terminal: the decision and what was shown.
    fn ask(input: &str) -> (Result<Reuse, LaunchError>, String) {
        let mut shown = Vec::new();
        let decision = ask_reuse("W003", &mut std::io::Cursor::new(input), &mut shown);
        (decision, String::from_utf8(shown).unwrap())
    }

    const QUESTION: &str =
        "Reuse workspace W003 (last used)? [Y/n: y reuses it, n creates a new one] ";
    const AGAIN: &str = "Please answer y (reuse W003) or n (create a new workspace).\n";

    #[test]
    fn an_unclear_answer_is_met_with_the_question_again() {
        let (decision, shown) = ask("nw\nn\n");
        assert_eq!(decision.unwrap(), Reuse::New);
        assert_eq!(shown, format!("{QUESTION}{AGAIN}{QUESTION}"));
        let (decision, _) = ask("\n");
        assert_eq!(decision.unwrap(), Reuse::Last);
    }

    #[test]
    fn end_of_input_creates_a_new_workspace() {
        let (decision, shown) = ask("");
        assert_eq!(decision.unwrap(), Reuse::New);
        assert_eq!(
            shown,
            format!("{QUESTION}\nNo answer (end of input): creating a new workspace.\n")
        );
        let (decision, _) = ask("what\n");
        assert_eq!(decision.unwrap(), Reuse::New);
    }

    #[test]
    fn three_unclear_answers_stop_the_run_without_guessing() {
        let (decision, shown) = ask("a\nb\nc\ny\n");
        let error = decision.unwrap_err();
        assert_eq!(shown, format!("{QUESTION}{AGAIN}").repeat(3));
        assert_eq!(
            error.to_string(),
            "no clear answer to \"Reuse workspace W003?\" after 3 tries; nothing was created"
        );
        assert!(
            error
                .help()
                .unwrap()
                .starts_with("answer y (reuse W003) or n")
        );
    }
}
