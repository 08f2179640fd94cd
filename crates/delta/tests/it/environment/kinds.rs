//! Each kind as the issue describes it (acceptance 1): the journal records the environment
//! of the run and of every call, the workspace appears at `workdir` with its `.delta/`
//! read-only, a container's image is built once per content hash and its limits reach the
//! runtime, a timeout kills the command inside, MCP stdio servers run inside while hooks
//! run on the host, and `delta tool expand` and `--format jsonl` show it all.

use std::path::Path;

use serde_json::{Value, json};

use super::support::{
    CONFINED, IMAGE, SH_AGENT, Sh, TOOLS_IMAGE, assert_success, kind_args, outside_tmp, payloads,
    require_components,
};
use crate::support::harness::Test;
use crate::support::run::{assert_consistent, delta, hello_world, mock};
use crate::support::snapshot::snapshot;

#[test]
fn each_kind_journals_the_environment_of_every_call() {
    require_components();
    for kind in ["host", "landlock", "bwrap", "container"] {
        let args = if kind == "host" {
            Vec::new()
        } else {
            kind_args(kind)
        };
        let run = Sh {
            scripts: vec!["echo one".to_owned(), "echo two".to_owned()],
            args,
            ..Sh::default()
        }
        .run(|_: &Path| {});
        assert_eq!(run.output.status.code(), Some(0), "{kind}: {}", run.said());
        assert_consistent(&run.files(), "COMPLETED");
        assert_eq!(run.observations(), ["one\n", "two\n"], "{kind}");
        let start = run.events("RUN_START")[0].clone();
        let metadata = run.files().metadata();
        let requests = run.events("ACTION_REQUEST");
        if kind == "host" {
            // The host's journals are as they were before environments existed.
            assert!(start.get("environment").is_none(), "{start:#}");
            assert!(metadata.get("environment").is_none(), "{metadata:#}");
            assert!(requests.iter().all(|r| r.get("environment").is_none()));
            continue;
        }
        let report = &start["environment"];
        assert_eq!(report["kind"], kind, "{report:#}");
        assert_eq!(report["network"], false);
        assert!(
            report["enforced"]
                .as_array()
                .is_some_and(|all| all.contains(&json!("processes_contained"))),
            "{report:#}"
        );
        assert_eq!(&metadata["environment"], report);
        let expected = match kind {
            "container" => json!({
                "kind": "container",
                "container_id": report["container_id"],
                "image_id": report["image_id"],
            }),
            _ => json!({ "kind": kind }),
        };
        assert_eq!(requests.len(), 2);
        for request in &requests {
            assert_eq!(request["environment"], expected, "{kind}");
        }
        if kind == "container" {
            assert_eq!(report["image"], IMAGE);
            assert_eq!(report["container_created"], true);
            assert!(
                report["container_id"]
                    .as_str()
                    .is_some_and(|id| id.len() == 64)
            );
        }
    }
}

#[test]
fn the_workspace_appears_at_workdir_with_its_record_read_only() {
    require_components();
    for kind in ["bwrap", "container"] {
        let agent =
            format!("{SH_AGENT}environment:\n  kind: {kind}\n  image: {IMAGE}\n  workdir: /app\n");
        let run = Sh {
            scripts: vec![
                "pwd; echo \"$DELTA_CWD\"".to_owned(),
                "echo made > made.txt && cat /app/made.txt".to_owned(),
                "{ echo x > .delta/planted; } 2>/dev/null && echo DELTA-WRITTEN || echo DELTA-READ-ONLY"
                    .to_owned(),
                "cat .env; echo end-of-env".to_owned(),
            ],
            agent: Some(agent),
            ..Sh::default()
        }
        .run(|dir: &Path| {
            std::fs::write(dir.join("ws/.env"), "PLANTED_SECRET=in-the-workspace-env\n")
                .expect("write .env");
        });
        assert_eq!(run.output.status.code(), Some(0), "{kind}: {}", run.said());
        assert_eq!(
            run.observations(),
            [
                "/app\n/app\n",
                "made\n",
                "DELTA-READ-ONLY\n",
                "end-of-env\n"
            ],
            "{kind}"
        );
        assert_eq!(
            std::fs::read_to_string(run.workspace.join("made.txt")).expect("made.txt"),
            "made\n"
        );
        assert!(!run.workspace.join(".delta/planted").exists());
        assert_eq!(run.events("RUN_START")[0]["environment"]["workdir"], "/app");
    }
}

