//! The `delta-conformance` command line: `run`, `matrix`, `validate` and `list`. This is the one
//! place that prints and turns outcomes into exit codes (0 success, 1 failed scenarios or
//! violations, 2 usage or setup errors).

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::{Parser, Subcommand, ValueEnum};
use delta_conformance::report;
use delta_conformance::runner::RunnerConfig;
use delta_conformance::scenario::Level;
use delta_conformance::schemas::{self, SchemaSet};
use delta_conformance::suite::{self, Selection};
use delta_conformance::{adapter, baseline, locate, matrix, scenario, validate};

/// Black-box conformance runner for Delta Engine implementations.
///
/// Runs the scenarios of fixtures/scenarios/ against any implementation's command line,
/// each in its own temporary directory with its own mock-llm, and checks exit codes,
/// output, journals, metadata (against schemas/), files and canaries.
#[derive(Debug, Parser)]
#[command(name = "delta-conformance", version)]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Debug, Subcommand)]
enum Cmd {
    /// Run scenarios against an implementation.
    Run(RunArgs),
    /// Run the suite against several implementations and write the matrix (Markdown and
    /// JSON): scenario × implementation, with levels, seed references and failures.
    Matrix(MatrixArgs),
    /// Validate files (journals, metadata.json, RunResult JSON, agent.yaml …) against schemas/.
    Validate(ValidateArgs),
    /// List the scenarios with their tags and seed references.
    List(ListArgs),
}

