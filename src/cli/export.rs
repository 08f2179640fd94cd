//! `delta export`: a run as an ATIF trajectory or an OTLP/JSON trace, on stdout, in a
//! file, or posted to an OpenTelemetry collector.

use std::path::PathBuf;

use clap::{Args, ValueEnum, ValueHint};

use super::drive::parse_run_id;
use super::error::CliError;
use super::render;
use crate::export::otlp::{self, PostError};
use crate::export::{self, Content, Format};
use crate::llm::API_KEY_VARIABLES;
use crate::output::Exit;
use crate::run::RunId;
use crate::secrets::Redactor;
use crate::trajectory::{Trajectory, TrajectoryError};

/// The long description of `--help`.
pub(super) const LONG_ABOUT: &str = "Export a run for other tools, derived from its journal \
    and io/ records (during or after the run).\n\n\
    atif: Harbor's Agent Trajectory Interchange Format (ATIF-v1.7): the task, each model \
    answer with its tool calls, observations and per-call tokens and cost, final metrics.\n\
    otlp: one OpenTelemetry trace as OTLP/JSON (ExportTraceServiceRequest) with the GenAI \
    semantic conventions: an invoke_agent span, a chat span per LLM call, an execute_tool \
    span per tool call; hooks and human input as span events. Span ids derive from the run \
    id and journal seq, so re-exporting gives the same trace.\n\n\
    The API key is never in an export; --redact-content also leaves out prompts, model \
    text, tool arguments, commands and outputs.";

/// Arguments of `delta export`.
#[derive(Debug, Args)]
#[command(
    after_help = render::examples(&[
        ("An ATIF trajectory of a run", "delta export --run-id 20251014_043012_a1b2c3 -w ./work --format atif -o run.atif.json"),
        ("The run as an OTLP/JSON trace", "delta export --run-id ID -w ./work --format otlp > trace.json"),
        ("Send it to a collector (OTLP/HTTP)", "delta export --run-id ID -w ./work --format otlp --otlp-endpoint http://localhost:4318"),
        ("Shareable: no prompts, arguments or outputs", "delta export --run-id ID -w ./work --format atif --redact-content"),
    ])
)]
pub struct ExportArgs {
    /// The run to export (`delta list-runs` shows the ids).
    #[arg(long, value_name = "ID", value_parser = parse_run_id)]
    run_id: RunId,

    /// Workspace that holds the run (its `.delta/RUN_ID/`).
    #[arg(short, long = "work-dir", value_name = "PATH", default_value = ".", value_hint = ValueHint::DirPath)]
    work_dir: PathBuf,

    /// The document to produce.
    #[arg(long, value_enum)]
    format: ExportFormat,

    /// Write to this file instead of stdout.
    #[arg(short, long, value_name = "FILE", value_hint = ValueHint::FilePath)]
    output: Option<PathBuf>,

    /// Post the trace to this OTLP/HTTP endpoint (`/v1/traces` is appended unless the
    /// URL ends with it); headers from OTEL_EXPORTER_OTLP_HEADERS. Needs --format otlp.
    #[arg(long, value_name = "URL")]
    otlp_endpoint: Option<String>,

    /// Leave out prompts, model text, tool arguments, commands, outputs and human answers.
    #[arg(long)]
    redact_content: bool,
}

/// `--format` of `export`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ExportFormat {
    /// Harbor's Agent Trajectory Interchange Format (JSON).
    Atif,
    /// OTLP/JSON ExportTraceServiceRequest.
    Otlp,
}

/// Why `delta export` failed.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// The run could not be read.
    #[error(transparent)]
    Trajectory(#[from] TrajectoryError),
    /// The trace could not be posted.
    #[error(transparent)]
    Post(#[from] PostError),
    /// `--otlp-endpoint` with `--format atif`.
    #[error("--otlp-endpoint posts a trace; use it with --format otlp")]
    EndpointNeedsOtlp,
    /// The output file could not be written.
    #[error("cannot write {}: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The async runtime could not start.
    #[error("cannot start the async runtime: {0}")]
    Runtime(#[source] std::io::Error),
}

impl ExportError {
    /// The exit code.
    pub(super) fn exit(&self) -> Exit {
        match self {
            ExportError::EndpointNeedsOtlp => Exit::Usage,
            ExportError::Trajectory(_)
            | ExportError::Post(_)
            | ExportError::Write { .. }
            | ExportError::Runtime(_) => Exit::Failure,
        }
    }
}

/// A redactor of the API keys in the environment: whatever the run's records hold, an
/// export never carries a key.
pub(super) fn key_redactor() -> Redactor {
    Redactor::new(
        API_KEY_VARIABLES
            .iter()
            .filter_map(|name| std::env::var(name).ok()),
    )
}

impl ExportArgs {
    pub(super) fn run(self) -> Result<Exit, CliError> {
        let format = match self.format {
            ExportFormat::Atif => Format::Atif,
            ExportFormat::Otlp => Format::Otlp,
        };
        if self.otlp_endpoint.is_some() && format != Format::Otlp {
            return Err(ExportError::EndpointNeedsOtlp.into());
        }
        let trajectory =
            Trajectory::load(&self.work_dir, &self.run_id).map_err(ExportError::from)?;
        let content = Content {
            redact: self.redact_content,
        };
        let text = key_redactor().redact(&export::render(&trajectory, format, content));
        if let Some(endpoint) = &self.otlp_endpoint {
            let url = otlp::traces_url(endpoint).map_err(ExportError::from)?;
            let headers = otlp::headers_from_env(|name| std::env::var(name).ok())
                .map_err(ExportError::from)?;
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(ExportError::Runtime)?;
            let spans = serde_json::from_str(&text).map_or(0, |v| otlp::span_count(&v));
            runtime
                .block_on(otlp::post(&url, &headers, text.clone()))
                .map_err(ExportError::from)?;
            let mut shown = url.clone();
            let _ = shown.set_username("");
            let _ = shown.set_password(None);
            render::stderr(&format!(
                "posted {spans} spans of run {} to {shown}\n",
                self.run_id.as_str()
            ));
        }
        match &self.output {
            Some(path) => {
                std::fs::write(path, &text).map_err(|source| ExportError::Write {
                    path: path.clone(),
                    source,
                })?;
            }
            None if self.otlp_endpoint.is_none() => render::stdout(&text)?,
            None => {}
        }
        Ok(Exit::Success)
    }
}
