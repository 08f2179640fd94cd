//! `delta-conformance matrix`: the suite against several implementations, written as
//! the scenario × implementation matrix (Markdown, and JSON beside it).

use std::path::{Path, PathBuf};

use super::args::Common;
use super::output::{Fatal, err, out};
use super::setup::{load_baseline, prepare, run_suite, target};
use crate::scenario::Scenario;
use crate::{matrix, report};

#[derive(Debug, clap::Args)]
pub(super) struct MatrixArgs {
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

pub(super) fn matrix(args: MatrixArgs) -> Result<u8, Fatal> {
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
    let scenarios: Vec<&Scenario> = prepared.selected.iter().map(|l| &l.scenario).collect();
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
