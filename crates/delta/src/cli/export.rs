//! `delta export`: a run as an ATIF trajectory or an OTLP trace, on stdout or in a file
//! (OTLP/JSON), or posted to an OpenTelemetry collector (protobuf by default); or as a conformance scenario that
//! replays it (a directory).

use std::path::PathBuf;

use clap::{Args, ValueEnum, ValueHint};

use super::args::parse_run_id;
use super::error::{CliError, ExportError};
use super::render;
use delta_engine::llm::API_KEY_VARIABLES;
use delta_engine::output::Exit;
use delta_engine::run::RunId;
use delta_engine::secrets::Redactor;
use delta_engine::trajectory::Trajectory;
use delta_experiment::export::otlp;
use delta_experiment::export::{self, Content, Format, atif, scenario};

/// The long description of `--help`.
pub(super) const LONG_ABOUT: &str = "Export a run for other tools, derived from its journal \
    and io/ records (during or after the run).\n\n\
    atif: Harbor's Agent Trajectory Interchange Format (ATIF-v1.7): the task, each model \
    answer with its tool calls, observations and per-call tokens and cost, final metrics.\n\
    otlp: one OpenTelemetry trace (ExportTraceServiceRequest) with the GenAI semantic \
    conventions: an invoke_agent span, a chat span per LLM call (failed ones too) with its \
    input and output messages, an execute_tool span per tool call; hooks and human input as \
    span events. Written as OTLP/JSON; --otlp-endpoint posts it as protobuf (or \
    --otlp-protocol http/json), honouring the OTEL_EXPORTER_OTLP_* variables. The trace id \
    is the run's own (metadata trace_id), so re-exporting gives the same trace and two runs \
    with the same id in two workspaces are two traces.\n\n\
    scenario: a delta-conformance scenario in the directory -o (scenarios/NAME.yaml and the \
    agent copied to agents/NAME/): the run's recorded answers as a mock-llm script, its \
    task and messages as run/continue steps, and what it did as expectations (exit codes, \
    statuses, tool calls in order, files it wrote). Replay it with `delta-conformance run \
    --fixtures DIR --impl PROGRAM`.\n\n\
    The API key is never in an export; --redact-content also leaves out prompts, model \
    text, tool arguments, commands and outputs.";

/// Arguments of `delta export`.
#[derive(Debug, Args)]
#[command(
    after_help = render::examples(&[
        ("An ATIF trajectory of a run", "delta export --run-id 20251014_043012_a1b2c3 -w ./work --format atif -o run.atif.json"),
        ("The run as an OTLP/JSON trace", "delta export --run-id ID -w ./work --format otlp > trace.json"),
        ("Send it to a collector (OTLP/HTTP, protobuf)", "delta export --run-id ID -w ./work --format otlp --otlp-endpoint http://localhost:4318"),
        ("Send it where OTEL_EXPORTER_OTLP_ENDPOINT says", "delta export --run-id ID -w ./work --format otlp --otlp-endpoint"),
        ("Shareable: no prompts, arguments or outputs", "delta export --run-id ID -w ./work --format atif --redact-content"),
        ("The run as a regression test", "delta export --run-id ID -w ./work --format scenario -o recorded/ --name recorded-fix-typo"),
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

    /// Write to this file instead of stdout (with --format scenario: the directory to
    /// create, new or empty; required).
    #[arg(short, long, value_name = "FILE", value_hint = ValueHint::AnyPath)]
    output: Option<PathBuf>,

    /// The scenario's name (default: `recorded-RUN_ID`); lowercase letters, digits and `-`.
    /// Needs --format scenario.
    #[arg(long, value_name = "NAME")]
    name: Option<String>,

    /// The real server whose request checks the scenario's mock-llm reproduces (its
    /// `mock_profile`). Needs --format scenario.
    #[arg(long, value_name = "PROFILE", value_parser = mock_profiles())]
    mock_profile: Option<scenario::MockProfile>,

    /// Post the trace to this OTLP/HTTP endpoint (`/v1/traces` is appended unless the
    /// URL ends with it). Without a URL: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, else
    /// OTEL_EXPORTER_OTLP_ENDPOINT, else http://localhost:4318. Headers and timeout from
    /// OTEL_EXPORTER_OTLP_[TRACES_]HEADERS and _TIMEOUT. Needs --format otlp.
    #[arg(long, value_name = "URL", num_args = 0..=1, default_missing_value = "")]
    otlp_endpoint: Option<String>,

    /// How the trace is posted [default: OTEL_EXPORTER_OTLP_[TRACES_]PROTOCOL, else
    /// http/protobuf]. stdout and -o always get OTLP/JSON.
    #[arg(long, value_name = "PROTOCOL", value_enum)]
    otlp_protocol: Option<OtlpProtocol>,

    /// Leave out prompts, model text, tool arguments, commands, outputs and human answers.
    #[arg(long)]
    redact_content: bool,

    /// Where the trajectories of the run's sub-agents go (--format atif): embedded in the
    /// document's subagent_trajectories, or each in a file beside -o's, named
    /// `STEM.RUN_ID.json` and referred to by that name.
    #[arg(long, value_enum, default_value_t = SubagentFiles::Embed)]
    subagents: SubagentFiles,
}

/// `--subagents` of `export`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum SubagentFiles {
    /// In the one document.
    Embed,
    /// One file each, beside -o's (needs -o).
    Files,
}

