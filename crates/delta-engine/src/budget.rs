//! Hard limits on what a run may spend: money, tokens and wall time (`--max-cost-usd`,
//! `--max-tokens`, `--max-duration`, or `budget:` in agent.yaml; flags win).
//!
//! Cost and tokens are the run's totals over its whole life, as `metadata.json`'s `usage`
//! adds them up; duration is the run's active time, the wall time of every process that
//! drove it, so a paused run does not spend its time budget while it waits. The loop
//! checks the budget before every LLM call, which bounds the overrun to one call; the
//! duration budget also stops a tool that is still running when it runs out.

use std::fmt;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The limits asked for; `None` is no limit.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Budget {
    /// US dollars, estimated from the model's prices.
    pub max_cost_usd: Option<f64>,
    /// Input plus output tokens.
    pub max_tokens: Option<u64>,
    /// Active wall time.
    pub max_duration: Option<Duration>,
}

impl Budget {
    /// Each limit of `self`, else `fallback`'s (flags over agent.yaml over what the run
    /// recorded).
    #[must_use]
    pub fn or(self, fallback: Budget) -> Budget {
        Budget {
            max_cost_usd: self.max_cost_usd.or(fallback.max_cost_usd),
            max_tokens: self.max_tokens.or(fallback.max_tokens),
            max_duration: self.max_duration.or(fallback.max_duration),
        }
    }

    /// The limits a run recorded in its metadata.
    #[must_use]
    pub fn recorded(report: &BudgetReport) -> Budget {
        Budget {
            max_cost_usd: report.cost_usd.limit,
            max_tokens: report.tokens.limit,
            max_duration: report.duration_s.limit.map(Duration::from_secs_f64),
        }
    }

    /// What `spent` says of these limits, as metadata and RunResult show it.
    #[must_use]
    pub fn report(&self, spent: Spent) -> BudgetReport {
        BudgetReport {
            cost_usd: Limit {
                limit: self.max_cost_usd,
                used: spent.cost_usd,
            },
            tokens: Limit {
                limit: self.max_tokens,
                used: spent.tokens,
            },
            duration_s: Limit {
                limit: self.max_duration.map(|d| d.as_secs_f64()),
                used: spent.duration.as_secs_f64(),
            },
        }
    }

    /// The first limit `spent` has reached, cost before tokens before duration.
    #[must_use]
    pub fn exceeded(&self, spent: Spent) -> Option<Exceeded> {
        if let Some(limit) = self.max_cost_usd
            && spent.cost_usd >= limit
        {
            return Some(Exceeded::new(BudgetKind::Cost, limit, spent.cost_usd));
        }
        if let Some(limit) = self.max_tokens
            && spent.tokens >= limit
        {
            return Some(Exceeded::new(
                BudgetKind::Tokens,
                limit as f64,
                spent.tokens as f64,
            ));
        }
        if let Some(limit) = self.max_duration
            && spent.duration >= limit
        {
            return Some(Exceeded::new(
                BudgetKind::Duration,
                limit.as_secs_f64(),
                spent.duration.as_secs_f64(),
            ));
        }
        None
    }
}

/// What a run has spent so far.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Spent {
    /// Estimated US dollars.
    pub cost_usd: f64,
    /// Input plus output tokens.
    pub tokens: u64,
    /// Active wall time.
    pub duration: Duration,
}

/// Which budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum BudgetKind {
    /// `--max-cost-usd`.
    Cost,
    /// `--max-tokens`.
    Tokens,
    /// `--max-duration`.
    Duration,
}

impl BudgetKind {
    /// The command-line flag that sets it.
    #[must_use]
    pub fn flag(self) -> &'static str {
        match self {
            BudgetKind::Cost => "--max-cost-usd",
            BudgetKind::Tokens => "--max-tokens",
            BudgetKind::Duration => "--max-duration",
        }
    }

    /// `amount` in this budget's unit, for messages.
    #[must_use]
    pub fn show(self, amount: f64) -> String {
        match self {
            BudgetKind::Cost => format!("${amount:.4}"),
            BudgetKind::Tokens => format!("{amount:.0} tokens"),
            BudgetKind::Duration => format!("{amount:.1}s"),
        }
    }
}

impl fmt::Display for BudgetKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BudgetKind::Cost => "cost",
            BudgetKind::Tokens => "tokens",
            BudgetKind::Duration => "duration",
        })
    }
}

/// A spent budget: which, its limit and the amount used (dollars, tokens or seconds).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Exceeded {
    /// Which budget.
    pub budget: BudgetKind,
    /// Its limit.
    pub limit: f64,
    /// What the run had used when it stopped.
    pub used: f64,
}

// Limits and uses are finite numbers (NaN never gets past the parsers), so equality is
// total; journal payloads that carry an error need `Eq`.
impl Eq for Exceeded {}

impl Exceeded {
    /// A spent `budget`.
    #[must_use]
    pub fn new(budget: BudgetKind, limit: f64, used: f64) -> Self {
        Self {
            budget,
            limit,
            used,
        }
    }

    /// One line for the user: `the tokens budget (1000 tokens) is spent: 1234 tokens used`.
    #[must_use]
    pub fn message(&self) -> String {
        format!(
            "the {} budget ({}) is spent: {} used",
            self.budget,
            self.budget.show(self.limit),
            self.budget.show(self.used)
        )
    }
}

