//! The tree in `delta view` and in the ATIF export (acceptance 3): a sub-agent's steps
//! nested under the call that started it; every trajectory of the tree accepted by
//! Harbor's own validator, and every reference to a sub-agent's trajectory resolving.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use super::{PLAN_RUN, files, tree, tree_ids};
use crate::support::harness::{ROOT, Run};
use crate::support::run::delta;

/// The tree, run to its end as `p` in `ws`.
fn finished_tree() -> Run {
    let tree = tree();
    delta(tree.test, &tree.planner).args(PLAN_RUN).run().code(0)
}

/// Harbor's ATIF validator (`python -m harbor.utils.trajectory_validator`), installed by
/// tests/setup.sh; without it this test fails, naming the fix.
fn harbor_python() -> PathBuf {
    let python = Path::new(ROOT).join("target/harbor-venv/bin/python");
    let works = Command::new(&python)
        .args(["-c", "import harbor.utils.trajectory_validator"])
        .output()
        .is_ok_and(|output| output.status.success());
    assert!(
        works,
        "Harbor's ATIF validator is not installed at {}: run tests/setup.sh (it makes a Python \
         3.12 venv with harbor==0.26.0 there)",
        python.display()
    );
    python
}

#[track_caller]
fn assert_harbor_accepts(python: &Path, file: &Path) {
    let output = Command::new(python)
        .args(["-m", "harbor.utils.trajectory_validator"])
        .arg(file)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "Harbor rejects {}:\n{}{}",
        file.display(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Every `subagent_trajectory_ref` of `document`'s steps.
fn refs(document: &Value) -> Vec<Value> {
    document["steps"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|step| {
            step["observation"]["results"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .flat_map(|result| {
            result["subagent_trajectory_ref"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .collect()
}

#[test]
fn atif_tree_passes_harbors_validator_and_refs_resolve() {
    let python = harbor_python();
    let run = finished_tree();
    let out = run.path().join("out");
    std::fs::create_dir_all(&out).unwrap();

    // One document, every descendant embedded at its root.
    let run = run
        .then()
        .args([
            "export",
            "--run-id",
            "p",
            "-w",
            "ws",
            "--format",
            "atif",
            "-o",
            "out/p.json",
        ])
        .run()
        .code(0);
    let file = run.path().join("out/p.json");
    assert_harbor_accepts(&python, &file);
    let document: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let embedded: Vec<&str> = document["subagent_trajectories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|child| child["trajectory_id"].as_str().unwrap())
        .collect();
    let mut sorted = embedded.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, ["p.1", "p.1.1", "p.2", "p.2.1"]);
    let ids: HashSet<&str> = embedded.iter().copied().collect();
    let mut all_refs = refs(&document);
    for child in document["subagent_trajectories"].as_array().unwrap() {
        assert!(child.get("subagent_trajectories").is_none());
        all_refs.extend(refs(child));
    }
    assert_eq!(all_refs.len(), 4, "one per agent call: {all_refs:?}");
    for reference in &all_refs {
        let id = reference["trajectory_id"].as_str().unwrap();
        assert!(ids.contains(id), "{id} is not embedded");
    }
    // ATIF's totals include the sub-agents.
    let planner = files(run.path(), "p").metadata();
    assert_eq!(
        document["final_metrics"]["total_cost_usd"],
        planner["subtree"]["usage"]["total_cost_usd"]
    );

    // One file per run, each referred to by its name beside the root's.
    let run = run
        .then()
        .args([
            "export",
            "--run-id",
            "p",
            "-w",
            "ws",
            "--format",
            "atif",
            "-o",
            "out/tree.json",
            "--subagents",
            "files",
        ])
        .run()
        .code(0);
    let out = run.path().join("out");
    let mut pending = vec![out.join("tree.json")];
    let mut seen = Vec::new();
    while let Some(file) = pending.pop() {
        assert_harbor_accepts(&python, &file);
        let document: Value =
            serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        seen.push(document["trajectory_id"].as_str().unwrap().to_owned());
        for reference in refs(&document) {
            let path = out.join(reference["trajectory_path"].as_str().unwrap());
            assert!(path.is_file(), "{} does not exist", path.display());
            let target: Value =
                serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            assert_eq!(target["trajectory_id"], reference["trajectory_id"]);
            pending.push(path);
        }
    }
    seen.sort();
    let mut expected = tree_ids("p").to_vec();
    expected.sort();
    assert_eq!(seen, expected);
}

#[test]
fn view_nests_the_childs_steps_under_the_call() {
    let run = finished_tree();
    let run = run
        .then()
        .args(["view", "--run-id", "p", "-w", "ws"])
        .run()
        .code(0);
    let page = run.read("ws/.delta/p/view.html");
    // Each agent call's article holds its child, which holds its own child: the reviewer's
    // tool sits inside the worker's call, inside the planner's.
    let work = page.find("data-tool=\"work\"").unwrap();
    let worker = page[work..].find("data-run-id=\"p.1\"").unwrap() + work;
    let review = page[worker..].find("data-tool=\"review\"").unwrap() + worker;
    let reviewer = page[review..].find("data-run-id=\"p.1.1\"").unwrap() + review;
    let look = page[reviewer..].find("data-tool=\"look\"").unwrap() + reviewer;
    assert!(work < worker && worker < review && review < reviewer && reviewer < look);
    assert!(page.contains("<details class=\"subagent\" data-run-id=\"p.2.1\""));
    // Folded until opened, with a link to the child's own page, which exists.
    assert!(page.contains("<a href=\"../p.1/view.html\">its page</a>"));
    assert!(page.contains("<a href=\"../p.1.1/view.html\">its page</a>"));
    for id in ["p.1", "p.1.1", "p.2", "p.2.1"] {
        let child = run.read(&format!("ws/.delta/{id}/view.html"));
        assert!(child.contains(&format!("data-run-id=\"{id}\"")), "{id}");
    }
}
