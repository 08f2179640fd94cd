//! The live Think-Act-Observe stream on stderr: the human renderer of the engine's events.
//!
//! ```text
//! ▶ run 20251014_043012_a1b2c3 · agent hello-world · model gpt-4o-mini
//!   workspace /home/me/hello-world/workspaces/W001
//!
//! ── iteration 1/30 ──
//! I'll look at the files first.
//! → list_files {"directory":"."}
//!   ✓ exit 0 · 3 ms
//!   │ notes.txt
//!   │ todo.txt
//! ...
//! ✔ COMPLETED after 3 iterations
//! ```
//!
//! With `llm.stream: true` the model's text is shown as it arrives, ending up as it would
//! be shown unstreamed. Colour comes through `anstream` (only on a terminal, `NO_COLOR`
//! honoured). A spinner with the elapsed time shows while the model thinks, while a tool
//! runs and while a failed LLM call waits to be retried, only when stderr is a terminal;
//! each retry is announced with its reason. `-v` adds engine detail: context size and
//! build time, invocation ids, durations, tokens.

use std::io::{IsTerminal, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anstyle::{AnsiColor, Effects, Style};

use super::render;
use delta_engine::engine::{EngineEvent, Observer};
use delta_engine::journal::ActionStatus;
use delta_engine::run::RunStatus;
use delta_engine::tool::ASK_HUMAN_TOOL;

const HEADER: Style = AnsiColor::Cyan.on_default().effects(Effects::BOLD);
const DIM: Style = Style::new().effects(Effects::DIMMED);
const TOOL: Style = AnsiColor::Blue.on_default().effects(Effects::BOLD);
const GOOD: Style = AnsiColor::Green.on_default().effects(Effects::BOLD);
const BAD: Style = AnsiColor::Red.on_default().effects(Effects::BOLD);
const NOTE: Style = AnsiColor::Yellow.on_default();

/// Lines of an observation shown under a tool call.
const PREVIEW_LINES: usize = 4;
/// Characters per preview line.
const PREVIEW_WIDTH: usize = 160;
/// Characters of a tool call's arguments shown.
const ARGUMENTS_WIDTH: usize = 300;

/// Renders [`EngineEvent`]s to stderr.
#[derive(Debug)]
pub struct StreamRenderer {
    verbose: bool,
    spinner_allowed: bool,
    spinner: Option<Spinner>,
    /// A streamed answer's text shown so far in this attempt, if any.
    live: LiveLine,
}

/// The text of a streamed answer on its way to the screen. It ends up as the THOUGHT's text
/// would be shown unstreamed, trimmed: leading whitespace is dropped and trailing
/// whitespace is held back until more text follows it.
#[derive(Debug, Default)]
struct LiveLine {
    shown: bool,
    held: String,
}

impl LiveLine {
    /// What of `piece` can be shown now.
    fn take(&mut self, piece: &str) -> String {
        let mut pending = std::mem::take(&mut self.held);
        pending.push_str(piece);
        if !self.shown {
            pending = pending.trim_start().to_owned();
        }
        let visible = pending.trim_end().len();
        self.held = pending.split_off(visible);
        self.shown |= !pending.is_empty();
        pending
    }

    /// Whether text was shown; the line is over either way.
    fn end(&mut self) -> bool {
        std::mem::take(self).shown
    }
}

impl StreamRenderer {
    /// A renderer for this process's stderr; the spinner is on when stderr is a terminal.
    pub fn stderr(verbose: bool) -> Self {
        Self {
            verbose,
            spinner_allowed: std::io::stderr().is_terminal(),
            spinner: None,
            live: LiveLine::default(),
        }
    }

    fn print(&mut self, text: &str) {
        self.stop_spinner();
        render::stderr(text);
    }

    fn stop_spinner(&mut self) {
        if let Some(spinner) = self.spinner.take() {
            spinner.stop();
        }
    }

    fn detail(&mut self, text: &str) {
        if self.verbose {
            let line = format!("  {}\n", render::styled(text, DIM));
            self.print(&line);
        }
    }
}

impl Drop for StreamRenderer {
    fn drop(&mut self) {
        self.stop_spinner();
    }
}

/// A finished tool call in one line: its mark, exit code and duration.
fn tool_outcome(status: ActionStatus, exit_code: Option<i32>, elapsed: Duration) -> String {
    let code = exit_code.map_or_else(|| "no exit code".to_owned(), |c| format!("exit {c}"));
    let mark = match status {
        ActionStatus::Success => render::styled("✓", GOOD),
        ActionStatus::Failed => render::styled("✗ FAILED", BAD),
        ActionStatus::Error => render::styled("✗ ERROR", BAD),
    };
    format!("{mark} {code} · {}", duration(elapsed))
}

impl StreamRenderer {
    /// A sub-agent's step, indented by its depth: its start and end, its tool calls and
    /// their outcome, its warnings. Its text and engine detail stay in its own files.
    fn subagent(&mut self, run_id: &str, depth: u32, event: &EngineEvent) {
        let indent = "    ".repeat(usize::try_from(depth).unwrap_or(1));
        let line = match event {
            EngineEvent::RunStarted { agent_name, .. } => Some(render::styled(
                &format!("{indent}▶ sub-agent {run_id} · agent {agent_name}"),
                HEADER,
            )),
            EngineEvent::ToolStarted {
                tool_name,
                arguments,
                ..
            } => Some(format!(
                "{indent}{} {}",
                render::styled(&format!("→ {tool_name}"), TOOL),
                clip(arguments.trim(), ARGUMENTS_WIDTH)
            )),
            EngineEvent::ToolFinished {
                status,
                exit_code,
                elapsed,
                ..
            } => Some(format!(
                "{indent}  {}",
                tool_outcome(*status, *exit_code, *elapsed)
            )),
            EngineEvent::Warning { message } => Some(format!(
                "{indent}{}",
                render::styled(&format!("warning: {message}"), NOTE)
            )),
            EngineEvent::RunFinished {
                status, iterations, ..
            } => Some(format!(
                "{indent}■ sub-agent {run_id} {status} after {iterations} iteration(s)"
            )),
            EngineEvent::Thought { content, .. } if self.verbose && !content.trim().is_empty() => {
                Some(format!("{indent}{}", clip(content.trim(), ARGUMENTS_WIDTH)))
            }
            EngineEvent::IterationStarted { .. }
            | EngineEvent::ContextBuilt { .. }
            | EngineEvent::ContextTrimmed { .. }
            | EngineEvent::ContextWindowExceeded { .. }
            | EngineEvent::LlmRequestStarted { .. }
            | EngineEvent::LlmRetry { .. }
            | EngineEvent::LlmText { .. }
            | EngineEvent::LlmResponded { .. }
            | EngineEvent::Thought { .. }
            | EngineEvent::Detail { .. }
            | EngineEvent::Subagent { .. } => None,
        };
        if let Some(line) = line {
            self.print(&format!("{line}\n"));
        }
    }
}

impl Observer for StreamRenderer {
    fn on_event(&mut self, event: &EngineEvent) {
        match event {
            EngineEvent::RunStarted {
                run_id,
                agent_name,
                workspace,
                run_dir,
                model,
                max_iterations,
                environment,
            } => {
                let head = render::styled(&format!("▶ run {run_id}"), HEADER);
                self.print(&format!(
                    "{head} · agent {agent_name} · model {model}\n  workspace {}\n",
                    workspace.display()
                ));
                if let Some(environment) = environment {
                    self.print(&format!("  tools run in {environment}\n"));
                }
                self.detail(&format!(
                    "run directory {} · budget {max_iterations} iterations",
                    run_dir.display()
                ));
            }
            EngineEvent::IterationStarted {
                iteration,
                max_iterations,
            } => {
                let line = render::styled(
                    &format!("── iteration {iteration}/{max_iterations} ──"),
                    HEADER,
                );
                self.print(&format!("\n{line}\n"));
            }
            EngineEvent::ContextBuilt {
                messages,
                journal_events,
                elapsed,
            } => self.detail(&format!(
                "context: {messages} messages from {journal_events} journal events in {}",
                duration(*elapsed)
            )),
            EngineEvent::ContextTrimmed {
                left_out_iterations,
                left_out_messages,
                cut_sources,
                estimated_tokens,
                budget_tokens,
            } => {
                let budget = budget_tokens.map_or_else(String::new, |b| format!(" of {b}"));
                self.detail(&format!(
                    "context: {left_out_iterations} oldest iteration(s) ({left_out_messages} \
                     messages) left out to fit the window · about {estimated_tokens} tokens{budget}"
                ));
                for cut in cut_sources {
                    self.detail(&format!("context: {cut}"));
                }
            }
            EngineEvent::ContextWindowExceeded {
                invocation_id,
                window,
                prompt_tokens,
            } => {
                let numbers = match (window, prompt_tokens) {
                    (Some(w), Some(p)) => format!(" ({p} tokens for a window of {w})"),
                    (Some(w), None) => format!(" (window {w} tokens)"),
                    (None, _) => String::new(),
                };
                self.detail(&format!(
                    "llm: invocation {invocation_id} rejected as too long for the model's \
                     context window{numbers}; retrying with more of the journal left out"
                ));
            }
            EngineEvent::Warning { message } => {
                self.stop_spinner();
                render::warning(message);
            }
            EngineEvent::LlmRequestStarted {
                invocation_id,
                model,
                request_bytes,
                ..
            } => {
                self.detail(&format!(
                    "llm: invocation {invocation_id} · {request_bytes} bytes to {model}"
                ));
                if self.spinner_allowed {
                    self.spinner = Some(Spinner::start(format!("{model} is thinking")));
                }
            }
            EngineEvent::LlmText { text, .. } => {
                let shown = self.live.take(text);
                if !shown.is_empty() {
                    self.print(&shown);
                }
            }
            // Shown without -v: a wait for a 429 or an overloaded server is not the model
            // thinking, and the user should know why nothing arrives.
            EngineEvent::LlmRetry { detail, .. } => {
                if self.live.end() {
                    self.print("\n");
                }
                let line = format!("  {}\n", render::styled(&format!("llm: {detail}"), NOTE));
                self.print(&line);
                if self.spinner_allowed {
                    self.spinner = Some(Spinner::start("waiting to retry".to_owned()));
                }
            }
            EngineEvent::LlmResponded {
                elapsed,
                usage,
                retries,
                ..
            } => {
                self.stop_spinner();
                let tokens = usage.map_or_else(
                    || "no token counts".to_owned(),
                    |u| {
                        let cached = if u.cached_tokens > 0 {
                            format!(" ({} cached)", u.cached_tokens)
                        } else {
                            String::new()
                        };
                        format!(
                            "{} tokens in{cached} / {} out",
                            u.prompt_tokens, u.completion_tokens
                        )
                    },
                );
                self.detail(&format!(
                    "llm: answered in {} · {tokens} · {retries} retries",
                    duration(*elapsed)
                ));
            }
            EngineEvent::Thought {
                content, reasoning, ..
            } => {
                let streamed = self.live.end();
                if streamed {
                    self.print("\n");
                }
                if let Some(reasoning) = reasoning {
                    for line in reasoning.trim().lines() {
                        self.detail(&format!("reasoning: {line}"));
                    }
                }
                let text = content.trim();
                if !streamed && !text.is_empty() {
                    self.print(&format!("{text}\n"));
                }
            }
            EngineEvent::ToolStarted {
                tool_name,
                arguments,
                command,
                action_id,
            } => {
                let name = render::styled(&format!("→ {tool_name}"), TOOL);
                self.print(&format!(
                    "{name} {}\n",
                    clip(arguments.trim(), ARGUMENTS_WIDTH)
                ));
                if let Some(command) = command {
                    self.detail(&format!("$ {command}"));
                }
                self.detail(&format!("action {action_id}"));
                // Not for ask_human: with -i its question is asked on this terminal.
                if self.spinner_allowed && tool_name != ASK_HUMAN_TOOL {
                    self.spinner = Some(Spinner::start(format!("{tool_name} running")));
                }
            }
            EngineEvent::ToolFinished {
                status,
                exit_code,
                elapsed,
                observation,
                ..
            } => {
                let mut text = format!("  {}\n", tool_outcome(*status, *exit_code, *elapsed));
                text.push_str(&preview(observation));
                self.print(&text);
            }
            // engine.log's; the live stream shows what the user acts on.
            EngineEvent::Detail { .. } => {}
            EngineEvent::Subagent {
                run_id,
                depth,
                event,
            } => self.subagent(run_id, *depth, event),
            EngineEvent::RunFinished {
                status,
                iterations,
                error,
            } => {
                let plural = if *iterations == 1 { "" } else { "s" };
                let summary = format!("{status} after {iterations} iteration{plural}");
                let line = match status {
                    RunStatus::Completed => render::styled(&format!("✔ {summary}"), GOOD),
                    RunStatus::Failed => render::styled(&format!("✖ {summary}"), BAD),
                    RunStatus::Interrupted | RunStatus::WaitingForInput | RunStatus::Running => {
                        render::styled(&format!("■ {summary}"), NOTE)
                    }
                };
                let mut text = format!("\n{line}\n");
                if let Some(error) = error {
                    text.push_str(&format!("  {}: {}\n", error.error_type, error.message));
                    if let Some(details) = &error.details {
                        text.push_str(&format!("  {details}\n"));
                    }
                }
                self.print(&text);
            }
        }
    }
}

/// The first lines of an observation, indented under the tool call.
fn preview(observation: &str) -> String {
    let lines: Vec<&str> = observation.lines().collect();
    let mut text = String::new();
    for line in lines.iter().take(PREVIEW_LINES) {
        text.push_str(&format!(
            "  {} {}\n",
            render::styled("│", DIM),
            clip(line, PREVIEW_WIDTH)
        ));
    }
    if lines.len() > PREVIEW_LINES {
        let more = lines.len() - PREVIEW_LINES;
        text.push_str(&format!(
            "  {}\n",
            render::styled(&format!("│ … {more} more line(s)"), DIM)
        ));
    }
    text
}

fn clip(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_owned();
    }
    let head: String = text.chars().take(width).collect();
    format!("{head}…")
}

