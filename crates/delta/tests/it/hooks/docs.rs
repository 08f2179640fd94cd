//! docs/hooks.md: every `hooks.yaml` example loads, and every self-contained one
//! (`sh -c …`) runs successfully at its hook point and does what the text says.

use std::path::Path;

use delta_engine::config::HookName;

use crate::hooks::support::{Fixture, Samples, read};

/// The ```yaml blocks of docs/hooks.md.
fn yaml_blocks() -> Vec<String> {
    let doc = read(&Path::new(crate::support::harness::ROOT).join("docs/hooks.md"));
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in doc.lines() {
        match (&mut current, line) {
            (None, "```yaml") => current = Some(String::new()),
            (Some(block), "```") => {
                blocks.push(std::mem::take(block));
                current = None;
            }
            (Some(block), line) => {
                block.push_str(line);
                block.push('\n');
            }
            (None, _) => {}
        }
    }
    blocks
}

#[tokio::test]
async fn every_example_loads_and_the_one_liners_work() {
    let blocks = yaml_blocks();
    assert_eq!(
        blocks.len(),
        10,
        "one per hook and the configuration example"
    );
    let fx = Fixture::new();
    std::fs::write(fx.paths.journal(), "").unwrap();
    let samples = Samples::new();
    let mut ran = Vec::new();
    for block in &blocks {
        let hooks = fx.hooks(block);
        for (name, spec) in hooks.iter() {
            if !spec
                .command
                .starts_with(&["sh".to_owned(), "-c".to_owned()])
            {
                continue;
            }
            let outcome = fx.runner(block).run(4, samples.event(name)).await.unwrap();
            let meta = fx
                .paths
                .dir()
                .join(&outcome.io_path_ref)
                .join("execution_meta");
            assert!(
                outcome.result.is_ok(),
                "{}: {:?}\n{}",
                name.as_str(),
                outcome.result,
                read(&meta.join("stderr.log"))
            );
            ran.push(name);
        }
    }
    assert_eq!(
        ran,
        [
            HookName::PostLlmResponse,
            HookName::PostToolExecution,
            HookName::OnError,
            HookName::OnRunEnd,
            HookName::OnIterationStart,
            HookName::OnIterationEnd,
            HookName::OnSubagentEnd,
        ]
    );

    let ws = |name: &str| read(&fx.workspace.join(name));
    assert_eq!(ws("llm-responses.jsonl"), "{  \"id\": \"chatcmpl-1\"}\n");
    assert!(
        ws("tool-calls.log").ends_with(" read_file: hello\n"),
        "{}",
        ws("tool-calls.log")
    );
    assert!(
        ws("errors.log").ends_with(&format!(
            " run={} HTTP 500\n",
            crate::hooks::support::RUN_ID
        )),
        "{}",
        ws("errors.log")
    );
    assert_eq!(
        ws("runs.log"),
        format!(
            "{} COMPLETED after 4 iterations\n",
            crate::hooks::support::RUN_ID
        )
    );
    assert_eq!(ws("progress.log"), "iteration 4\n");
    assert_eq!(ws("subagents.log"), "p.1 COMPLETED\n");
    assert!(fx.workspace.join("snapshots/journal-4.jsonl").is_file());
}
