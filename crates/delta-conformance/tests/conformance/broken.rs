//! The suite discriminates: against wrappers of the real `delta` that each break one rule
//! (fixtures/broken/), exactly the scenarios guarding that rule fail and all others pass,
//! each with a failing `spec` check unless the rule is not the spec's; against wrappers
//! that change only what the spec leaves open (fixtures/variants/), none fails.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::support::{quoted, repo, run_suite, scenarios_without_tag, sibling};

/// Scenarios tagged `slow` (waiting out retry backoff) are left out: the suite test runs
/// them against the real implementation, and none guards what these wrappers break.
/// Every scenario of `must_fail` fails a `spec` check, except those of `not_at_spec`
/// (where the broken behaviour is one the seeds do not specify), which fail only
/// `recommended` or `extension` checks.
fn check(wrapper: &str, must_fail: &[&str], not_at_spec: &[&str]) {
    let script = repo().join("fixtures/broken").join(wrapper);
    let implementation = format!("sh {} {}", quoted(&script), quoted(&sibling("delta")));
    let run = run_suite(&implementation, &["--exclude-tag", "slow"]);
    let failed: BTreeSet<&str> = run.with_status("FAIL").into_iter().collect();
    let expected: BTreeSet<&str> = must_fail.iter().copied().collect();
    let selected = scenarios_without_tag(Some("slow"));
    assert_eq!(run.statuses.keys().cloned().collect::<Vec<_>>(), selected);
    for name in &expected {
        assert!(
            selected.iter().any(|s| s == name),
            "{name} is not a selected scenario"
        );
    }
    assert_eq!(
        failed,
        expected,
        "{wrapper}: unexpected results; failures:\n{}",
        run.all_failures()
    );
    assert!(run.with_status("SKIP").is_empty());
    assert_eq!(run.code, Some(1));
    let at_spec: BTreeSet<&str> = run.report["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| {
            s["checks"]
                .as_array()
                .unwrap()
                .iter()
                .any(|c| c["level"] == "spec" && c["status"] != "pass")
        })
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    let not_at_spec: BTreeSet<&str> = not_at_spec.iter().copied().collect();
    assert!(not_at_spec.is_subset(&expected), "{not_at_spec:?}");
    assert_eq!(
        at_spec,
        expected.difference(&not_at_spec).copied().collect(),
        "{wrapper}: scenarios failing at level spec"
    );
}

