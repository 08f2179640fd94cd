//! Fails closed (issue 25): when the confinement asked for cannot be established the run
//! does not start (exit 126, the cause and the fix, no request to the model, no run
//! created). Each missing piece is simulated for real: a kernel without Landlock by a
//! seccomp filter that makes its system calls fail as on such a kernel, missing programs by
//! a PATH without them, namespaces off by an outer sandbox that forbids them.

use std::path::Path;

use super::support::{IMAGE, SH_AGENT, Sh, kind_args, outside_tmp, require_components};
use crate::support::harness::ROOT;
use crate::support::snapshot::snapshot;

/// A classic-BPF seccomp program that answers Landlock's three system calls
/// (landlock_create_ruleset, landlock_add_rule, landlock_restrict_self: 444-446 on every
/// architecture) with ENOSYS, as a kernel built without Landlock does, and allows the rest.
fn no_landlock_filter() -> Vec<u8> {
    #[cfg(target_arch = "x86_64")]
    const AUDIT_ARCH: u32 = 0xC000_003E;
    #[cfg(target_arch = "aarch64")]
    const AUDIT_ARCH: u32 = 0xC000_00B7;
    const LD_W_ABS: u16 = 0x20;
    const JEQ: u16 = 0x15;
    const JGE: u16 = 0x35;
    const JGT: u16 = 0x25;
    const RET: u16 = 0x06;
    const ERRNO_ENOSYS: u32 = 0x0005_0000 | 38;
    const ALLOW: u32 = 0x7fff_0000;
    let program: [(u16, u8, u8, u32); 7] = [
        (LD_W_ABS, 0, 0, 4),     // seccomp_data.arch
        (JEQ, 0, 4, AUDIT_ARCH), // another architecture: allow
        (LD_W_ABS, 0, 0, 0),     // seccomp_data.nr
        (JGE, 0, 2, 444),        // below 444: allow
        (JGT, 1, 0, 446),        // above 446: allow
        (RET, 0, 0, ERRNO_ENOSYS),
        (RET, 0, 0, ALLOW),
    ];
    program
        .iter()
        .flat_map(|(code, jt, jf, k)| {
            let mut bytes = code.to_ne_bytes().to_vec();
            bytes.extend([*jt, *jf]);
            bytes.extend(k.to_ne_bytes());
            bytes
        })
        .collect()
}

/// `delta` under an outer bubblewrap that only adds the seccomp filter of
/// [`no_landlock_filter`] (the file system and the network stay the host's).
fn without_landlock(dir: &Path) -> Vec<String> {
    let filter = dir.join("no-landlock.bpf");
    std::fs::write(&filter, no_landlock_filter()).expect("write the filter");
    [
        "sh",
        "-c",
        "exec \"$@\" 3< \"$0\"",
        &filter.display().to_string(),
        "bwrap",
        "--dev-bind",
        "/",
        "/",
        "--seccomp",
        "3",
        "--",
    ]
    .map(str::to_owned)
    .to_vec()
}

/// A `delta` stderr without this machine's paths.
fn stderr_of(run: &super::support::ShRun) -> String {
    run.stderr()
        .replace(&run.test.path().display().to_string(), "[TEST]")
        .replace(ROOT, "[ROOT]")
}

