//! Results and their renderings: a live line per scenario, the per-tag summary, the JSON
//! report and JUnit XML. Everything renders to a `String`; the binary prints.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

use serde::Serialize;

use crate::scenario::Level;

/// How a scenario ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Status {
    /// Every expectation held.
    Pass,
    /// At least one did not, or the scenario could not be set up.
    Fail,
    /// Skipped by the scenario itself or for a missing program (the reason says why).
    Skip,
    /// Not run because the runner lacks a capability of the implementation (`no
    /// --impl-sessions`); never a pass.
    #[serde(rename = "NOT_RUN")]
    NotRun,
}

impl Status {
    /// `PASS`, `FAIL` or `SKIP`.
    pub fn label(self) -> &'static str {
        match self {
            Self::Pass => "PASS",
            Self::Fail => "FAIL",
            Self::Skip => "SKIP",
            Self::NotRun => "NOT RUN",
        }
    }
}

/// How one check ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CheckStatus {
    /// It held.
    Pass,
    /// It did not.
    Fail,
    /// Not evaluated: a check it depends on failed or was blocked.
    Blocked,
}

/// One check of a scenario: a step's `expect`, a named check, or a check the runner adds
/// (schemas, canaries).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CheckResult {
    /// `step-2`, `step-2/NAME`, `step-2/journal`, `canaries` …
    pub id: String,
    /// `spec`, `recommended` or `extension`.
    pub level: Level,
    /// The seed section or `decisions.md: SECTION`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    /// How it ended.
    pub status: CheckStatus,
    /// The check that blocked it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blocked_by: Option<String>,
    /// What failed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub failures: Vec<Failure>,
}

/// One failed expectation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Failure {
    /// The step (`step 2 (run --agent …)`), or `None` for setup and final checks.
    pub step: Option<String>,
    /// What should have held.
    pub expected: String,
    /// What was observed.
    pub observed: String,
}

/// The result of one scenario.
#[derive(Debug, Clone, Serialize)]
pub struct ScenarioResult {
    /// The scenario's name.
    pub name: String,
    /// Its file.
    pub file: PathBuf,
    /// Its tags.
    pub tags: Vec<String>,
    /// Its seed reference.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed: Option<String>,
    /// PASS, FAIL or SKIP.
    pub status: Status,
    /// Why it was skipped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Every check, in the order the scenario runs them.
    pub checks: Vec<CheckResult>,
    /// What failed (empty unless FAIL), every failed check's failures in order.
    pub failures: Vec<Failure>,
    /// Wall time.
    pub duration_ms: u64,
    /// The scenario's directory, when kept (`--keep`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dir: Option<PathBuf>,
}

impl ScenarioResult {
    /// Drops checks looser than `level` (when given), then sets the status from the
    /// checks and collects their failures.
    pub fn finish(&mut self, level: Option<Level>) {
        if let Some(level) = level {
            self.checks.retain(|c| c.level <= level);
        }
        self.failures = self
            .checks
            .iter()
            .flat_map(|c| c.failures.iter().cloned())
            .collect();
        self.status = if self.checks.iter().all(|c| c.status == CheckStatus::Pass) {
            Status::Pass
        } else {
            Status::Fail
        };
    }
}

/// Counts of one tag (or of everything).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    /// Scenarios that passed.
    pub passed: usize,
    /// Scenarios that failed.
    pub failed: usize,
    /// Scenarios skipped.
    pub skipped: usize,
    /// Scenarios not run for a missing capability (`--impl-sessions`).
    pub not_run: usize,
}

/// The checks of one level.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct LevelCounts {
    /// Checks that held.
    pub passed: usize,
    /// Checks that did not.
    pub failed: usize,
    /// Checks not evaluated because one they depend on failed.
    pub blocked: usize,
    /// Scenarios with checks at this level, all of which held.
    pub scenarios_passed: usize,
    /// Scenarios with checks at this level, not all of which held.
    pub scenarios_failed: usize,
}

impl Counts {
    fn add(&mut self, status: Status) {
        match status {
            Status::Pass => self.passed += 1,
            Status::Fail => self.failed += 1,
            Status::Skip => self.skipped += 1,
            Status::NotRun => self.not_run += 1,
        }
    }

