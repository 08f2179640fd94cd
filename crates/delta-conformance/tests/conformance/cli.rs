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
seed: "002 §4.3"
quote: the sentence the check rests on
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
description: a stdout mismatch in the second step; the third runs anyway, the fourth needs the second
tags: [mechanics]
seed: "002 §4.3"
quote: the sentence the check rests on
steps:
  - exec: ['echo first']
    expect: {exit: 0}
  - exec: ['echo nope']
    expect:
      stdout: {equals: "yes\n"}
  - exec: ['echo after']
    expect:
      stdout: {equals: after}
  - exec: ['echo never run']
    depends_on: [step-2]
    expect: {exit: 9}
"#;

const TIMEOUT: &str = r#"
name: timeout
description: a step past its time limit is killed
tags: [mechanics, slow]
seed: "002 §4.3"
quote: the sentence the check rests on
steps:
  - exec: ['sleep 30']
    timeout_secs: 1
    expect: {exit: 0}
"#;

const SKIPPED: &str = r#"
name: skipped
description: needs a program that does not exist
tags: [mechanics]
seed: "002 §4.3"
quote: the sentence the check rests on
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
    // Every check is reported: the third step ran after the failed second one, the fourth,
    // which depends on the second, did not.
    let checks: Vec<(String, String, String)> = failing["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["id"].as_str().unwrap().to_string(),
                c["status"].as_str().unwrap().to_string(),
                c["blocked_by"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    let expected: Vec<(String, String, String)> = [
        ("step-1", "pass", ""),
        ("step-2", "fail", ""),
        ("step-3", "pass", ""),
        ("step-4", "blocked", "step-2"),
    ]
    .iter()
    .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
    .collect();
    assert_eq!(checks, expected);
    assert_eq!(failing["checks"][0]["level"], "spec");
    assert_eq!(failing["checks"][0]["reference"], "002 §4.3");

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
        serde_json::json!({"passed": 1, "failed": 2, "skipped": 1, "not_run": 0})
    );
    assert_eq!(
        report["by_tag"]["slow"],
        serde_json::json!({"passed": 0, "failed": 1, "skipped": 0, "not_run": 0})
    );
    assert_eq!(report["by_level"]["spec"]["blocked"], 1);
}

