//! `delta env probe`: a line per kind with yes or no, and with a kind asked for, exit 0 only
//! when it works (126 otherwise): checked here where everything works, and with the
//! programs of bwrap and container taken off PATH.

use serde_json::Value;

use super::support::{outside_tmp, require_components};
use crate::support::harness::Test;

#[test]
fn probe_reports_every_kind_and_exits_by_the_one_asked() {
    require_components();
    let run = Test::new().args(["env", "probe"]).run().code(0);
    let kinds: Vec<(String, String)> = run
        .stdout()
        .lines()
        .take(4)
        .map(|line| {
            let mut words = line.split_whitespace();
            (
                words.next().expect("kind").to_owned(),
                words.next().expect("yes or no").to_owned(),
            )
        })
        .collect();
    let expected: Vec<(String, String)> = ["host", "landlock", "bwrap", "container"]
        .iter()
        .map(|kind| ((*kind).to_owned(), "yes".to_owned()))
        .collect();
    assert_eq!(kinds, expected, "{}", run.stdout());
    for kind in ["host", "landlock", "bwrap", "container"] {
        Test::new().args(["env", "probe", kind]).run().code(0);
    }
    let json = Test::new()
        .args(["env", "probe", "--format", "json"])
        .run()
        .code(0);
    let report: Value = serde_json::from_str(json.stdout()).expect("JSON");
    assert!(
        report["landlock_abi"].as_u64().is_some_and(|abi| abi >= 6),
        "{report:#}"
    );
    assert_eq!(report["kinds"][2]["kind"], "bwrap");
    assert_eq!(report["kinds"][2]["works"], true);

    // Without bwrap and podman on PATH, those two kinds do not work.
    let empty = outside_tmp();
    let path = empty.path().display().to_string();
    for kind in ["bwrap", "container"] {
        let run = Test::new()
            .env("PATH", &path)
            .args(["env", "probe", kind])
            .run()
            .code(126);
        let line = run
            .stdout()
            .lines()
            .find(|line| line.starts_with(kind))
            .expect("its line");
        assert!(line.contains(" no "), "{line}");
    }
    Test::new()
        .env("PATH", &path)
        .args(["env", "probe", "landlock"])
        .run()
        .code(0);
}
