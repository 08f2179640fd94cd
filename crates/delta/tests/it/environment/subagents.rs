//! A sub-agent's tools run where its own agent.yaml says, with the `--environment` of the
//! tree's top applied (issues 25 and 29): a tree started confined stays confined all the
//! way down, each child's RUN_START and calls saying where.

use super::support::{kind_args, payloads, require_components};
use crate::support::harness::Test;
use crate::support::run::{delta, mock, run_files};

/// An agent that hands its task to a copy of itself once (the copy's own try is refused
/// by the depth cap), then runs `probe`, then answers.
const RECURSIVE: &str = "name: recur\nllm: {model: m}\nsubagents: {max_depth: 1}\ntools:\n  - name: again\n    \
     description: Hands the task to a copy of this agent.\n    agent: .\n  - name: probe\n    \
     description: Says where it runs.\n    exec: \"sh -c ${script}\"\n";

const SCRIPT: &str = "mode: by_conversation\nsteps:\n  - message:\n      tool_calls: [{name: again, \
     arguments: {message: go on}}]\n  - message:\n      tool_calls: [{name: probe, arguments: \
     {script: \"echo probed\"}}]\n  - message: {content: done}\n";

#[test]
fn the_top_runs_environment_choice_reaches_every_sub_agent() {
    require_components();
    let mock = mock(SCRIPT);
    let run = delta(Test::new().agent("recur", RECURSIVE), &mock)
        .args([
            "run", "--agent", "recur", "-w", "ws", "-m", "look", "--run-id", "r",
        ])
        .args(kind_args("bwrap"))
        .run()
        .code(0);
    for id in ["r", "r.1"] {
        let files = run_files(&run.path().join("ws"), id);
        assert_eq!(files.metadata()["status"], "COMPLETED", "{id}");
        let start = &payloads(&files, "RUN_START")[0];
        assert_eq!(start["environment"]["kind"], "bwrap", "{id}: {start:#}");
        let probes: Vec<_> = payloads(&files, "ACTION_REQUEST")
            .into_iter()
            .filter(|request| request["tool_name"] == "probe")
            .collect();
        assert_eq!(probes.len(), 1, "{id}");
        assert_eq!(probes[0]["environment"]["kind"], "bwrap", "{id}");
        let results = payloads(&files, "ACTION_RESULT");
        assert!(
            results
                .iter()
                .any(|result| result["observation_content"] == "probed\n"),
            "{id}: {results:#?}"
        );
    }
}