#[derive(Debug, clap::Args)]
struct Locations {
    /// The fixtures directory (holding scenarios/ and agents/). Default: the repository's
    /// fixtures/, searched upwards from this executable, then from the current directory.
    #[arg(long, value_name = "DIR")]
    fixtures: Option<PathBuf>,
    /// The JSON Schema directory. Default: the repository's schemas/, searched like
    /// --fixtures.
    #[arg(long, value_name = "DIR")]
    schemas: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
struct RunArgs {
    /// The command that starts the implementation, split like a shell would
    /// (e.g. "target/debug/delta" or "node dist/index.js"). Required unless the adapter
    /// names it.
    #[arg(long = "impl", value_name = "COMMAND")]
    implementation: Option<String>,
    /// The implementation's delta-sessions command, split like --impl, for `sessions`
    /// steps and for agents whose tools run `delta-sessions`. Default: the adapter's, else
    /// `delta-sessions` beside the first file named in --impl, else on PATH.
    #[arg(long, value_name = "COMMAND")]
    impl_sessions: Option<String>,
    /// An adapter file: how the implementation spells commands (`tool-expand:
    /// ["tool:expand"]`), its command and its sessions program (docs/conformance.md).
    #[arg(long, value_name = "FILE")]
    adapter: Option<PathBuf>,
    /// A baseline file of checks expected to fail, each with its reason: the run then
    /// fails only on a regression or an unexpected pass.
    #[arg(long, value_name = "FILE")]
    baseline: Option<PathBuf>,
    #[command(flatten)]
    common: Common,
}

#[derive(Debug, clap::Args)]
struct MatrixArgs {
    /// An implementation: NAME=COMMAND (repeatable; in the matrix's column order).
    /// `NAME=` with an empty command takes the command from the adapter.
    #[arg(long = "impl", value_name = "NAME=COMMAND", required = true)]
    implementations: Vec<String>,
    /// NAME=COMMAND: the sessions command of implementation NAME (repeatable).
    #[arg(long, value_name = "NAME=COMMAND")]
    impl_sessions: Vec<String>,
    /// NAME=FILE: the adapter of implementation NAME (repeatable).
    #[arg(long, value_name = "NAME=FILE")]
    adapter: Vec<String>,
    /// NAME=FILE: the baseline of implementation NAME, whose reasons are printed beside
    /// its failures as the verdicts (repeatable).
    #[arg(long, value_name = "NAME=FILE")]
    baseline: Vec<String>,
    /// The Markdown file to write; the JSON goes beside it (`.json`).
    #[arg(short = 'o', long, value_name = "FILE")]
    output: PathBuf,
    #[command(flatten)]
    common: Common,
}

#[derive(Debug, clap::Args)]
struct Common {
    /// Only checks at this level or a stricter one: `spec` runs only what a seed
    /// demands. Default: every level, reported apart.
    #[arg(long, value_enum)]
    level: Option<LevelArg>,
    /// Run only scenarios with this tag (repeatable: any of them).
    #[arg(long, value_name = "TAG")]
    tag: Vec<String>,
    /// Leave out scenarios with this tag (repeatable), e.g. `slow`.
    #[arg(long, value_name = "TAG")]
    exclude_tag: Vec<String>,
    /// Run only scenarios whose name contains this text.
    #[arg(long, value_name = "NAME")]
    filter: Option<String>,
    /// How many scenarios run at once. Default: the number of CPUs.
    #[arg(long, value_name = "N")]
    jobs: Option<usize>,
    /// Report format on stdout (with json and junit, progress goes to stderr).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Print only the summary (no line per scenario).
    #[arg(long, short)]
    quiet: bool,
    /// Keep every scenario's directory (failures show where).
    #[arg(long)]
    keep: bool,
    /// Seconds a step may run before it is killed (a scenario step may set its own).
    #[arg(long, value_name = "N", default_value_t = 30)]
    timeout_secs: u64,
    /// The mock-llm program. Default: next to this executable, else on PATH.
    #[arg(long, value_name = "PATH")]
    mock_llm: Option<PathBuf>,
    /// Pass this environment variable through to the implementation (repeatable; PATH
    /// always is).
    #[arg(long, value_name = "NAME")]
    pass_env: Vec<String>,
    #[command(flatten)]
    locations: Locations,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum LevelArg {
    /// What a seed section requires.
    Spec,
    /// ... and what a seed recommends or shows as its example.
    Recommended,
    /// ... and this project's own choices (everything).
    Extension,
}

impl From<LevelArg> for Level {
    fn from(level: LevelArg) -> Self {
        match level {
            LevelArg::Spec => Level::Spec,
            LevelArg::Recommended => Level::Recommended,
            LevelArg::Extension => Level::Extension,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    /// A line per scenario, then a summary per tag.
    Text,
    /// The report as one JSON document.
    Json,
    /// JUnit XML.
    Junit,
}

#[derive(Debug, clap::Args)]
struct ValidateArgs {
    /// The files.
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
    /// What the files are: journal, metadata, run-result, list-runs, agent, context,
    /// hooks, imported-tools, scenario, mock-script … (any NAME with a
    /// schemas/NAME.schema.json). Default: told from each file's name.
    #[arg(long)]
    kind: Option<String>,
    /// The JSON Schema directory (default: as for `run`).
    #[arg(long, value_name = "DIR")]
    schemas: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
struct ListArgs {
    /// Only scenarios with this tag (repeatable).
    #[arg(long, value_name = "TAG")]
    tag: Vec<String>,
    /// Leave out scenarios with this tag (repeatable).
    #[arg(long, value_name = "TAG")]
    exclude_tag: Vec<String>,
    /// Only scenarios whose name contains this text.
    #[arg(long, value_name = "NAME")]
    filter: Option<String>,
    #[command(flatten)]
    locations: Locations,
}

/// A failure already worded for the user, with its exit code.
struct Fatal {
    message: String,
    help: Option<String>,
}

impl Fatal {
    fn new(message: impl Into<String>, help: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            help: Some(help.into()),
        }
    }
}

const EXIT_FAILED: u8 = 1;
const EXIT_USAGE: u8 = 2;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Cmd::Run(args) => run(args),
        Cmd::Matrix(args) => matrix(args),
        Cmd::Validate(args) => validate_files(&args),
        Cmd::List(args) => list(&args),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(fatal) => {
            let mut text = format!("error: {}\n", fatal.message);
            if let Some(help) = fatal.help {
                text.push_str(&format!("  = help: {help}\n"));
            }
            let _ignored = std::io::stderr().write_all(text.as_bytes());
            ExitCode::from(EXIT_USAGE)
        }
    }
}

/// Writes to stdout; a closed pipe (`| head`) ends the output quietly.
fn out(text: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ignored = stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush());
}

fn err(text: &str) {
    let _ignored = std::io::stderr().write_all(text.as_bytes());
}

fn schema_set(dir: Option<&Path>) -> Result<SchemaSet, Fatal> {
    let dir = match dir {
        Some(dir) => dir.to_path_buf(),
        None => locate::default_schemas().ok_or_else(|| {
            Fatal::new(
                "cannot find the schemas/ directory",
                "pass --schemas DIR (the repository's schemas/)",
            )
        })?,
    };
    SchemaSet::load(&dir).map_err(|e| Fatal::new(e.to_string(), "pass --schemas DIR"))
}

fn fixtures_dir(dir: Option<&Path>) -> Result<PathBuf, Fatal> {
    match dir {
        Some(dir) => Ok(dir.to_path_buf()),
        None => locate::default_fixtures().ok_or_else(|| {
            Fatal::new(
                "cannot find the fixtures/ directory",
                "pass --fixtures DIR (the repository's fixtures/, holding scenarios/ and agents/)",
            )
        }),
    }
}

fn load_selected(
    locations: &Locations,
    schemas: &SchemaSet,
    selection: &Selection,
) -> Result<(PathBuf, Vec<delta_conformance::scenario::LoadedScenario>), Fatal> {
    let fixtures = fixtures_dir(locations.fixtures.as_deref())?;
    let all = suite::load_dir(&fixtures.join("scenarios"), schemas).map_err(|e| {
        let help = match &e {
            suite::SuiteError::Scenario(inner) => inner.help(),
            suite::SuiteError::ReadDir { .. } => "pass --fixtures DIR",
            suite::SuiteError::DuplicateName { .. } => "rename one of them",
            suite::SuiteError::MockScript { .. } => "see schemas/mock-script.schema.json",
        };
        Fatal::new(e.to_string(), help)
    })?;
    let selected = selection.apply(all);
    if selected.is_empty() {
        return Err(Fatal::new(
            "no scenario matches the selection",
            "check --tag and --filter against `delta-conformance list`",
        ));
    }
    Ok((fixtures, selected))
}

/// A command-line option's command, split into words with existing relative paths made
/// absolute (scenarios run in their own directories).
fn command_words(flag: &str, line: &str) -> Result<Vec<String>, Fatal> {
    let words = shlex::split(line)
        .filter(|w| !w.is_empty())
        .ok_or_else(|| {
            Fatal::new(
                format!("cannot split {flag} {line:?} into words"),
                format!("quote it like a shell command, e.g. {flag} \"node dist/index.js\""),
            )
        })?;
    Ok(locate::absolutize_command(&words))
}

/// One implementation to run: its name, command, sessions command and adapter.
struct Target {
    implementation: Vec<String>,
    sessions: Option<Vec<String>>,
    commands: adapter::Commands,
}

fn target(
    implementation: Option<&str>,
    sessions: Option<&str>,
    adapter_file: Option<&Path>,
) -> Result<Target, Fatal> {
    let adapter = match adapter_file {
        Some(file) => adapter::load(file).map_err(|e| {
            Fatal::new(
                e.to_string(),
                "see docs/conformance.md (adapters) and schemas/conformance-adapter.schema.json",
            )
        })?,
        None => adapter::Loaded::default(),
    };
    let implementation = match implementation.filter(|line| !line.trim().is_empty()) {
        Some(line) => command_words("--impl", line)?,
        None => adapter.implementation.clone().ok_or_else(|| {
            Fatal::new(
                "no implementation: give --impl COMMAND, or an adapter with `impl:`",
                "e.g. --impl target/debug/delta",
            )
        })?,
    };
    // Not finding one is no error: the scenarios that need it are reported not run.
    let sessions = match sessions {
        Some(line) => Some(command_words("--impl-sessions", line)?),
        None => adapter.sessions.clone().or_else(|| {
            locate::beside_implementation(&implementation, scenario::SESSIONS_PROGRAM)
                .map(|path| vec![path.to_string_lossy().into_owned()])
        }),
    };
    Ok(Target {
        implementation,
        sessions,
        commands: adapter.commands,
    })
}

/// What every run of the suite shares: schemas, scenarios, mock-llm, limits.
struct Prepared {
    fixtures: PathBuf,
    selected: Vec<delta_conformance::scenario::LoadedScenario>,
    schemas: Arc<SchemaSet>,
    mock_llm: PathBuf,
    jobs: usize,
}

fn prepare(common: &Common) -> Result<Prepared, Fatal> {
    let schemas = schema_set(common.locations.schemas.as_deref())?;
    schemas.require(schemas::RUNNER_KINDS).map_err(|e| {
        Fatal::new(
            e.to_string(),
            "the runner validates journals, metadata.json, RunResult and list-runs output; pass --schemas DIR with all four",
        )
    })?;
    let selection = Selection {
        tags: common.tag.clone(),
        exclude_tags: common.exclude_tag.clone(),
        filter: common.filter.clone(),
        level: common.level.map(Level::from),
    };
    let (fixtures, selected) = load_selected(&common.locations, &schemas, &selection)?;
    let mock_llm = match &common.mock_llm {
        Some(path) => path.clone(),
        None => locate::sibling_or_on_path("mock-llm").ok_or_else(|| {
            Fatal::new(
                "cannot find mock-llm next to delta-conformance or on PATH",
                "build it (`cargo build -p mock-llm`) or pass --mock-llm PATH",
            )
        })?,
    };
    let jobs = common
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, usize::from));
    Ok(Prepared {
        fixtures,
        selected,
        schemas: Arc::new(schemas),
        mock_llm,
        jobs,
    })
}

