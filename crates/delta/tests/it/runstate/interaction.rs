//! interaction/: the request an asynchronous ask_human waits on, and its answer.

use delta_engine::run::{
    InputType, InteractionRequest, RunStateError, clear_interaction, create_run,
    read_interaction_request, read_interaction_response, write_interaction_request,
};
use delta_engine::secrets::Redactor;

use crate::runstate::support::{at, run_id};
use crate::support::snapshot::snapshot;

#[test]
fn request_round_trips_and_answer_is_read_then_cleared() {
    let ws = tempfile::tempdir().unwrap();
    let paths = create_run(ws.path(), &run_id("r1")).unwrap();
    assert_eq!(read_interaction_request(&paths).unwrap(), None);
    assert_eq!(read_interaction_response(&paths).unwrap(), None);

    let request = InteractionRequest {
        request_id: "q1".to_owned(),
        timestamp: at("2025-10-14T10:31:00.250Z"),
        prompt: "Please provide API key:".to_owned(),
        input_type: InputType::Password,
        sensitive: true,
    };
    write_interaction_request(&paths, &request, &Redactor::default()).unwrap();
    let text = std::fs::read_to_string(paths.interaction_request()).unwrap();
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&text).unwrap(),
        serde_json::json!({
            "request_id": "q1",
            "timestamp": "2025-10-14T10:31:00.250Z",
            "prompt": "Please provide API key:",
            "input_type": "password",
            "sensitive": true
        })
    );
    assert_eq!(read_interaction_request(&paths).unwrap(), Some(request));

    // `echo` adds a newline the human did not mean; inner newlines are kept.
    for (file, answer) in [
        ("sk-abc\n", "sk-abc"),
        ("yes\r\n", "yes"),
        ("line 1\nline 2\n\n", "line 1\nline 2\n"),
        ("no newline", "no newline"),
    ] {
        std::fs::write(paths.interaction_response(), file).unwrap();
        assert_eq!(
            read_interaction_response(&paths).unwrap().as_deref(),
            Some(answer)
        );
    }

    clear_interaction(&paths).unwrap();
    assert!(!paths.interaction_dir().exists());
    clear_interaction(&paths).unwrap();
}

#[test]
fn a_corrupt_request_names_the_file_and_position() {
    let ws = tempfile::tempdir().unwrap();
    let paths = create_run(ws.path(), &run_id("r1")).unwrap();
    std::fs::create_dir_all(paths.interaction_dir()).unwrap();
    std::fs::write(
        paths.interaction_request(),
        r#"{"request_id":"q","timestamp":"2025-10-14T10:31:00Z","prompt":"p","input_type":"yesno","sensitive":false}"#,
    )
    .unwrap();
    let error = read_interaction_request(&paths).unwrap_err();
    assert!(matches!(
        error,
        RunStateError::InteractionCorrupt { line: 1, .. }
    ));
    snapshot!(error, @"[TEMP]/.delta/r1/interaction/request.json:1:86: invalid interaction request: unknown variant `yesno`, expected one of `text`, `password`, `confirmation`");
}