    /// All scenarios counted.
    pub fn total(&self) -> usize {
        self.passed + self.failed + self.skipped + self.not_run
    }
}

/// The whole run.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The implementation's command line.
    pub implementation: Vec<String>,
    /// Every selected scenario, sorted by name.
    pub scenarios: Vec<ScenarioResult>,
    /// All scenarios together.
    pub total: Counts,
    /// Per tag.
    pub by_tag: BTreeMap<String, Counts>,
    /// Checks per level (`spec`, `recommended`, `extension`).
    pub by_level: BTreeMap<Level, LevelCounts>,
    /// Wall time of the whole run.
    pub duration_ms: u64,
}

impl Report {
    /// A report of `results` (sorted by name here).
    pub fn new(
        implementation: Vec<String>,
        mut scenarios: Vec<ScenarioResult>,
        duration_ms: u64,
    ) -> Self {
        scenarios.sort_by(|a, b| a.name.cmp(&b.name));
        let mut total = Counts::default();
        let mut by_tag: BTreeMap<String, Counts> = BTreeMap::new();
        let mut by_level: BTreeMap<Level, LevelCounts> = BTreeMap::new();
        for result in &scenarios {
            total.add(result.status);
            for tag in &result.tags {
                by_tag.entry(tag.clone()).or_default().add(result.status);
            }
            for level in Level::ALL {
                let checks: Vec<&CheckResult> =
                    result.checks.iter().filter(|c| c.level == level).collect();
                if checks.is_empty() {
                    continue;
                }
                let counts = by_level.entry(level).or_default();
                for check in &checks {
                    match check.status {
                        CheckStatus::Pass => counts.passed += 1,
                        CheckStatus::Fail => counts.failed += 1,
                        CheckStatus::Blocked => counts.blocked += 1,
                    }
                }
                if checks.iter().all(|c| c.status == CheckStatus::Pass) {
                    counts.scenarios_passed += 1;
                } else {
                    counts.scenarios_failed += 1;
                }
            }
        }
        Self {
            implementation,
            scenarios,
            total,
            by_tag,
            by_level,
            duration_ms,
        }
    }

    /// Whether every selected scenario passed (skips are not passes).
    pub fn all_passed(&self) -> bool {
        self.total.failed == 0 && self.total.skipped == 0 && self.total.not_run == 0
    }
}

/// The live line of one scenario, with its failed and blocked checks below it.
pub fn live_line(result: &ScenarioResult) -> String {
    let mut out = format!(
        "{}  {}{} ({:.2}s)",
        result.status.label(),
        result.name,
        result
            .seed
            .as_ref()
            .map(|s| format!(" [{s}]"))
            .unwrap_or_default(),
        result.duration_ms as f64 / 1000.0
    );
    if let Some(reason) = &result.reason {
        let _ = write!(out, ": {reason}");
    }
    out.push('\n');
    for check in &result.checks {
        let head = format!(
            "      {} [{}{}]",
            check.id,
            check.level.name(),
            check
                .reference
                .as_ref()
                .map(|r| format!(": {r}"))
                .unwrap_or_default()
        );
        match check.status {
            CheckStatus::Pass => {}
            CheckStatus::Blocked => {
                let _ = writeln!(
                    out,
                    "{head} blocked by {}",
                    check.blocked_by.as_deref().unwrap_or("?")
                );
            }
            CheckStatus::Fail => {
                let _ = writeln!(out, "{head}");
                for failure in &check.failures {
                    let step = failure.step.as_deref().unwrap_or("scenario");
                    let _ = writeln!(out, "        {step}: expected {}", failure.expected);
                    let _ = writeln!(out, "          observed: {}", failure.observed);
                }
            }
        }
    }
    if result.status == Status::Fail
        && let Some(dir) = &result.dir
    {
        let _ = writeln!(out, "      kept: {}", dir.display());
    }
    out
}

