//! The suite's one snapshot macro, [`snapshot!`], and the one set of filters that makes a
//! snapshot the same on every machine and every run (uv's `uv_snapshot!` is the model).
//!
//! ```ignore
//! snapshot!(run, @r"
//! exit code: 0
//! ----- stdout -----
//! …
//! ");
//! snapshot!(run.stderr(), @"error: …");
//! snapshot!("engine_log", files.read("engine.log")); // crates/delta/tests/it/<area>/snapshots/
//! ```
//!
//! [`filter`] replaces, in this order: the repository with `[ROOT]`; any directory made
//! directly in the system temp directory (as given and canonicalized) with `[TEMP]`; run
//! ids, UUIDs and session ids with `[RUN_ID]`, `[UUID]`, `[SESSION_ID]`, numbered by first
//! appearance (`[RUN_ID_2]` is the second distinct id) so a snapshot still shows which
//! lines name the same run or action; RFC 3339 timestamps with `[TIME]`; measured
//! durations (`Duration:   2m 30s`, `3s ago`, `answered in 42 ms`, `· 1.5 s`, and JSON
//! fields named `*duration*`, `*elapsed*`, `execution_time_ms`) with `[DURATION]`; pids,
//! process start times and host names with `[PID]`, `[START_TIME]`, `[HOST]`; ports on
//! 127.0.0.1 and [::1] (where the tests' servers listen) with `[PORT]`. Everything else
//! stays, so what a user configured or types is still pinned: a timeout (`after 200 ms`),
//! a retry delay (`retry 1/2 in 0 ms`), `localhost:8080` or `90s` in a help text.

use std::collections::HashMap;
use std::fmt::Display;
use std::path::Path;
use std::sync::LazyLock;

use regex::{Captures, Regex};

use super::harness::ROOT;

/// Assert `value` (anything `Display`) against a snapshot after [`filter`]: inline with
/// `@"…"`, or in a file under the area's `snapshots/` (named after the test, or as given).
macro_rules! snapshot {
    ($value:expr, @$snapshot:literal $(,)?) => {{
        let filtered = $crate::support::snapshot::filter(&$value);
        $crate::support::snapshot::settings()
            .bind(|| ::insta::assert_snapshot!(filtered, @$snapshot));
    }};
    ($name:expr, $value:expr $(,)?) => {{
        let filtered = $crate::support::snapshot::filter(&$value);
        $crate::support::snapshot::settings()
            .bind(|| ::insta::assert_snapshot!($name, filtered));
    }};
    ($value:expr $(,)?) => {{
        let filtered = $crate::support::snapshot::filter(&$value);
        $crate::support::snapshot::settings().bind(|| ::insta::assert_snapshot!(filtered));
    }};
}
pub(crate) use snapshot;

/// A snapshot name made of `text` (after [`filter`]): letters and digits kept, anything
/// else `_`. For snapshots taken in a loop, a table or a helper, which insta would
/// otherwise number in the order it reaches them.
pub fn name(text: &impl Display) -> String {
    filter(text)
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}

/// insta settings shared by every snapshot: the expression is left out of `.snap` files,
/// since it is always the macro's `filtered`.
pub fn settings() -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.set_omit_expression(true);
    settings
}