/// `--mock-profile`'s values, with the help of each, from the engine's one list.
fn mock_profiles() -> impl clap::builder::TypedValueParser<Value = scenario::MockProfile> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    PossibleValuesParser::new(
        scenario::MockProfile::ALL
            .map(|profile| PossibleValue::new(profile.name()).help(profile.description())),
    )
    .try_map(|name| name.parse::<scenario::MockProfile>())
}

/// `--format` of `export`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ExportFormat {
    /// Harbor's Agent Trajectory Interchange Format (JSON).
    Atif,
    /// OTLP/JSON ExportTraceServiceRequest.
    Otlp,
    /// A delta-conformance scenario replaying the run (a directory, -o).
    Scenario,
}

/// `--otlp-protocol`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum OtlpProtocol {
    /// Protobuf (`application/x-protobuf`), what every OTLP receiver takes.
    #[value(name = "http/protobuf")]
    HttpProtobuf,
    /// OTLP/JSON (`application/json`).
    #[value(name = "http/json")]
    HttpJson,
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
            ExportFormat::Scenario => return self.scenario(),
        };
        for (given, option) in [
            (self.name.is_some(), "--name"),
            (self.mock_profile.is_some(), "--mock-profile"),
        ] {
            if given {
                return Err(ExportError::Misused {
                    option,
                    what: "needs --format scenario",
                }
                .into());
            }
        }
        if self.otlp_endpoint.is_some() && format != Format::Otlp {
            return Err(ExportError::EndpointNeedsOtlp.into());
        }
        if self.otlp_protocol.is_some() && self.otlp_endpoint.is_none() {
            return Err(ExportError::Misused {
                option: "--otlp-protocol",
                what: "says how --otlp-endpoint posts the trace; give --otlp-endpoint too",
            }
            .into());
        }
        if self.subagents == SubagentFiles::Files {
            return self.atif_files(format);
        }
        let trajectory =
            Trajectory::load(&self.work_dir, &self.run_id).map_err(ExportError::from)?;
        let content = Content {
            redact: self.redact_content,
        };
        let text = key_redactor().redact(&export::render(&trajectory, format, content));
        if let Some(endpoint) = &self.otlp_endpoint {
            let protocol = self.otlp_protocol.map(|protocol| match protocol {
                OtlpProtocol::HttpProtobuf => otlp::Protocol::HttpProtobuf,
                OtlpProtocol::HttpJson => otlp::Protocol::HttpJson,
            });
            let settings = otlp::Settings::resolve(
                Some(endpoint.as_str()).filter(|e| !e.is_empty()),
                protocol,
                |name| std::env::var(name).ok(),
            )
            .map_err(ExportError::from)?;
            let posted = otlp::post(&settings, &text).map_err(ExportError::from)?;
            let spans = serde_json::from_str(&text).map_or(0, |r| otlp::span_count(&r));
            render::stderr(&format!(
                "posted {spans} spans of run {} to {} ({})\n",
                self.run_id.as_str(),
                otlp::without_userinfo(settings.url.as_str()),
                settings.protocol.name(),
            ));
            if let Some(warning) = posted.warning {
                render::warning(&format!("the collector said: {warning}"));
            }
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

    /// `--subagents files`: the run's trajectory in `-o`, each sub-agent's beside it.
    fn atif_files(self, format: Format) -> Result<Exit, CliError> {
        if format != Format::Atif {
            return Err(ExportError::Misused {
                option: "--subagents files",
                what: "needs --format atif",
            }
            .into());
        }
        let Some(path) = &self.output else {
            return Err(ExportError::Misused {
                option: "--subagents files",
                what: "needs -o FILE: the sub-agents' files go beside it",
            }
            .into());
        };
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("trajectory");
        let stem = name.strip_suffix(".json").unwrap_or(name);
        let dir = path.parent().unwrap_or(std::path::Path::new(""));
        let trajectory =
            Trajectory::load(&self.work_dir, &self.run_id).map_err(ExportError::from)?;
        let content = Content {
            redact: self.redact_content,
        };
        let redactor = key_redactor();
        let documents = atif::documents(&trajectory, content, atif::Subagents::Files(stem));
        for (file, document) in &documents {
            let mut text = serde_json::to_string_pretty(document).unwrap_or_default();
            text.push('\n');
            let target = dir.join(file);
            std::fs::write(&target, redactor.redact(&text)).map_err(|source| {
                ExportError::Write {
                    path: target.clone(),
                    source,
                }
            })?;
        }
        render::stderr(&format!(
            "wrote {} trajectory file(s): {} and its sub-agents' beside it\n",
            documents.len(),
            path.display()
        ));
        Ok(Exit::Success)
    }

    /// `--format scenario`: the run as a conformance scenario in the directory `-o`.
    fn scenario(self) -> Result<Exit, CliError> {
        let refuse = |option: &'static str, what: &'static str| -> Result<Exit, CliError> {
            Err(ExportError::Misused { option, what }.into())
        };
        if self.redact_content {
            return refuse(
                "--redact-content",
                "cannot be used with --format scenario: a replay needs the recorded texts",
            );
        }
        if self.otlp_endpoint.is_some() {
            return Err(ExportError::EndpointNeedsOtlp.into());
        }
        let Some(dir) = &self.output else {
            return refuse(
                "--format scenario",
                "needs -o DIR, the directory to write it to",
            );
        };
        let trajectory =
            Trajectory::load(&self.work_dir, &self.run_id).map_err(ExportError::from)?;
        let options = scenario::Options {
            name: self.name.clone(),
            mock_profile: self.mock_profile.unwrap_or_default(),
        };
        let mut exported = scenario::export(&trajectory, &options).map_err(ExportError::from)?;
        let redactor = key_redactor();
        for file in &mut exported.files {
            file.bytes = redactor.redact_bytes(&file.bytes);
        }
        scenario::write(&exported, dir).map_err(ExportError::from)?;
        let mut text = format!(
            "wrote scenario {} to {} ({} recorded answer(s), {} tool call(s))\n",
            exported.name,
            dir.join(exported.scenario_path()).display(),
            exported.answers,
            exported.tool_calls,
        );
        for note in &exported.notes {
            text.push_str(&format!("  note: {note}\n"));
        }
        text.push_str(&format!(
            "replay it: delta-conformance run --fixtures {} --filter {} --impl delta\n",
            delta_engine::quote::quote_path(dir),
            exported.name,
        ));
        render::stderr(&text);
        Ok(Exit::Success)
    }
}
