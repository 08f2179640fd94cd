//! The scenario format as the runner reads it: the types of the `delta-scenario` crate
//! (re-exported here), loading with file/line/column errors, the rules serde cannot
//! express (one action per step, regular expressions that compile, placeholders that
//! exist, check ids and levels), and the ids, levels and references of a scenario's
//! checks.

use std::path::{Path, PathBuf};

pub use delta_scenario::{
    Action, Args, Canary, CanaryState, Command, EventExpect, ExitMatch, Expect, FileExpect,
    JournalExpect, JsonType, Level, LlmEndpoint, MetadataExpect, MockProfile, NamedCheck,
    NoFileContains, OneOrMany, RequestExpect, RequestsExpect, SESSIONS_PROGRAM, Scenario,
    SetupFile, SignalName, SignalSpec, Step, TextMatch, ToolExecutionExpect, ValueMatch,
    scenario_schema,
};
use serde_saphyr::MessageFormatter as _;

use crate::vars::{self, Vars};

/// What a report says about one check before it runs: its id, level and reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckInfo {
    /// `step-2`, `step-2/NAME`, or a runner check such as `step-2/journal`.
    pub id: String,
    /// Its level.
    pub level: Level,
    /// Its seed section (`spec`, `recommended`) or docs/decisions.md section
    /// (`extension`), as `decisions.md: SECTION`.
    pub reference: Option<String>,
    /// The sentences of the seed section it rests on (`spec`, `recommended`).
    pub quote: Vec<String>,
}

/// The checks of a scenario: their ids, levels and references.
pub trait ScenarioChecks {
    /// The check of step `index`'s `expect`.
    fn step_check(&self, index: usize) -> CheckInfo;

    /// The named checks of step `index` (`checks:`), with their expectations.
    fn named_checks(&self, index: usize) -> Vec<(CheckInfo, &Expect)>;

    /// A check the runner adds (schemas, canaries …) at `level`, resting on `quote` of
    /// `seed`, or at the scenario's level when that is looser: a check cannot be stricter
    /// than its scenario's setup.
    fn runner_check(&self, id: String, level: Level, seed: &str, quote: &[&str]) -> CheckInfo;

    /// Every check the scenario declares (steps and named checks), in order.
    fn declared_checks(&self) -> Vec<CheckInfo>;

    /// The `canaries` check: at the scenario's level, resting on its own seed and quote
    /// (or decision).
    fn canaries_check(&self) -> CheckInfo;
}

impl ScenarioChecks for Scenario {
    fn step_check(&self, index: usize) -> CheckInfo {
        let step = &self.steps[index];
        let own = Layer::new(step.level, &step.seed, &step.quote, &step.decision);
        info(self, self.step_id(index), [own, Layer::default()])
    }

    fn named_checks(&self, index: usize) -> Vec<(CheckInfo, &Expect)> {
        let step = &self.steps[index];
        let own = Layer::new(step.level, &step.seed, &step.quote, &step.decision);
        step.checks
            .iter()
            .map(|c| {
                let id = format!("{}/{}", self.step_id(index), c.id);
                let layer = Layer::new(c.level, &c.seed, &c.quote, &c.decision);
                (info(self, id, [layer, own]), &c.expect)
            })
            .collect()
    }

    fn runner_check(&self, id: String, level: Level, seed: &str, quote: &[&str]) -> CheckInfo {
        let level = level.max(self.level());
        let (reference, quote) = match level {
            Level::Extension if self.level() == Level::Extension => (
                self.decision.as_ref().map(|d| format!("decisions.md: {d}")),
                Vec::new(),
            ),
            Level::Spec | Level::Recommended | Level::Extension => (
                Some(seed.to_string()),
                quote.iter().map(ToString::to_string).collect(),
            ),
        };
        CheckInfo {
            id,
            level,
            reference,
            quote,
        }
    }

    fn canaries_check(&self) -> CheckInfo {
        let info = self.runner_check("canaries".to_string(), self.level(), "-", &[]);
        if info.level == Level::Extension {
            return info;
        }
        CheckInfo {
            reference: self.seed.clone(),
            quote: self
                .quote
                .as_ref()
                .map(|q| q.items().to_vec())
                .unwrap_or_default(),
            ..info
        }
    }

