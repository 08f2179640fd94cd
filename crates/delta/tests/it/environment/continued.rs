//! Containers across `delta continue` (acceptance 4): a run killed with SIGKILL leaves its
//! container, which the continued run reuses with everything in it, once the Janitor has
//! ended the command the kill cut short inside it; a container that disappeared is made
//! anew from the image, and the model is told what was lost.

use std::path::PathBuf;
use std::process::Command;

use super::support::{
    IMAGE, SH_AGENT, assert_success, kind_args, payloads, require_components, sh_script,
};
use crate::support::harness::Test;
use crate::support::run::{RunFiles, delta, mock, only_run, wait_until};

/// A container run killed with SIGKILL while its second tool call runs; the first call
/// left a file outside the workspace, in the container.
struct Killed {
    test: Test,
    workspace: PathBuf,
    run_id: String,
    container: String,
    container_id: String,
}

fn killed_container_run() -> Killed {
    require_components();
    let mock = mock(&sh_script(&[
        "echo kept > /root/outside-state && echo saved".to_owned(),
        "touch started && sleep 300".to_owned(),
    ]));
    let test = delta(Test::new().agent("agent", SH_AGENT), &mock)
        .args(["run", "--agent", "agent", "-w", "ws", "-y", "-m", "go"])
        .args(kind_args("container"));
    let mut child = test.spawn();
    let workspace = test.path().join("ws");
    wait_until("the second tool call", || {
        workspace.join("started").exists()
    });
    child.kill().expect("SIGKILL delta");
    let _ = child.wait();
    let files = only_run(&workspace);
    let start = &payloads(&files, "RUN_START")[0]["environment"];
    let container = start["container"].as_str().expect("container").to_owned();
    Killed {
        run_id: files.metadata()["run_id"]
            .as_str()
            .expect("run id")
            .to_owned(),
        container_id: start["container_id"].as_str().expect("id").to_owned(),
        container,
        workspace,
        test,
    }
}

fn container_exists(name: &str) -> bool {
    Command::new("podman")
        .args(["container", "exists", name])
        .status()
        .is_ok_and(|status| status.success())
}

/// `delta continue` of the killed run, whose model reads the file left outside the
/// workspace and answers.
fn continue_it(killed: &Killed) -> (std::process::Output, RunFiles) {
    continue_with(killed, "cat /root/outside-state")
}

/// `delta continue` of the killed run, whose model runs `command` and answers.
fn continue_with(killed: &Killed, command: &str) -> (std::process::Output, RunFiles) {
    let mock = mock(&sh_script(&[command.to_owned()]));
    let test = delta(Test::new(), &mock)
        .args(["continue", "--run-id", &killed.run_id, "-w"])
        .arg(&killed.workspace)
        .arg("-y")
        .args(kind_args("container"));
    let output = test.cmd().output().expect("run delta continue");
    (output, only_run(&killed.workspace))
}

#[test]
fn continue_after_kill_9_reuses_the_container() {
    let killed = killed_container_run();
    assert!(container_exists(&killed.container), "SIGKILL left it");
    let (output, files) = continue_it(&killed);
    assert_success(&output, "delta continue");
    let requests = payloads(&files, "ACTION_REQUEST");
    let last = requests.last().expect("the continued call");
    assert_eq!(
        last["environment"]["container_id"],
        killed.container_id.as_str()
    );
    let results = payloads(&files, "ACTION_RESULT");
    assert_eq!(
        results.last().expect("its result")["observation_content"],
        "kept\n"
    );
    let metadata = files.metadata();
    assert_eq!(metadata["environment"]["container_created"], false);
    // The one note is the Janitor's about the call the kill cut short (issue 30); none
    // says the container was made anew.
    let notes = payloads(&files, "SYSTEM_MESSAGE");
    assert!(
        notes.iter().all(|note| {
            note["content"].as_str().is_some_and(|text| {
                text.contains("was still running when the engine running it died")
            })
        }),
        "{notes:?}"
    );
    assert!(!container_exists(&killed.container), "removed at the end");
    drop(killed.test);
}

#[test]
fn the_janitor_ends_the_killed_call_inside_the_container() {
    let killed = killed_container_run();
    // Killing the host-side `exec` client leaves the command running in the container:
    // the Janitor finds it by the call's marker.
    let (output, files) = continue_with(&killed, "ps | grep -c 'sleep 30[0]' || true");
    assert_success(&output, "delta continue");
    let results = payloads(&files, "ACTION_RESULT");
    assert_eq!(
        results.last().expect("its result")["observation_content"],
        "0\n",
        "the killed call's `sh -c` and `sleep 300` still ran in the container"
    );
    drop(killed.test);
}

#[test]
fn a_vanished_container_is_made_anew_with_a_note() {
    let killed = killed_container_run();
    let removed = Command::new("podman")
        .args(["rm", "-f", "-t", "0", &killed.container])
        .status()
        .expect("podman rm");
    assert!(removed.success());
    let (output, files) = continue_it(&killed);
    assert_success(&output, "delta continue");
    let notes = payloads(&files, "SYSTEM_MESSAGE");
    let note = notes
        .iter()
        .find(|note| {
            note["content"]
                .as_str()
                .is_some_and(|text| text.contains("was gone when the run continued"))
        })
        .unwrap_or_else(|| panic!("no note among {notes:#?}"));
    assert!(
        note["content"]
            .as_str()
            .is_some_and(|text| text.contains(IMAGE) && text.contains("was lost")),
        "{note:#}"
    );
    let last = payloads(&files, "ACTION_REQUEST");
    let last = last.last().expect("the continued call");
    assert_ne!(
        last["environment"]["container_id"],
        killed.container_id.as_str()
    );
    let results = payloads(&files, "ACTION_RESULT");
    let seen = results.last().expect("its result")["observation_content"]
        .as_str()
        .expect("text")
        .to_owned();
    assert!(seen.contains("No such file"), "the state was lost: {seen}");
    assert_eq!(files.metadata()["environment"]["container_created"], true);
    drop(killed.test);
}