/// The limit Landlock cannot lift, shown rather than hidden: `.delta/` is writable, and the
/// report says so.
#[test]
fn landlock_leaves_the_record_writable_and_says_so() {
    require_components();
    let run = Sh {
        scripts: vec!["echo x > .delta/planted && echo DELTA-WRITTEN".to_owned()],
        args: kind_args("landlock"),
        ..Sh::default()
    }
    .run(|_: &Path| {});
    assert_eq!(run.observations(), ["DELTA-WRITTEN\n"]);
    let report = &run.events("RUN_START")[0]["environment"];
    assert!(
        report["not_enforced"]
            .as_array()
            .is_some_and(|all| all.contains(&json!("delta_read_only"))),
        "{report:#}"
    );
}

#[test]
fn a_container_image_is_built_once_per_content_hash() {
    require_components();
    let unique = format!("{}-{}", std::process::id(), fastrand::u64(..));
    let agent = format!("{SH_AGENT}environment:\n  kind: container\n  build: env\n");
    let dockerfile = format!("FROM {IMAGE}\nRUN echo built-{unique} > /built.txt\n");
    let build = |dir: &Path| {
        std::fs::create_dir_all(dir.join("agent/env")).expect("create the build directory");
        std::fs::write(dir.join("agent/env/Dockerfile"), &dockerfile).expect("Dockerfile");
    };
    let first = Sh {
        scripts: vec!["cat /built.txt".to_owned()],
        agent: Some(agent.clone()),
        ..Sh::default()
    }
    .run(build);
    assert_eq!(first.output.status.code(), Some(0), "{}", first.said());
    assert_eq!(first.observations(), [format!("built-{unique}\n")]);
    let report = first.events("RUN_START")[0]["environment"].clone();
    assert_eq!(report["image_built"], true, "{report:#}");
    let image = report["image"].as_str().expect("image").to_owned();
    assert!(image.starts_with("localhost/delta-build:"), "{image}");

    let second = Sh {
        scripts: vec!["cat /built.txt".to_owned()],
        agent: Some(agent),
        ..Sh::default()
    }
    .run(build);
    let again = &second.events("RUN_START")[0]["environment"];
    assert_eq!(again["image_built"], false, "{again:#}");
    assert_eq!(again["image"], image.as_str());
    assert_eq!(again["image_id"], report["image_id"]);
    let _ = std::process::Command::new("podman")
        .args(["rmi", "-f", &image])
        .output();
}

#[test]
fn container_limits_and_network_reach_the_runtime_and_keep_keeps_it() {
    require_components();
    let agent = format!(
        "{SH_AGENT}environment:\n  kind: container\n  image: {IMAGE}\n  cpus: 1.5\n  \
         memory_mb: 256\n  keep: true\n"
    );
    let run = Sh {
        scripts: vec!["echo in".to_owned()],
        agent: Some(agent),
        ..Sh::default()
    }
    .run(|_: &Path| {});
    assert_eq!(run.output.status.code(), Some(0), "{}", run.said());
    let report = run.events("RUN_START")[0]["environment"].clone();
    let name = report["container"].as_str().expect("container").to_owned();
    let inspected = std::process::Command::new("podman")
        .args([
            "container",
            "inspect",
            "--format",
            "{{.HostConfig.NanoCpus}} {{.HostConfig.Memory}} {{.HostConfig.NetworkMode}}",
            &name,
        ])
        .output()
        .expect("podman inspect");
    let _ = std::process::Command::new("podman")
        .args(["rm", "-f", "-t", "0", &name])
        .output();
    assert!(inspected.status.success(), "keep: true kept {name}");
    assert_eq!(
        String::from_utf8_lossy(&inspected.stdout).trim(),
        "1500000000 268435456 none"
    );
    assert!(
        report["enforced"].as_array().is_some_and(
            |all| all.contains(&json!("cpu_limit")) && all.contains(&json!("memory_limit"))
        ),
        "{report:#}"
    );
}