#[test]
fn a_destroyed_canary_that_should_be_intact_fails_the_scenario() {
    let yaml = r#"
name: canary
description: the canary must survive but is deleted
tags: [mechanics]
seed: "002 §4.3"
quote: the sentence the check rests on
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
    assert!(stdout.contains("FAIL  canary [002 §4.3]"), "{stdout}");
    assert!(
        stdout.contains(
            "      canaries [spec: 002 §4.3]\n        canaries: expected canary {tmp}/c is intact"
        ),
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
    assert!(stdout.contains("FAIL  failing [002 §4.3]"), "{stdout}");
    assert!(
        stdout.contains("      step-2 [spec: 002 §4.3]\n        step 2 (echo nope): expected stdout equals \"yes\\n\"\n          observed: \"nope\\n\"\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("      step-4 [spec: 002 §4.3] blocked by step-2\n"),
        "{stdout}"
    );
    let kept = stdout
        .lines()
        .find_map(|l| l.trim().strip_prefix("kept: "))
        .expect("a kept directory");
    assert!(Path::new(kept).join("home").is_dir(), "{kept}");
    std::fs::remove_dir_all(kept).unwrap();
    assert!(
        stdout.contains("mechanics     0     1     0        0"),
        "{stdout}"
    );
    assert!(
        stdout.contains("\nspec              4       1        1     0/1   \n"),
        "{stdout}"
    );
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

const LEVELS: &str = r#"
name: levels
description: one check of each level; the extension one fails
tags: [mechanics]
seed: "002 §4.3"
quote: the sentence the check rests on
steps:
  - exec: ['echo out; exit 1']
    expect: {exit: 1}
    checks:
      - id: words
        level: recommended
        seed: "002 §4.1"
        quote: the sentence the check rests on
        expect: {stdout: {equals: out}}
      - id: ours
        level: extension
        decision: The run
        expect: {stdout: {equals: other}}
"#;

#[test]
fn the_report_shows_the_levels_apart_and_level_spec_keeps_only_spec_checks() {
    let dir = fixtures(&[("levels", LEVELS)]);
    let output = run_with_sh(dir.path(), &["--format", "json"]);
    assert_eq!(output.status.code(), Some(1));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let checks = &report["scenarios"][0]["checks"];
    assert_eq!(checks[1]["id"], "step-1/words");
    assert_eq!(checks[1]["level"], "recommended");
    assert_eq!(checks[2]["reference"], "decisions.md: The run");
    assert_eq!(checks[2]["status"], "fail");
    for (level, passed, failed) in [("spec", 1, 0), ("recommended", 1, 0), ("extension", 0, 1)] {
        assert_eq!(report["by_level"][level]["passed"], passed, "{level}");
        assert_eq!(report["by_level"][level]["failed"], failed, "{level}");
    }

    let output = run_with_sh(dir.path(), &["--format", "json", "--level", "spec"]);
    assert_eq!(output.status.code(), Some(0));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["scenarios"][0]["status"], "PASS");
    assert_eq!(
        report["scenarios"][0]["checks"].as_array().unwrap().len(),
        1
    );
    assert!(report["by_level"].get("extension").is_none());
}

const EXPAND: &str = r#"
name: expand
description: a tool-expand step, whose command an adapter respells
tags: [mechanics]
seed: "003 §6.1"
quote: the sentence the check rests on
steps:
  - tool-expand: [agent.yaml]
    expect: {stdout: {equals: "respelt agent.yaml"}}
"#;

#[test]
fn an_adapter_respells_commands_and_may_name_the_implementation() {
    let dir = fixtures(&[("expand", EXPAND)]);
    // `sh -c 'echo respelt "$0"' agent.yaml` prints the argument after the respelt command.
    let adapter = dir.path().join("adapter.yaml");
    std::fs::write(
        &adapter,
        "name: test\ncommands:\n  tool-expand: ['echo respelt \"$0\"']\n",
    )
    .unwrap();
    let output = run_with_sh(dir.path(), &["--adapter", adapter.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    // Without it, `sh -c tool expand agent.yaml` runs a program named `tool`.
    let output = run_with_sh(dir.path(), &[]);
    assert_eq!(output.status.code(), Some(1));

    std::fs::write(&adapter, "commands:\n  tool-expnd: [x]\n").unwrap();
    let output = run_with_sh(dir.path(), &["--adapter", adapter.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("adapter.yaml: commands: unknown action \"tool-expnd\""),
        "{stderr}"
    );
}

#[test]
fn a_baseline_fails_the_run_on_regressions_and_unexpected_passes_only() {
    let dir = fixtures(&[("failing", FAILING), ("levels", LEVELS)]);
    let baseline = dir.path().join("baseline.yaml");
    let run = |text: &str| {
        std::fs::write(&baseline, text).unwrap();
        let output = run_with_sh(dir.path(), &["--baseline", baseline.to_str().unwrap()]);
        (
            output.status.code(),
            String::from_utf8_lossy(&output.stdout).into_owned(),
        )
    };
    let matched = "expected_failures:
  - {check: failing/step-2, reason: prints nope}
  - {check: failing/step-4, reason: blocked by step-2}
  - {check: levels/step-1/ours, reason: not our choice}
";
    let (code, stdout) = run(matched);
    assert_eq!(code, Some(0), "{stdout}");
    assert!(stdout.ends_with("baseline: matched\n"), "{stdout}");

    // A failing check the baseline does not list is a regression.
    let (code, stdout) = run(&matched.replace(
        "  - {check: levels/step-1/ours, reason: not our choice}\n",
        "",
    ));
    assert_eq!(code, Some(1));
    assert!(
        stdout.contains("regression (fails, not in the baseline): levels/step-1/ours\n"),
        "{stdout}"
    );

    // A listed check that holds is an unexpected pass: the baseline must shrink.
    let (code, stdout) = run(&format!(
        "{matched}  - {{check: failing/step-3, reason: stale}}\n"
    ));
    assert_eq!(code, Some(1));
    assert!(
        stdout
            .contains("unexpected pass (in the baseline, now holds: remove it): failing/step-3\n"),
        "{stdout}"
    );

    // A whole scenario may be listed.
    let (code, stdout) = run("expected_failures:
  - {check: failing, reason: all of it}
  - {check: levels, reason: all of it}
");
    assert_eq!(code, Some(0), "{stdout}");

    let (code, _) = run("expected_failures:\n  - {check: failing, reason: ''}\n");
    assert_eq!(code, Some(2));
}

#[test]
fn the_matrix_puts_implementations_side_by_side_with_verdicts() {
    let dir = fixtures(&[("levels", LEVELS), ("expand", EXPAND)]);
    let mock = sibling("mock-llm");
    let baseline = dir.path().join("baseline.yaml");
    std::fs::write(
        &baseline,
        "expected_failures:\n  - {check: levels/step-1/ours, reason: \"Real deviation: prints out.\"}\n",
    )
    .unwrap();
    let out = dir.path().join("matrix.md");
    let second = format!("second={}", baseline.display());
    let schemas = dir.path().join("schemas");
    let matrix = || {
        run_runner(&[
            "matrix",
            "--impl",
            "first=sh -c",
            "--impl",
            "second=sh -c",
            "--baseline",
            &second,
            "-o",
            out.to_str().unwrap(),
            "--fixtures",
            dir.path().to_str().unwrap(),
            "--schemas",
            schemas.to_str().unwrap(),
            "--mock-llm",
            mock.to_str().unwrap(),
            "--jobs",
            "2",
        ])
    };
    let output = matrix();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let markdown = std::fs::read_to_string(&out).unwrap();
    assert!(
        markdown.contains("| scenario | levels | seed | first | second |"),
        "{markdown}"
    );
    assert!(
        markdown.contains("| levels | spec, recommended, extension | 002 §4.3 | FAIL (1 extension) | FAIL (1 extension) |"),
        "{markdown}"
    );
    assert!(
        markdown.contains("| expand | spec | 003 §6.1 | FAIL (1 spec) | FAIL (1 spec) |"),
        "{markdown}"
    );
    assert!(
        markdown.contains("## Failures of second\n\n### expand\n"),
        "{markdown}"
    );
    assert!(
        markdown.contains("## Spec-level failures of first\n\n- `expand/step-1` (003 §6.1): expected stdout equals \"respelt agent.yaml\"\n"),
        "{markdown}"
    );
    assert!(
        markdown.contains("- `step-1/ours` [extension, decisions.md: The run]: expected stdout equals \"other\"; observed \"out\\n\"\n  - **Verdict:** Real deviation: prints out.\n"),
        "{markdown}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.with_extension("json")).unwrap())
            .unwrap();
    assert_eq!(json["implementations"][1]["name"], "second");
    // Nothing in the matrix depends on timing or temporary paths.
    let first = markdown.clone();
    let output = matrix();
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), first);
}
