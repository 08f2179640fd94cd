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

/// A run of the hello-world agent against `script` in `ws/`, with id `id`; its page's DOM
/// as Chromium builds it.
fn page_of(script: &str, id: &str) -> (Run, String) {
    let model = mock(script);
    let run = delta(hello_world(Test::new()), &model)
        .args([
            "run", "--agent", "agent", "-w", "ws", "--run-id", id, "-m", HELLO_TASK,
        ])
        .run();
    let ws = run.path().join("ws");
    let out = Test::new()
        .args(["view", "--run-id", id, "-w", path(&ws)])
        .run()
        .code(0);
    let dom = dump_dom(&chromium(), Path::new(out.stdout().trim()));
    (run, dom)
}

/// Issue 30 item 11: a long run is read from an outline, one line per iteration, with
/// the failed tools counted in the header and every error linked from the one before.
#[test]
fn the_outline_has_a_line_per_iteration_and_links_every_error() {
    let (_run, dom) = page_of(
        r#"
steps:
  - message:
      tool_calls: [{name: read_file, arguments: {path: "missing.txt"}}]
  - message:
      tool_calls: [{name: list_files, arguments: {directory: "."}}]
  - message:
      tool_calls: [{name: read_file, arguments: {path: "gone.txt"}}]
  - message: {content: "Done."}
"#,
        "outlined",
    );
    let outline = &dom[dom.find("<nav class=\"outline\"").unwrap()..dom.find("</nav>").unwrap()];
    assert_eq!(outline.matches("<tr class=\"").count(), 4, "{outline}");
    assert_eq!(outline.matches("<tr class=\"bad\"").count(), 2, "{outline}");
    assert!(outline.contains("href=\"#error-1\""), "{outline}");
    assert!(dom.contains("<dt>Failed tools</dt><dd class=\"status-bad failed-tools\">2</dd>"));
    // The start time reads as one (the page keeps it on one line: `dd.time`).
    let started = regex::Regex::new(
        r#"<dt>Started</dt><dd class="time">\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC</dd>"#,
    )
    .unwrap();
    assert!(started.is_match(&dom), "{dom}");
    for (anchor, next) in [("error-1", "#error-2"), ("error-2", "#outline")] {
        let at = dom.find(&format!("id=\"{anchor}\"")).unwrap();
        let link = dom[at..].find(&format!("href=\"{next}\"")).unwrap();
        assert!(link < 400, "{anchor} links to {next} right there");
    }
}

/// Issue 30 item 11: a run whose only call failed showed `—` for its model.
#[test]
fn a_run_whose_only_call_failed_shows_its_model() {
    let (_run, dom) = page_of("steps:\n  - error: {status: 401}\n", "failed-first");
    assert!(
        dom.contains("<dt>Model</dt><dd class=\"\">gpt-4o-mini</dd>"),
        "{dom}"
    );
    assert!(
        dom.contains("brought no answer: the LLM API at"),
        "the call's error"
    );
}

/// Issue 30 item 11: the answer to an `ask_human` question showed before the question.
/// Both are inside the call, the answer after its question.
#[test]
fn the_answer_to_ask_human_follows_its_question_inside_the_call() {
    let runs = Runs::new();
    let dom = dump_dom(&chromium(), &view(&runs, "hooked"));
    let call = dom.find("data-tool=\"ask_human\"").unwrap();
    let end = call + dom[call..].find("</article>").unwrap();
    let question = dom[call..end].find("CANARY-QUESTION-a41f?").unwrap();
    let answer = dom[call..end].find("CANARY-ANSWER-0b6e").unwrap();
    assert!(question < answer, "the question comes first");
    assert_eq!(
        dom.matches("CANARY-ANSWER-0b6e").count(),
        1,
        "the answer is shown once"
    );
}

/// Issue 30 item 11: the model's text is Markdown, rendered safely: its HTML is text, its
/// links cannot run code, its images load nothing, and the page's policy allows only the
/// page's own script.
#[test]
fn model_text_is_markdown_and_the_html_in_it_is_inert() {
    let (_run, dom) = page_of(
        r#"
steps:
  - message:
      content: "**Bold** claim <script>document.title='pwned'</script> <img src=x onerror=\"document.title='pwned'\"> [click](javascript:document.title='pwned') ![pic](http://127.0.0.1:9/p.png)"
"#,
        "hostile",
    );
    assert!(dom.contains("<strong>Bold</strong>"), "{dom}");
    assert_eq!(
        dom.matches("<script").count(),
        1,
        "only the page's own script"
    );
    assert!(!dom.contains("<img"), "{dom}");
    assert!(!dom.contains("href=\"javascript:"), "{dom}");
    assert!(!dom.contains("<title>pwned</title>"), "{dom}");
    assert!(dom.contains("Content-Security-Policy"), "{dom}");
    assert!(
        dom.contains("&lt;script&gt;document.title="),
        "shown as text"
    );
}

