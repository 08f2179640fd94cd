//! The state table of `delta continue` (seed 000 §2.6.2): what each status needs from the
//! command line and how the run is re-entered.

use std::fmt;

use crate::run::RunStatus;

/// How a run is re-entered, decided from its status and what the user gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// INTERRUPTED without a message: the loop goes on from the journal as it is.
    Resume,
    /// A new USER_MESSAGE, then the loop (INTERRUPTED with `-m`, COMPLETED, FAILED).
    UserMessage(String),
    /// Nothing to do: the process died while finishing the run (its end was journaled,
    /// not yet in `metadata.json`), the Janitor gave it that end, and no `-m` asks for
    /// more. Finishing an interrupted finish is the whole continuation.
    Finished,
    /// WAITING_FOR_INPUT: the answer to the pending `ask_human`.
    Answer {
        /// The answer, exactly as given.
        text: String,
        /// Where it came from.
        source: AnswerSource,
    },
}

/// Where the answer to an `ask_human` question came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnswerSource {
    /// `-m/--message`.
    Message,
    /// `.delta/{run_id}/interaction/response.txt`.
    ResponseFile,
}

impl fmt::Display for AnswerSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AnswerSource::Message => "-m/--message",
            AnswerSource::ResponseFile => "interaction/response.txt",
        })
    }
}

/// What a status needs and did not get.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Missing {
    /// COMPLETED or FAILED without `-m`.
    Message(RunStatus),
    /// WAITING_FOR_INPUT with neither `-m` nor `interaction/response.txt`.
    Answer,
}

/// The state table. `message` is `-m`; `response_file` is the content of
/// `interaction/response.txt` when it exists.
///
/// | status            | needs                      | entry                           |
/// |-------------------|----------------------------|---------------------------------|
/// | INTERRUPTED       | nothing (`-m` optional)    | resume, or USER_MESSAGE         |
/// | WAITING_FOR_INPUT | `-m` or response.txt       | the answer (`-m` wins)          |
/// | COMPLETED, FAILED | `-m`                       | USER_MESSAGE                    |
/// | RUNNING           | the Janitor first          | as INTERRUPTED once cleaned     |
///
/// A message of only whitespace counts as no message, except as an answer: an empty
/// answer ("just press Enter") is a valid answer to a question.
///
/// RUNNING is decided as INTERRUPTED here: the caller runs the Janitor before asking, and
/// only a run the Janitor cleaned up gets this far.
///
/// # Errors
/// [`Missing`] naming what the status needs.
pub fn entry_for(
    status: RunStatus,
    message: Option<&str>,
    response_file: Option<String>,
) -> Result<Entry, Missing> {
    let instruction = message
        .filter(|text| !text.trim().is_empty())
        .map(str::to_owned);
    match status {
        RunStatus::Interrupted | RunStatus::Running => {
            Ok(instruction.map_or(Entry::Resume, Entry::UserMessage))
        }
        RunStatus::Completed | RunStatus::Failed => instruction
            .map(Entry::UserMessage)
            .ok_or(Missing::Message(status)),
        RunStatus::WaitingForInput => match (message, response_file) {
            (Some(text), _) => Ok(Entry::Answer {
                text: text.to_owned(),
                source: AnswerSource::Message,
            }),
            (None, Some(text)) => Ok(Entry::Answer {
                text,
                source: AnswerSource::ResponseFile,
            }),
            (None, None) => Err(Missing::Answer),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interrupted_takes_an_optional_instruction() {
        assert_eq!(
            entry_for(RunStatus::Interrupted, None, None),
            Ok(Entry::Resume)
        );
        assert_eq!(
            entry_for(RunStatus::Interrupted, Some("  "), None),
            Ok(Entry::Resume)
        );
        assert_eq!(
            entry_for(RunStatus::Interrupted, Some("Skip validation"), None),
            Ok(Entry::UserMessage("Skip validation".to_owned()))
        );
    }

    #[test]
    fn completed_and_failed_need_a_message() {
        for status in [RunStatus::Completed, RunStatus::Failed] {
            assert_eq!(
                entry_for(status, None, Some("ignored".to_owned())),
                Err(Missing::Message(status))
            );
            assert_eq!(
                entry_for(status, Some(" \n"), None),
                Err(Missing::Message(status))
            );
            assert_eq!(
                entry_for(status, Some("Now summarize"), None),
                Ok(Entry::UserMessage("Now summarize".to_owned()))
            );
        }
    }

    #[test]
    fn waiting_needs_an_answer_and_the_command_line_wins() {
        assert_eq!(
            entry_for(RunStatus::WaitingForInput, None, None),
            Err(Missing::Answer)
        );
        assert_eq!(
            entry_for(
                RunStatus::WaitingForInput,
                None,
                Some("from file".to_owned())
            ),
            Ok(Entry::Answer {
                text: "from file".to_owned(),
                source: AnswerSource::ResponseFile
            })
        );
        assert_eq!(
            entry_for(
                RunStatus::WaitingForInput,
                Some("yes"),
                Some("from file".to_owned())
            ),
            Ok(Entry::Answer {
                text: "yes".to_owned(),
                source: AnswerSource::Message
            })
        );
        assert_eq!(
            entry_for(RunStatus::WaitingForInput, Some(""), None),
            Ok(Entry::Answer {
                text: String::new(),
                source: AnswerSource::Message
            })
        );
    }

    #[test]
    fn a_cleaned_up_running_run_is_continued_like_an_interrupted_one() {
        assert_eq!(entry_for(RunStatus::Running, None, None), Ok(Entry::Resume));
    }
}