/// The per-tag table and the totals.
pub fn summary(report: &Report) -> String {
    let width = report
        .by_tag
        .keys()
        .map(String::len)
        .chain([5])
        .max()
        .unwrap_or(5);
    let mut out = format!(
        "\n{:width$}  {:>4}  {:>4}  {:>4}  {:>7}\n",
        "tag", "pass", "fail", "skip", "not run"
    );
    let rows = report
        .by_tag
        .iter()
        .map(|(tag, counts)| (tag.as_str(), counts))
        .chain([("total", &report.total)]);
    for (tag, c) in rows {
        let _ = writeln!(
            out,
            "{tag:width$}  {:>4}  {:>4}  {:>4}  {:>7}",
            c.passed, c.failed, c.skipped, c.not_run
        );
    }
    let _ = writeln!(
        out,
        "\n{:11}  {:>6}  {:>6}  {:>7}  {:>9}",
        "level", "checks", "failed", "blocked", "scenarios"
    );
    for (level, c) in &report.by_level {
        let _ = writeln!(
            out,
            "{:11}  {:>6}  {:>6}  {:>7}  {:>4}/{:<4}",
            level.name(),
            c.passed + c.failed + c.blocked,
            c.failed,
            c.blocked,
            c.scenarios_passed,
            c.scenarios_passed + c.scenarios_failed
        );
    }
    let failed: Vec<&str> = report
        .scenarios
        .iter()
        .filter(|r| r.status == Status::Fail)
        .map(|r| r.name.as_str())
        .collect();
    let _ = writeln!(
        out,
        "\n{} scenario(s): {} passed, {} failed, {} skipped, {} not run in {:.1}s",
        report.total.total(),
        report.total.passed,
        report.total.failed,
        report.total.skipped,
        report.total.not_run,
        report.duration_ms as f64 / 1000.0
    );
    if !failed.is_empty() {
        let _ = writeln!(out, "failed: {}", failed.join(", "));
    }
    out
}

/// The machine-readable report.
pub fn json(report: &Report) -> String {
    serde_json::to_string_pretty(report).unwrap_or_else(|err| format!("{{\"error\": \"{err}\"}}"))
        + "\n"
}

/// JUnit XML: one `<testcase>` per scenario, its first tag as the class name.
pub fn junit(report: &Report) -> String {
    let seconds = |ms: u64| format!("{:.3}", ms as f64 / 1000.0);
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let counts = |errors: &str| {
        format!(
            "name=\"delta-conformance\" tests=\"{}\" failures=\"{}\"{errors} skipped=\"{}\" time=\"{}\"",
            report.total.total(),
            report.total.failed,
            report.total.skipped + report.total.not_run,
            seconds(report.duration_ms)
        )
    };
    let _ = writeln!(out, "<testsuites {}>", counts(""));
    let _ = writeln!(out, "  <testsuite {}>", counts(" errors=\"0\""));
    for result in &report.scenarios {
        let class = result.tags.first().map_or("conformance", String::as_str);
        let _ = write!(
            out,
            "    <testcase name=\"{}\" classname=\"delta-conformance.{}\" time=\"{}\"",
            xml(&result.name),
            xml(class),
            seconds(result.duration_ms)
        );
        match result.status {
            Status::Pass => out.push_str("/>\n"),
            Status::Skip | Status::NotRun => {
                let _ = writeln!(
                    out,
                    ">\n      <skipped message=\"{}\"/>\n    </testcase>",
                    xml(result.reason.as_deref().unwrap_or_default())
                );
            }
            Status::Fail => {
                let message = result
                    .failures
                    .first()
                    .map(|f| format!("expected {}", f.expected))
                    .unwrap_or_default();
                let mut body = String::new();
                for f in &result.failures {
                    let _ = writeln!(
                        body,
                        "{}: expected {}\n  observed: {}",
                        f.step.as_deref().unwrap_or("scenario"),
                        f.expected,
                        f.observed
                    );
                }
                for check in &result.checks {
                    if let Some(blocker) = &check.blocked_by {
                        let _ = writeln!(body, "{}: blocked by {blocker}", check.id);
                    }
                }
                if let Some(dir) = &result.dir {
                    let _ = writeln!(body, "kept: {}", dir.display());
                }
                let _ = writeln!(
                    out,
                    ">\n      <failure message=\"{}\" type=\"expectation\">{}</failure>\n    </testcase>",
                    xml(&message),
                    xml(&body)
                );
            }
        }
    }
    out.push_str("  </testsuite>\n</testsuites>\n");
    out
}

