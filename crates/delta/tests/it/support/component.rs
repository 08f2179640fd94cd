//! The real components some tests drive (Chromium, a Slurm cluster, jq): there, or the
//! test fails naming the component, the tests that need it and how to get it. Never a
//! skip, on CI or anywhere else: a suite that passes without them would say nothing.

use std::path::PathBuf;

/// How every missing component is fixed.
const FIX: &str = "./scripts/test.sh installs and starts what the tests need (as root: \
                   tests/setup.sh; without root it lists what is missing)";

/// The first of `names` found on PATH; the test fails naming `component` otherwise.
#[track_caller]
pub fn program(component: &str, names: &[&str]) -> PathBuf {
    let found = names.iter().find_map(|name| {
        std::env::var_os("PATH").and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|dir| dir.join(name))
                .find(|p| p.is_file())
        })
    });
    match found {
        Some(path) => path,
        None => panic!("{component} is not installed (none of {names:?} is on PATH): {FIX}"),
    }
}

/// Fails the test naming `component` when `ready` is false.
#[track_caller]
pub fn require(component: &str, ready: bool) {
    assert!(ready, "{component} is not ready: {FIX}");
}

#[test]
#[should_panic(
    expected = "a frobnicator is not installed (none of [\"no-such-program-3f\"] is on PATH): ./scripts/test.sh installs"
)]
fn a_missing_component_fails_the_test_naming_it_and_the_fix() {
    program("a frobnicator", &["no-such-program-3f"]);
}
