//! The page of one run: a header of totals, an outline (one line per iteration, with
//! links to every error), then one `<section>` per iteration with the model's text (as
//! Markdown, safely), each tool call (arguments, command, observation, exit code,
//! duration; an `ask_human` call with its question and answer), hooks, user and system
//! messages, in journal order.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

use super::RUN_PAGE;
use super::html::{cost_text, duration_text, esc, head, status_class, tail, time_text};
use super::markdown::to_html;
use crate::export::Content;
use delta_engine::journal::{
    ActionStatus, ClaudeHook, Event, EventPayload, HookStatus, HumanInputReceived,
    HumanInputRequest,
};
use delta_engine::run::RunStatus;
use delta_engine::trajectory::{Iteration, ToolStep, Trajectory};

/// Longer texts (observations, arguments) are folded: the page shows their head and tail
/// inside a closed `<details>`, and points to the full output under `io/`.
pub const FOLD_CHARS: usize = 2_000;
/// Of a folded text, the characters shown from its start…
const HEAD_CHARS: usize = 1_500;
/// …and from its end.
const TAIL_CHARS: usize = 400;
/// Seconds between reloads of the page of a run that is still going.
const RELOAD_SECONDS: u32 = 5;

/// What every part of the page needs to know about the whole run (the page's own run, or
/// a sub-agent run drawn inside the call that started it).
struct Page<'a> {
    content: Content,
    /// How the run's files are reached, its anchors prefixed and its sub-agents found.
    nest: Nest,
    /// `ask_human` questions and their answers by request id (the call's action id), so
    /// that both show inside the call, the answer after its question.
    questions: HashMap<&'a str, Question<'a>>,
    /// The failed tool calls and unanswered iterations, in page order: `error-N` anchors.
    errors: Vec<ErrorAnchor>,
    /// The action ids of every tool call on the page.
    calls: HashSet<&'a str>,
}

/// A human question and, once given, its answer.
#[derive(Clone, Copy)]
struct Question<'a> {
    request: &'a HumanInputRequest,
    answer: Option<&'a HumanInputReceived>,
}

/// Something that went wrong, which the page links to.
#[derive(Debug, Clone, PartialEq, Eq)]
enum ErrorAnchor {
    /// A tool call that failed, by action id.
    Tool(String),
    /// An iteration whose call brought no answer, by number.
    Iteration(u32),
}

