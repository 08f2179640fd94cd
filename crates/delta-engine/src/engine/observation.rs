//! What the model hears about a tool run: the observation text and its size cap.
//!
//! Format (the model reads it, people read it in the journal, so it stays plain):
//!
//! ```text
//! <stdout, verbatim>
//! [stderr]
//! <stderr, verbatim>
//! [exit code: 2]
//! ```
//!
//! The `[stderr]` block appears only when stderr is not empty; the final bracketed line
//! appears only when the process did not exit 0 (`[exit code: N]`, `[killed by signal
//! SIGKILL]`, `[timed out after N ms; process group killed]` or `[output exceeded 64 MiB;
//! process group killed]`). A successful run with no output at all reads `(no output)`, so
//! the model never receives an empty message. Observations longer than the cap keep their
//! head and tail around one marker line; the complete streams stay in
//! `io/tool_executions/{action_id}/`.

/// Default cap on an observation, in characters (DESIGN.md "Tools").
pub const OBSERVATION_LIMIT_CHARS: usize = 10_000;

/// How a tool process ended, as far as the observation is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// Exited on its own with this code.
    Exited(i32),
    /// Killed by this signal number (not by us).
    Signaled(i32),
    /// We killed its process group after this many milliseconds.
    TimedOut(u64),
    /// A stream passed this many bytes and we killed its process group.
    OutputLimit(u64),
}

/// Builds the uncapped observation text for one tool run.
pub fn format_observation(stdout: &str, stderr: &str, ending: Ending) -> String {
    let mut text = String::with_capacity(stdout.len() + stderr.len() + 48);
    text.push_str(stdout);
    if !stderr.is_empty() {
        push_line_break(&mut text);
        text.push_str("[stderr]\n");
        text.push_str(stderr);
    }
    let trailer = match ending {
        Ending::Exited(0) => None,
        Ending::Exited(code) => Some(format!("[exit code: {code}]")),
        Ending::Signaled(signal) => Some(format!("[killed by signal {}]", signal_name(signal))),
        Ending::TimedOut(ms) => Some(format!("[timed out after {ms} ms; process group killed]")),
        Ending::OutputLimit(bytes) => Some(format!(
            "[output exceeded {}; process group killed]",
            format_bytes(bytes)
        )),
    };
    if let Some(trailer) = trailer {
        push_line_break(&mut text);
        text.push_str(&trailer);
    }
    if text.is_empty() {
        text.push_str("(no output)");
    }
    text
}

/// Caps `text` at `limit` characters, keeping the head and the tail around a marker line
/// that says how much was left out and where the full output is.
///
/// `unkept` counts the bytes of output that never made it into `text` (the process
/// runner keeps only the head and tail of a long stream in memory): when there are any,
/// the text is always cut and the marker counts them too. The gap they leave must lie in
/// the part cut out, which holds when the kept head and tail of each stream are longer
/// than half of `limit` characters (see the engine's assertion on the constants).
///
/// The result never exceeds `limit` characters (unless `limit` is smaller than the marker
/// itself, in which case only the marker is returned: it is the one part that must stay).
pub fn cap_observation(text: &str, unkept: u64, limit: usize, full_output_ref: &str) -> String {
    let total = text.chars().count();
    if total <= limit && unkept == 0 {
        return text.to_owned();
    }
    // The marker's length depends on how many characters are omitted, which depends on
    // the marker's length; sizing it with the largest possible count (the total) makes
    // one pass enough, at the cost of at most a few characters of kept output.
    let widest = marker(total, unkept, full_output_ref).chars().count();
    let keep = limit.saturating_sub(widest).min(total);
    let head_len = keep.div_ceil(2);
    let tail_len = keep - head_len;
    let omitted = total - keep;
    let head: String = text.chars().take(head_len).collect();
    let tail: String = text.chars().skip(total - tail_len).collect();
    let mut capped = String::with_capacity(head.len() + tail.len() + widest);
    capped.push_str(&head);
    capped.push_str(&marker(omitted, unkept, full_output_ref));
    capped.push_str(&tail);
    capped
}

fn marker(omitted: usize, unkept: u64, full_output_ref: &str) -> String {
    if unkept == 0 {
        format!("\n[... {omitted} characters omitted; full output in {full_output_ref} ...]\n")
    } else {
        format!(
            "\n[... {omitted} characters and {unkept} more bytes omitted; full output in \
             {full_output_ref} ...]\n"
        )
    }
}