    fn declared_checks(&self) -> Vec<CheckInfo> {
        (0..self.steps.len())
            .flat_map(|i| {
                std::iter::once(self.step_check(i))
                    .chain(self.named_checks(i).into_iter().map(|(info, _)| info))
            })
            .collect()
    }
}

/// What one layer (a named check, a step, the scenario) says about a check.
#[derive(Debug, Clone, Copy, Default)]
struct Layer<'a> {
    level: Option<Level>,
    /// The seed section and the sentences quoted from it, which go together.
    seed: Option<(&'a String, Option<&'a OneOrMany>)>,
    decision: Option<&'a String>,
}

impl<'a> Layer<'a> {
    fn new(
        level: Option<Level>,
        seed: &'a Option<String>,
        quote: &'a Option<OneOrMany>,
        decision: &'a Option<String>,
    ) -> Self {
        Self {
            level,
            seed: seed.as_ref().map(|s| (s, quote.as_ref())),
            decision: decision.as_ref(),
        }
    }
}

/// A check's level and reference: its own, else its step's (`outer`), else the
/// scenario's. A quote is the one given with the seed it quotes.
fn info(scenario: &Scenario, id: String, layers: [Layer<'_>; 2]) -> CheckInfo {
    let [inner, outer] = layers;
    let top = Layer::new(
        scenario.level,
        &scenario.seed,
        &scenario.quote,
        &scenario.decision,
    );
    let level = inner
        .level
        .or(outer.level)
        .unwrap_or_else(|| scenario.level());
    let seed = inner.seed.or(outer.seed).or(top.seed);
    let decision = inner.decision.or(outer.decision).or(top.decision);
    let (reference, quote) = match level {
        Level::Extension => (decision.map(|d| format!("decisions.md: {d}")), Vec::new()),
        Level::Spec | Level::Recommended => (
            seed.map(|(s, _)| s.clone()),
            seed.and_then(|(_, q)| q)
                .map(|q| q.items().to_vec())
                .unwrap_or_default(),
        ),
    };
    CheckInfo {
        id,
        level,
        reference,
        quote,
    }
}

/// The label of step `index` in reports: its name, else its action and first words.
pub fn label(step: &Step, index: usize) -> String {
    if let Some(name) = &step.name {
        return format!("step {} ({name})", index + 1);
    }
    let what = match step.action() {
        Ok(Action::Impl(command, args)) => {
            let words = words(args).unwrap_or_default();
            let mut shown: Vec<&str> = if command == Command::Sessions {
                vec![SESSIONS_PROGRAM]
            } else {
                command.prefix().to_vec()
            };
            shown.extend(words.iter().take(3).map(String::as_str));
            let more = if words.len() > 3 { " …" } else { "" };
            format!("{}{more}", shown.join(" "))
        }
        Ok(Action::Shell(script)) => {
            let first = script.lines().next().unwrap_or_default();
            format!("shell: {}", first.chars().take(40).collect::<String>())
        }
        Err(_) => "invalid".to_string(),
    };
    format!("step {} ({what})", index + 1)
}

/// The words of a command line, before placeholder substitution.
pub fn words(args: &Args) -> Result<Vec<String>, String> {
    match args {
        Args::Line(line) => shlex::split(line)
            .ok_or_else(|| format!("cannot split {line:?} into words (unbalanced quote?)")),
        Args::List(words) => Ok(words.clone()),
    }
}

/// A scenario that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    /// The file cannot be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The YAML does not parse into a scenario.
    #[error("{}{}: {message}", path.display(), location.map(|(l, c)| format!(":{l}:{c}")).unwrap_or_default())]
    Parse {
        /// The file.
        path: PathBuf,
        /// Line and column, when known.
        location: Option<(u64, u64)>,
        /// What is wrong.
        message: String,
    },
    /// It parses but breaks a rule the types cannot express.
    #[error("{}: {message}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong, where in the scenario.
        message: String,
    },
}

impl ScenarioError {
    /// How to fix it, for the `= help:` line.
    pub fn help(&self) -> &'static str {
        match self {
            Self::Read { .. } => "check the path and its permissions",
            Self::Parse { .. } | Self::Invalid { .. } => {
                "see docs/conformance.md and schemas/scenario.schema.json for the scenario format"
            }
        }
    }
}

