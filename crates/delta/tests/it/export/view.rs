//! `delta view` pages rendered by headless Chromium (Debian's `chromium`, installed by
//! .ci/run): the DOM has one section per iteration, every tool name and exit code and the
//! result; the page loads with networking off; the screenshot is not blank. Also the
//! workspace and batch tables, and `--open`.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use super::{RUNS, Runs, path};
use crate::support::component;
use crate::support::harness::{Run, Test};
use crate::support::run::{HELLO_SCRIPT, HELLO_TASK, delta, hello_world, mock};

/// The Chromium binary (Debian's `chromium`); a missing one fails the test.
fn chromium() -> PathBuf {
    component::program(
        "Chromium (the delta view tests)",
        &["chromium", "chromium-browser", "google-chrome"],
    )
}

/// Chromium with networking cut off: every host resolves to nothing and every request
/// goes to a proxy on a closed port.
fn headless(chromium: &Path, profile: &Path) -> Command {
    let mut command = Command::new(chromium);
    command.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--proxy-server=http://127.0.0.1:9",
        "--host-resolver-rules=MAP * ~NOTFOUND",
    ]);
    command.arg(format!("--user-data-dir={}", profile.display()));
    command
}

/// Chromium on `page` with `args`, in a throw-away profile; its stdout.
fn load(chromium: &Path, page: &Path, args: &[String], profile: &Path) -> Vec<u8> {
    let output = headless(chromium, profile)
        .args(args)
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    output.stdout
}

fn dump_dom(chromium: &Path, page: &Path) -> String {
    let profile = tempfile::tempdir().unwrap();
    String::from_utf8(load(chromium, page, &["--dump-dom".into()], profile.path())).unwrap()
}

/// The standard deviation of the screenshot's luminance: 0 for a blank image.
fn screenshot_spread(chromium: &Path, page: &Path) -> f64 {
    let profile = tempfile::tempdir().unwrap();
    let shot = profile.path().join("shot.png");
    let args = [
        format!("--screenshot={}", shot.display()),
        "--window-size=412,915".to_owned(),
    ];
    load(chromium, page, &args, profile.path());
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&shot).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buffer = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buffer).unwrap();
    let channels = info.color_type.samples();
    let pixels: Vec<f64> = buffer[..info.buffer_size()]
        .chunks(channels)
        .map(|p| {
            f64::from(p[0]) * 0.299
                + f64::from(p[1 % channels]) * 0.587
                + f64::from(p[2 % channels]) * 0.114
        })
        .collect();
    let mean = pixels.iter().sum::<f64>() / pixels.len() as f64;
    (pixels.iter().map(|p| (p - mean).powi(2)).sum::<f64>() / pixels.len() as f64).sqrt()
}

fn view(runs: &Runs, id: &str) -> PathBuf {
    let ws = runs.ws();
    let out = runs
        .delta(&["view", "--run-id", id, "-w", path(&ws)])
        .code(0);
    PathBuf::from(out.stdout().trim())
}

#[test]
fn chromium_renders_every_iteration_tool_exit_code_and_result_offline() {
    let chromium = chromium();
    let runs = Runs::new();
    for id in RUNS {
        let page = view(&runs, id);
        assert_eq!(page, runs.dir(id).join("view.html").canonicalize().unwrap());
        let html = std::fs::read_to_string(&page).unwrap();
        // Run content may mention URLs (the failed run's error names the server); the
        // page itself must load nothing: no src, link or CSS url() to anywhere.
        for resource in [
            "src=",
            "<link",
            "url(",
            "@import",
            "href=\"http",
            "href=\"//",
        ] {
            assert!(
                !html.contains(resource),
                "run {id}: the page loads {resource}"
            );
        }
        let dom = dump_dom(&chromium, &page);
        let metadata = runs.metadata(id);
        let sections = dom.matches("<section class=\"iteration\"").count();
        assert_eq!(
            sections as u64,
            metadata["iterations"].as_u64().unwrap(),
            "run {id}"
        );
        for event in runs.journal(id) {
            if event["type"] == "ACTION_REQUEST" {
                let name = event["payload"]["tool_name"].as_str().unwrap();
                assert!(
                    dom.contains(&format!("data-tool=\"{name}\"")),
                    "run {id}: {name}"
                );
            }
            if event["type"] == "ACTION_RESULT"
                && let Some(code) = event["payload"]["exit_code"].as_i64()
            {
                assert!(
                    dom.contains(&format!("exit {code}")),
                    "run {id}: exit {code}"
                );
            }
        }
        match &metadata["result"] {
            Value::Object(result) => {
                assert!(
                    dom.contains(result["summary"].as_str().unwrap()),
                    "run {id}"
                );
            }
            Value::String(result) => assert!(dom.contains(result.as_str()), "run {id}"),
            Value::Null | Value::Bool(_) | Value::Number(_) | Value::Array(_) => {
                let message = metadata["error"]["message"].as_str().unwrap();
                assert!(dom.contains(&html_escape(message)), "run {id}: {message}");
            }
        }
        assert!(dom.contains(&format!(
            "data-status=\"{}\"",
            metadata["status"].as_str().unwrap()
        )));
    }
    let spread = screenshot_spread(&chromium, &view(&runs, "hooked"));
    assert!(
        spread > 10.0,
        "the screenshot is blank (luminance spread {spread:.1})"
    );
}