#[test]
fn a_container_is_removed_when_the_run_ends() {
    require_components();
    let run = Sh {
        scripts: vec!["echo in".to_owned()],
        args: kind_args("container"),
        ..Sh::default()
    }
    .run(|_: &Path| {});
    assert_eq!(run.output.status.code(), Some(0), "{}", run.said());
    let name = run.events("RUN_START")[0]["environment"]["container"]
        .as_str()
        .expect("container")
        .to_owned();
    let exists = std::process::Command::new("podman")
        .args(["container", "exists", &name])
        .status()
        .expect("podman");
    assert!(!exists.success(), "{name} is still there");
}

#[test]
fn a_timeout_kills_the_command_inside() {
    require_components();
    let agent = "name: probe\nllm:\n  model: gpt-4o-mini\ntools:\n  - name: sh\n    \
                 description: Run a shell script.\n    exec: \"sh -c ${script}\"\n    \
                 timeout_ms: 1500\n";
    for kind in CONFINED {
        let run = Sh {
            scripts: vec![
                "echo $$ > pid; exec sleep 300".to_owned(),
                "kill -0 $(cat pid) 2>/dev/null && echo STILL-RUNNING || echo GONE".to_owned(),
            ],
            agent: Some(agent.to_owned()),
            args: kind_args(kind),
            ..Sh::default()
        }
        .run(|_: &Path| {});
        assert_eq!(run.output.status.code(), Some(0), "{kind}: {}", run.said());
        let observations = run.observations();
        assert!(
            observations[0].contains("[timed out after 1500 ms"),
            "{kind}: {observations:?}"
        );
        assert_eq!(observations[1], "GONE\n", "{kind}");
    }
}

/// A stdio MCP server in Python that offers one tool saying where it runs: the first line
/// of `/proc/1/cmdline` as it sees it, or `hidden` when it cannot read it.
const WHERE_SERVER: &str = r#"import json, sys
def where():
    try:
        with open("/proc/1/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode()
    except OSError:
        return "hidden"
for line in sys.stdin:
    message = json.loads(line)
    method, ident = message.get("method"), message.get("id")
    if ident is None:
        continue
    if method == "initialize":
        result = {"protocolVersion": message["params"]["protocolVersion"],
                  "capabilities": {"tools": {}}, "serverInfo": {"name": "where", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": [{"name": "where", "description": "Where am I?",
                             "inputSchema": {"type": "object", "properties": {}}}]}
    elif method == "tools/call":
        result = {"content": [{"type": "text", "text": where()}]}
    else:
        result = {}
    print(json.dumps({"jsonrpc": "2.0", "id": ident, "result": result}), flush=True)
"#;

#[test]
fn mcp_stdio_servers_run_inside_the_environment() {
    require_components();
    for (kind, expected) in [
        ("landlock", "hidden"),
        ("bwrap", "bwrap"),
        ("container", "sleep 3600"),
    ] {
        let agent = format!(
            "name: mcp\nllm:\n  model: gpt-4o-mini\nmcp_servers:\n  probe:\n    command: \
             [/usr/bin/python3, \"${{AGENT_HOME}}/where.py\"]\nenvironment:\n  kind: {kind}\n  \
             image: {TOOLS_IMAGE}\n"
        );
        let script = "steps:\n  - message:\n      tool_calls: [{name: probe__where, arguments: {}}]\n  - message: {content: done}\n";
        let mock = mock(script);
        let test = delta(
            Test::new()
                .agent("agent", &agent)
                .file("agent/where.py", WHERE_SERVER),
            &mock,
        )
        .args(["run", "--agent", "agent", "-w", "ws", "-y", "-m", "where?"]);
        let output = test.cmd().output().expect("run delta");
        assert_success(&output, kind);
        let files = crate::support::run::only_run(&test.path().join("ws"));
        assert_eq!(
            payloads(&files, "ACTION_REQUEST")[0]["environment"]["kind"],
            kind
        );
        let results = payloads(&files, "ACTION_RESULT");
        let seen = results[0]["observation_content"].as_str().expect("text");
        assert!(seen.contains(expected), "{kind}: the server saw {seen:?}");
    }
}

