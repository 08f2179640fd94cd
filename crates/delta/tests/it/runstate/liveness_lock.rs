//! Process identity, liveness (dead, zombie, reused pid) and the run lock.

use std::process::Command;

use delta_engine::run::{
    Liveness, ProcessIdentity, RunLock, RunStateError, is_locked_by_other, process_alive,
};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use crate::runstate::support::{spawn_child, wait_for_line};

#[test]
fn current_identity_describes_this_process_and_it_is_alive() {
    let me = ProcessIdentity::current();
    assert_eq!(me.pid, std::process::id());
    assert!(!me.hostname.is_empty());
    assert!(me.is_on_this_host());
    assert!(!me.process_name.is_empty());
    let ticks = me.start_ticks.expect("Linux exposes /proc/self/stat");
    assert_eq!(
        ProcessIdentity::current().start_ticks,
        Some(ticks),
        "stable"
    );
    assert_eq!(process_alive(&me), Liveness::Alive);
}

#[test]
fn a_reaped_child_is_dead() {
    let mut child = Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    let identity = ProcessIdentity {
        pid,
        start_ticks: Some(1),
        ..ProcessIdentity::current()
    };
    assert_eq!(process_alive(&identity), Liveness::Dead);
}

#[test]
fn a_zombie_child_is_dead() {
    let mut child = Command::new("true").spawn().unwrap();
    let stat = format!("/proc/{}/stat", child.id());
    // Wait (without reaping) until the child has exited and become a zombie.
    let state = |text: &str| text.rsplit(')').next().unwrap().trim_start().chars().next();
    let mut zombie = false;
    for _ in 0..2000 {
        if state(&std::fs::read_to_string(&stat).unwrap()) == Some('Z') {
            zombie = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert!(zombie, "child did not exit");
    let identity = ProcessIdentity {
        pid: child.id(),
        start_ticks: None,
        ..ProcessIdentity::current()
    };
    assert_eq!(process_alive(&identity), Liveness::Dead);
    child.wait().unwrap();
}

#[test]
fn a_live_pid_with_another_start_time_or_name_was_reused() {
    let me = ProcessIdentity::current();
    let other_start = ProcessIdentity {
        start_ticks: me.start_ticks.map(|t| t + 1),
        ..me.clone()
    };
    assert_eq!(process_alive(&other_start), Liveness::PidReused);
    let other_name = ProcessIdentity {
        start_ticks: None,
        process_name: "node".to_owned(),
        ..me.clone()
    };
    assert_eq!(process_alive(&other_name), Liveness::PidReused);
    let same_name = ProcessIdentity {
        start_ticks: None,
        ..me
    };
    assert_eq!(process_alive(&same_name), Liveness::Alive);
}

#[test]
fn pid_zero_and_out_of_range_pids_are_dead() {
    for pid in [0, u32::MAX] {
        let identity = ProcessIdentity {
            pid,
            ..ProcessIdentity::current()
        };
        assert_eq!(process_alive(&identity), Liveness::Dead, "pid {pid}");
    }
}

#[test]
fn another_host_is_not_this_host() {
    let identity = ProcessIdentity {
        hostname: "surely-not-this-host.invalid".to_owned(),
        ..ProcessIdentity::current()
    };
    assert!(!identity.is_on_this_host());
}

#[test]
fn the_lock_excludes_a_second_handle_until_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.lock");
    assert!(
        !is_locked_by_other(&path).unwrap(),
        "missing file is unlocked"
    );
    let first = RunLock::try_acquire(&path).unwrap();
    assert_eq!(first.path(), path);
    let second = RunLock::try_acquire(&path).unwrap_err();
    assert!(matches!(second, RunStateError::AlreadyLocked { .. }));
    assert_eq!(
        second.to_string(),
        format!(
            "{} is locked: another delta process is working on this run right now",
            path.display()
        )
    );
    assert!(is_locked_by_other(&path).unwrap());
    drop(first);
    assert!(!is_locked_by_other(&path).unwrap());
    let _again = RunLock::try_acquire(&path).unwrap();
}

#[test]
fn the_lock_excludes_another_process_and_dies_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.lock");

    // Released when the holder exits normally.
    let mut holder = spawn_child("hold-lock", &[path.to_str().unwrap()]);
    wait_for_line(&mut holder, "locked");
    assert!(matches!(
        RunLock::try_acquire(&path),
        Err(RunStateError::AlreadyLocked { .. })
    ));
    assert!(is_locked_by_other(&path).unwrap());
    drop(holder.stdin.take());
    assert!(holder.wait().unwrap().success());
    drop(RunLock::try_acquire(&path).unwrap());

    // Released by the kernel when the holder is killed.
    let mut holder = spawn_child("hold-lock", &[path.to_str().unwrap()]);
    wait_for_line(&mut holder, "locked");
    assert!(is_locked_by_other(&path).unwrap());
    kill(Pid::from_raw(holder.id() as i32), Signal::SIGKILL).unwrap();
    holder.wait().unwrap();
    assert!(!is_locked_by_other(&path).unwrap());
    drop(RunLock::try_acquire(&path).unwrap());
}
