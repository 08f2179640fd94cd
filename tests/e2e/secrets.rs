//! The API key reaches the server and nothing else: no file, no log, no output.

use crate::harness::Test;
use crate::support::{
    API_KEY, HELLO_SCRIPT, HELLO_TASK, assert_no_secret, delta, hello_world, mock,
};

#[test]
fn the_api_key_is_sent_but_written_nowhere() {
    let mock = mock(HELLO_SCRIPT);
    let run = delta(hello_world(Test::new()), &mock)
        .args([
            "run", "--agent", "agent", "-y", "-v", "-m", HELLO_TASK, "--format", "json",
        ])
        .run()
        .code(0);
    let recorded = mock.recorded();
    assert_eq!(recorded.len(), 3);
    assert!(recorded.iter().all(|request| request.has_authorization));
    // The agent directory holds the workspace (workspaces/W001) and so every run file.
    assert!(run.path().join("agent/workspaces/W001/.delta").is_dir());
    assert_no_secret(run.path());
    assert!(!run.stdout().contains(API_KEY));
    assert!(!run.stderr().contains(API_KEY));
}

#[test]
fn a_key_from_the_agent_env_file_is_not_copied_anywhere() {
    let mock = mock(HELLO_SCRIPT);
    let run = hello_world(Test::new())
        .file("agent/.env", &format!("DELTA_API_KEY={API_KEY}\n"))
        .env("DELTA_BASE_URL", &mock.base_url())
        .args(["run", "--agent", "agent", "-w", "ws", "-m", HELLO_TASK])
        .run()
        .code(0);
    assert!(
        mock.recorded()
            .iter()
            .all(|request| request.has_authorization)
    );
    std::fs::remove_file(run.path().join("agent/.env")).expect("remove the key's own file");
    assert_no_secret(run.path());
}
