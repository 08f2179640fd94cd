//! The runner's own behaviour, with `sh -c` standing in for an implementation so each
//! mechanism (matchers, canaries, signals, time limits, skips, report formats, exit codes)
//! is checked without an engine.

use std::path::Path;

use super::support::{self, all_scenarios, run_runner, sibling};

/// A fixtures directory with these scenarios (name → YAML) and an empty agent, and a
/// schema directory whose four runner schemas accept anything.
fn fixtures(scenarios: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("scenarios")).unwrap();
    std::fs::create_dir_all(dir.path().join("agents/empty")).unwrap();
    std::fs::write(dir.path().join("agents/empty/agent.yaml"), "name: empty\n").unwrap();
    std::fs::create_dir_all(dir.path().join("schemas")).unwrap();
    for kind in ["journal-event", "metadata", "run-result", "list-runs"] {
        std::fs::write(dir.path().join(format!("schemas/{kind}.schema.json")), "{}").unwrap();
    }
    for (name, yaml) in scenarios {
        std::fs::write(dir.path().join(format!("scenarios/{name}.yaml")), yaml).unwrap();
    }
    dir
}

fn run_with_sh(dir: &Path, extra: &[&str]) -> std::process::Output {
    let mock = sibling("mock-llm");
    let fixtures = dir.to_str().unwrap();
    let schemas = dir.join("schemas");
    let mut args = vec![
        "run",
        "--impl",
        "sh -c",
        "--fixtures",
        fixtures,
        "--schemas",
        schemas.to_str().unwrap(),
        "--mock-llm",
        mock.to_str().unwrap(),
        "--jobs",
        "3",
    ];
    args.extend_from_slice(extra);
    run_runner(&args)
}

const PASSING: &str = r#"
name: passing
description: every matcher holds
tags: [mechanics]
seed: none
agent: empty
files:
  - path: "{workspace}/in.txt"
    content: "data\n"
canaries:
  - path: "{tmp}/keep-me"
    expect: intact
  - path: "{tmp}/delete-me"
    expect: destroyed
steps:
  - exec: ['cat {workspace}/in.txt; echo err >&2; exit 3']
    expect:
      exit: 3
      stdout: {equals: "data\n"}
      stderr: {contains: err, not_contains: data}
  - shell: |
      rm {tmp}/delete-me && printf '{"a": {"b": [1, "x"]}}' > {tmp}/out.json
  - exec: ['cat {tmp}/out.json']
    stdin: ignored
    expect:
      exit: 0
      stdout:
        json:
          /a/b/0: {equals: 1, type: integer}
          /a/b/1: {regex: "^x$"}
          /a/c: {exists: false}
      files:
        - path: "{tmp}/out.json"
          text: {contains: '"b"'}
  - exec: ['trap "echo caught; exit 130" INT; while :; do sleep 0.05; done']
    signal: {signal: SIGINT, after_ms: 100}
    expect:
      exit: 130
      stdout: {equals: "caught\n"}
"#;

const FAILING: &str = r#"
name: failing
description: a stdout mismatch in the second step
tags: [mechanics]
seed: none
steps:
  - exec: ['echo first']
    expect: {exit: 0}
  - exec: ['echo nope']
    expect:
      stdout: {equals: "yes\n"}
  - exec: ['echo never run']
    expect: {exit: 9}
"#;

const TIMEOUT: &str = r#"
name: timeout
description: a step past its time limit is killed
tags: [mechanics, slow]
seed: none
steps:
  - exec: ['sleep 30']
    timeout_secs: 1
    expect: {exit: 0}
"#;

const SKIPPED: &str = r#"
name: skipped
description: needs a program that does not exist
tags: [mechanics]
seed: none
requires: [no-such-program-for-delta-conformance]
steps:
  - exec: ['true']
"#;

