//! What each check rests on: the committed table (docs/conformance/citations.md) is the
//! one `delta-conformance citations` generates, and every quoted sentence is in the seed
//! section its check cites (when the seed texts are at hand; they are not part of this
//! repository).

use std::path::PathBuf;

use super::support::{fixtures, repo, run_runner};

/// The seed texts: `DELTA_SEEDS`, else a `shared/seeds` directory beside the checkout or
/// one of its parents (the project's workplace keeps them there).
fn seeds() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("DELTA_SEEDS") {
        return Some(PathBuf::from(dir));
    }
    let root = repo().canonicalize().ok()?;
    root.ancestors()
        .map(|dir| dir.join("shared/seeds"))
        .find(|dir| dir.is_dir())
}

#[test]
fn the_committed_citations_table_is_the_generated_one() {
    let fixtures = fixtures();
    let output = run_runner(&["citations", "--fixtures", fixtures.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let generated = String::from_utf8(output.stdout).unwrap();
    let path = repo().join("docs/conformance/citations.md");
    if std::env::var_os("UPDATE_CITATIONS").is_some() {
        std::fs::write(&path, &generated).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap();
    assert!(
        committed == generated,
        "docs/conformance/citations.md is out of date: regenerate it with \
         `delta-conformance citations -o docs/conformance/citations.md` (or \
         UPDATE_CITATIONS=1 cargo test -p delta-conformance --test conformance citations)"
    );
    // One row per declared check, spec and recommended ones quoting their sentence.
    assert!(generated.contains(
        "| `step-1` | spec | 003 §10 Test 1.1; 003 §3.3 | “Expected Result: Configuration validation error at load time” “if violations are found, it must report an error and prompt the user to use shell:.” |"
    ));
    assert!(generated.contains("| `STEP/journal` | spec | 001 §7, §7.1 |"));
}

#[test]
fn every_quote_is_in_the_seed_section_it_cites() {
    let Some(seeds) = seeds() else {
        eprintln!(
            "SKIPPED: the seed texts are not here (set DELTA_SEEDS to their directory, or keep \
             them in shared/seeds beside the checkout)"
        );
        return;
    };
    let fixtures = fixtures();
    let output = run_runner(&[
        "citations",
        "--fixtures",
        fixtures.to_str().unwrap(),
        "--seeds",
        seeds.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains(": 0 not found"), "{stderr}");
}

/// Against a seed text of its own: a quote that is not in its section, and a section the
/// seed does not have, are each named, and the command exits 1.
#[test]
fn a_quote_missing_from_its_section_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let seeds = dir.path().join("seeds");
    std::fs::create_dir_all(&seeds).unwrap();
    std::fs::write(
        seeds.join("003_test.txt"),
        "# v1.7\n\n## 3. Spec\n\nThe engine must validate this.\n\n## 10. Tests\n\n```yaml\n# Expected Result: Configuration validation error\n```\n",
    )
    .unwrap();
    std::fs::create_dir_all(dir.path().join("fixtures/scenarios")).unwrap();
    std::fs::create_dir_all(dir.path().join("fixtures/agents")).unwrap();
    let scenario = r#"
name: quoted
description: d
seed: "003 §10 Test 1.1"
quote: "Expected Result: Configuration validation error"
steps:
  - shell: "true"
    checks:
      - {id: elsewhere, seed: "003 §10", quote: "The engine must validate this.", expect: {}}
      - {id: nowhere, seed: "003 §11", quote: "x", expect: {}}
"#;
    std::fs::write(dir.path().join("fixtures/scenarios/quoted.yaml"), scenario).unwrap();
    let output = run_runner(&[
        "citations",
        "--fixtures",
        dir.path().join("fixtures").to_str().unwrap(),
        "--seeds",
        seeds.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(
            "quoted/step-1/elsewhere: \"The engine must validate this.\" is not in 003 §10"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("quoted/step-1/nowhere: no such section"),
        "{stderr}"
    );
    let misses: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("quoted/"))
        .collect();
    assert_eq!(misses.len(), 2, "{stderr}");
}