impl<'a> Page<'a> {
    fn of(
        trajectory: &'a Trajectory,
        iterations: &[Iteration<'a>],
        base: &str,
        content: Content,
        level: u32,
    ) -> Self {
        Self {
            content,
            nest: Nest::of(trajectory, base, level),
            questions: questions(&trajectory.events),
            errors: error_anchors(iterations),
            calls: iterations
                .iter()
                .flat_map(|i| &i.tools)
                .map(|t| t.request.action_id.as_str())
                .collect(),
        }
    }

    /// The anchor id of `anchor` and the link to the next one (or back to the outline).
    fn error_links(&self, anchor: &ErrorAnchor) -> Option<(String, String)> {
        let index = self.errors.iter().position(|a| a == anchor)?;
        let next = if index + 1 < self.errors.len() {
            format!(
                "<a class=\"next-error\" href=\"#{}error-{}\">next error ↓</a>",
                esc(&self.nest.anchor),
                index + 2
            )
        } else {
            "<a class=\"next-error\" href=\"#outline\">back to the outline ↑</a>".to_owned()
        };
        Some((format!("{}error-{}", self.nest.anchor, index + 1), next))
    }
}

/// The HTML page of `trajectory`. `link_base` prefixes links to the run's files
/// (`""` when the page is in the run directory).
#[must_use]
pub fn run_page(trajectory: &Trajectory, link_base: &str, content: Content) -> String {
    let metadata = &trajectory.metadata;
    let mut html = String::with_capacity(16 * 1024 + trajectory.events.len() * 512);
    let title = format!("{} · {}", metadata.agent_name, trajectory.run_id());
    let running = metadata.status == RunStatus::Running;
    let refresh = if running {
        format!("<meta http-equiv=\"refresh\" content=\"{RELOAD_SECONDS}\">")
    } else {
        String::new()
    };
    let iterations = trajectory.iterations();
    let page = Page::of(trajectory, &iterations, link_base, content, 0);
    let failed_tools = page
        .errors
        .iter()
        .filter(|e| matches!(e, ErrorAnchor::Tool(_)))
        .count();
    head(&mut html, &title, &refresh);
    let _ = write!(
        html,
        "<header class=\"run\" data-run-id=\"{id}\" data-status=\"{status}\">\
         <h1>{title}</h1><dl class=\"summary\">",
        id = esc(trajectory.run_id()),
        status = metadata.status,
        title = esc(&title),
    );
    let usage = &metadata.usage;
    let (result, result_is_text) = match (&metadata.result, &metadata.error) {
        (Some(serde_json::Value::String(text)), _) => (content.text(text).to_owned(), true),
        (Some(other), _) => (
            content
                .text(&serde_json::to_string_pretty(other).unwrap_or_default())
                .to_owned(),
            false,
        ),
        (None, Some(error)) => (format!("{}: {}", error.error_type, error.message), false),
        (None, None) => ("—".to_owned(), false),
    };
    for (label, value, class) in [
        ("Agent", metadata.agent_name.clone(), ""),
        ("Model", trajectory.model().unwrap_or("—").to_owned(), ""),
        (
            "Status",
            metadata.status.to_string(),
            status_class(metadata.status),
        ),
        ("Iterations", metadata.iterations.to_string(), ""),
        (
            "Failed tools",
            failed_tools.to_string(),
            if failed_tools > 0 {
                "status-bad failed-tools"
            } else {
                "failed-tools"
            },
        ),
        (
            "Tokens in / out",
            format!(
                "{}{} / {}",
                usage.input_tokens,
                cached_text(usage.cached_input_tokens),
                usage.output_tokens
            ),
            "",
        ),
        ("Cost", cost_text(usage.total_cost_usd), ""),
        ("Duration", duration_text(trajectory.duration_ms()), ""),
        ("Started", time_text(metadata.created_at), "time"),
    ] {
        let _ = write!(
            html,
            "<div><dt>{label}</dt><dd class=\"{class}\">{}</dd></div>",
            esc(&value)
        );
    }
    let result = if result_is_text {
        format!(
            "<div class=\"result md\" id=\"result\">{}</div>",
            to_html(&result)
        )
    } else {
        format!("<pre class=\"result\" id=\"result\">{}</pre>", esc(&result))
    };
    let _ = write!(
        html,
        "<div class=\"wide\"><dt>Task</dt><dd><pre class=\"task\">{}</pre></dd></div>\
         <div class=\"wide\"><dt>Result</dt><dd>{result}</dd></div>\
         </dl></header>",
        esc(content.text(&metadata.task)),
    );
    if running {
        let _ = write!(
            html,
            "<p class=\"note status-warn\">This run is still RUNNING: the page reloads every \
             {RELOAD_SECONDS} s; regenerate it with <code>delta view --run-id {}</code> to see \
             new iterations.</p>",
            esc(trajectory.run_id())
        );
    }
    outline(&mut html, trajectory, &iterations, &page);
    html.push_str(
        "<div class=\"toolbar\"><button type=\"button\" data-toggle-details=\"open\">Expand all</button>\
         <button type=\"button\" data-toggle-details=\"close\">Fold all</button></div><main>",
    );
    for iteration in &iterations {
        iteration_section(&mut html, iteration, &page);
    }
    let _ = write!(
        html,
        "</main><footer>Generated by delta view (delta-engine {}) from {} journal events of \
         run {} in {}.</footer>",
        env!("CARGO_PKG_VERSION"),
        trajectory.events.len(),
        esc(trajectory.run_id()),
        esc(&metadata.work_dir.display().to_string()),
    );
    tail(&mut html);
    html
}

/// Sub-agent runs are drawn inside the call that started them, at most this deep; deeper
/// ones are a link to their own page.
const NESTED_LEVELS: u32 = 8;

/// What a run's sections need to draw its agent calls' sub-agents inside them.
struct Nest {
    /// How the page reaches this run's files.
    base: String,
    /// This run's directory.
    dir: std::path::PathBuf,
    /// Prefix of the run's section ids (empty for the page's own run).
    anchor: String,
    /// The sub-agent run of each call that started one, by action id.
    children: HashMap<String, Trajectory>,
    /// How deep this run is drawn (0: the page's own run).
    level: u32,
}

impl Nest {
    fn of(trajectory: &Trajectory, base: &str, level: u32) -> Self {
        let children = if level < NESTED_LEVELS {
            trajectory.subagents().into_iter().collect()
        } else {
            HashMap::new()
        };
        Self {
            base: base.to_owned(),
            dir: trajectory.dir(),
            anchor: if level == 0 {
                String::new()
            } else {
                format!("{}-", trajectory.run_id())
            },
            children,
            level,
        }
    }