#[test]
fn hooks_run_on_the_host() {
    require_components();
    let outside = outside_tmp();
    let marker = outside.path().join("hook-ran");
    let hooks = format!(
        "pre_tool_execution:\n  command: [\"sh\", \"-c\", \"echo ran > {}\"]\n",
        marker.display()
    );
    let run = Sh {
        scripts: vec![format!(
            "echo ran > {} || echo TOOL-BLOCKED",
            outside.path().join("tool").display()
        )],
        args: kind_args("bwrap"),
        ..Sh::default()
    }
    .run(|dir: &Path| {
        std::fs::write(dir.join("agent/hooks.yaml"), &hooks).expect("hooks.yaml");
    });
    assert_eq!(run.output.status.code(), Some(0), "{}", run.said());
    // The tool could not write there; the hook, on the host, could.
    assert!(run.observations()[0].contains("TOOL-BLOCKED"));
    assert!(marker.exists(), "the hook did not run on the host");
}

#[test]
fn tool_expand_shows_the_wrapped_commands() {
    require_components();
    let test = hello_world(Test::new());
    let run = test
        .args([
            "tool",
            "expand",
            "agent",
            "--environment",
            "container",
            "--environment-image",
            IMAGE,
        ])
        .run()
        .code(0);
    let stdout = run.stdout().to_owned();
    let environment = &stdout[stdout.find("environment:").expect("an environment section")..];
    let text = environment
        .replace(&run.path().display().to_string(), "[TEMP]")
        .replace(
            &std::fs::canonicalize(run.path())
                .expect("canonical")
                .display()
                .to_string(),
            "[TEMP]",
        );
    let text = regex::Regex::new("delta-<RUN_ID>-[0-9a-f]{8}")
        .expect("regex")
        .replace_all(&text, "delta-<RUN_ID>-[WORKSPACE_HASH]")
        .into_owned();
    snapshot!(text, @r#"
    environment:
      kind: container
      start: >-
        /usr/bin/podman run -d --name 'delta-<RUN_ID>-[WORKSPACE_HASH]' --label
        'delta.run=<RUN_ID>' --label 'delta.workspace=[TEMP]' '--pull=never' --network
        none -v
        [TEMP]/agent/agent.yaml:[TEMP]/agent/agent.yaml:ro -v
        [TEMP]/agent/context.yaml:[TEMP]/agent/context.yaml:ro -v
        [TEMP]/agent/system_prompt.md:[TEMP]/agent/system_prompt.md:ro -v
        [TEMP]:[TEMP] -v [TEMP]/.delta:[TEMP]/.delta:ro --workdir
        [TEMP] localhost/delta-busybox:latest sh -c 'while :; do sleep
        3600; done'
      tools:
        - name: list_files
          runs_as: >-
            /usr/bin/podman exec -i --workdir [TEMP] -e DELTA_ENV_CALL
            'delta-<RUN_ID>-[WORKSPACE_HASH]' ls -1
        - name: read_file
          runs_as: >-
            /usr/bin/podman exec -i --workdir [TEMP] -e DELTA_ENV_CALL
            'delta-<RUN_ID>-[WORKSPACE_HASH]' cat
        - name: write_file
          runs_as: >-
            /usr/bin/podman exec -i --workdir [TEMP] -e DELTA_ENV_CALL
            'delta-<RUN_ID>-[WORKSPACE_HASH]' tee
        - name: count_lines
          runs_as: >-
            /usr/bin/podman exec -i --workdir [TEMP] -e DELTA_ENV_CALL
            'delta-<RUN_ID>-[WORKSPACE_HASH]' sh -c 'wc -l < "$1"' --
    "#);
    for kind in ["landlock", "bwrap"] {
        let run = hello_world(Test::new())
            .args(["tool", "expand", "agent", "--environment", kind])
            .run()
            .code(0);
        let stdout: String = run
            .stdout()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        assert!(stdout.contains(&format!("kind: {kind}")), "{stdout}");
        assert!(
            stdout.contains(" keep --socket ") && stdout.contains("delta-sandbox call --socket"),
            "{kind}: {stdout}"
        );
        assert!(stdout.contains("-- ls -1"), "{kind}: {stdout}");
    }
}

#[test]
fn jsonl_carries_the_environment() {
    require_components();
    let run = Sh {
        scripts: vec!["echo one".to_owned()],
        args: [
            kind_args("bwrap"),
            vec!["--format".to_owned(), "jsonl".to_owned()],
        ]
        .concat(),
        ..Sh::default()
    }
    .run(|_: &Path| {});
    assert_eq!(run.output.status.code(), Some(0), "{}", run.said());
    let lines: Vec<Value> = String::from_utf8_lossy(&run.output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).expect("a JSON line"))
        .collect();
    let of = |kind: &str| {
        lines
            .iter()
            .find(|line| line["type"] == kind)
            .unwrap_or_else(|| panic!("no {kind} line"))
            .clone()
    };
    assert_eq!(of("RUN_START")["payload"]["environment"]["kind"], "bwrap");
    assert_eq!(
        of("ACTION_REQUEST")["payload"]["environment"],
        json!({"kind": "bwrap"})
    );
}

