//! `delta-conformance list`: the scenarios with their levels, tags and seed references.

use super::args::{Filters, Locations};
use super::output::{Fatal, out};
use super::setup::{load_selected, schema_set};
use crate::locate;
use crate::schemas::SchemaSet;

#[derive(Debug, clap::Args)]
pub(super) struct ListArgs {
    #[command(flatten)]
    filters: Filters,
    #[command(flatten)]
    locations: Locations,
}

pub(super) fn list(args: &ListArgs) -> Result<u8, Fatal> {
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
    let selection = args.filters.selection(None);
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
