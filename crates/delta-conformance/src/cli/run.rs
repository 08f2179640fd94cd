//! `delta-conformance run`: the suite against one implementation, a line per scenario as
//! it ends, then the report; with a baseline, only a regression or an unexpected pass
//! fails it.

use std::path::PathBuf;

use super::args::{Common, Format};
use super::output::{EXIT_FAILED, Fatal, err, out};
use super::setup::{load_baseline, prepare, run_suite, target};
use crate::{baseline, report};

#[derive(Debug, clap::Args)]
pub(super) struct RunArgs {
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

pub(super) fn run(args: RunArgs) -> Result<u8, Fatal> {
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