/// Docker is not installed here: `runtime: docker` is driven through a `docker` that hands
/// every command to podman (the two share this command line). This checks the docker code
/// path (its removal without `-t`), not real Docker, which is untested.
#[test]
fn docker_runtime_through_a_podman_shim() {
    require_components();
    let shim = outside_tmp();
    let docker = shim.path().join("docker");
    std::fs::write(
        &docker,
        "#!/bin/sh\n# a stand-in: docker's command line, served by podman\nexec podman \"$@\"\n",
    )
    .expect("write the shim");
    std::fs::set_permissions(&docker, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("make it executable");
    let path = format!(
        "{}:{}",
        shim.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let agent =
        format!("{SH_AGENT}environment:\n  kind: container\n  runtime: docker\n  image: {IMAGE}\n");
    let run = Sh {
        scripts: vec!["cat /proc/1/cmdline | tr '\\0' ' '".to_owned()],
        agent: Some(agent),
        env: vec![("PATH".to_owned(), path)],
        ..Sh::default()
    }
    .run(|_: &Path| {});
    assert_eq!(run.output.status.code(), Some(0), "{}", run.said());
    assert_eq!(run.observations(), ["sh -c while :; do sleep 3600; done "]);
    let report = &run.events("RUN_START")[0]["environment"];
    assert_eq!(report["runtime"], "docker");
    let name = report["container"].as_str().expect("container");
    let exists = std::process::Command::new("podman")
        .args(["container", "exists", name])
        .status()
        .expect("podman");
    assert!(!exists.success(), "docker rm -f removed {name}");
}

/// `--environment` on `replay` and `fork` (as on `run`, `continue` and `batch run`): the
/// replayed and the forked calls run there.
#[test]
fn replay_and_fork_take_the_environment_flags() {
    require_components();
    let parent = Sh {
        scripts: vec!["echo one".to_owned()],
        args: vec!["--run-id".to_owned(), "parent".to_owned()],
        ..Sh::default()
    }
    .run(|_: &Path| {});
    assert_eq!(parent.output.status.code(), Some(0), "{}", parent.said());
    let delta_in = |args: &[&str]| {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_delta"));
        command
            .current_dir(parent.test.path())
            .args(args)
            .env_remove("DELTA_API_KEY")
            .env_remove("OPENAI_API_KEY");
        command
    };
    let replayed = delta_in(&[
        "replay",
        "--run-id",
        "parent",
        "-w",
        "ws",
        "--new-run-id",
        "replayed",
        "--environment",
        "bwrap",
    ])
    .env("DELTA_BASE_URL", "http://127.0.0.1:9/v1")
    .output()
    .expect("delta replay");
    assert_success(&replayed, "identical");
    let files = crate::support::run::run_files(&parent.workspace, "replayed");
    assert_eq!(
        payloads(&files, "RUN_START")[0]["environment"]["kind"],
        "bwrap"
    );
    assert_eq!(
        payloads(&files, "ACTION_REQUEST")[0]["environment"]["kind"],
        "bwrap"
    );

    let model = mock(&super::support::sh_script(&["echo forked".to_owned()]));
    let forked = delta_in(&[
        "fork",
        "--run-id",
        "parent",
        "-w",
        "ws",
        "--at",
        "1",
        "--new-run-id",
        "forked",
        "--environment",
        "landlock",
    ])
    .env("DELTA_BASE_URL", model.base_url())
    .env("DELTA_API_KEY", crate::support::run::API_KEY)
    .output()
    .expect("delta fork");
    assert_success(&forked, "delta fork");
    let files = crate::support::run::run_files(&parent.workspace, "forked");
    let requests = payloads(&files, "ACTION_REQUEST");
    assert_eq!(
        requests.last().expect("the forked call")["environment"]["kind"],
        "landlock"
    );
    assert_eq!(files.metadata()["environment"]["kind"], "landlock");
}

/// The agent directory is readable (its tools' scripts), but not its `.env` (the key may be
/// there) nor its numbered workspaces (other runs' work).
#[test]
fn the_agent_directory_is_readable_but_not_its_env_file_nor_other_workspaces() {
    require_components();
    for kind in CONFINED {
        let run = Sh {
            scripts: vec![
                "cat ../agent/system_prompt.md".to_owned(),
                "cat ../agent/.env 2>&1; cat ../agent/workspaces/W002/result.txt 2>&1; true"
                    .to_owned(),
            ],
            args: kind_args(kind),
            ..Sh::default()
        }
        .run(|dir: &Path| {
            std::fs::write(dir.join("agent/.env"), "SOME_TOKEN=agent-env-secret\n").expect(".env");
            std::fs::create_dir_all(dir.join("agent/workspaces/W002")).expect("W002");
            std::fs::write(
                dir.join("agent/workspaces/W002/result.txt"),
                "another-runs-result\n",
            )
            .expect("result.txt");
        });
        assert_eq!(run.output.status.code(), Some(0), "{kind}: {}", run.said());
        let seen = run.observations();
        assert_eq!(seen[0], "You are a test agent.\n", "{kind}");
        assert!(
            !seen[1].contains("agent-env-secret") && !seen[1].contains("another-runs-result"),
            "{kind}: {}",
            seen[1]
        );
    }
}

/// Without root (as on a cluster node): bwrap through unprivileged user namespaces, and
/// Landlock, which needs neither. Run as `nobody` when the tests run as root.
#[test]
fn a_user_without_root_runs_landlock_and_bwrap() {
    require_components();
    let as_root = std::fs::metadata("/proc/self")
        .is_ok_and(|meta| std::os::unix::fs::MetadataExt::uid(&meta) == 0);
    let wrap: Vec<String> = if as_root {
        [
            "setpriv",
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "--",
        ]
        .map(str::to_owned)
        .to_vec()
    } else {
        Vec::new()
    };
    for kind in ["landlock", "bwrap"] {
        let run = Sh {
            scripts: vec![
                "id -u; tr '\\0' ' ' < /proc/1/cmdline 2>/dev/null | cut -d' ' -f1; true"
                    .to_owned(),
            ],
            args: kind_args(kind),
            wrap: wrap.clone(),
            ..Sh::default()
        }
        .run(|dir: &Path| {
            // The test directory is the user's to write in.
            for path in [dir, &dir.join("ws")] {
                std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o777))
                    .expect("chmod");
            }
        });
        assert_eq!(run.output.status.code(), Some(0), "{kind}: {}", run.said());
        let seen = &run.observations()[0];
        assert!(!seen.starts_with("0\n"), "{kind} ran as root: {seen}");
        if kind == "bwrap" {
            assert!(seen.ends_with("bwrap\n"), "{kind}: {seen}");
        }
        assert_eq!(run.events("RUN_START")[0]["environment"]["kind"], kind);
    }
}
