//! A check's result from what it found: passed without mismatches, else failed with
//! them; and the failed `setup` check of a scenario that could not start.

use crate::matcher::Mismatch;
use crate::report::{CheckResult, CheckStatus, Failure};
use crate::scenario::{CheckInfo, Level, Scenario, ScenarioChecks as _};

/// The `setup` check, failed: nothing of the scenario could run.
pub(super) fn setup_check(scenario: &Scenario, failure: Failure) -> CheckResult {
    let info = scenario.runner_check("setup".to_string(), Level::Spec, "-", &[]);
    CheckResult {
        id: info.id,
        level: info.level,
        reference: None,
        status: CheckStatus::Fail,
        blocked_by: None,
        failures: vec![failure],
    }
}

pub(super) fn setup_failure(what: &str, observed: String) -> Failure {
    Failure {
        step: None,
        expected: format!("setup: {what}"),
        observed,
    }
}

/// A check that ran: passed without mismatches, else failed with them.
pub(super) fn checked(info: CheckInfo, label: &str, mismatches: Vec<Mismatch>) -> CheckResult {
    let failures: Vec<Failure> = mismatches
        .into_iter()
        .map(|m| Failure {
            step: Some(label.to_string()),
            expected: m.expected,
            observed: m.observed,
        })
        .collect();
    CheckResult {
        id: info.id,
        level: info.level,
        reference: info.reference,
        status: if failures.is_empty() {
            CheckStatus::Pass
        } else {
            CheckStatus::Fail
        },
        blocked_by: None,
        failures,
    }
}
