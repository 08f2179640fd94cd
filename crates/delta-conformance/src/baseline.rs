//! Baseline files (`--baseline FILE`): the checks an implementation is known to fail, each
//! distinct deviation once with its verdict, the seed sentence it departs from and every
//! check it makes fail. Against a baseline the run fails only on a regression (a failing
//! check the baseline does not cover) or an unexpected pass (a listed check that now
//! holds, so the baseline must shrink), as MCP's conformance suite does.

use std::path::Path;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::citation;
use crate::report::{CheckStatus, Report, Status};
use crate::scenario::{Level, OneOrMany};
use crate::yaml_file::{self, FileError};

/// A baseline file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "delta-conformance baseline")]
pub struct Baseline {
    /// The implementation it describes (for readers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub implementation: Option<String>,
    /// Each distinct way the implementation departs from the suite, once, with the checks
    /// it makes fail.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deviations: Vec<Deviation>,
    /// Single checks expected to fail, each with its own reason (the older form; a
    /// deviation lists its checks instead).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub expected_failures: Vec<ExpectedFailure>,
}

/// One distinct deviation and the checks it makes fail or blocks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Deviation {
    /// A short name: lowercase letters, digits and `-` (e.g. `no-janitor`).
    pub id: String,
    /// Whether it is held against the implementation.
    pub verdict: VerdictKind,
    /// What the implementation does, observed by rerunning the case by hand.
    pub reason: String,
    /// For `real`: the seed section it departs from (`NNN §x.y`); for `not-held`, the
    /// level and reference of the checks (e.g. `extension, decisions.md: The run`).
    pub reference: String,
    /// For `real`: the sentence of that section it departs from, verbatim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quote: Option<OneOrMany>,
    /// The checks it makes fail (or blocks): `SCENARIO/CHECK`, `SCENARIO` for every check
    /// of a scenario (and a scenario not run); `*` stands for any text
    /// (`*/metadata-fields`).
    pub checks: Vec<String>,
}

/// A deviation's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum VerdictKind {
    /// A real deviation from the quoted seed sentence: its checks are `spec`.
    Real,
    /// Not held against the implementation: its checks are `recommended` or `extension`.
    NotHeld,
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
    baseline
        .check()
        .map_err(|message| FileError::invalid(path, message))?;
    Ok(baseline)
}

