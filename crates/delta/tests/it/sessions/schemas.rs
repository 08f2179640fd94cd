//! Every document `delta-sessions` prints validates against its published schema
//! (`schemas/sessions-*.schema.json`, generated from the output types).

use serde_json::Value;

use crate::sessions::support::Workspace;

fn assert_valid(schema_file: &str, document: &Value) {
    let schema = delta_engine::schema::all()
        .into_iter()
        .find(|(name, _)| *name == schema_file)
        .unwrap_or_else(|| panic!("no schema {schema_file}"))
        .1;
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(document)
        .map(|e| e.to_string())
        .collect();
    assert!(
        errors.is_empty(),
        "{document} does not match {schema_file}: {errors:?}"
    );
}

#[test]
fn outputs_match_their_schemas() {
    let ws = Workspace::new();
    let started = ws.start_with(&[]).json;
    assert_valid("sessions-start.schema.json", &started);
    let id = started["session_id"].as_str().unwrap();

    for command in [
        "echo hi",
        r"printf '\377'",
        "echo done; exit 2",
        r"head -c 5M /dev/zero | tr '\0' a",
    ] {
        assert_valid("sessions-exec.schema.json", &ws.exec(id, command));
    }
    let other = ws.start("bash");
    let timed_out = ws.exec_args(&["exec", "--timeout", "0.2", &other, "sleep 30"]);
    assert_eq!(timed_out["timed_out"], true);
    assert_valid("sessions-exec.schema.json", &timed_out);

    assert_valid("sessions-list.schema.json", &ws.run(&["list"]).json);
    assert_valid("sessions-end.schema.json", &ws.run(&["end", &other]).json);
    assert_valid("sessions-cleanup.schema.json", &ws.run(&["cleanup"]).json);
    // The other session was ended; then a usage error; then an invalid id.
    for args in [
        &["exec", other.as_str(), "echo"][..],
        &["exec"],
        &["end", "nope"],
    ] {
        let run = ws.run(args);
        assert_ne!(run.code, 0);
        assert_valid("sessions-error.schema.json", &run.json);
    }
}