fn run_suite(
    prepared: &Prepared,
    common: &Common,
    target: Target,
    on_result: impl FnMut(&report::ScenarioResult),
) -> Result<report::Report, Fatal> {
    let config = RunnerConfig {
        implementation: target.implementation,
        sessions: target.sessions,
        mock_llm: prepared.mock_llm.clone(),
        fixtures: prepared.fixtures.clone(),
        schemas: Arc::clone(&prepared.schemas),
        step_timeout: Duration::from_secs(common.timeout_secs),
        keep: common.keep,
        pass_env: common.pass_env.clone(),
        level: common.level.map(Level::from),
        commands: target.commands,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| {
            Fatal::new(
                format!("cannot start the async runtime: {e}"),
                "check the system's limits",
            )
        })?;
    Ok(runtime.block_on(suite::run(
        prepared.selected.clone(),
        config,
        prepared.jobs,
        on_result,
    )))
}

fn load_baseline(file: &Path) -> Result<baseline::Baseline, Fatal> {
    baseline::load(file).map_err(|e| {
        Fatal::new(
            e.to_string(),
            "see docs/conformance.md (baselines) and schemas/conformance-baseline.schema.json",
        )
    })
}

fn run(args: RunArgs) -> Result<u8, Fatal> {
    let target = target(
        args.implementation.as_deref(),
        args.impl_sessions.as_deref(),
        args.adapter.as_deref(),
    )?;
    let baseline = args.baseline.as_deref().map(load_baseline).transpose()?;
    let prepared = prepare(&args.common)?;
    let format = args.common.format;
    let quiet = args.common.quiet;
    let report = run_suite(&prepared, &args.common, target, |result| {
        if quiet {
            return;
        }
        let line = report::live_line(result);
        match format {
            Format::Text => out(&line),
            Format::Json | Format::Junit => err(&line),
        }
    })?;
    let verdict = baseline.as_ref().map(|b| baseline::judge(&report, b));
    match format {
        Format::Text => out(&report::summary(&report)),
        Format::Json => out(&report::json(&report)),
        Format::Junit => out(&report::junit(&report)),
    }
    let ok = match &verdict {
        Some(verdict) => {
            let text = verdict.render();
            match format {
                Format::Text => out(&text),
                Format::Json | Format::Junit => err(&text),
            }
            verdict.ok()
        }
        None => report.all_passed(),
    };
    Ok(if ok { 0 } else { EXIT_FAILED })
}

