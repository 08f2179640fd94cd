//! What `run` and `matrix` share on the command line: the scenarios' selection and
//! locations, the runner's limits and the report's format.

use std::path::PathBuf;

use clap::ValueEnum;

use crate::scenario::Level;
use crate::suite::Selection;

#[derive(Debug, clap::Args)]
pub(super) struct Locations {
    /// The fixtures directory (holding scenarios/ and agents/). Default: the repository's
    /// fixtures/, searched upwards from this executable, then from the current directory.
    #[arg(long, value_name = "DIR")]
    pub(super) fixtures: Option<PathBuf>,
    /// The JSON Schema directory. Default: the repository's schemas/, searched like
    /// --fixtures.
    #[arg(long, value_name = "DIR")]
    pub(super) schemas: Option<PathBuf>,
}

/// Which scenarios: `run`, `matrix` and `list` select them alike.
#[derive(Debug, clap::Args)]
pub(super) struct Filters {
    /// Only scenarios with this tag (repeatable: any of them).
    #[arg(long, value_name = "TAG")]
    tag: Vec<String>,
    /// Leave out scenarios with this tag (repeatable), e.g. `slow`.
    #[arg(long, value_name = "TAG")]
    exclude_tag: Vec<String>,
    /// Only scenarios whose name contains this text (repeatable: any of them).
    #[arg(long, value_name = "NAME")]
    filter: Vec<String>,
}

impl Filters {
    /// The selection, with checks at `level` or stricter (`None`: every level).
    pub(super) fn selection(&self, level: Option<Level>) -> Selection {
        Selection {
            tags: self.tag.clone(),
            exclude_tags: self.exclude_tag.clone(),
            filters: self.filter.clone(),
            level,
        }
    }
}

#[derive(Debug, clap::Args)]
pub(super) struct Common {
    /// Only checks at this level or a stricter one: `spec` runs only what a seed
    /// demands. Default: every level, reported apart.
    #[arg(long, value_enum)]
    pub(super) level: Option<LevelArg>,
    #[command(flatten)]
    pub(super) filters: Filters,
    /// How many scenarios run at once. Default: the number of CPUs.
    #[arg(long, value_name = "N")]
    pub(super) jobs: Option<usize>,
    /// Report format on stdout (with json and junit, progress goes to stderr).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub(super) format: Format,
    /// Print only the summary (no line per scenario).
    #[arg(long, short)]
    pub(super) quiet: bool,
    /// Keep every scenario's directory (failures show where).
    #[arg(long)]
    pub(super) keep: bool,
    /// Seconds a step may run before it is killed (a scenario step may set its own).
    #[arg(long, value_name = "N", default_value_t = 30)]
    pub(super) timeout_secs: u64,
    /// The mock-llm program. Default: next to this executable, else on PATH.
    #[arg(long, value_name = "PATH")]
    pub(super) mock_llm: Option<PathBuf>,
    /// Pass this environment variable through to the implementation (repeatable; PATH
    /// always is).
    #[arg(long, value_name = "NAME")]
    pub(super) pass_env: Vec<String>,
    #[command(flatten)]
    pub(super) locations: Locations,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(super) enum LevelArg {
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
pub(super) enum Format {
    /// A line per scenario, then a summary per tag.
    Text,
    /// The report as one JSON document.
    Json,
    /// JUnit XML.
    Junit,
}
