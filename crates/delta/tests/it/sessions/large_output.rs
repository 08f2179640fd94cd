//! Output larger than an `exec` result carries: each stream keeps its head and tail around a
//! marker, the result says so, and the session goes on (issue 12, item 6).

use delta_sessions::OUTPUT_CAP;

use crate::sessions::support::{Workspace, text};

/// The marker's first words, and how many bytes it says were left out.
fn omitted(stream: &str) -> u64 {
    let (_, rest) = stream
        .split_once("\n[delta-sessions: ")
        .unwrap_or_else(|| panic!("no marker in {} bytes", stream.len()));
    rest.split_once(" bytes omitted here.")
        .and_then(|(n, _)| n.parse().ok())
        .unwrap_or_else(|| panic!("unreadable marker: {}", &rest[..200.min(rest.len())]))
}

// Regression for issue 12 item 6: output over the 1 GiB a reply could carry was dropped
// with "the session stopped" (exit code 1) while the session lived on.
#[test]
fn output_over_a_gibibyte_is_cut_and_the_session_goes_on() {
    let ws = Workspace::new();
    let id = ws.start("bash");
    // A sparse file: 1.1 GiB of output that costs no disk and no time to write.
    let result = ws.exec(&id, "truncate -s 1100M /dev/stdout; echo done >&2");
    let stdout = text(&result["stdout"]);
    let total: u64 = 1100 * 1024 * 1024;
    assert_eq!(omitted(stdout), total - OUTPUT_CAP);
    assert!(
        stdout.len() < usize::try_from(OUTPUT_CAP).unwrap() + 1024,
        "{} bytes came back",
        stdout.len()
    );
    assert_eq!(result["stderr"], "done\n");
    assert_eq!(result["exit_code"], 0);
    assert_eq!(result["output_truncated"], true);
    assert!(result.get("session_ended").is_none(), "{}", result["hint"]);
    assert_eq!(ws.exec(&id, "echo alive")["stdout"], "alive\n");
}

#[test]
fn each_stream_keeps_its_head_and_tail_and_history_its_size() {
    let ws = Workspace::new();
    let id = ws.start("bash");
    let result = ws.exec(
        &id,
        r"printf HEAD; head -c 5M /dev/zero | tr '\0' a; printf TAIL; printf err >&2",
    );
    let stdout = text(&result["stdout"]);
    let written = 5 * 1024 * 1024 + 8;
    assert!(stdout.starts_with("HEADaaa"), "{}", &stdout[..100]);
    assert!(
        stdout.ends_with("aaaTAIL"),
        "{}",
        &stdout[stdout.len() - 100..]
    );
    assert_eq!(omitted(stdout), written - OUTPUT_CAP);
    // docs/sessions.md shows this very marker.
    let marker = stdout
        .lines()
        .find(|line| line.starts_with("[delta-sessions: "))
        .unwrap();
    let docs = std::fs::read_to_string(
        std::path::Path::new(crate::support::harness::ROOT).join("docs/sessions.md"),
    )
    .unwrap();
    assert!(docs.contains(marker), "docs/sessions.md lacks {marker}");
    assert_eq!(result["stderr"], "err");
    assert_eq!(result["output_truncated"], true);
    assert_eq!(
        result["hint"],
        "the output was longer than a result carries and its middle was left out (see the \
         marker in it); write large output to a file and read the parts you need"
    );
    // The history records what the command wrote, not what came back.
    let history = std::fs::read_to_string(ws.session_dir(&id).join("history.log")).unwrap();
    let entry: serde_json::Value = serde_json::from_str(history.lines().last().unwrap()).unwrap();
    assert_eq!(entry["stdout_bytes"], written);
    assert_eq!(entry["stderr_bytes"], 3);

    // Output within the cap comes back whole, without the flag.
    let whole = ws.exec(&id, r"head -c 4M /dev/zero | tr '\0' a");
    assert_eq!(text(&whole["stdout"]).len(), 4 * 1024 * 1024);
    assert!(whole.get("output_truncated").is_none());
    assert!(whole.get("hint").is_none());
}