    /// How the page reaches the files of `child`: relatively when it sits beside this
    /// run's directory and the page reaches this run's files relatively (the page is in
    /// the tree's `.delta/`), else by its absolute path.
    fn child_base(&self, child: &Trajectory) -> String {
        let relative = self.base.is_empty() || self.base.starts_with("../");
        if relative && child.dir().parent() == self.dir.parent() {
            format!("../{}/", child.run_id())
        } else {
            format!("{}/", child.dir().display())
        }
    }
}

/// Every `ask_human` question of the journal with its answer, by request id.
fn questions(events: &[Event]) -> HashMap<&str, Question<'_>> {
    let mut questions: HashMap<&str, Question<'_>> = HashMap::new();
    for event in events {
        match &event.payload {
            EventPayload::HumanInputRequest(request) => {
                questions.insert(
                    request.request_id.as_str(),
                    Question {
                        request,
                        answer: None,
                    },
                );
            }
            EventPayload::HumanInputReceived(answer) => {
                if let Some(question) = questions.get_mut(answer.request_id.as_str()) {
                    question.answer = Some(answer);
                }
            }
            EventPayload::RunStart(_)
            | EventPayload::UserMessage(_)
            | EventPayload::Thought(_)
            | EventPayload::ActionRequest(_)
            | EventPayload::ActionResult(_)
            | EventPayload::SystemMessage(_)
            | EventPayload::HookExecutionAudit(_)
            | EventPayload::ClaudeHook(_)
            | EventPayload::RunEnd(_) => {}
        }
    }
    questions
}

