//! Workspaces: `-w PATH`, numbered agent workspaces, LAST_USED.

use std::collections::BTreeSet;
use std::sync::{Arc, Barrier};

use delta_engine::workspace::{
    Workspace, WorkspaceError, check_workspace_path, create_next_workspace, ensure_workspace,
    last_used, list_workspaces, parse_workspace_name, set_last_used, workspace_name,
};

#[test]
fn ensure_workspace_creates_the_path_and_the_delta_domain() {
    let tmp = tempfile::tempdir().unwrap();
    let wanted = tmp.path().join("a/b/ws");
    let ws = ensure_workspace(&wanted).unwrap();
    assert!(ws.root().is_absolute());
    assert_eq!(ws.root(), std::fs::canonicalize(&wanted).unwrap());
    assert_eq!(ws.delta_dir(), ws.root().join(".delta"));
    let version = ws.delta_dir().join("VERSION");
    assert_eq!(std::fs::read_to_string(&version).unwrap(), "1.10\n");

    // An existing workspace keeps its VERSION.
    std::fs::write(&version, "1.9\n").unwrap();
    ensure_workspace(&wanted).unwrap();
    assert_eq!(std::fs::read_to_string(&version).unwrap(), "1.9\n");
}

#[test]
fn ensure_workspace_returns_an_absolute_path_for_a_relative_one() {
    let tmp = tempfile::tempdir().unwrap();
    let relative = pathdiff(tmp.path());
    let ws = ensure_workspace(&relative.join("rel-ws")).unwrap();
    assert_eq!(
        ws.root(),
        std::fs::canonicalize(tmp.path().join("rel-ws")).unwrap()
    );
}

/// `path` relative to the current directory (through `..` components).
fn pathdiff(path: &std::path::Path) -> std::path::PathBuf {
    let cwd = std::env::current_dir().unwrap();
    let mut up = std::path::PathBuf::new();
    for _ in cwd.components().skip(1) {
        up.push("..");
    }
    up.join(path.strip_prefix("/").unwrap())
}

#[test]
fn a_file_is_not_a_workspace() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("f");
    std::fs::write(&file, "").unwrap();
    let error = ensure_workspace(&file).unwrap_err();
    assert!(matches!(error, WorkspaceError::NotADirectory { .. }));
    assert_eq!(
        error.to_string(),
        format!("workspace {} is not a directory", file.display())
    );
    assert_eq!(
        error.help().unwrap(),
        format!(
            "pass a directory with -w (a missing one is created), or move {} away",
            file.display()
        )
    );
    let missing = Workspace::existing(&tmp.path().join("nope")).unwrap_err();
    assert!(
        matches!(missing, WorkspaceError::NotFound { .. }),
        "{missing}"
    );
}

#[test]
fn a_path_under_a_file_names_the_file_and_creates_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("f");
    std::fs::write(&file, "").unwrap();
    let path = file.join("a/b");
    let error = check_workspace_path(&path).unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "cannot create workspace {}: {} is not a directory",
            path.display(),
            file.display()
        )
    );
    assert!(matches!(
        ensure_workspace(&path).unwrap_err(),
        WorkspaceError::ParentNotADirectory { .. }
    ));
    // Missing paths under a directory are fine: they are created later.
    check_workspace_path(&tmp.path().join("new/deep")).unwrap();
    assert!(!tmp.path().join("new").exists());
}

#[test]
fn a_delta_that_is_not_a_directory_is_refused_and_left_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let delta = tmp.path().join(".delta");
    std::fs::write(&delta, "mine").unwrap();
    for error in [
        check_workspace_path(tmp.path()).unwrap_err(),
        ensure_workspace(tmp.path()).unwrap_err(),
    ] {
        assert!(
            matches!(&error, WorkspaceError::DeltaNotADirectory { path } if *path == delta),
            "{error}"
        );
        assert_eq!(
            error.to_string(),
            format!(
                "{} is not a directory; the engine keeps its runs there",
                delta.display()
            )
        );
    }
    assert_eq!(std::fs::read_to_string(&delta).unwrap(), "mine");
    // A dangling symlink is not a directory either (mkdir would fail on it).
    std::fs::remove_file(&delta).unwrap();
    std::os::unix::fs::symlink("nowhere", &delta).unwrap();
    assert!(matches!(
        check_workspace_path(tmp.path()).unwrap_err(),
        WorkspaceError::DeltaNotADirectory { .. }
    ));
}