/// Whether `pattern` (`*` any text) matches `text`.
fn matches(pattern: &str, text: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    for (i, part) in parts.iter().enumerate() {
        if i + 1 == parts.len() {
            return rest.ends_with(part);
        }
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.is_empty()
}

/// What a baseline says about one failing check.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Covered<'a> {
    /// A deviation lists it.
    Deviation(&'a Deviation),
    /// A single expected failure.
    Failure(&'a ExpectedFailure),
}

impl Covered<'_> {
    /// The verdict, for reports: kind, reason and (for a real deviation) the sentence.
    pub fn verdict(&self) -> String {
        match self {
            Self::Failure(entry) => entry.reason.trim().to_string(),
            Self::Deviation(d) => {
                let kind = match d.verdict {
                    VerdictKind::Real => "real deviation",
                    VerdictKind::NotHeld => "not held against it",
                };
                let quote = d
                    .quote
                    .as_ref()
                    .map(|q| {
                        let quoted: Vec<String> = q
                            .items()
                            .iter()
                            .map(|s| format!("“{}”", citation::normalize(s)))
                            .collect();
                        format!(": {}", quoted.join(" "))
                    })
                    .unwrap_or_default();
                format!(
                    "{kind} `{}`: {} ({}{quote})",
                    d.id,
                    d.reason.trim(),
                    d.reference.trim()
                )
            }
        }
    }
}

impl Baseline {
    /// The rules the schema cannot express: reasons given, ids unique and well formed, a
    /// real deviation citing a seed section and quoting it.
    pub fn check(&self) -> Result<(), String> {
        if let Some(empty) = self
            .expected_failures
            .iter()
            .find(|e| e.reason.trim().is_empty())
        {
            return Err(format!(
                "{}: give the reason it is expected to fail",
                empty.check
            ));
        }
        for (i, d) in self.deviations.iter().enumerate() {
            let at = format!("deviations[{i}] ({})", d.id);
            let id_ok = !d.id.is_empty()
                && d.id
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
            if !id_ok {
                return Err(format!("{at}: id: use lowercase letters, digits and '-'"));
            }
            if self.deviations[..i].iter().any(|e| e.id == d.id) {
                return Err(format!("{at}: two deviations have this id"));
            }
            if d.reason.trim().is_empty() || d.checks.is_empty() {
                return Err(format!(
                    "{at}: give the reason and the checks it makes fail"
                ));
            }
            if d.verdict == VerdictKind::Real {
                citation::sections(&d.reference)
                    .map_err(|why| format!("{at}: a real deviation cites a seed section: {why}"))?;
                if d.quote
                    .as_ref()
                    .is_none_or(|q| q.items().iter().all(|s| s.trim().is_empty()))
                {
                    return Err(format!(
                        "{at}: a real deviation quotes the sentence it departs from (`quote`)"
                    ));
                }
            }
        }
        Ok(())
    }

    /// What covers check `check` of `scenario` (`None`: the scenario as a whole): a
    /// deviation or expected failure naming it, else one naming the scenario.
    pub fn entry(&self, scenario: &str, check: Option<&str>) -> Option<Covered<'_>> {
        let full = check.map(|c| format!("{scenario}/{c}"));
        let on_check = |p: &str| full.as_deref().is_some_and(|f| matches(p, f));
        let on_scenario = |p: &str| p == scenario;
        let tests: [&dyn Fn(&str) -> bool; 2] = [&on_check, &on_scenario];
        tests.into_iter().find_map(|names| {
            self.deviations
                .iter()
                .find(|d| d.checks.iter().any(|p| names(p)))
                .map(Covered::Deviation)
                .or_else(|| {
                    self.expected_failures
                        .iter()
                        .find(|e| names(&e.check))
                        .map(Covered::Failure)
                })
        })
    }

    /// Every check pattern, of the deviations and the expected failures.
    fn patterns(&self) -> Vec<&str> {
        self.deviations
            .iter()
            .flat_map(|d| d.checks.iter().map(String::as_str))
            .chain(self.expected_failures.iter().map(|e| e.check.as_str()))
            .collect()
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
    /// Failing `spec` checks a `not-held` deviation covers: a spec failure is either a
    /// real deviation or a check to re-level, never excused.
    pub excused_at_spec: Vec<String>,
}

impl Verdict {
    /// Whether the run matches the baseline.
    pub fn ok(&self) -> bool {
        self.regressions.is_empty()
            && self.unexpected_passes.is_empty()
            && self.excused_at_spec.is_empty()
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
            (
                "spec check excused by a not-held deviation (a spec failure is real)",
                &self.excused_at_spec,
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

/// Judges `report` against `baseline`. An entry with `*` is judged as a whole: it is an
/// unexpected pass when none of the checks it matches fails any more.
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
        for check in result
            .checks
            .iter()
            .filter(|c| c.status != CheckStatus::Pass)
        {
            let id = format!("{}/{}", result.name, check.id);
            match baseline.entry(&result.name, Some(&check.id)) {
                None => verdict.regressions.push(id),
                Some(Covered::Deviation(d))
                    if d.verdict == VerdictKind::NotHeld && check.level == Level::Spec =>
                {
                    verdict.excused_at_spec.push(id);
                }
                Some(Covered::Deviation(_) | Covered::Failure(_)) => {}
            }
        }
    }
    for pattern in baseline.patterns() {
        if pattern.contains('*') {
            let ran = |r: &&crate::report::ScenarioResult| {
                matches!(r.status, Status::Pass | Status::Fail)
            };
            let matched: Vec<CheckStatus> = report
                .scenarios
                .iter()
                .filter(ran)
                .flat_map(|r| {
                    r.checks
                        .iter()
                        .filter(move |c| matches(pattern, &format!("{}/{}", r.name, c.id)))
                        .map(|c| c.status)
                })
                .collect();
            let scenario_part = pattern.split('/').next().unwrap_or(pattern);
            if matched.is_empty() {
                if report
                    .scenarios
                    .iter()
                    .filter(ran)
                    .any(|r| matches(scenario_part, &r.name))
                {
                    verdict.unknown.push(pattern.to_string());
                }
            } else if matched.iter().all(|s| *s == CheckStatus::Pass) {
                verdict.unexpected_passes.push(pattern.to_string());
            }
            continue;
        }
        let (scenario, check) = match pattern.split_once('/') {
            Some((scenario, check)) => (scenario, Some(check)),
            None => (pattern, None),
        };
        let Some(result) = report.scenarios.iter().find(|r| r.name == scenario) else {
            continue;
        };
        match check {
            None => {
                if result.status == Status::Pass {
                    verdict.unexpected_passes.push(pattern.to_string());
                }
            }
            Some(check) => match result.checks.iter().find(|c| c.id == check) {
                Some(found) if found.status == CheckStatus::Pass => {
                    verdict.unexpected_passes.push(pattern.to_string());
                }
                Some(_) => {}
                None if result.status == Status::NotRun || result.status == Status::Skip => {}
                None => verdict.unknown.push(pattern.to_string()),
            },
        }
    }
    verdict
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_match_any_text_at_their_stars() {
        assert!(matches(
            "a/step-1/metadata-fields",
            "a/step-1/metadata-fields"
        ));
        assert!(!matches("a/step-1", "a/step-1/metadata-fields"));
        assert!(matches("*/metadata-fields", "a/step-1/metadata-fields"));
        assert!(matches("v17-*/step-1", "v17-1.1-exec/step-1"));
        assert!(!matches("v17-*/step-1", "v17-1.1-exec/step-1/seed-message"));
        assert!(matches("*", "anything"));
        assert!(matches("a*b*c", "a-b-b-c"));
        assert!(!matches("a*b*c", "a-c-b"));
    }

    fn baseline(yaml: &str) -> Result<Baseline, String> {
        let b: Baseline = serde_saphyr::from_str(yaml).map_err(|e| e.to_string())?;
        b.check().map(|()| b)
    }

    #[test]
    fn a_real_deviation_cites_and_quotes_a_seed_section() {
        let good = "deviations:\n  - {id: no-janitor, verdict: real, reason: r, reference: '002 §3.5.1', quote: 'allows continuation', checks: [a/step-2]}\n";
        let b = baseline(good).unwrap();
        let covered = b.entry("a", Some("step-2")).unwrap();
        assert_eq!(
            covered.verdict(),
            "real deviation `no-janitor`: r (002 §3.5.1: “allows continuation”)"
        );
        assert!(b.entry("a", Some("step-1")).is_none());
        let unquoted = good.replace(", quote: 'allows continuation'", "");
        assert!(
            baseline(&unquoted)
                .unwrap_err()
                .contains("quotes the sentence")
        );
        let uncited = good.replace("'002 §3.5.1'", "'src/cli.ts'");
        assert!(
            baseline(&uncited)
                .unwrap_err()
                .contains("cites a seed section")
        );
        let held = uncited
            .replace("verdict: real", "verdict: not-held")
            .replace(", quote: 'allows continuation'", "");
        baseline(&held).unwrap();
        let twice = format!(
            "{good}  - {{id: no-janitor, verdict: not-held, reason: r, reference: x, checks: [b]}}\n"
        );
        assert!(
            baseline(&twice)
                .unwrap_err()
                .contains("two deviations have this id")
        );
    }

    /// A report of one scenario `a` whose checks are `(id, level, status)`.
    fn report(checks: &[(&str, Level, CheckStatus)]) -> Report {
        let checks: Vec<crate::report::CheckResult> = checks
            .iter()
            .map(|&(id, level, status)| crate::report::CheckResult {
                id: id.to_string(),
                level,
                reference: None,
                status,
                blocked_by: None,
                failures: Vec::new(),
            })
            .collect();
        let mut result = crate::report::ScenarioResult {
            name: "a".to_string(),
            file: "a.yaml".into(),
            tags: Vec::new(),
            seed: None,
            status: Status::Pass,
            reason: None,
            checks,
            failures: Vec::new(),
            duration_ms: 0,
            dir: None,
        };
        result.finish(None);
        Report::new(Vec::new(), vec![result], 0)
    }

    #[test]
    fn a_spec_failure_is_a_real_deviation_never_excused() {
        let b = baseline(concat!(
            "deviations:\n",
            "  - {id: no-janitor, verdict: real, reason: r, reference: '002 §3.5.1', quote: q, checks: [a/step-2]}\n",
            "  - {id: wording, verdict: not-held, reason: r, reference: x, checks: ['*/seed-message']}\n",
        ))
        .unwrap();
        let (spec, recommended) = (Level::Spec, Level::Recommended);
        let (pass, fail) = (CheckStatus::Pass, CheckStatus::Fail);
        // Each deviation covers its failures: matched.
        let matched = judge(
            &report(&[
                ("step-1", spec, pass),
                ("step-2", spec, fail),
                ("step-2/seed-message", recommended, fail),
            ]),
            &b,
        );
        assert_eq!(matched, Verdict::default());
        // A spec check failing under a not-held deviation's pattern is not excused.
        let excused = judge(
            &report(&[("step-2", spec, fail), ("step-3/seed-message", spec, fail)]),
            &b,
        );
        assert_eq!(excused.excused_at_spec, vec!["a/step-3/seed-message"]);
        assert!(!excused.ok());
        assert!(excused.render().contains(
            "spec check excused by a not-held deviation (a spec failure is real): a/step-3/seed-message\n"
        ));
        // A deviation whose checks all hold is an unexpected pass; an unlisted failure a
        // regression.
        let changed = judge(
            &report(&[
                ("step-1", spec, fail),
                ("step-2", spec, pass),
                ("step-2/seed-message", recommended, pass),
            ]),
            &b,
        );
        assert_eq!(changed.regressions, vec!["a/step-1"]);
        assert_eq!(
            changed.unexpected_passes,
            vec!["a/step-2", "*/seed-message"]
        );
    }
}