/// The failed tool calls and unanswered iterations, in the order the page shows them.
fn error_anchors(iterations: &[Iteration<'_>]) -> Vec<ErrorAnchor> {
    let mut errors = Vec::new();
    for iteration in iterations {
        if iteration.number > 0 && iteration.thought.is_none() {
            errors.push(ErrorAnchor::Iteration(iteration.number));
        }
        for tool in &iteration.tools {
            if tool_failed(tool) {
                errors.push(ErrorAnchor::Tool(tool.request.action_id.clone()));
            }
        }
    }
    errors
}

fn tool_failed(tool: &ToolStep<'_>) -> bool {
    tool.result.is_some_and(|(_, result)| {
        matches!(result.status, ActionStatus::Failed | ActionStatus::Error)
    })
}

/// One line per iteration (its tools with their status, duration, cost) linking to its
/// section, the failed-tool count and a link to the first error: a long run read at a
/// glance.
fn outline(
    html: &mut String,
    trajectory: &Trajectory,
    iterations: &[Iteration<'_>],
    page: &Page<'_>,
) {
    let numbered: Vec<&Iteration<'_>> = iterations.iter().filter(|i| i.number > 0).collect();
    if numbered.is_empty() {
        return;
    }
    let _ = write!(
        html,
        "<nav class=\"outline\" id=\"outline\"><h2>Outline <span class=\"meta\">{} \
         iteration(s) · {} error(s)</span>",
        numbered.len(),
        page.errors.len()
    );
    if !page.errors.is_empty() {
        html.push_str(" <a class=\"first-error\" href=\"#error-1\">first error ↓</a>");
    }
    html.push_str(
        "</h2><div class=\"table-wrap\"><table class=\"outline\"><thead><tr><th>#</th>\
         <th>tools</th><th class=\"num\">duration</th><th class=\"num\">cost</th></tr></thead><tbody>",
    );
    for iteration in numbered {
        let failed = iteration.thought.is_none() || iteration.tools.iter().any(tool_failed);
        let _ = write!(
            html,
            "<tr class=\"{}\" data-iteration=\"{n}\"><td><a href=\"#iteration-{n}\">{n}</a></td><td>",
            if failed { "bad" } else { "ok" },
            n = iteration.number,
        );
        if iteration.thought.is_none() {
            html.push_str("<span class=\"status-bad\">no answer</span>");
        } else if iteration.tools.is_empty() {
            html.push_str("<span class=\"muted\">answer</span>");
        }
        for tool in &iteration.tools {
            let (class, mark) = match tool.result.map(|(_, r)| r.status) {
                Some(ActionStatus::Success) => ("status-ok", "✓"),
                Some(ActionStatus::Failed | ActionStatus::Error) => ("status-bad", "✗"),
                None => ("status-warn", "…"),
            };
            let _ = write!(
                html,
                "<a class=\"step {class}\" href=\"#tool-{id}\">{name}&nbsp;{mark}</a> ",
                id = esc(&tool.request.action_id),
                name = esc(&tool.request.tool_name),
            );
        }
        let duration =
            iteration_duration(trajectory, iteration).map_or_else(|| "—".to_owned(), duration_text);
        let cost = iteration
            .call
            .and_then(|call| call.cost_usd())
            .map_or_else(|| "—".to_owned(), cost_text);
        let _ = write!(
            html,
            "</td><td class=\"num\">{duration}</td><td class=\"num\">{cost}</td></tr>"
        );
    }
    html.push_str("</tbody></table></div></nav>");
}

/// From the iteration's call (or first event) to its last event.
fn iteration_duration(trajectory: &Trajectory, iteration: &Iteration<'_>) -> Option<u64> {
    let start = iteration
        .call
        .and_then(|call| call.started_at)
        .or_else(|| iteration.events.first().map(|e| e.timestamp))?;
    let end = iteration
        .events
        .last()
        .map_or(trajectory.end_time(), |e| e.timestamp);
    Some(end.millis_since(start))
}

fn iteration_section(html: &mut String, iteration: &Iteration<'_>, page: &Page<'_>) {
    if iteration.number == 0 {
        if iteration
            .events
            .iter()
            .all(|e| matches!(e.payload, EventPayload::RunStart(_)))
        {
            return;
        }
        html.push_str("<section class=\"prologue\"><h2>Before the first call</h2>");
    } else {
        let _ = write!(
            html,
            "<section class=\"iteration\" id=\"{anchor}iteration-{n}\" data-iteration=\"{n}\"><h2>Iteration {n}",
            anchor = esc(&page.nest.anchor),
            n = iteration.number
        );
        if let Some((event, _)) = iteration.thought {
            let _ = write!(
                html,
                " <span class=\"meta\"><span title=\"{time}\">{clock}</span>",
                time = esc(&event.timestamp.to_string()),
                clock = esc(&event.timestamp.as_datetime().format("%H:%M:%S").to_string()),
            );
        } else {
            html.push_str(" <span class=\"meta\">");
        }
        if let Some(call) = iteration.call {
            if let Some(model) = call.model_name() {
                let _ = write!(html, " · {}", esc(model));
            }
            if let Some(usage) = call.token_usage {
                let _ = write!(
                    html,
                    " · <span class=\"usage\">{} in{} / {} out tokens</span>",
                    usage.prompt_tokens,
                    cached_text(usage.cached_tokens),
                    usage.completion_tokens
                );
            }
            if let Some(cost) = call.cost_usd() {
                let _ = write!(html, " · {}", cost_text(cost));
            }
            if let Some(duration) = call.duration_ms {
                let _ = write!(html, " · {}", duration_text(duration));
            }
            if let Some(reason) = &call.finish_reason {
                let _ = write!(html, " · finish: {}", esc(reason));
            }
        }
        html.push_str("</span></h2>");
        if iteration.thought.is_none() {
            let anchor = ErrorAnchor::Iteration(iteration.number);
            let (id, next) = page.error_links(&anchor).unwrap_or_default();
            let error = iteration
                .call
                .and_then(|call| call.error.as_deref())
                .map(|error| format!(": {}", esc(error)))
                .unwrap_or_default();
            let _ = write!(
                html,
                "<p class=\"note status-warn error\" id=\"{id}\">The model's call in this \
                 iteration brought no answer{error}. {next}</p>",
            );
        }
    }
    for event in &iteration.events {
        event_html(html, iteration, event, page);
    }
    html.push_str("</section>");
}

fn event_html(html: &mut String, iteration: &Iteration<'_>, event: &Event, page: &Page<'_>) {
    let content = page.content;
    match &event.payload {
        EventPayload::RunStart(_) => {}
        EventPayload::Thought(thought) => {
            if !thought.content.is_empty() {
                let _ = write!(
                    html,
                    "<div class=\"thought md\">{}</div>",
                    to_html(content.text(&thought.content))
                );
            }
        }
        EventPayload::ActionRequest(request) => {
            if let Some(tool) = iteration
                .tools
                .iter()
                .find(|t| t.request.action_id == request.action_id)
            {
                tool_html(html, tool, page);
            }
        }
        EventPayload::ActionResult(_) => {}
        EventPayload::UserMessage(message) => {
            html.push_str("<div class=\"note user\"><strong>User:</strong> ");
            folded(html, "Message", content.text(&message.content), None);
            html.push_str("</div>");
        }
        EventPayload::SystemMessage(message) => {
            let _ = write!(
                html,
                "<div class=\"note system level-{}\"><strong>{}:</strong> {}</div>",
                message.level.to_string().to_lowercase(),
                message.level,
                esc(&message.content)
            );
        }
        EventPayload::HookExecutionAudit(hook) => {
            let class = match hook.status {
                HookStatus::Success => "status-ok",
                HookStatus::Failed => "status-bad",
                HookStatus::Skipped => "status-warn",
            };
            let status = serde_json::to_value(hook.status)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default();
            let _ = write!(
                html,
                "<div class=\"note hook\" data-hook=\"{name}\">hook <strong>{name}</strong> \
                 <span class=\"badge {class}\">{status}</span> \
                 <a class=\"muted\" href=\"{base}{path}\">{path}</a></div>",
                name = esc(&hook.hook_name),
                base = esc(&page.nest.base),
                path = esc(&hook.io_path_ref),
            );
        }
        EventPayload::ClaudeHook(hook) => claude_hook_html(html, hook, &page.nest.base, content),
        // Shown inside the `ask_human` call they belong to, the answer after its question.
        EventPayload::HumanInputRequest(question)
            if asked_by_a_call(page, &question.request_id) => {}
        EventPayload::HumanInputReceived(answer) if asked_by_a_call(page, &answer.request_id) => {}
        EventPayload::HumanInputRequest(question) => question_html(html, question, content),
        EventPayload::HumanInputReceived(answer) => answer_html(html, answer, content),
        EventPayload::RunEnd(end) => {
            let status = RunStatus::from(end.status);
            let _ = write!(
                html,
                "<div class=\"note run-end\">Run stopped: <strong class=\"{}\">{}</strong>",
                status_class(status),
                status
            );
            if let Some(error) = &end.error {
                let _ = write!(
                    html,
                    " — {}: {}",
                    esc(error.error_type.as_str()),
                    esc(&error.message)
                );
            }
            html.push_str("</div>");
        }
    }
}

/// Whether the question `request_id` is shown inside a call: it was asked, and the page
/// has the call (a question asked by another implementation without a call stays a note
/// where it stands).
fn asked_by_a_call(page: &Page<'_>, request_id: &str) -> bool {
    page.questions.contains_key(request_id) && page.calls.contains(request_id)
}

fn question_html(html: &mut String, question: &HumanInputRequest, content: Content) {
    let _ = write!(
        html,
        "<div class=\"note human question\"><strong>Question to the human</strong> \
         <span class=\"muted\">({})</span><pre>{}</pre></div>",
        esc(&format!("{:?}", question.input_type).to_lowercase()),
        esc(content.text(&question.prompt))
    );
}

fn answer_html(html: &mut String, answer: &HumanInputReceived, content: Content) {
    let _ = write!(
        html,
        "<div class=\"note human answer\"><strong>Answer</strong><pre>{}</pre></div>",
        esc(content.text(&answer.response))
    );
}

/// A hook of Claude Code's protocol: its event, command, how it ended, what it decided and
/// why, how long it took, and a link to its record.
fn claude_hook_html(html: &mut String, hook: &ClaudeHook, base: &str, content: Content) {
    let class = match (hook.status, hook.decision) {
        (HookStatus::Failed, _) => "status-bad",
        (HookStatus::Success | HookStatus::Skipped, Some(_)) => "status-warn",
        (HookStatus::Success | HookStatus::Skipped, None) => "status-ok",
    };
    let outcome = match hook.decision {
        Some(decision) => decision.as_str().to_owned(),
        None if hook.status == HookStatus::Failed => "failed".to_owned(),
        None => "no decision".to_owned(),
    };
    let _ = write!(
        html,
        "<div class=\"note hook claude\" data-hook=\"{event}\">{event} hook \
         <code>{command}</code> <span class=\"badge {class}\">{outcome}</span> \
         <span class=\"muted\">exit {ended} · {duration}</span>",
        event = esc(&hook.event),
        command = esc(content.text(&hook.command)),
        outcome = esc(&outcome),
        ended = esc(&hook.ended),
        duration = duration_text(hook.duration_ms),
    );
    if let Some(reason) = hook.reason.as_deref().or(hook.error.as_deref()) {
        let _ = write!(html, " — {}", esc(content.text(reason)));
    }
    let _ = write!(
        html,
        " <a class=\"muted\" href=\"{base}{path}\">{path}</a></div>",
        base = esc(base),
        path = esc(&hook.io_path_ref),
    );
}

fn tool_html(html: &mut String, tool: &ToolStep<'_>, page: &Page<'_>) {
    let (base, content) = (page.nest.base.as_str(), page.content);
    let request = tool.request;
    let (class, badge) = match tool.result {
        Some((_, result)) => {
            let class = match result.status {
                ActionStatus::Success => "ok",
                ActionStatus::Failed | ActionStatus::Error => "bad",
            };
            let badge = match result.exit_code {
                Some(code) => format!("exit {code}"),
                None => format!("{:?}", result.status).to_uppercase(),
            };
            (class, badge)
        }
        None => ("", "no result".to_owned()),
    };
    let exit = tool
        .result
        .and_then(|(_, r)| r.exit_code)
        .map_or_else(String::new, |c| c.to_string());
    let error = page.error_links(&ErrorAnchor::Tool(request.action_id.clone()));
    let _ = write!(
        html,
        "<article class=\"tool {class}\" id=\"{anchor}tool-{id}\" data-tool=\"{name}\" data-exit-code=\"{exit}\">",
        anchor = esc(&page.nest.anchor),
        id = esc(&request.action_id),
        name = esc(&request.tool_name),
    );
    if let Some((anchor, _)) = &error {
        let _ = write!(html, "<span class=\"error\" id=\"{anchor}\"></span>");
    }
    let _ = write!(
        html,
        "<h3><span class=\"tool-name\">{name}</span> \
         <span class=\"badge exit-code status-{class}\">{badge}</span>",
        name = esc(&request.tool_name),
    );
    if let Some(duration) = tool.duration_ms {
        let _ = write!(
            html,
            " <span class=\"meta\">{}</span>",
            duration_text(duration)
        );
    }
    if let Some((_, next)) = &error {
        let _ = write!(html, " {next}");
    }
    html.push_str("</h3>");
    let arguments = serde_json::to_string_pretty(&serde_json::Value::Object(
        content.arguments(&request.tool_args),
    ))
    .unwrap_or_default();
    folded(html, "Arguments", &arguments, None);
    if let Some(command) = &request.resolved_command {
        let _ = write!(
            html,
            "<div class=\"cmd muted\">$ <code>{}</code></div>",
            esc(content.text(command))
        );
    }
    let question = page.questions.get(request.action_id.as_str());
    if let Some(question) = question {
        question_html(html, question.request, content);
        if let Some(answer) = question.answer {
            answer_html(html, answer, content);
        }
    }
    if let Some((_, result)) = tool.result {
        // The answer is the call's observation; it is shown once, after its question.
        let shown = question
            .and_then(|q| q.answer)
            .is_some_and(|answer| answer.response == result.observation_content);
        if !shown {
            let full = format!(
                "{base}{}",
                Trajectory::tool_output_ref(&result.execution_ref)
            );
            folded(
                html,
                "Observation",
                content.text(&result.observation_content),
                Some(&full),
            );
        }
    }
    if let Some(child) = page.nest.children.get(&request.action_id) {
        subagent_html(html, child, content, &page.nest);
    }
    html.push_str("</article>");
}

/// A sub-agent run inside the call that started it: a folded summary (agent, status,
/// iterations, cost, a link to its own page) that unfolds into its iterations, drawn as
/// the page's own are.
fn subagent_html(html: &mut String, child: &Trajectory, content: Content, nest: &Nest) {
    let metadata = &child.metadata;
    let base = nest.child_base(child);
    let cost = metadata
        .subtree
        .as_ref()
        .map_or(metadata.usage.total_cost_usd, |s| s.usage.total_cost_usd);
    let _ = write!(
        html,
        "<details class=\"subagent\" data-run-id=\"{id}\" data-status=\"{status}\"><summary>\
         sub-agent <strong>{agent}</strong> · run {id} · <span class=\"{class}\">{status}</span> \
         · {iterations} iteration(s) · {cost} · <a href=\"{base}{RUN_PAGE}\">its page</a></summary>\
         <div class=\"subagent-body\"><pre class=\"task\">{task}</pre>",
        id = esc(child.run_id()),
        status = metadata.status,
        class = status_class(metadata.status),
        agent = esc(&metadata.agent_name),
        iterations = metadata.iterations,
        cost = esc(&cost_text(cost)),
        base = esc(&base),
        task = esc(content.text(&metadata.task)),
    );
    let iterations = child.iterations();
    let inner = Page::of(child, &iterations, &base, content, nest.level + 1);
    for iteration in &iterations {
        iteration_section(html, iteration, &inner);
    }
    html.push_str("</div></details>");
}

/// `text` in a `<pre>`; a long one folded in a closed `<details>` showing its head and
/// tail only, with `full` (the directory of the complete output) named and linked.
fn folded(html: &mut String, label: &str, text: &str, full: Option<&str>) {
    let chars = text.chars().count();
    if chars <= FOLD_CHARS {
        let _ = write!(
            html,
            "<pre class=\"{}\">{}</pre>",
            label.to_lowercase().replace(' ', "-"),
            esc(text)
        );
        return;
    }
    let lines = text.lines().count();
    let _ = write!(
        html,
        "<details class=\"folded\"><summary>{label}: {lines} lines, {chars} characters"
    );
    if let Some(full) = full {
        let _ = write!(
            html,
            " · full output in <a href=\"{path}\">{path}</a>",
            path = esc(full)
        );
    }
    html.push_str("</summary><pre>");
    let head: String = text.chars().take(HEAD_CHARS).collect();
    let tail: String = text
        .chars()
        .skip(chars.saturating_sub(TAIL_CHARS))
        .collect();
    let _ = write!(
        html,
        "{}\n<span class=\"muted\">[… {} characters not shown here …]</span>\n{}</pre></details>",
        esc(&head),
        chars - HEAD_CHARS - TAIL_CHARS,
        esc(&tail)
    );
}

/// ` (1,024 cached)` after an input token count, when the provider cached some.
fn cached_text(cached: u64) -> String {
    if cached == 0 {
        String::new()
    } else {
        format!(" ({cached} cached)")
    }
}
