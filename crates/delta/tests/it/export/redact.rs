//! `--redact-content` leaves no prompt, tool argument or output text in either export or
//! the page; the API key is never in an export or a page, redacted or not.

use super::{CANARIES, Runs, path};
use crate::support::harness::Test;
use crate::support::run::{API_KEY, HELLO_SCRIPT, delta, hello_world, mock};

#[test]
fn redact_content_removes_every_canary_from_both_exports_and_the_page() {
    let runs = Runs::new();
    let ws = runs.ws();
    // Without the flag every canary is there: the check below can fail.
    let atif = runs.export("hooked", "atif", &[]);
    let otlp = runs.export("hooked", "otlp", &[]);
    let out = runs.delta(&["view", "--run-id", "hooked", "-w", path(&ws)]);
    let page = std::fs::read_to_string(out.code(0).stdout().trim()).unwrap();
    for canary in CANARIES {
        assert!(
            atif.contains(canary),
            "{canary} missing from the plain ATIF export"
        );
        assert!(
            otlp.contains(canary),
            "{canary} missing from the plain OTLP export"
        );
        assert!(
            page.contains(canary),
            "{canary} missing from the plain page"
        );
    }

    let redacted = [
        runs.export("hooked", "atif", &["--redact-content"]),
        runs.export("hooked", "otlp", &["--redact-content"]),
        {
            let out = runs.delta(&[
                "view",
                "--run-id",
                "hooked",
                "-w",
                path(&ws),
                "--redact-content",
            ]);
            std::fs::read_to_string(out.code(0).stdout().trim()).unwrap()
        },
    ];
    for (what, text) in ["atif", "otlp", "page"].iter().zip(&redacted) {
        for canary in CANARIES {
            assert!(
                !text.contains(canary),
                "{canary} left in the redacted {what}"
            );
        }
        assert!(text.contains("[content redacted]"), "{what}");
        // The shape stays: tool names and statuses.
        assert!(
            text.contains("write_file") && text.contains("ask_human"),
            "{what}"
        );
    }
}

#[test]
fn the_api_key_is_never_in_an_export_or_a_page() {
    let mock = mock(HELLO_SCRIPT);
    // The key is even in the task: the run's records may hold it, an export must not.
    let run = delta(hello_world(Test::new()), &mock)
        .args(["run", "--agent", "agent", "-w", "ws", "--run-id", "k", "-m"])
        .arg(format!("Use the key {API_KEY} to greet"))
        .run()
        .code(0);
    let ws = run.path().join("ws");
    for format in ["atif", "otlp"] {
        let out = Test::new()
            .env("DELTA_API_KEY", API_KEY)
            .args([
                "export",
                "--run-id",
                "k",
                "-w",
                path(&ws),
                "--format",
                format,
            ])
            .run()
            .code(0);
        assert!(
            !out.stdout().contains(API_KEY),
            "the key is in the {format} export"
        );
        assert!(out.stdout().contains("to greet"));
    }
    let out = Test::new()
        .env("DELTA_API_KEY", API_KEY)
        .args(["view", "--run-id", "k", "-w", path(&ws)])
        .run()
        .code(0);
    let page = std::fs::read_to_string(out.stdout().trim()).unwrap();
    assert!(!page.contains(API_KEY), "the key is in the page");
    assert!(page.contains("to greet"));
}