/// One budget in `metadata.json` and RunResult: its limit (`null`: none) and use.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Limit<T> {
    /// The limit, when one is set.
    pub limit: Option<T>,
    /// What the run has used.
    pub used: T,
}

/// Every budget's limit and use, as `metadata.json` and RunResult show them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct BudgetReport {
    /// Estimated cost in US dollars.
    pub cost_usd: Limit<f64>,
    /// Input plus output tokens.
    pub tokens: Limit<u64>,
    /// Active wall time in seconds.
    pub duration_s: Limit<f64>,
}

/// Parses `--max-cost-usd`: a positive, finite amount of US dollars (`0.50`). The CLI's
/// flag and a batch task's `max_cost_usd` are checked by this one function, so that the
/// batch driver never starts a task its child `delta run` would refuse.
///
/// # Errors
/// A message saying what is accepted.
pub fn parse_cost_usd(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(value) if value.is_finite() && value > 0.0 => Ok(value),
        _ => Err(format!(
            "{text:?} is not a positive amount of US dollars, e.g. 0.50"
        )),
    }
}

/// Parses `--max-tokens`: a positive number of tokens.
///
/// # Errors
/// A message saying what is accepted.
pub fn parse_tokens(text: &str) -> Result<u64, String> {
    match text.trim().parse::<u64>() {
        Ok(value) if value > 0 => Ok(value),
        _ => Err(format!(
            "{text:?} is not a positive number of tokens, e.g. 100000"
        )),
    }
}

/// Parses `--max-iterations`: a positive number of iterations.
///
/// # Errors
/// A message saying what is accepted.
pub fn parse_iterations(text: &str) -> Result<u32, String> {
    match text.trim().parse::<u32>() {
        Ok(value) if value > 0 => Ok(value),
        _ => Err(format!(
            "{text:?} is not a positive number of iterations (at most {}), e.g. 30",
            u32::MAX
        )),
    }
}

/// Parses a duration as the flags and agent.yaml write it: `90s`, `30m`, `2h`, `500ms`,
/// or a bare number of seconds (`1.5`).
///
/// # Errors
/// A message saying what is accepted.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let seconds_per_unit = match unit.trim() {
        "" | "s" => 1.0,
        "ms" => 0.001,
        "m" => 60.0,
        "h" => 3600.0,
        _ => f64::NAN,
    };
    let value: f64 = number.parse().unwrap_or(f64::NAN);
    let seconds = value * seconds_per_unit;
    if seconds.is_finite() && seconds > 0.0 {
        Ok(Duration::from_secs_f64(seconds))
    } else {
        Err(format!(
            "{text:?} is not a positive duration; write e.g. 90s, 30m, 2h, 500ms or a number \
             of seconds"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_take_the_usual_units() {
        assert_eq!(parse_duration("90s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("30m"), Ok(Duration::from_secs(1800)));
        assert_eq!(parse_duration("2h"), Ok(Duration::from_secs(7200)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("1.5"), Ok(Duration::from_millis(1500)));
        for bad in ["", "0", "-1s", "5 days", "s", "1e3"] {
            assert!(parse_duration(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn budget_flags_take_positive_finite_values_only() {
        assert_eq!(parse_cost_usd("0.5"), Ok(0.5));
        for bad in ["0", "-1", "nan", "NaN", "inf", "-inf", "1e400", "", "x"] {
            assert!(parse_cost_usd(bad).is_err(), "{bad:?} accepted");
        }
        assert_eq!(parse_tokens("1"), Ok(1));
        assert_eq!(parse_iterations("30"), Ok(30));
        for bad in ["0", "-1", "1.5", "", "18446744073709551616"] {
            assert!(parse_tokens(bad).is_err(), "{bad:?} accepted");
            assert!(parse_iterations(bad).is_err(), "{bad:?} accepted");
        }
        assert!(parse_iterations("4294967296").is_err());
    }

    #[test]
    fn the_first_spent_limit_is_named_with_its_use() {
        let budget = Budget {
            max_cost_usd: Some(0.01),
            max_tokens: Some(100),
            max_duration: Some(Duration::from_secs(2)),
        };
        let spent = |cost_usd, tokens, secs| Spent {
            cost_usd,
            tokens,
            duration: Duration::from_secs(secs),
        };
        assert_eq!(budget.exceeded(spent(0.005, 99, 1)), None);
        let tokens = budget.exceeded(spent(0.005, 120, 1)).unwrap();
        assert_eq!(tokens.budget, BudgetKind::Tokens);
        assert_eq!(
            tokens.message(),
            "the tokens budget (100 tokens) is spent: 120 tokens used"
        );
        assert_eq!(
            budget.exceeded(spent(0.02, 120, 3)).unwrap().budget,
            BudgetKind::Cost
        );
        assert_eq!(
            budget.exceeded(spent(0.0, 0, 2)).unwrap().budget,
            BudgetKind::Duration
        );
    }

    #[test]
    fn flags_win_over_the_agent_over_the_record() {
        let flags = Budget {
            max_tokens: Some(5),
            ..Budget::default()
        };
        let agent = Budget {
            max_tokens: Some(1),
            max_cost_usd: Some(1.0),
            ..Budget::default()
        };
        let merged = flags.or(agent);
        assert_eq!(merged.max_tokens, Some(5));
        assert_eq!(merged.max_cost_usd, Some(1.0));
        assert_eq!(merged.max_duration, None);
    }
}
