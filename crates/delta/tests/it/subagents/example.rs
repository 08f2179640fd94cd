//! `examples/map-reduce` as its README runs it without a model: a copy of the example, one
//! scripted model per agent (the mappers' and the reducer's named in their `.env`), and the
//! tree it makes (acceptance 4).

use std::path::Path;

use super::events;
use crate::support::harness::{ROOT, Test};
use crate::support::run::{RunFiles, assert_consistent, delta, mock, run_files};

/// `examples/map-reduce/{relative}` as text.
fn example_file(relative: &str) -> String {
    std::fs::read_to_string(Path::new(ROOT).join("examples/map-reduce").join(relative))
        .unwrap_or_else(|e| panic!("examples/map-reduce/{relative}: {e}"))
}

/// The journal timestamp of `run`'s only event of `kind`.
fn at(run: &RunFiles, kind: &str) -> String {
    let found = events(run, kind);
    assert_eq!(found.len(), 1, "{kind}: {found:?}");
    found[0]["timestamp"].as_str().unwrap().to_owned()
}

#[test]
fn the_map_reduce_example_maps_each_file_at_once_then_reduces() {
    let coordinator = mock(&example_file("mock-script.yaml"));
    let mapper = mock(&example_file("mapper/mock-script.yaml"));
    let reducer = mock(&example_file("reducer/mock-script.yaml"));
    let mut test = Test::new();
    for agent in ["", "mapper/", "reducer/"] {
        for file in ["agent.yaml", "system_prompt.md", "context.yaml"] {
            let relative = format!("{agent}{file}");
            test = test.file(&format!("map-reduce/{relative}"), &example_file(&relative));
        }
    }
    let test = test
        .file(
            "map-reduce/mapper/.env",
            &format!("DELTA_BASE_URL={}\n", mapper.base_url()),
        )
        .file(
            "map-reduce/reducer/.env",
            &format!("DELTA_BASE_URL={}\n", reducer.base_url()),
        )
        .file("words/a.txt", "one two three\n")
        .file("words/b.txt", "four five six seven\n");
    let run = delta(test, &coordinator)
        .args([
            "run",
            "--agent",
            "map-reduce",
            "-w",
            "words",
            "-m",
            "Count the words",
            "--run-id",
            "words",
            "--format",
            "json",
        ])
        .run()
        .code(0);
    let result: serde_json::Value = serde_json::from_str(run.stdout()).unwrap();
    assert_eq!(result["result"], "7 words in all.");
    assert_eq!(result["metrics"]["subtree"]["runs"], 4);

    let dir = run.path().join("words");
    assert_eq!(
        std::fs::read_to_string(dir.join("a.txt.count")).unwrap(),
        "3\n"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("b.txt.count")).unwrap(),
        "4\n"
    );
    for id in ["words", "words.1", "words.2", "words.3"] {
        assert_consistent(&run_files(&dir, id), "COMPLETED");
    }
    // Each mapper counted one file, a different one; both ran at once (each started
    // before the other ended); the reducer's tool added the counts up.
    let mut counted: Vec<String> = ["words.1", "words.2"]
        .iter()
        .map(|id| {
            let request = &events(&run_files(&dir, id), "ACTION_REQUEST")[0];
            request["payload"]["tool_args"]["file"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    counted.sort();
    assert_eq!(counted, ["a.txt", "b.txt"]);
    let (first, second) = (run_files(&dir, "words.1"), run_files(&dir, "words.2"));
    assert!(at(&first, "RUN_START") < at(&second, "RUN_END"));
    assert!(at(&second, "RUN_START") < at(&first, "RUN_END"));
    let reduced = &events(&run_files(&dir, "words.3"), "ACTION_RESULT")[0];
    assert_eq!(reduced["payload"]["observation_content"], "7\n");
    let reduce_call = &events(&run_files(&dir, "words"), "ACTION_RESULT")[3];
    assert_eq!(reduce_call["payload"]["subagent"]["run_id"], "words.3");
    assert_eq!(reduce_call["payload"]["observation_content"], "7");
}
