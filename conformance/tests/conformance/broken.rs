//! The suite discriminates: against wrappers of the real `delta` that each break one rule
//! (fixtures/broken/), exactly the scenarios guarding that rule fail and all others pass.

use std::collections::BTreeSet;

use super::support::{all_scenarios, quoted, repo, run_suite, sibling};

fn check(wrapper: &str, must_fail: &[&str]) {
    let script = repo().join("fixtures/broken").join(wrapper);
    let implementation = format!("sh {} {}", quoted(&script), quoted(&sibling("delta")));
    let run = run_suite(&implementation);
    let failed: BTreeSet<&str> = run.with_status("FAIL").into_iter().collect();
    let expected: BTreeSet<&str> = must_fail.iter().copied().collect();
    let known: BTreeSet<String> = all_scenarios().into_iter().collect();
    for name in &expected {
        assert!(known.contains(*name), "{name} is not a scenario");
    }
    assert_eq!(
        failed,
        expected,
        "{wrapper}: unexpected results; failures:\n{}",
        run.all_failures()
    );
    assert!(run.with_status("SKIP").is_empty());
    assert_eq!(run.code, Some(1));
}

/// Values spliced into `sh -c` unquoted: the seed 003 shell: injection scenarios fail
/// (the semicolon, quote, substitution, pipe and multi-line ones); `:raw` ones and values
/// without shell syntax still pass.
#[test]
fn unquoted_shell_values_fail_the_injection_scenarios() {
    check(
        "raw-shell.sh",
        &[
            "v17-2.1-shell-semicolon",
            "v17-2.2-shell-nested-quotes",
            "v17-2.3-shell-command-substitution",
            "v17-2.4-shell-pipe-in-parameter",
            "v17-6.1-multiline-script",
        ],
    );
}

/// A journal line without `seq`: every scenario whose run writes a journal of two lines
/// or more fails its schema check; configuration rejections write none.
#[test]
fn a_journal_line_without_seq_fails_every_run_with_a_journal() {
    let no_journal = [
        "run-id-invalid-refused",
        "v17-1.1-exec-rejects-pipe",
        "v17-1.2-exec-rejects-redirect",
        "v17-3.2-raw-rejected-in-exec",
        "v17-7.2-inject-as-conflict",
        "v17-7.3-undefined-parameter",
    ];
    let names = all_scenarios();
    let must_fail: Vec<&str> = names
        .iter()
        .map(String::as_str)
        .filter(|n| !no_journal.contains(n))
        .collect();
    check("drop-seq.sh", &must_fail);
}

/// Exit code 0 for FAILED runs and spent budgets: every scenario expecting exit code 1
/// fails.
#[test]
fn exit_zero_on_failure_fails_the_failure_scenarios() {
    check(
        "exit0-on-failed.sh",
        &[
            "format-json-failed-run",
            "format-raw-empty-on-failure",
            "llm-401-fails-the-run",
            "llm-malformed-body-fails",
            "llm-unreachable-fails",
            "max-iterations-budget",
        ],
    );
}

/// stderr on stdout: scenarios reading stdout as data (JSON, raw) or expecting a message
/// on stderr fail; those checking only files, journals and exit codes pass.
#[test]
fn stderr_on_stdout_fails_the_output_scenarios() {
    check(
        "stderr-to-stdout.sh",
        &[
            "api-key-never-written",
            "format-json-failed-run",
            "format-json-run-result",
            "format-raw-empty-on-failure",
            "format-raw-object-compact",
            "format-raw-string-result",
            "llm-401-fails-the-run",
            "llm-malformed-body-fails",
            "llm-unreachable-fails",
            "max-iterations-budget",
            "run-id-client-supplied",
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
        ],
    );
}