/// `NAME=VALUE` options of `matrix`, by name.
fn named_options(flag: &str, values: &[String]) -> Result<Vec<(String, String)>, Fatal> {
    values
        .iter()
        .map(|value| {
            value
                .split_once('=')
                .filter(|(name, _)| !name.is_empty())
                .map(|(name, rest)| (name.to_string(), rest.to_string()))
                .ok_or_else(|| {
                    Fatal::new(
                        format!("{flag} {value:?}: expected NAME=VALUE"),
                        format!("e.g. {flag} rust=target/debug/delta"),
                    )
                })
        })
        .collect()
}

fn matrix(args: MatrixArgs) -> Result<u8, Fatal> {
    let implementations = named_options("--impl", &args.implementations)?;
    let sessions = named_options("--impl-sessions", &args.impl_sessions)?;
    let adapters = named_options("--adapter", &args.adapter)?;
    let baselines = named_options("--baseline", &args.baseline)?;
    let known = |name: &str| implementations.iter().any(|(n, _)| n == name);
    for (flag, list) in [
        ("--impl-sessions", &sessions),
        ("--adapter", &adapters),
        ("--baseline", &baselines),
    ] {
        if let Some((name, _)) = list.iter().find(|(name, _)| !known(name)) {
            return Err(Fatal::new(
                format!("{flag} names {name:?}, which no --impl NAME=… defines"),
                "use the NAME of an --impl",
            ));
        }
    }
    let prepared = prepare(&args.common)?;
    let lookup = |list: &[(String, String)], name: &str| {
        list.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone())
    };
    let mut columns = Vec::new();
    for (name, command) in &implementations {
        let adapter_file = lookup(&adapters, name).map(PathBuf::from);
        let target = target(
            Some(command.as_str()),
            lookup(&sessions, name).as_deref(),
            adapter_file.as_deref(),
        )?;
        let baseline = lookup(&baselines, name)
            .map(|file| load_baseline(Path::new(&file)))
            .transpose()?;
        err(&format!("matrix: running the suite against {name}\n"));
        let report = run_suite(&prepared, &args.common, target, |_| {})?;
        err(&report::summary(&report));
        columns.push(matrix::Column {
            name: name.clone(),
            report,
            baseline,
        });
    }
    let scenarios: Vec<&delta_conformance::scenario::Scenario> =
        prepared.selected.iter().map(|l| &l.scenario).collect();
    let markdown = matrix::markdown(&scenarios, &columns);
    let json = matrix::json(&scenarios, &columns);
    let json_path = args.output.with_extension("json");
    for (path, text) in [(&args.output, markdown), (&json_path, json)] {
        std::fs::write(path, text).map_err(|e| {
            Fatal::new(
                format!("cannot write {}: {e}", path.display()),
                "check that its directory exists and is writable",
            )
        })?;
    }
    out(&format!(
        "wrote {} and {}\n",
        args.output.display(),
        json_path.display()
    ));
    Ok(0)
}