/// Issue 30 item 11: the batch table adds up its runs (by status, pass rate, tokens, cost)
/// above and below them, and keeps ids, statuses and agents on one line.
#[test]
fn the_batch_table_has_totals_and_a_pass_rate_and_names_on_one_line() {
    let runs = Runs::new();
    let ws = runs.ws();
    let out = runs.delta(&["view", "-w", path(&ws)]).code(0);
    let dom = dump_dom(&chromium(), Path::new(out.stdout().trim()));
    assert!(
        dom.contains(
            "4 runs: 2 COMPLETED, 1 FAILED, 1 INTERRUPTED · pass rate 50.0% (2/4 COMPLETED)"
        ),
        "{dom}"
    );
    let footer = &dom[dom.find("<tfoot>").unwrap()..dom.find("</tfoot>").unwrap()];
    assert!(
        footer.contains("pass rate 50.0% (2/4 COMPLETED)"),
        "{footer}"
    );
    assert_eq!(
        dom.matches("<td class=\"name\">").count(),
        2 * 4 + 1,
        "run, agent; totals"
    );
    assert!(dom.contains("td.name, td.time, dd.time { white-space: nowrap; }"));
}

/// Issue 30 item 11: at 1,400 px no row of the table wraps, whatever the length of its
/// task or run id: every row is as tall as the others. Measured by Chromium in a copy of
/// the page with a measuring script of the test's (the page's policy would block it).
#[test]
fn at_1400_px_no_row_of_the_table_wraps() {
    let model = mock(HELLO_SCRIPT);
    let long_task = format!(
        "{HELLO_TASK}, {}",
        "then read it back and check it twice ".repeat(8)
    );
    let mut test = hello_world(Test::new());
    for (id, task) in [
        ("a", HELLO_TASK),
        (
            "a-rather-long-run-identifier-for-the-nightly-set-0042",
            long_task.as_str(),
        ),
    ] {
        test = delta(test, &model)
            .args([
                "run", "--agent", "agent", "-w", "ws", "--run-id", id, "-m", task,
            ])
            .run()
            .code(0)
            .then();
    }
    let out = test.args(["view", "-w", "ws"]).run().code(0);
    let html = std::fs::read_to_string(out.stdout().trim()).unwrap();
    let policy_start = html
        .find("<meta http-equiv=\"Content-Security-Policy\"")
        .unwrap();
    let policy_end = policy_start + html[policy_start..].find('>').unwrap() + 1;
    let measured = format!(
        "{}{}",
        &html[..policy_start],
        &html[policy_end..].replace(
            "</body>",
            "<script>document.body.dataset.heights = [...document.querySelectorAll(\
             'table.runs tbody tr')].map(r => r.getBoundingClientRect().height)\
             .join(',');</script></body>",
        )
    );
    let page = out.path().join("measured.html");
    std::fs::write(&page, measured).unwrap();
    let profile = tempfile::tempdir().unwrap();
    let dom = String::from_utf8(load(
        &chromium(),
        &page,
        &["--window-size=1400,900".into(), "--dump-dom".into()],
        profile.path(),
    ))
    .unwrap();
    let at = dom.find("data-heights=\"").unwrap() + "data-heights=\"".len();
    let heights: Vec<f64> = dom[at..at + dom[at..].find('"').unwrap()]
        .split(',')
        .map(|h| h.parse().unwrap())
        .collect();
    assert_eq!(heights.len(), 2, "{heights:?}");
    // Rows differ by subpixels (a link's baseline); a wrapped line adds a line's height.
    assert!(
        (heights[0] - heights[1]).abs() < 8.0,
        "a row wrapped: {heights:?}"
    );
}

/// Issue 30 item 11: the pages' Content-Security-Policy lets their own script run (its
/// hash matches what is inlined), so sorting and "expand all" still work: Chromium logs
/// every script the policy blocks on its console.
#[test]
fn the_policy_lets_the_pages_own_script_run() {
    let chromium = chromium();
    let runs = Runs::new();
    let ws = runs.ws();
    let table = runs.delta(&["view", "-w", path(&ws)]).code(0);
    for page in [view(&runs, "hooked"), PathBuf::from(table.stdout().trim())] {
        let profile = tempfile::tempdir().unwrap();
        let output = headless(&chromium, profile.path())
            .args(["--enable-logging=stderr", "--v=0", "--dump-dom"])
            .arg(format!("file://{}", page.display()))
            .output()
            .unwrap();
        assert!(output.status.success());
        let console = String::from_utf8_lossy(&output.stderr);
        assert!(
            !console.contains("Content Security Policy"),
            "{}: {console}",
            page.display()
        );
        assert!(
            String::from_utf8_lossy(&output.stdout).contains("Content-Security-Policy"),
            "the page has a policy"
        );
    }
}