/// `64 MiB`, `512 KiB`, `1000 bytes`: exact, in the largest unit that divides evenly.
fn format_bytes(bytes: u64) -> String {
    const KIB: u64 = 1024;
    const MIB: u64 = 1024 * KIB;
    if bytes >= MIB && bytes.is_multiple_of(MIB) {
        format!("{} MiB", bytes / MIB)
    } else if bytes >= KIB && bytes.is_multiple_of(KIB) {
        format!("{} KiB", bytes / KIB)
    } else {
        format!("{bytes} bytes")
    }
}

fn push_line_break(text: &mut String) {
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
}

fn signal_name(signal: i32) -> String {
    nix::sys::signal::Signal::try_from(signal)
        .map(|s| s.as_str().to_owned())
        .unwrap_or_else(|_| format!("{signal}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stdout_only_success_is_verbatim() {
        assert_eq!(
            format_observation("a\nb\n", "", Ending::Exited(0)),
            "a\nb\n"
        );
    }

    #[test]
    fn empty_success_says_no_output() {
        assert_eq!(format_observation("", "", Ending::Exited(0)), "(no output)");
    }

    #[test]
    fn stderr_and_exit_code_are_labelled() {
        assert_eq!(
            format_observation("out", "bad thing\n", Ending::Exited(2)),
            "out\n[stderr]\nbad thing\n[exit code: 2]"
        );
    }

    #[test]
    fn failure_without_output_still_reports_the_code() {
        assert_eq!(
            format_observation("", "", Ending::Exited(1)),
            "[exit code: 1]"
        );
    }

    #[test]
    fn signal_and_timeout_endings_are_named() {
        assert_eq!(
            format_observation("", "", Ending::Signaled(9)),
            "[killed by signal SIGKILL]"
        );
        assert_eq!(
            format_observation("x\n", "", Ending::TimedOut(500)),
            "x\n[timed out after 500 ms; process group killed]"
        );
        assert_eq!(
            format_observation("", "", Ending::OutputLimit(64 * 1024 * 1024)),
            "[output exceeded 64 MiB; process group killed]"
        );
    }

    #[test]
    fn sizes_are_exact() {
        assert_eq!(format_bytes(2 * 1024 * 1024), "2 MiB");
        assert_eq!(format_bytes(1536 * 1024), "1536 KiB");
        assert_eq!(format_bytes(1000), "1000 bytes");
        assert_eq!(format_bytes(0), "0 bytes");
    }

    #[test]
    fn short_text_is_not_capped() {
        assert_eq!(cap_observation("hello", 0, 5, "io/x"), "hello");
    }

    #[test]
    fn long_text_keeps_head_and_tail_within_the_limit() {
        let text = format!("{}{}", "h".repeat(6000), "t".repeat(6000));
        let capped = cap_observation(&text, 0, 10_000, "io/tool_executions/a1/");
        assert!(
            capped.chars().count() <= 10_000,
            "{}",
            capped.chars().count()
        );
        assert!(capped.starts_with(&"h".repeat(4000)));
        assert!(capped.ends_with(&"t".repeat(4000)));
        assert!(capped.contains("characters omitted; full output in io/tool_executions/a1/"));
    }

    #[test]
    fn omitted_count_is_exact() {
        let text = "x".repeat(1000);
        let capped = cap_observation(&text, 0, 200, "R");
        let kept = capped.chars().filter(|c| *c == 'x').count();
        assert!(capped.contains(&format!("[... {} characters omitted", 1000 - kept)));
    }

    #[test]
    fn multibyte_text_is_cut_on_character_boundaries() {
        let text = "é".repeat(500);
        let capped = cap_observation(&text, 0, 120, "R");
        assert!(capped.chars().count() <= 120);
        assert!(capped.starts_with('é') && capped.ends_with('é'));
    }

    #[test]
    fn bytes_not_kept_force_a_cut_and_are_counted() {
        assert_eq!(
            cap_observation("short", 4096, 10_000, "R"),
            "sho\n[... 0 characters and 4096 more bytes omitted; full output in R ...]\nrt"
        );
        let capped = cap_observation(&"x".repeat(1000), 7, 200, "R");
        assert!(capped.chars().count() <= 200);
        let kept = capped.chars().filter(|c| *c == 'x').count();
        assert!(capped.contains(&format!(
            "[... {} characters and 7 more bytes omitted",
            1000 - kept
        )));
    }
}