#[test]
fn workspace_names() {
    assert_eq!(workspace_name(1), "W001");
    assert_eq!(workspace_name(42), "W042");
    assert_eq!(workspace_name(1000), "W1000");
    assert_eq!(parse_workspace_name("W003"), Some(3));
    assert_eq!(parse_workspace_name("W1000"), Some(1000));
    for bad in ["W", "w001", "W-1", "W0x1", "X001", "W001 ", ""] {
        assert_eq!(parse_workspace_name(bad), None, "{bad:?}");
    }
}

#[test]
fn next_workspace_follows_the_highest_existing_number() {
    let agent = tempfile::tempdir().unwrap();
    let first = create_next_workspace(agent.path()).unwrap();
    assert_eq!((first.id.as_str(), first.number), ("W001", 1));
    assert!(first.path.is_absolute());
    assert_eq!(first.path, agent.path().join("workspaces/W001"));
    assert!(first.path.join(".delta/VERSION").is_file());
    assert_eq!(create_next_workspace(agent.path()).unwrap().id, "W002");
    std::fs::create_dir(agent.path().join("workspaces/W007")).unwrap();
    std::fs::create_dir(agent.path().join("workspaces/notes")).unwrap();
    assert_eq!(create_next_workspace(agent.path()).unwrap().id, "W008");
    let listed: Vec<String> = list_workspaces(agent.path())
        .unwrap()
        .into_iter()
        .map(|w| w.id)
        .collect();
    assert_eq!(listed, vec!["W001", "W002", "W007", "W008"]);
}

#[test]
fn twenty_concurrent_allocations_get_twenty_directories() {
    let agent = tempfile::tempdir().unwrap();
    let barrier = Arc::new(Barrier::new(20));
    let handles: Vec<_> = (0..20)
        .map(|_| {
            let home = agent.path().to_path_buf();
            let barrier = Arc::clone(&barrier);
            std::thread::spawn(move || {
                barrier.wait();
                create_next_workspace(&home).unwrap().id
            })
        })
        .collect();
    let ids: BTreeSet<String> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    let expected: BTreeSet<String> = (1..=20).map(workspace_name).collect();
    assert_eq!(ids, expected);
}

/// Concurrent first runs in one new `-w` workspace (the conformance scenario
/// concurrent-runs-pause-and-continue lost a run to this): a path another process creates
/// between two checks is not a dangling symlink.
#[test]
fn concurrent_first_runs_in_one_new_workspace_all_get_it() {
    for _ in 0..30 {
        let tmp = tempfile::tempdir().unwrap();
        let barrier = Arc::new(Barrier::new(12));
        let handles: Vec<_> = (0..12)
            .map(|_| {
                let path = tmp.path().join("ws");
                let barrier = Arc::clone(&barrier);
                std::thread::spawn(move || {
                    barrier.wait();
                    ensure_workspace(&path).map(|ws| ws.root().to_path_buf())
                })
            })
            .collect();
        for handle in handles {
            let root = handle.join().unwrap().unwrap_or_else(|e| panic!("{e}"));
            assert!(root.join(".delta").is_dir());
        }
    }
}

#[test]
fn last_used_reads_back_what_was_set_and_ignores_junk() {
    let agent = tempfile::tempdir().unwrap();
    assert_eq!(last_used(agent.path()), None, "no workspaces/ yet");
    let w1 = create_next_workspace(agent.path()).unwrap();
    let w2 = create_next_workspace(agent.path()).unwrap();
    assert_eq!(last_used(agent.path()), None, "no LAST_USED yet");

    set_last_used(agent.path(), &w2.id).unwrap();
    let file = agent.path().join("workspaces/LAST_USED");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "W002\n");
    assert_eq!(last_used(agent.path()), Some(w2));
    set_last_used(agent.path(), &w1.id).unwrap();
    assert_eq!(last_used(agent.path()), Some(w1));

    for junk in ["", "garbage", "../W001", "W009\n"] {
        std::fs::write(&file, junk).unwrap();
        assert_eq!(last_used(agent.path()), None, "{junk:?}");
    }
}