/// Text escaped for XML attributes and content; characters XML 1.0 forbids become U+FFFD.
fn xml(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(name: &str, status: Status, tags: &[&str]) -> ScenarioResult {
        let failures = if status == Status::Fail {
            vec![Failure {
                step: Some("step 1 (run)".into()),
                expected: "exit code is 0".into(),
                observed: "1 <\u{1}>".into(),
            }]
        } else {
            Vec::new()
        };
        let check = |id: &str, status: CheckStatus, failures: Vec<Failure>| CheckResult {
            id: id.into(),
            level: Level::Spec,
            reference: Some("002 §4.3".into()),
            status,
            blocked_by: (status == CheckStatus::Blocked).then(|| "step-1".to_string()),
            failures,
        };
        let checks = match status {
            Status::Fail => vec![
                check("step-1", CheckStatus::Fail, failures.clone()),
                check("step-2", CheckStatus::Blocked, Vec::new()),
            ],
            Status::Pass => vec![check("step-1", CheckStatus::Pass, Vec::new())],
            Status::Skip | Status::NotRun => Vec::new(),
        };
        ScenarioResult {
            name: name.into(),
            file: PathBuf::from(format!("{name}.yaml")),
            tags: tags.iter().map(ToString::to_string).collect(),
            seed: None,
            status,
            reason: (status == Status::Skip).then(|| "no node".to_string()),
            checks,
            failures,
            duration_ms: 1500,
            dir: None,
        }
    }

    fn report() -> Report {
        Report::new(
            vec!["delta".into()],
            vec![
                result("b", Status::Fail, &["core"]),
                result("a", Status::Pass, &["core", "output"]),
                result("c", Status::Skip, &["output"]),
            ],
            3000,
        )
    }

    #[test]
    fn counts_per_tag_and_sorting() {
        let r = report();
        assert_eq!(
            r.scenarios
                .iter()
                .map(|s| s.name.as_str())
                .collect::<Vec<_>>(),
            ["a", "b", "c"]
        );
        assert_eq!(
            r.by_tag["core"],
            Counts {
                passed: 1,
                failed: 1,
                skipped: 0,
                not_run: 0
            }
        );
        assert_eq!(
            r.by_tag["output"],
            Counts {
                passed: 1,
                failed: 0,
                skipped: 1,
                not_run: 0
            }
        );
        assert!(!r.all_passed());
        let text = summary(&r);
        assert!(
            text.contains("\ncore       1     1     0        0\n"),
            "{text}"
        );
        assert_eq!(
            r.by_level[&Level::Spec],
            LevelCounts {
                passed: 1,
                failed: 1,
                blocked: 1,
                scenarios_passed: 1,
                scenarios_failed: 1
            }
        );
        assert!(text.contains("failed: b"), "{text}");
    }

    #[test]
    fn live_lines_show_failures() {
        let line = live_line(&result("b", Status::Fail, &[]));
        assert_eq!(
            line,
            "FAIL  b (1.50s)\n      step-1 [spec: 002 §4.3]\n        step 1 (run): expected exit code is 0\n          observed: 1 <\u{1}>\n      step-2 [spec: 002 §4.3] blocked by step-1\n"
        );
        assert_eq!(
            live_line(&result("c", Status::Skip, &[])),
            "SKIP  c (1.50s): no node\n"
        );
    }

    #[test]
    fn junit_is_escaped_xml() {
        let xml = junit(&report());
        assert!(xml.contains(
            "<testsuites name=\"delta-conformance\" tests=\"3\" failures=\"1\" skipped=\"1\""
        ));
        assert!(xml.contains(
            "<testcase name=\"a\" classname=\"delta-conformance.core\" time=\"1.500\"/>"
        ));
        assert!(xml.contains("<skipped message=\"no node\"/>"));
        assert!(xml.contains("observed: 1 &lt;\u{FFFD}&gt;"), "{xml}");
        assert!(xml.contains("step-2: blocked by step-1"), "{xml}");
    }

    #[test]
    fn json_report_has_statuses() {
        let value: serde_json::Value = serde_json::from_str(&json(&report())).unwrap();
        assert_eq!(value["scenarios"][1]["status"], "FAIL");
        assert_eq!(value["total"]["failed"], 1);
    }
}