fn duration(elapsed: Duration) -> String {
    let ms = elapsed.as_millis();
    if ms >= 10_000 {
        format!("{:.0} s", elapsed.as_secs_f64())
    } else if ms >= 1_000 {
        format!("{:.1} s", elapsed.as_secs_f64())
    } else if ms >= 1 {
        format!("{ms} ms")
    } else {
        format!("{} µs", elapsed.as_micros())
    }
}

/// A one-line animation on stderr, drawn by its own thread until stopped.
#[derive(Debug)]
struct Spinner {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Spinner {
    const FRAMES: [char; 10] = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
    const TICK: Duration = Duration::from_millis(100);

    fn start(label: String) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            let started = Instant::now();
            let mut frame = 0;
            while !flag.load(Ordering::Relaxed) {
                let line = format!(
                    "\r{} {label}… {:.1} s",
                    Self::FRAMES[frame % Self::FRAMES.len()],
                    started.elapsed().as_secs_f64()
                );
                // Plain text (no colour, so NO_COLOR needs no handling here) and a raw
                // erase-line at the end: the spinner only ever draws on a terminal.
                let mut err = std::io::stderr().lock();
                // A spinner that cannot draw is no reason to disturb the run.
                let _ = err.write_all(line.as_bytes());
                let _ = err.flush();
                drop(err);
                frame += 1;
                std::thread::park_timeout(Self::TICK);
            }
            let mut err = std::io::stderr().lock();
            let _ = err.write_all(b"\r\x1b[2K");
            let _ = err.flush();
        });
        Self {
            stop,
            thread: Some(thread),
        }
    }

    fn stop(mut self) {
        self.halt();
    }

    fn halt(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            thread.thread().unpark();
            let _ = thread.join();
        }
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        self.halt();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preview_keeps_the_first_lines_and_counts_the_rest() {
        let text = preview("a\nb\nc\nd\ne\nf");
        assert_eq!(text.lines().count(), PREVIEW_LINES + 1);
        assert!(text.contains("a") && text.contains("d") && !text.contains(" e\n"));
        assert!(text.contains("… 2 more line(s)"), "{text}");
    }

    #[test]
    fn durations_read_naturally() {
        assert_eq!(duration(Duration::from_micros(250)), "250 µs");
        assert_eq!(duration(Duration::from_millis(42)), "42 ms");
        assert_eq!(duration(Duration::from_millis(1500)), "1.5 s");
        assert_eq!(duration(Duration::from_secs(75)), "75 s");
    }
}