/// What replaces a match: a fixed label, or a label numbered by first appearance.
enum Label {
    Fixed(&'static str),
    Numbered(&'static str),
}

/// The filters, in the order they apply.
static FILTERS: LazyLock<Vec<(Regex, Label)>> = LazyLock::new(|| {
    let mut filters = Vec::new();
    let mut literal = |paths: Vec<String>, suffix: &str, label: Label| {
        let mut alternatives: Vec<String> = paths.iter().map(|p| regex::escape(p)).collect();
        alternatives.sort_by_key(|a| std::cmp::Reverse(a.len()));
        alternatives.dedup();
        let pattern = format!("(?:{}){suffix}", alternatives.join("|"));
        filters.push((Regex::new(&pattern).expect("a path filter"), label));
    };
    literal(path_forms(Path::new(ROOT)), "", Label::Fixed("[ROOT]"));
    // tempfile names its directories `.tmpXXXXXX` or `<prefix>XXXXXX`: the first path
    // component under the temp directory is the test's own.
    literal(
        path_forms(&std::env::temp_dir()),
        r"/\.?[\w-]+",
        Label::Fixed("[TEMP]"),
    );
    let rules: [(&str, Label); 14] = [
        (r"\b\d{8}_\d{6}_[0-9a-f]{6}\b", Label::Numbered("RUN_ID")),
        (
            r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b",
            Label::Numbered("UUID"),
        ),
        (r"\bsess_[0-9a-f]{12}\b", Label::Numbered("SESSION_ID")),
        (
            r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})",
            Label::Fixed("[TIME]"),
        ),
        (
            r#"("[a-z_]*(?:duration|elapsed|execution_time)[a-z_]*"\s*:\s*)\d+(?:\.\d+)?"#,
            Label::Fixed("${1}[DURATION]"),
        ),
        // output::format_duration (850ms, 45s, 2m 30s, 1h 5m 0s) where the renderers print
        // a measured one: a run's `Duration:` and a list-runs age of seconds. Elsewhere
        // (`--max-duration 90s` in a help text) it is what the user types and stays.
        (
            r"\b(Duration:\s+)(?:\d+h )?(?:\d+m )?\d+(?:\.\d+)?(?:ms|s)\b",
            Label::Fixed("${1}[DURATION]"),
        ),
        (r"\b\d+(?:ms|s) ago\b", Label::Fixed("[DURATION] ago")),
        // Measured durations in the live stream and engine.log (`answered in 42 ms`,
        // `events in 250 µs`, `SUCCESS in 3 ms`, `· 1.5 s`); a planned delay (`retry 1/2 in
        // 0 ms`) is configuration and stays.
        (
            r"(\b(?:answered|events|SUCCESS|FAILED|ERROR) in|·) \d+(?:\.\d+)? (?:ms|s|µs)\b",
            Label::Fixed("$1 [DURATION]"),
        ),
        (r#"("pid"\s*:\s*)\d+"#, Label::Fixed("${1}[PID]")),
        // A run's random identity (metadata.json `trace_id`).
        (
            r#"("trace_id"\s*:\s*")[0-9a-f]{32}""#,
            Label::Fixed("${1}[TRACE_ID]\""),
        ),
        (r"\b(pid|PID|Process) \d+\b", Label::Fixed("$1 [PID]")),
        (
            r#"("process_start_time"\s*:\s*)\d+"#,
            Label::Fixed("${1}[START_TIME]"),
        ),
        (
            r#"("hostname"\s*:\s*)"[^"]*""#,
            Label::Fixed(r#"${1}"[HOST]""#),
        ),
        (r"\b(127\.0\.0\.1|\[::1\]):\d+", Label::Fixed("$1:[PORT]")),
    ];
    for (pattern, label) in rules {
        filters.push((Regex::new(pattern).expect("a filter"), label));
    }
    if let Some(host) = hostname() {
        // Text mentions (`host 'vm'`, `checked from 'vm'`, `PID 12 on vm)`): only where a
        // host is expected, since a short host name is also an ordinary word.
        let pattern = format!(r"\b(host '?|from '|\[PID\] on ){}\b", regex::escape(&host));
        filters.push((
            Regex::new(&pattern).expect("a host filter"),
            Label::Fixed("$1[HOST]"),
        ));
    }
    filters
});

/// `path` as given and canonicalized (macOS reaches /var through /private/var), without a
/// trailing slash.
fn path_forms(path: &Path) -> Vec<String> {
    let canonical = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    [canonical.as_path(), path]
        .iter()
        .map(|p| p.to_string_lossy().trim_end_matches('/').to_owned())
        .collect()
}

fn hostname() -> Option<String> {
    let name = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| nix::unistd::gethostname().ok()?.into_string().ok())?;
    let name = name.trim();
    (!name.is_empty()).then(|| name.to_owned())
}

/// `value` as text with every machine- and run-dependent part replaced by its label.
pub fn filter(value: &impl Display) -> String {
    let mut text = value.to_string();
    for (regex, label) in FILTERS.iter() {
        text = match label {
            Label::Fixed(replacement) => regex.replace_all(&text, *replacement).into_owned(),
            Label::Numbered(name) => {
                let mut seen: HashMap<String, usize> = HashMap::new();
                regex
                    .replace_all(&text, |caps: &Captures| {
                        let next = seen.len() + 1;
                        let n = *seen.entry(caps[0].to_owned()).or_insert(next);
                        if n == 1 {
                            format!("[{name}]")
                        } else {
                            format!("[{name}_{n}]")
                        }
                    })
                    .into_owned()
            }
        };
    }
    text
}

#[test]
fn the_filters_hide_what_changes_between_runs_and_keep_the_rest() {
    let temp = std::env::temp_dir().join(".tmpAb12Cd/ws");
    let text = format!(
        "{root}/examples and {temp}\n\
         run 20251124_210501_0a1b2c, 20251124_210502_ffffff, 20251124_210501_0a1b2c\n\
         action 1b4e28ba-2fa1-11d2-883f-0016d3cca427 sess_0123456789ab\n\
         at 2025-11-24T21:05:01.123456Z and 2025-11-24T21:05:01+02:00\n\
         Duration:   2m 30s; answered in 42 ms · 1.5 s; retry 1/2 in 0 ms; 3s ago; 90s\n\
         {{\"duration_ms\": 12, \"execution_time_ms\":3, \"timeout_ms\": 500}}\n\
         {{\"pid\": 4242, \"process_start_time\": 99, \"hostname\": \"box\"}} (PID 17)\n\
         http://127.0.0.1:40123/v1",
        root = ROOT,
        temp = temp.display(),
    );
    assert_eq!(
        filter(&text),
        "[ROOT]/examples and [TEMP]/ws\n\
         run [RUN_ID], [RUN_ID_2], [RUN_ID]\n\
         action [UUID] [SESSION_ID]\n\
         at [TIME] and [TIME]\n\
         Duration:   [DURATION]; answered in [DURATION] · [DURATION]; retry 1/2 in 0 ms; \
         [DURATION] ago; 90s\n\
         {\"duration_ms\": [DURATION], \"execution_time_ms\":[DURATION], \"timeout_ms\": 500}\n\
         {\"pid\": [PID], \"process_start_time\": [START_TIME], \"hostname\": \"[HOST]\"} \
         (PID [PID])\n\
         http://127.0.0.1:[PORT]/v1"
    );
}
