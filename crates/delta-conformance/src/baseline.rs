//! Baseline files (`--baseline FILE`): the checks an implementation is known to fail,
//! each with the reason. Against a baseline the run fails only on a regression (a failing
//! check the baseline does not list) or an unexpected pass (a listed check that now
//! holds, so the baseline must shrink), as MCP's conformance suite does.

use std::path::Path;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::report::{CheckStatus, Report, Status};
use crate::yaml_file::{self, FileError};

/// A baseline file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "delta-conformance baseline")]
pub struct Baseline {
    /// The implementation it describes (for readers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub implementation: Option<String>,
    /// The checks expected to fail.
    #[serde(default)]
    pub expected_failures: Vec<ExpectedFailure>,
}

/// One check (or a whole scenario) expected to fail.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExpectedFailure {
    /// `SCENARIO/CHECK` (e.g. `journal-shape/step-1/journal-payloads`), or `SCENARIO`
    /// for every check of the scenario (and for a scenario not run).
    pub check: String,
    /// Why it fails: the deviation, with the seed section it deviates from.
    pub reason: String,
}

/// Reads a baseline file.
pub fn load(path: &Path) -> Result<Baseline, FileError> {
    let baseline: Baseline = yaml_file::read(path)?;
    if let Some(empty) = baseline
        .expected_failures
        .iter()
        .find(|e| e.reason.trim().is_empty())
    {
        return Err(FileError::invalid(
            path,
            format!("{}: give the reason it is expected to fail", empty.check),
        ));
    }
    Ok(baseline)
}

impl Baseline {
    /// The entry covering check `check` of `scenario`: its own, else the scenario's.
    pub fn entry(&self, scenario: &str, check: Option<&str>) -> Option<&ExpectedFailure> {
        let full = check.map(|c| format!("{scenario}/{c}"));
        self.expected_failures
            .iter()
            .find(|e| Some(&e.check) == full.as_ref())
            .or_else(|| self.expected_failures.iter().find(|e| e.check == scenario))
    }
}

/// A run judged against a baseline.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Verdict {
    /// Checks (or scenarios not run) that did not hold and are not in the baseline.
    pub regressions: Vec<String>,
    /// Baseline entries whose check now holds.
    pub unexpected_passes: Vec<String>,
    /// Baseline entries naming a scenario of the run but none of its checks.
    pub unknown: Vec<String>,
}

impl Verdict {
    /// Whether the run matches the baseline.
    pub fn ok(&self) -> bool {
        self.regressions.is_empty() && self.unexpected_passes.is_empty()
    }

    /// The verdict in lines, for the end of the text report.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for (title, ids) in [
            ("regression (fails, not in the baseline)", &self.regressions),
            (
                "unexpected pass (in the baseline, now holds: remove it)",
                &self.unexpected_passes,
            ),
            (
                "unknown baseline entry (no such check was run)",
                &self.unknown,
            ),
        ] {
            for id in ids {
                out.push_str(&format!("{title}: {id}\n"));
            }
        }
        out.push_str(if self.ok() {
            "baseline: matched\n"
        } else {
            "baseline: NOT matched\n"
        });
        out
    }
}

/// Judges `report` against `baseline`.
pub fn judge(report: &Report, baseline: &Baseline) -> Verdict {
    let mut verdict = Verdict::default();
    for result in &report.scenarios {
        match result.status {
            Status::Skip => continue,
            Status::NotRun => {
                if baseline.entry(&result.name, None).is_none() {
                    verdict.regressions.push(result.name.clone());
                }
                continue;
            }
            Status::Pass | Status::Fail => {}
        }
        for check in &result.checks {
            let listed = baseline.entry(&result.name, Some(&check.id)).is_some();
            if check.status != CheckStatus::Pass && !listed {
                verdict
                    .regressions
                    .push(format!("{}/{}", result.name, check.id));
            }
        }
    }
    for entry in &baseline.expected_failures {
        let (scenario, check) = match entry.check.split_once('/') {
            Some((scenario, check)) => (scenario, Some(check)),
            None => (entry.check.as_str(), None),
        };
        let Some(result) = report.scenarios.iter().find(|r| r.name == scenario) else {
            continue;
        };
        match check {
            None => {
                if result.status == Status::Pass {
                    verdict.unexpected_passes.push(entry.check.clone());
                }
            }
            Some(check) => match result.checks.iter().find(|c| c.id == check) {
                Some(found) if found.status == CheckStatus::Pass => {
                    verdict.unexpected_passes.push(entry.check.clone());
                }
                Some(_) => {}
                None if result.status == Status::NotRun || result.status == Status::Skip => {}
                None => verdict.unknown.push(entry.check.clone()),
            },
        }
    }
    verdict
}