/// Not broken: the journals rewritten as another implementation may write them (only the
/// payload fields DESIGN.md lists, so no `tool_call_id` and no THOUGHT `tool_calls`, plus
/// a field of its own in every payload). No scenario may fail: the suite must not demand
/// more than the spec. The `continue` scenarios also show that `delta` continues such a
/// journal (the rewrite happens after every step).
#[test]
fn journals_as_another_implementation_writes_them_fail_no_scenario() {
    let script = repo().join("fixtures/variants/other-journal-fields.sh");
    let implementation = format!("sh {} {}", quoted(&script), quoted(&sibling("delta")));
    let run = run_suite(&implementation, &["--exclude-tag", "slow", "--keep"]);
    let kept: Vec<PathBuf> = run.report["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["dir"].as_str().map(PathBuf::from))
        .collect();
    let mut journals = String::new();
    for dir in &kept {
        collect_journals(dir, &mut journals);
        std::fs::remove_dir_all(dir).unwrap();
    }
    // The wrapper rewrites the journal after the run, so the journal lines the stream
    // printed live no longer equal the file: that scenario is the one expected to notice.
    assert_eq!(
        run.with_status("FAIL"),
        vec!["stream-jsonl-completed"],
        "{}",
        run.all_failures()
    );
    assert!(run.with_status("SKIP").is_empty());
    // The wrapper did rewrite what the runner checked.
    assert!(journals.contains(r#""type":"ACTION_REQUEST""#));
    assert!(journals.contains(r#""payload":{"x_other_impl":"#));
    assert!(!journals.contains(r#""tool_call_id""#));
    assert!(!journals.contains(r#""tool_calls""#));
}

/// Appends every `journal.jsonl` under `dir`, except in an agent's numbered `workspaces/`:
/// the wrapper, like the scenarios' checks, only knows the `-w` workspace.
fn collect_journals(dir: &Path, out: &mut String) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.file_name().is_some_and(|n| n == "workspaces") {
            continue;
        }
        if path.is_dir() && !path.is_symlink() {
            collect_journals(&path, out);
        } else if path.file_name().is_some_and(|n| n == "journal.jsonl") {
            out.push_str(&std::fs::read_to_string(&path).unwrap());
        }
    }
}

/// Values spliced into the `sh -c` script as text: the seed 003 shell: injection scenarios
/// fail (semicolon, quotes, command substitution, pipe, multi-line); `:raw` ones and
/// values without shell syntax still pass.
#[test]
fn values_spliced_into_the_shell_script_fail_the_injection_scenarios() {
    check(
        "unquoted-shell.sh",
        &[
            "v17-2.1-shell-semicolon",
            "v17-2.2-shell-nested-quotes",
            "v17-2.3-shell-command-substitution",
            "v17-2.4-shell-pipe-in-parameter",
            "v17-6.1-multiline-script",
        ],
        &[],
    );
}

/// A journal line without `seq`: every scenario whose run writes a journal of two lines
/// or more fails its schema check; configuration rejections write none, and neither do
/// scenarios that only drive delta-sessions. The wrapper breaks journals in the `-w`
/// workspace only, so a scenario whose runs use the agent's numbered workspaces passes.
#[test]
fn a_journal_line_without_seq_fails_every_run_with_a_journal() {
    let no_journal = [
        "config-missing-context-refused",
        "run-id-invalid-refused",
        "sessions-bash-state-persists",
        "sessions-errors-are-json",
        "sessions-exec-timeout",
        "sessions-json-contract",
        "sessions-python-state-persists",
        "v17-1.1-exec-rejects-pipe",
        "v17-1.2-exec-rejects-redirect",
        "v17-3.2-raw-rejected-in-exec",
        "v17-7.2-inject-as-conflict",
        "v17-7.3-undefined-parameter",
        "workspace-numbered-without-w",
        // Its only run is killed before the journal's second line; the run that continues
        // it is a `shell` step's, whose run directory the runner does not check.
        "janitor-pid-reused",
    ];
    let names = scenarios_without_tag(Some("slow"));
    let must_fail: Vec<&str> = names
        .iter()
        .map(String::as_str)
        .filter(|n| !no_journal.contains(n))
        .collect();
    // Extension scenarios: the seeds do not ask for what they check, so no check of theirs
    // is at level spec, their journal checks included.
    let extensions = [
        "api-key-never-written",
        "budget-tokens-stops-and-resumes",
        "output-schema-repair-and-violation",
        "stream-jsonl-completed",
        "stream-jsonl-failure-paths",
        "format-raw-object-compact",
        "hooks-failing-hooks-never-fail-the-run",
        "hooks-pre-tool-execution-skip",
        "recorded-ask-continue-fail",
        "recorded-hello-world",
        "recorded-llama-cpp-smollm2",
        "replay-identical-offline",
        "replay-reports-the-first-divergence",
        "fork-at-a-boundary",
        "mcp-server-missing-fails-at-start",
        "mcp-stdio-tools",
        "mcp-timeout-is-an-observation",
        "mcp-tool-faults-are-observations",
    ];
    // The Claude Code hook scenarios (issue 28) are extension as a whole too.
    let extensions: Vec<&str> = extensions
        .into_iter()
        .chain(
            names
                .iter()
                .map(String::as_str)
                .filter(|n| n.starts_with("claude-hooks-")),
        )
        .collect();
    check("drop-seq.sh", &must_fail, &extensions);
}

/// Exit code 0 for FAILED runs and spent budgets: every scenario expecting exit code 1
/// fails (for this implementation that includes refusing a duplicate run id, an unknown
/// or still active run, and the loser of two simultaneous continues). The exit code of a
/// spent budget is this engine's choice, not the spec's.
#[test]
fn exit_zero_on_failure_fails_the_failure_scenarios() {
    check(
        "exit0-on-failed.sh",
        &[
            "continue-failed-needs-message",
            "continue-unknown-run-id",
            "format-json-failed-run",
            "format-raw-empty-on-failure",
            "hooks-on-error-and-run-end-on-failure",
            "hooks-on-run-end-after-budget",
            "janitor-live-owner-refused",
            "janitor-other-host",
            "janitor-simultaneous-continues",
            "llm-401-fails-the-run",
            "llm-malformed-body-fails",
            "max-iterations-budget",
            "budget-tokens-stops-and-resumes",
            "output-schema-repair-and-violation",
            "stream-jsonl-failure-paths",
            "replay-reports-the-first-divergence",
            "run-id-reuse-refused",
            "recorded-llama-cpp-smollm2",
            "claude-hooks-continue-false",
            "claude-hooks-prompt-blocked",
        ],
        &[
            "claude-hooks-continue-false",
            "claude-hooks-prompt-blocked",
            "budget-tokens-stops-and-resumes",
            "output-schema-repair-and-violation",
            "stream-jsonl-failure-paths",
            "hooks-on-run-end-after-budget",
            "max-iterations-budget",
            "recorded-llama-cpp-smollm2",
            "replay-reports-the-first-divergence",
        ],
    );
}

/// stderr on stdout: scenarios reading stdout as data (JSON, raw) or expecting a message
/// on stderr fail; those checking only files, journals and exit codes pass. The seeds'
/// error messages are examples (`recommended`), so a scenario that only reads one of them
/// fails below level spec.
#[test]
fn stderr_on_stdout_fails_the_output_scenarios() {
    check(
        "stderr-to-stdout.sh",
        &[
            "api-key-never-written",
            "budget-tokens-stops-and-resumes",
            "output-schema-repair-and-violation",
            "stream-jsonl-completed",
            "stream-jsonl-failure-paths",
            "ask-human-async-pause",
            "ask-human-interactive",
            "ask-human-response-file",
            "config-missing-context-refused",
            "continue-completed-needs-message",
            "continue-failed-needs-message",
            "continue-interrupted-no-message",
            "continue-requires-run-id",
            "continue-unknown-run-id",
            "crash-kill-during-llm-call",
            "crash-kill-during-tool",
            "fork-at-a-boundary",
            "format-json-failed-run",
            "format-json-run-result",
            "format-raw-empty-on-failure",
            "format-raw-object-compact",
            "format-raw-string-result",
            "janitor-live-owner-refused",
            "janitor-other-host",
            "janitor-pid-reused",
            "llm-401-fails-the-run",
            "llm-malformed-body-fails",
            "max-iterations-budget",
            "mcp-server-missing-fails-at-start",
            "run-id-client-supplied",
            "replay-identical-offline",
            "replay-reports-the-first-divergence",
            "run-id-generated",
            "run-id-invalid-refused",
            "run-id-reuse-refused",
            "stdout-holds-only-the-result",
            "usage-sums-tokens",
            "v17-1.1-exec-rejects-pipe",
            "v17-1.2-exec-rejects-redirect",
            "v17-3.2-raw-rejected-in-exec",
            "v17-7.2-inject-as-conflict",
            "v17-7.3-undefined-parameter",
            "recorded-ask-continue-fail",
            "recorded-hello-world",
            "recorded-llama-cpp-smollm2",
            "claude-hooks-ask-continue-yes",
            "claude-hooks-continue-false",
            "claude-hooks-defer-pauses",
            "claude-hooks-prompt-blocked",
        ],
        &[
            "claude-hooks-ask-continue-yes",
            "claude-hooks-continue-false",
            "claude-hooks-defer-pauses",
            "claude-hooks-prompt-blocked",
            "recorded-ask-continue-fail",
            "recorded-hello-world",
            "recorded-llama-cpp-smollm2",
            "api-key-never-written",
            "budget-tokens-stops-and-resumes",
            "output-schema-repair-and-violation",
            "stream-jsonl-completed",
            "stream-jsonl-failure-paths",
            "ask-human-response-file",
            "config-missing-context-refused",
            "continue-requires-run-id",
            "continue-unknown-run-id",
            "crash-kill-during-llm-call",
            "crash-kill-during-tool",
            "format-raw-object-compact",
            "janitor-live-owner-refused",
            "janitor-other-host",
            "janitor-pid-reused",
            "llm-401-fails-the-run",
            "replay-identical-offline",
            "replay-reports-the-first-divergence",
            "fork-at-a-boundary",
            "mcp-server-missing-fails-at-start",
            "run-id-invalid-refused",
            "run-id-reuse-refused",
        ],
    );
}

/// hooks.yaml ignored: every hook scenario fails, and no other; of the Claude Code hook
/// scenarios (hooks.json), the one with a hook in hooks.yaml's `claude_hooks:` too.
#[test]
fn an_engine_without_hooks_fails_the_hook_scenarios() {
    let names = scenarios_without_tag(Some("slow"));
    let must_fail: Vec<&str> = names
        .iter()
        .map(String::as_str)
        .filter(|name| name.starts_with("hooks-"))
        .chain(["claude-hooks-updated-input-stacked"])
        .collect();
    assert_eq!(must_fail.len(), 8);
    check(
        "no-hooks.sh",
        &must_fail,
        &[
            "hooks-failing-hooks-never-fail-the-run",
            "hooks-pre-tool-execution-skip",
            "claude-hooks-updated-input-stacked",
        ],
    );
}