/// A scenario and the file it came from.
#[derive(Debug, Clone)]
pub struct LoadedScenario {
    /// The scenario.
    pub scenario: Scenario,
    /// Its file.
    pub path: PathBuf,
}

impl LoadedScenario {
    /// The directory of the scenario file (for `mock_file`).
    pub fn dir(&self) -> &Path {
        self.path.parent().unwrap_or(Path::new("."))
    }
}

/// Reads and checks one scenario file.
pub fn load(path: &Path) -> Result<LoadedScenario, ScenarioError> {
    let text = std::fs::read_to_string(path).map_err(|source| ScenarioError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let scenario = parse(&text).map_err(|(location, message)| ScenarioError::Parse {
        path: path.to_path_buf(),
        location,
        message,
    })?;
    check(&scenario).map_err(|message| ScenarioError::Invalid {
        path: path.to_path_buf(),
        message,
    })?;
    Ok(LoadedScenario {
        scenario,
        path: path.to_path_buf(),
    })
}

/// Parses scenario YAML; errors carry the line and column when known.
pub fn parse(text: &str) -> Result<Scenario, (Option<(u64, u64)>, String)> {
    serde_saphyr::from_str(text).map_err(|err| {
        let plain = err.without_snippet();
        let message = serde_saphyr::DefaultMessageFormatter
            .format_message(plain)
            .into_owned();
        let location = plain
            .location()
            .filter(|loc| loc.line() > 0)
            .map(|loc| (loc.line(), loc.column()));
        (location, message)
    })
}

/// The rules serde cannot express. The message names the step and field.
pub fn check(scenario: &Scenario) -> Result<(), String> {
    let name_ok = !scenario.name.is_empty()
        && scenario
            .name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.');
    if !name_ok {
        return Err(format!(
            "name {:?}: use lowercase letters, digits, '-' and '.'",
            scenario.name
        ));
    }
    if scenario.steps.is_empty() {
        return Err("steps: a scenario needs at least one step".to_string());
    }
    if scenario.mock.is_some() && scenario.mock_file.is_some() {
        return Err("give the mock script either inline (mock) or as a file (mock_file)".into());
    }
    if scenario.llm == LlmEndpoint::Unreachable
        && (scenario.mock.is_some() || scenario.mock_file.is_some())
    {
        return Err("llm: unreachable takes no mock script".to_string());
    }
    for rel in scenario.agent_files.keys() {
        if scenario.agent.is_none() {
            return Err(format!(
                "agent_files: {rel:?} needs an agent fixture (agent:)"
            ));
        }
        if !is_relative_inside(rel) {
            return Err(format!(
                "agent_files: {rel:?} must be a relative path inside the agent directory"
            ));
        }
    }
    check_quotes(scenario)?;
    check_levels(scenario)?;
    let mut texts: Vec<(String, &str)> = Vec::new();
    for (i, file) in scenario.files.iter().enumerate() {
        texts.push((format!("files[{i}].path"), &file.path));
    }
    for (i, canary) in scenario.canaries.iter().enumerate() {
        texts.push((format!("canaries[{i}].path"), &canary.path));
    }
    for (i, step) in scenario.steps.iter().enumerate() {
        let at = format!("steps[{i}]");
        let action = step.action().map_err(|e| format!("{at}: {e}"))?;
        if let Action::Impl(_, args) = action {
            let words = words(args).map_err(|e| format!("{at}: {e}"))?;
            for word in words {
                check_placeholders(&format!("{at} argument"), &word)?;
            }
        }
        if let Some(signal) = &step.signal
            && signal.after_requests > 0
            && scenario.llm != LlmEndpoint::Mock
        {
            return Err(format!(
                "{at}.signal.after_requests needs llm: mock (it counts mock-llm's requests)"
            ));
        }
        let expect = &step.expect;
        for (j, file) in expect.files.iter().enumerate() {
            texts.push((format!("{at}.expect.files[{j}].path"), &file.path));
        }
        for (j, dir) in expect.no_file_contains.iter().enumerate() {
            texts.push((format!("{at}.expect.no_file_contains[{j}].dir"), &dir.dir));
        }
        check_regexes(&at, expect)?;
        for (j, named) in step.checks.iter().enumerate() {
            check_regexes(&format!("{at}.checks[{j}]"), &named.expect)?;
        }
    }
    for (at, text) in texts {
        check_placeholders(&at, text)?;
    }
    Ok(())
}

/// A quote stands next to the seed it quotes: a layer with `quote` has `seed`.
fn check_quotes(scenario: &Scenario) -> Result<(), String> {
    let stray =
        |quote: &Option<OneOrMany>, seed: &Option<String>| quote.is_some() && seed.is_none();
    let mut layers = vec![(String::new(), stray(&scenario.quote, &scenario.seed))];
    for (i, step) in scenario.steps.iter().enumerate() {
        layers.push((format!("steps[{i}]"), stray(&step.quote, &step.seed)));
        for (j, named) in step.checks.iter().enumerate() {
            layers.push((
                format!("steps[{i}].checks[{j}]"),
                stray(&named.quote, &named.seed),
            ));
        }
    }
    match layers.into_iter().find(|(_, stray)| *stray) {
        None => Ok(()),
        Some((at, _)) => {
            let at = if at.is_empty() {
                "the scenario".to_string()
            } else {
                at
            };
            Err(format!(
                "{at}: a quote needs the seed it quotes (`seed`, next to `quote`)"
            ))
        }
    }
}

fn is_id(text: &str) -> bool {
    !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

/// Check ids are unique and well formed, every check cites what makes it normative, and
/// `depends_on` names an earlier check at the same level or a stricter one (a `spec`
/// check cannot rest on a project's choice).
fn check_levels(scenario: &Scenario) -> Result<(), String> {
    let mut earlier: Vec<CheckInfo> = Vec::new();
    for (i, step) in scenario.steps.iter().enumerate() {
        let at = format!("steps[{i}]");
        if let Some(id) = &step.id
            && !is_id(id)
        {
            return Err(format!(
                "{at}.id {id:?}: use lowercase letters, digits and '-'"
            ));
        }
        let main = scenario.step_check(i);
        for dep in &step.depends_on {
            let Some(target) = earlier.iter().find(|c| &c.id == dep) else {
                return Err(format!(
                    "{at}.depends_on: {dep:?} is not the id of an earlier step or check (known: {})",
                    earlier
                        .iter()
                        .map(|c| c.id.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            };
            if target.level > main.level {
                return Err(format!(
                    "{at}.depends_on: a {} check cannot depend on {dep:?}, which is {}; \
                     make the step {} or the scenario {} as a whole",
                    main.level.name(),
                    target.level.name(),
                    target.level.name(),
                    target.level.name()
                ));
            }
        }
        let mut own = vec![main];
        for (j, named) in step.checks.iter().enumerate() {
            if !is_id(&named.id) {
                return Err(format!(
                    "{at}.checks[{j}].id {:?}: use lowercase letters, digits and '-'",
                    named.id
                ));
            }
            if crate::runner_check::RunnerCheck::ALL
                .iter()
                .any(|c| c.name() == named.id)
            {
                return Err(format!(
                    "{at}.checks[{j}].id {:?}: the runner's own check of the step has this name; choose another",
                    named.id
                ));
            }
        }
        own.extend(scenario.named_checks(i).into_iter().map(|(info, _)| info));
        for info in own {
            if earlier.iter().any(|c| c.id == info.id) {
                return Err(format!("{at}: two checks have the id {:?}", info.id));
            }
            check_reference(&at, &info)?;
            earlier.push(info);
        }
    }
    if !scenario.canaries.is_empty() {
        check_reference("canaries", &scenario.canaries_check())?;
    }
    Ok(())
}

/// A `spec` or `recommended` check cites a seed section (`NNN §x.y`) and quotes the
/// sentence it rests on; an `extension` check names its docs/decisions.md section.
fn check_reference(at: &str, info: &CheckInfo) -> Result<(), String> {
    let level = info.level.name();
    let Some(reference) = &info.reference else {
        let (field, what) = match info.level {
            Level::Extension => ("decision", "the docs/decisions.md section"),
            Level::Spec | Level::Recommended => ("seed", "the seed section"),
        };
        return Err(format!(
            "{at}: check {:?} is at level {level} but names no {field} ({what} that makes it so)",
            info.id
        ));
    };
    match info.level {
        Level::Extension => Ok(()),
        Level::Spec | Level::Recommended => {
            crate::citation::sections(reference).map_err(|why| {
                format!(
                    "{at}: check {:?} is at level {level}, so its seed must be a seed section: {why}; \
                     cite the seed that requires it, or make the check extension with a decision",
                    info.id
                )
            })?;
            if info.quote.iter().all(|q| q.trim().is_empty()) {
                return Err(format!(
                    "{at}: check {:?} is at level {level} but quotes nothing of {reference}; \
                     give the sentence it rests on in `quote`, next to `seed`",
                    info.id
                ));
            }
            Ok(())
        }
    }
}

fn check_placeholders(at: &str, text: &str) -> Result<(), String> {
    match vars::unknown_names(text).first() {
        None => Ok(()),
        Some(name) => Err(format!(
            "{at}: {{{name}}} is not a placeholder (known: {})",
            vars::NAMES
                .iter()
                .map(|(name, _)| format!("{{{name}}}"))
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// Every regular expression must compile once placeholders have values.
fn check_regexes(at: &str, expect: &Expect) -> Result<(), String> {
    let mut sample = Vars::default();
    for (name, _) in vars::NAMES {
        sample.set(name, "/tmp/sample.1");
    }
    let mut all: Vec<(&str, &str)> = Vec::new();
    for (what, text) in expect.text_matchers() {
        all.extend(text.regexes().into_iter().map(|r| (what, r)));
    }
    let value_matchers = expect
        .metadata
        .iter()
        .flat_map(|m| m.fields.values())
        .chain(
            expect
                .journal
                .iter()
                .flat_map(|j| j.events.iter().flat_map(|e| e.payload.values())),
        );
    all.extend(
        value_matchers
            .filter_map(|m| m.regex.as_deref())
            .map(|r| ("value", r)),
    );
    for request in expect.requests.iter().flat_map(|r| r.items.iter()) {
        all.extend(
            request
                .json
                .values()
                .filter_map(|m| m.regex.as_deref())
                .map(|r| ("requests", r)),
        );
    }
    for (what, pattern) in all {
        regex::Regex::new(&sample.expand_regex(pattern))
            .map_err(|err| format!("{at}.expect ({what}): invalid regex /{pattern}/: {err}"))?;
    }
    Ok(())
}

/// Whether `rel` is a relative path that stays inside its base (no `..`, not absolute).
pub fn is_relative_inside(rel: &str) -> bool {
    let path = Path::new(rel);
    !rel.is_empty()
        && path
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINIMAL: &str = "
name: demo
description: d
seed: 002 §4.3
quote: '0 | COMPLETED | Success.'
agent: base
steps:
  - run: --agent {agent} -w {workspace} -m hi
    expect: {exit: 0}
";

    const CITATION: &str = "seed: 002 §4.3\nquote: '0 | COMPLETED | Success.'\n";

    #[test]
    fn a_minimal_scenario_loads() {
        let s = parse(MINIMAL).unwrap();
        check(&s).unwrap();
        let step = &s.steps[0];
        assert!(matches!(step.action(), Ok(Action::Impl(Command::Run, _))));
        assert_eq!(label(step, 0), "step 1 (run --agent {agent} -w …)");
    }

    #[test]
    fn unknown_fields_report_line_and_column() {
        let (location, message) =
            parse(&MINIMAL.replace("expect: {exit: 0}", "expct: {}")).unwrap_err();
        assert_eq!(location.map(|l| l.0), Some(9));
        assert!(message.contains("expct"), "{message}");
    }

    #[test]
    fn a_step_needs_exactly_one_action() {
        let mut s = parse(MINIMAL).unwrap();
        s.steps[0].shell = Some("true".into());
        assert_eq!(
            check(&s).unwrap_err(),
            "steps[0]: a step has exactly one action, found run, shell"
        );
        s.steps[0].run = None;
        s.steps[0].shell = None;
        assert!(check(&s).unwrap_err().contains("needs one of"));
    }

    #[test]
    fn misspelt_placeholders_and_bad_regexes_are_rejected() {
        let s = parse(&MINIMAL.replace("{workspace}", "{worksapce}")).unwrap();
        assert!(
            check(&s)
                .unwrap_err()
                .starts_with("steps[0] argument: {worksapce} is not a placeholder")
        );
        let s = parse(&MINIMAL.replace("{exit: 0}", "{stdout: {regex: '('}}")).unwrap();
        assert!(check(&s).unwrap_err().contains("invalid regex /(/"));
    }

    #[test]
    fn every_check_cites_what_makes_it_normative() {
        let s = parse(&MINIMAL.replace(CITATION, "")).unwrap();
        assert!(
            check(&s)
                .unwrap_err()
                .contains("check \"step-1\" is at level spec but names no seed"),
        );
        let s = parse(&MINIMAL.replace("seed: 002 §4.3", "seed: issue 11 (real model servers)"))
            .unwrap();
        let refused = check(&s).unwrap_err();
        assert!(
            refused.contains("its seed must be a seed section")
                && refused.contains(
                    "\"issue 11 (real model servers)\" does not start with a seed section"
                ),
            "{refused}"
        );
        let s = parse(&MINIMAL.replace("quote: '0 | COMPLETED | Success.'\n", "")).unwrap();
        assert!(
            check(&s)
                .unwrap_err()
                .contains("quotes nothing of 002 §4.3"),
            "a spec check without its sentence"
        );
        let recommended =
            MINIMAL.replace("seed: 002 §4.3", "level: recommended\nseed: 004 (naming)");
        assert!(
            check(&parse(&recommended).unwrap())
                .unwrap_err()
                .contains("level recommended")
        );
        let taken = MINIMAL.replace(
            "    expect: {exit: 0}",
            "    expect: {exit: 0}\n    checks: [{id: run-result, expect: {}}]",
        );
        assert!(
            check(&parse(&taken).unwrap())
                .unwrap_err()
                .contains("the runner's own check")
        );
        let stray = MINIMAL.replace(
            "    expect: {exit: 0}",
            "    quote: stray\n    expect: {exit: 0}",
        );
        assert_eq!(
            check(&parse(&stray).unwrap()).unwrap_err(),
            "steps[0]: a quote needs the seed it quotes (`seed`, next to `quote`)"
        );
        let s = parse(&MINIMAL.replace(CITATION, "level: extension\n")).unwrap();
        assert!(check(&s).unwrap_err().contains("names no decision"));
        let s = parse(&MINIMAL.replace(CITATION, "level: extension\ndecision: The run\n")).unwrap();
        check(&s).unwrap();
        assert_eq!(
            s.step_check(0).reference.as_deref(),
            Some("decisions.md: The run")
        );
    }

    #[test]
    fn depends_on_names_an_earlier_check_no_looser_than_itself() {
        let two = format!(
            "{MINIMAL}  - run: --agent {{agent}} -m again\n    depends_on: [step-1]\n    expect: {{exit: 0}}\n"
        );
        check(&parse(&two).unwrap()).unwrap();
        let unknown = two.replace("[step-1]", "[step-9]");
        assert!(
            check(&parse(&unknown).unwrap())
                .unwrap_err()
                .contains("\"step-9\" is not the id of an earlier step or check")
        );
        let looser = two.replace(
            "    expect: {exit: 0}\n  - run: --agent {agent} -m again",
            "    level: extension\n    decision: The run\n    expect: {exit: 0}\n  - run: --agent {agent} -m again",
        );
        assert!(
            check(&parse(&looser).unwrap())
                .unwrap_err()
                .contains("a spec check cannot depend on \"step-1\", which is extension"),
            "{looser}"
        );
    }

    #[test]
    fn agent_files_stay_inside_the_agent() {
        let s = parse(&format!("{MINIMAL}agent_files: {{../x: y}}\n")).unwrap();
        assert!(check(&s).unwrap_err().contains("relative path inside"));
        assert!(is_relative_inside("tools/a.yaml"));
        assert!(!is_relative_inside("/etc/passwd"));
        assert!(!is_relative_inside("a/../../b"));
    }

    #[test]
    fn the_schema_requires_one_action_per_step() {
        let schema = scenario_schema();
        let validator = jsonschema::validator_for(&schema).unwrap();
        let good: serde_json::Value = serde_saphyr::from_str(MINIMAL).unwrap();
        assert!(validator.is_valid(&good));
        let mut two = good.clone();
        two["steps"][0]["shell"] = serde_json::Value::from("true");
        assert!(!validator.is_valid(&two));
    }
}