#[test]
fn no_landlock_in_the_kernel_refuses_the_run() {
    let dir = outside_tmp();
    let run = Sh {
        scripts: vec!["touch ran".to_owned()],
        args: kind_args("landlock"),
        wrap: without_landlock(dir.path()),
        ..Sh::default()
    }
    .run(|_: &Path| {});
    run.assert_refused();
    snapshot!(stderr_of(&run), @r#"
    error: the landlock environment cannot be established: this kernel has no Landlock (not built in, or not enabled at boot)
      = help: run on Linux 6.12 or later with Landlock enabled (`landlock` in /sys/kernel/security/lsm, or `lsm=landlock,...` on the kernel command line); or set `best_effort: true` under `environment:` to accept what this kernel enforces (RUN_START records it); or use `--environment bwrap` or `container`; `delta env probe` shows what this machine can enforce
    "#);
}

#[test]
fn best_effort_landlock_records_what_was_not_enforced() {
    let dir = outside_tmp();
    let agent = format!("{SH_AGENT}environment:\n  kind: landlock\n  best_effort: true\n");
    let run = Sh {
        scripts: vec!["echo ran".to_owned()],
        agent: Some(agent),
        wrap: without_landlock(dir.path()),
        ..Sh::default()
    }
    .run(|_: &Path| {});
    assert_eq!(run.output.status.code(), Some(0), "{}", run.said());
    let start = &run.events("RUN_START")[0]["environment"];
    assert_eq!(start["kind"], "landlock");
    assert_eq!(start["best_effort"], true);
    assert_eq!(start["landlock_abi"], 0);
    assert_eq!(
        start["enforced"],
        serde_json::json!(["processes_contained"])
    );
    snapshot!(start["not_enforced"], @r#"
    ["fs_read_confined","fs_write_confined","fs_refer","fs_truncate","fs_ioctl_dev","proc_hidden","tcp_denied","signals_scoped","abstract_unix_sockets_scoped","unix_sockets_denied","udp_denied","delta_read_only"]
    "#);
    assert_eq!(run.observations(), ["ran\n"]);
    assert!(
        run.stderr()
            .contains("tools run in landlock (Landlock ABI 0, best effort, no network); not enforced: fs_read_confined"),
        "the run says what it does not enforce: {}",
        run.said()
    );
}

#[test]
fn missing_bwrap_refuses_the_run() {
    let empty = outside_tmp();
    let run = Sh {
        scripts: vec!["touch ran".to_owned()],
        args: kind_args("bwrap"),
        env: vec![("PATH".to_owned(), empty.path().display().to_string())],
        ..Sh::default()
    }
    .run(|_: &Path| {});
    run.assert_refused();
    snapshot!(stderr_of(&run), @r#"
    error: the bwrap environment needs bubblewrap, and `bwrap` is not on PATH
      = help: install bubblewrap (Debian and Ubuntu: `apt-get install bubblewrap`; Fedora: `dnf install bubblewrap`), or use `--environment landlock`, which needs no extra program
    "#);
}

#[test]
fn namespaces_off_refuses_the_run() {
    require_components();
    let wrap = [
        "bwrap",
        "--dev-bind",
        "/",
        "/",
        "--unshare-user",
        "--disable-userns",
        "--cap-drop",
        "ALL",
        "--",
    ]
    .map(str::to_owned)
    .to_vec();
    let run = Sh {
        scripts: vec!["touch ran".to_owned()],
        args: kind_args("bwrap"),
        wrap,
        ..Sh::default()
    }
    .run(|_: &Path| {});
    run.assert_refused();
    let stderr = stderr_of(&run);
    // bwrap's own words depend on its version; the cause and the fix are ours.
    assert!(
        stderr.starts_with("error: bubblewrap could not create the sandbox: "),
        "{stderr}"
    );
    assert!(
        stderr.contains("= help: allow unprivileged user namespaces"),
        "{stderr}"
    );
}

#[test]
fn missing_runtime_refuses_the_run() {
    let empty = outside_tmp();
    let run = Sh {
        scripts: vec!["touch ran".to_owned()],
        args: kind_args("container"),
        env: vec![("PATH".to_owned(), empty.path().display().to_string())],
        ..Sh::default()
    }
    .run(|_: &Path| {});
    run.assert_refused();
    snapshot!(stderr_of(&run), @r#"
    error: the container environment needs podman, and `podman` is not on PATH
      = help: install podman, or choose the other runtime with `runtime:` under `environment:` (podman or docker)
    "#);
}

#[test]
fn failing_image_build_refuses_the_run() {
    require_components();
    let agent = format!("{SH_AGENT}environment:\n  kind: container\n  build: env\n");
    let run = Sh {
        scripts: vec!["touch ran".to_owned()],
        agent: Some(agent),
        ..Sh::default()
    }
    .run(|dir: &Path| {
        std::fs::create_dir_all(dir.join("agent/env")).expect("create the build directory");
        std::fs::write(
            dir.join("agent/env/Dockerfile"),
            format!(
                "FROM {IMAGE}\nRUN echo about to fail {} && false\n",
                fastrand::u64(..)
            ),
        )
        .expect("write the Dockerfile");
    });
    run.assert_refused();
    let stderr = stderr_of(&run);
    // The build's own output varies with podman's version; the cause and the fix are ours.
    assert!(
        stderr.starts_with("error: the image of [TEST]/agent/env did not build: "),
        "{stderr}"
    );
    assert!(stderr.contains("about to fail"), "{stderr}");
    assert!(
        stderr.contains("= help: fix the Dockerfile in [TEST]/agent/env; `podman build [TEST]/agent/env` shows the whole output"),
        "{stderr}"
    );
}

#[test]
fn missing_image_refuses_the_run() {
    require_components();
    let run = Sh {
        scripts: vec!["touch ran".to_owned()],
        args: [
            "--environment",
            "container",
            "--environment-image",
            "localhost/delta-no-such-image:1",
        ]
        .map(str::to_owned)
        .to_vec(),
        ..Sh::default()
    }
    .run(|_: &Path| {});
    run.assert_refused();
    snapshot!(stderr_of(&run), @r#"
    error: the image localhost/delta-no-such-image:1 is not available to podman (images are never pulled)
      = help: build or load it first (`podman build -t localhost/delta-no-such-image:1 DIR`, `podman load`, `podman pull localhost/delta-no-such-image:1`), or give a directory with a Dockerfile as `build:`
    "#);
}

#[test]
fn missing_sandbox_helper_refuses_the_run() {
    // A hard link (same file system as the build) to a delta with no delta-sandbox
    // beside it, and a PATH without one.
    let bin = outside_tmp();
    let delta = bin.path().join("delta");
    std::fs::hard_link(env!("CARGO_BIN_EXE_delta"), &delta).expect("link delta");
    for kind in ["landlock", "bwrap"] {
        let run = Sh {
            scripts: vec!["touch ran".to_owned()],
            args: kind_args(kind),
            env: vec![("PATH".to_owned(), "/usr/bin:/bin".to_owned())],
            program: Some(delta.clone()),
            ..Sh::default()
        }
        .run(|_: &Path| {});
        run.assert_refused();
        snapshot!(
            format!("missing_helper_{kind}"),
            stderr_of(&run).replace(&bin.path().display().to_string(), "[BIN]")
        );
    }
}

#[test]
fn the_host_cannot_deny_the_network() {
    let agent = format!("{SH_AGENT}environment:\n  kind: host\n  network: false\n");
    let run = Sh {
        scripts: vec!["touch ran".to_owned()],
        agent: Some(agent),
        ..Sh::default()
    }
    .run(|_: &Path| {});
    run.assert_refused();
    snapshot!(stderr_of(&run), @r#"
    error: `network: false` cannot be enforced by the host environment
      = help: use `kind: landlock`, `bwrap` or `container`, which can deny the network, or drop `network: false`
    "#);
}

#[test]
fn landlock_refuses_a_key_the_tools_could_read() {
    let run = Sh {
        scripts: vec!["touch ran".to_owned()],
        args: kind_args("landlock"),
        ..Sh::default()
    }
    .run(|dir: &Path| {
        std::fs::write(
            dir.join("ws/.env"),
            "DELTA_API_KEY=sk-in-the-workspace-0123456789\n",
        )
        .expect("write the workspace's .env");
    });
    run.assert_refused();
    snapshot!(stderr_of(&run), @r#"
    error: the API key comes from [TEST]/ws/.env, which the tools of the landlock environment could read
      = help: move the key to the agent's .env or to the process environment (neither is visible to the tools), or use `--environment bwrap` or `container`, which hide .env files
    "#);
}

#[test]
fn an_image_for_another_kind_is_a_usage_error() {
    let run = Sh {
        scripts: vec!["touch ran".to_owned()],
        args: ["--environment", "bwrap", "--environment-image", IMAGE]
            .map(str::to_owned)
            .to_vec(),
        ..Sh::default()
    }
    .run(|_: &Path| {});
    assert_eq!(run.output.status.code(), Some(2), "{}", run.said());
    assert_eq!(run.requests, 0);
    snapshot!(stderr_of(&run), @r#"
    error: --environment-image applies to the container environment, not to bwrap
      = help: add `--environment container`, or drop --environment-image
    "#);
}