fn html_escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

#[test]
fn view_of_a_workspace_writes_every_page_and_a_sortable_table_linking_them() {
    let runs = Runs::new();
    let ws = runs.ws();
    let out = runs.delta(&["view", "-w", path(&ws)]).code(0);
    let index = PathBuf::from(out.stdout().trim());
    assert_eq!(index, ws.join(".delta/index.html").canonicalize().unwrap());
    let html = std::fs::read_to_string(&index).unwrap();
    assert!(html.contains("class=\"sortable runs\""));
    for id in RUNS {
        let link = format!("href=\"{id}/view.html\"");
        assert!(html.contains(&link), "{link}");
        assert!(runs.dir(id).join("view.html").is_file());
    }
    assert_eq!(html.matches("<tr data-run-id=").count(), RUNS.len());
    let dom = dump_dom(&chromium(), &index);
    assert_eq!(dom.matches("<tr data-run-id=").count(), RUNS.len());
}

#[test]
fn view_of_a_batch_lists_the_runs_of_every_task_workspace() {
    let mock = mock(HELLO_SCRIPT);
    let mut run: Option<Run> = None;
    for task in ["t1", "t2"] {
        let test = match run.take() {
            Some(run) => run.then(),
            None => hello_world(Test::new()),
        };
        let ws = format!("batch/runs/{task}");
        run = Some(
            delta(test, &mock)
                .args([
                    "run", "--agent", "agent", "-w", &ws, "--run-id", task, "-m", HELLO_TASK,
                ])
                .run()
                .code(0),
        );
    }
    let run = run.unwrap();
    let batch = run.path().join("batch");
    let out = run.then().args(["view", "--batch", "batch"]).run().code(0);
    let index = PathBuf::from(out.stdout().trim());
    assert_eq!(index, batch.join("index.html").canonicalize().unwrap());
    let html = std::fs::read_to_string(&index).unwrap();
    for task in ["t1", "t2"] {
        let link = format!("runs/{task}/.delta/{task}/view.html");
        assert!(html.contains(&format!("href=\"{link}\"")), "{link}");
        assert!(batch.join(&link).is_file(), "{link}");
    }
    Test::new()
        .args(["view", "--batch", path(&batch.join("runs"))])
        .run()
        .code(1)
        .stderr_has("is not a batch directory");
}

#[test]
fn open_uses_the_desktop_opener_or_says_there_is_none() {
    let runs = Runs::new();
    let ws = runs.ws();
    let bin = runs.run.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let out = Test::new()
        .env("PATH", path(&bin))
        .args(["view", "--run-id", "hello", "-w", path(&ws), "--open"])
        .run()
        .code(0)
        .stderr_has("no desktop opener");
    let page = out.stdout().trim().to_owned();

    let opened = runs.run.path().join("opened.txt");
    let opener = bin.join("xdg-open");
    std::fs::write(
        &opener,
        format!("#!/bin/sh\nprintf '%s' \"$1\" > '{}'\n", opened.display()),
    )
    .unwrap();
    let mut permissions = std::fs::metadata(&opener).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    std::fs::set_permissions(&opener, permissions).unwrap();
    Test::new()
        .env("PATH", &format!("{}:/usr/bin:/bin", bin.display()))
        .args(["view", "--run-id", "hello", "-w", path(&ws), "--open"])
        .run()
        .code(0);
    crate::support::run::wait_until("the opener to run", || opened.exists());
    crate::support::run::wait_until("the opener to write", || {
        std::fs::read_to_string(&opened).unwrap_or_default() == page
    });
}

#[test]
fn the_page_of_a_running_run_reloads_and_regenerating_it_shows_new_iterations() {
    let runs = Runs::new();
    let dir = runs.dir("hello");
    let journal = std::fs::read_to_string(dir.join("journal.jsonl")).unwrap();
    let metadata = std::fs::read_to_string(dir.join("metadata.json")).unwrap();
    // The run as it stood after its first tool result, still going.
    let early: String = journal.lines().take(4).map(|l| format!("{l}\n")).collect();
    std::fs::write(dir.join("journal.jsonl"), early).unwrap();
    let running = metadata
        .replace("\"status\": \"COMPLETED\"", "\"status\": \"RUNNING\"")
        .replace("\"iterations\": 3", "\"iterations\": 1");
    std::fs::write(dir.join("metadata.json"), running).unwrap();
    let page = view(&runs, "hello");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("<meta http-equiv=\"refresh\""),
        "a running run's page reloads"
    );
    assert!(html.contains("still RUNNING"));
    assert_eq!(html.matches("<section class=\"iteration\"").count(), 1);

    std::fs::write(dir.join("journal.jsonl"), journal).unwrap();
    std::fs::write(dir.join("metadata.json"), metadata).unwrap();
    let html = std::fs::read_to_string(view(&runs, "hello")).unwrap();
    assert!(
        !html.contains("http-equiv=\"refresh\""),
        "a finished run's page stays"
    );
    assert_eq!(html.matches("<section class=\"iteration\"").count(), 3);
}

#[test]
fn view_of_a_workspace_without_runs_says_so() {
    Test::new()
        .file("empty/.keep", "")
        .args(["view", "-w", "empty"])
        .run()
        .code(1)
        .stderr_has("no runs in empty");
}