#[test]
fn outcomes_of_each_mechanism_in_the_json_report() {
    let dir = fixtures(&[
        ("passing", PASSING),
        ("failing", FAILING),
        ("timeout", TIMEOUT),
        ("skipped", SKIPPED),
    ]);
    let output = run_with_sh(dir.path(), &["--format", "json"]);
    assert_eq!(
        output.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let status = |name: &str| {
        report["scenarios"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == name)
            .unwrap()
            .clone()
    };
    assert_eq!(
        status("passing")["status"],
        "PASS",
        "{:#}",
        status("passing")
    );
    assert_eq!(status("skipped")["status"], "SKIP");
    assert_eq!(
        status("skipped")["reason"],
        "`no-such-program-for-delta-conformance` is not on PATH"
    );

    let failing = status("failing");
    assert_eq!(failing["status"], "FAIL");
    assert_eq!(
        failing["failures"],
        serde_json::json!([{
            "step": "step 2 (echo nope)",
            "expected": "stdout equals \"yes\\n\"",
            "observed": "\"nope\\n\""
        }])
    );

    let timeout = status("timeout");
    assert_eq!(
        timeout["failures"][0]["expected"],
        "the command ends within 1s"
    );
    assert!(
        timeout["failures"][0]["observed"]
            .as_str()
            .unwrap()
            .starts_with("still running; its process group was killed")
    );
    assert_eq!(
        report["total"],
        serde_json::json!({"passed": 1, "failed": 2, "skipped": 1})
    );
    assert_eq!(
        report["by_tag"]["slow"],
        serde_json::json!({"passed": 0, "failed": 1, "skipped": 0})
    );
}

#[test]
fn a_destroyed_canary_that_should_be_intact_fails_the_scenario() {
    let yaml = r#"
name: canary
description: the canary must survive but is deleted
tags: [mechanics]
seed: none
canaries:
  - path: "{tmp}/c"
    expect: intact
steps:
  - exec: ['rm {tmp}/c']
    expect: {exit: 0}
"#;
    let dir = fixtures(&[("canary", yaml)]);
    let output = run_with_sh(dir.path(), &[]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1));
    assert!(stdout.contains("FAIL  canary [none]"), "{stdout}");
    assert!(
        stdout.contains("scenario: expected canary ") && stdout.contains("/c is intact"),
        "{stdout}"
    );
    assert!(stdout.contains("observed: absent"), "{stdout}");
}

#[test]
fn text_output_shows_failures_and_the_kept_directory() {
    let dir = fixtures(&[("failing", FAILING)]);
    let output = run_with_sh(dir.path(), &["--keep", "--tag", "mechanics"]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("FAIL  failing [none]"), "{stdout}");
    assert!(
        stdout.contains("      step 2 (echo nope): expected stdout equals \"yes\\n\"\n        observed: \"nope\\n\"\n"),
        "{stdout}"
    );
    let kept = stdout
        .lines()
        .find_map(|l| l.trim().strip_prefix("kept: "))
        .expect("a kept directory");
    assert!(Path::new(kept).join("home").is_dir(), "{kept}");
    std::fs::remove_dir_all(kept).unwrap();
    assert!(stdout.contains("mechanics     0     1     0"), "{stdout}");
    assert!(stdout.contains("failed: failing"), "{stdout}");
}

#[test]
fn junit_output_lists_every_scenario() {
    let dir = fixtures(&[
        ("passing", PASSING),
        ("failing", FAILING),
        ("skipped", SKIPPED),
    ]);
    let output = run_with_sh(dir.path(), &["--format", "junit"]);
    let xml = String::from_utf8_lossy(&output.stdout);
    assert!(
        xml.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites"),
        "{xml}"
    );
    assert!(
        xml.contains("tests=\"3\" failures=\"1\" skipped=\"1\""),
        "{xml}"
    );
    assert!(xml.contains("<testcase name=\"failing\" classname=\"delta-conformance.mechanics\""));
    assert!(
        xml.contains("<failure message=\"expected stdout equals &quot;yes\\n&quot;\""),
        "{xml}"
    );
    assert!(xml.contains("<skipped message="), "{xml}");
    // Progress goes to stderr so stdout stays one XML document.
    assert!(String::from_utf8_lossy(&output.stderr).contains("PASS  passing"));
}

#[test]
fn a_broken_scenario_file_is_a_usage_error_with_its_location() {
    let dir = fixtures(&[(
        "bad",
        "name: bad\ndescription: x\nsteps:\n  - exec: [x]\n    expct: {}\n",
    )]);
    let output = run_with_sh(dir.path(), &[]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.starts_with("error: "), "{stderr}");
    assert!(stderr.contains("scenarios/bad.yaml:5:"), "{stderr}");
    assert!(stderr.contains("expct"), "{stderr}");
    assert!(stderr.contains("  = help: "), "{stderr}");
}

#[test]
fn a_selection_that_matches_nothing_is_a_usage_error() {
    let dir = fixtures(&[("failing", FAILING)]);
    let output = run_with_sh(dir.path(), &["--tag", "nope"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("no scenario matches the selection"));
}

#[test]
fn list_shows_every_scenario_with_tags_and_seed() {
    let fixtures = support::fixtures();
    let output = run_runner(&["list", "--fixtures", fixtures.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&output.stdout);
    for name in all_scenarios() {
        assert!(stdout.contains(&name), "{name} missing from:\n{stdout}");
    }
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("v17-3.3-raw-injection-occurs")
                && l.ends_with("[v1.7-security, core]  003 §10 Test 3.3")),
        "{stdout}"
    );
    assert!(stdout.ends_with(&format!("{} scenario(s)\n", all_scenarios().len())));
}
