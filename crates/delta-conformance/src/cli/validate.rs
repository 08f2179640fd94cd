//! `delta-conformance validate`: files checked against schemas/, a line per file or
//! problem.

use std::path::PathBuf;

use super::output::{EXIT_FAILED, Fatal, out};
use super::setup::schema_set;
use crate::validate;

#[derive(Debug, clap::Args)]
pub(super) struct ValidateArgs {
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

pub(super) fn validate_files(args: &ValidateArgs) -> Result<u8, Fatal> {
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
