//! `delta-conformance citations`: the table of what each check rests on (Markdown, on
//! stdout or into a file), and with `--seeds DIR` the check that every quoted sentence is
//! in the seed sections its check cites.

use std::path::PathBuf;

use super::args::{Filters, Locations};
use super::output::{EXIT_FAILED, Fatal, err, out};
use super::setup::load_selected;
use crate::citation::Seeds;
use crate::citations;
use crate::scenario::Scenario;
use crate::schemas::SchemaSet;

#[derive(Debug, clap::Args)]
pub(super) struct CitationsArgs {
    /// Write the table to this file (docs/conformance/citations.md) instead of stdout.
    #[arg(short = 'o', long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// The seed texts (NNN_*.txt): check that every quote is in the sections its check
    /// cites, and exit 1 listing those that are not.
    #[arg(long, value_name = "DIR", env = "DELTA_SEEDS")]
    seeds: Option<PathBuf>,
    #[command(flatten)]
    filters: Filters,
    #[command(flatten)]
    locations: Locations,
}

pub(super) fn citations(args: &CitationsArgs) -> Result<u8, Fatal> {
    let (_, selected) = load_selected(
        &args.locations,
        &SchemaSet::empty(),
        &args.filters.selection(None),
    )?;
    let scenarios: Vec<&Scenario> = selected.iter().map(|l| &l.scenario).collect();
    let table = citations::markdown(&scenarios);
    match &args.output {
        Some(path) => {
            std::fs::write(path, &table).map_err(|e| {
                Fatal::new(
                    format!("cannot write {}: {e}", path.display()),
                    "check that its directory exists and is writable",
                )
            })?;
            err(&format!("wrote {}\n", path.display()));
        }
        None => out(&table),
    }
    let Some(dir) = &args.seeds else {
        return Ok(0);
    };
    let seeds = Seeds::load(dir).map_err(|e| {
        Fatal::new(
            e.to_string(),
            "pass --seeds DIR, the directory of the seed texts (000_….txt …)",
        )
    })?;
    let rows = citations::rows(&scenarios);
    let misses = citations::verify(&rows, &seeds);
    for miss in &misses {
        err(&format!("{miss}\n"));
    }
    err(&format!(
        "{} quote(s) of {} checked against {}: {} not found\n",
        rows.iter().map(|r| r.check.quote.len()).sum::<usize>(),
        rows.len(),
        seeds.dir().display(),
        misses.len()
    ));
    Ok(if misses.is_empty() { 0 } else { EXIT_FAILED })
}