fn validate_files(args: &ValidateArgs) -> Result<u8, Fatal> {
    let schemas = schema_set(args.schemas.as_deref())?;
    let kinds = || {
        std::iter::once(validate::JOURNAL)
            .chain(schemas.kinds())
            .collect::<Vec<_>>()
            .join(", ")
    };
    if let Some(kind) = &args.kind
        && !schemas.has(validate::schema_kind(kind))
    {
        return Err(Fatal::new(
            format!(
                "unknown kind {kind:?}: {} does not exist",
                schemas.path_of(validate::schema_kind(kind)).display()
            ),
            format!("use one of: {}", kinds()),
        ));
    }
    let mut report = String::new();
    let mut bad = false;
    for file in &args.files {
        let kind = match &args.kind {
            Some(kind) => kind.clone(),
            None => validate::infer_kind(file, &schemas).ok_or_else(|| {
                Fatal::new(
                    format!("cannot tell what {} is from its name", file.display()),
                    format!("pass --kind (one of: {})", kinds()),
                )
            })?,
        };
        let problems = validate::validate_file(file, &kind, &schemas)
            .map_err(|e| Fatal::new(e.to_string(), "check the file and --kind"))?;
        if problems.is_empty() {
            report.push_str(&format!("{}: valid {kind}\n", file.display()));
        }
        for problem in &problems {
            bad = true;
            let line = problem.line.map(|l| format!(":{l}")).unwrap_or_default();
            let pointer = if problem.pointer.is_empty() {
                "(root)"
            } else {
                &problem.pointer
            };
            report.push_str(&format!(
                "{}{line}: {pointer}: {}\n",
                file.display(),
                problem.message
            ));
        }
    }
    out(&report);
    Ok(if bad { EXIT_FAILED } else { 0 })
}

fn list(args: &ListArgs) -> Result<u8, Fatal> {
    // Listing needs no schemas; with them, inline mock scripts are checked too.
    let schemas = match args
        .locations
        .schemas
        .clone()
        .or_else(locate::default_schemas)
    {
        Some(dir) => schema_set(Some(&dir))?,
        None => SchemaSet::empty(),
    };
    let selection = Selection {
        tags: args.tag.clone(),
        exclude_tags: args.exclude_tag.clone(),
        filter: args.filter.clone(),
        level: None,
    };
    let (_, selected) = load_selected(&args.locations, &schemas, &selection)?;
    let width = selected
        .iter()
        .map(|l| l.scenario.name.len())
        .max()
        .unwrap_or(0);
    let mut text = String::new();
    for loaded in &selected {
        let s = &loaded.scenario;
        let skip = if s.skip.is_some() { "  (skipped)" } else { "" };
        text.push_str(&format!(
            "{:width$}  {:11}  [{}]  {}{skip}\n",
            s.name,
            s.level().name(),
            s.tags.join(", "),
            s.seed.as_deref().unwrap_or("-"),
        ));
    }
    text.push_str(&format!("{} scenario(s)\n", selected.len()));
    out(&text);
    Ok(0)
}
