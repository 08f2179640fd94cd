//! What bounds a run besides its iteration budget: the budget on money, tokens and time,
//! the output schema its final answer must satisfy, and whether it may ask a human.

use serde_json::Value;

use super::{ActiveRun, EngineError, EngineEvent, Observer, Stop};
use crate::answer::{MAX_REPAIRS, OutputSchema};
use crate::budget::{Budget, BudgetKind, Exceeded, Spent};
use crate::journal::{EventPayload, MessageLevel, SystemMessage, UserMessage};
use crate::run::{ErrorInfo, ErrorType, result_value};

/// The limits a run is driven under, decided by the launch (flags over agent.yaml over
/// what the run recorded).
#[derive(Debug, Clone)]
pub struct Limits {
    /// Money, tokens and time.
    pub budget: Budget,
    /// The schema the final answer must satisfy.
    pub output_schema: Option<OutputSchema>,
    /// Whether the built-in `ask_human` tool is offered.
    pub ask_human: bool,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            budget: Budget::default(),
            output_schema: None,
            ask_human: true,
        }
    }
}

/// What the final answer's check decided.
pub(super) enum Verdict {
    /// The run is COMPLETED with this result.
    Final(Value),
    /// The answer went back to the model with what is wrong: think again.
    Repair,
    /// The answer never satisfied the schema.
    Fail(ErrorInfo),
}

/// Why a tool call was cut short, besides finishing.
#[derive(Debug, Clone, Copy)]
pub(super) enum Cut {
    /// SIGINT or SIGTERM.
    Signal(super::StopSignal),
    /// The duration budget ran out.
    Budget,
}

impl ActiveRun {
    /// Drive the run under `limits` (default: no budget, no schema, `ask_human` offered).
    #[must_use]
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.ledger = self
            .ledger
            .rebuilt(limits.budget, self.ledger.parent().cloned());
        self.claude.set_askable(limits.ask_human);
        self.limits = limits;
        self.record_budget();
        self
    }

    /// What the run and its sub-agents have spent, over the run's whole life.
    fn spent(&self) -> Spent {
        self.ledger.spent()
    }

    /// Writes each budget's limit and use into the metadata being maintained (written out
    /// with the next metadata write), when the run has a budget.
    pub(super) fn record_budget(&mut self) {
        let budget = self.limits.budget;
        if budget != Budget::default() || self.metadata.budget.is_some() {
            self.metadata.budget = Some(budget.report(self.spent()));
        }
    }

    /// When the duration budget runs out, the run's own or an ancestor's, if there is one.
    pub(super) fn deadline(&self) -> Option<tokio::time::Instant> {
        self.ledger.deadline().map(tokio::time::Instant::from_std)
    }

    /// How a call cut short by `cut` is recorded (`exit_code.txt`) and explained (the
    /// start of its observation), for command and MCP tools alike.
    pub(super) fn cut_reason(&self, cut: Cut) -> (&'static str, String) {
        match cut {
            Cut::Signal(signal) => (
                "interrupted",
                format!("the run was interrupted by {signal}"),
            ),
            Cut::Budget => (
                "budget exceeded",
                format!(
                    "the run's duration budget ({}) ran out",
                    BudgetKind::Duration.show(
                        self.limits
                            .budget
                            .max_duration
                            .unwrap_or_default()
                            .as_secs_f64()
                    )
                ),
            ),
        }
    }

    /// The budget that is spent, if one is: checked before every LLM call and tool. A
    /// sub-agent's ancestors' budgets count too: it spends from them.
    pub(super) fn budget_spent(&self) -> Option<Exceeded> {
        self.ledger.exceeded().map(|(exceeded, _)| exceeded)
    }

    /// The duration budget as spent now (a tool was stopped at the deadline).
    pub(super) fn duration_spent(&self) -> Exceeded {
        let spent = self.spent();
        self.budget_spent().unwrap_or_else(|| {
            Exceeded::new(
                BudgetKind::Duration,
                self.limits
                    .budget
                    .max_duration
                    .unwrap_or_default()
                    .as_secs_f64(),
                spent.duration.as_secs_f64(),
            )
        })
    }

    /// Stops the run for `exceeded`: a SYSTEM_MESSAGE in the journal, INTERRUPTED with
    /// `BudgetExceeded`, and how to go on.
    pub(super) fn budget_stop(
        &mut self,
        exceeded: Exceeded,
        observer: &mut dyn Observer,
    ) -> Result<Stop, EngineError> {
        let message = exceeded.message();
        self.journal
            .append(EventPayload::SystemMessage(SystemMessage {
                level: MessageLevel::Warn,
                content: format!("Budget exceeded: {message}; the run stops here."),
            }))?;
        observer.on_event(&EngineEvent::Warning {
            message: format!("budget exceeded: {message}"),
        });
        let details = match self.ledger.exceeded() {
            Some((_, Some(ancestor))) => format!(
                "the budget is the one of run {ancestor}, which this sub-agent spends from; \
                 continue the top of the tree with a larger budget ({} more than {}), which \
                 continues this run too",
                exceeded.budget.flag(),
                exceeded.budget.show(exceeded.used)
            ),
            Some((_, None)) | None => format!(
                "resume with a larger budget: delta continue --run-id {} -w {} {} <more than {}>",
                self.metadata.run_id.as_str(),
                self.paths.workspace().display(),
                exceeded.budget.flag(),
                exceeded.budget.show(exceeded.used)
            ),
        };
        let mut error = ErrorInfo::new(ErrorType::BudgetExceeded, message).with_details(details);
        error.budget = Some(exceeded);
        Ok(Stop::Interrupted(error))
    }

    /// Checks a final answer (no tool calls) against the output schema. An invalid answer
    /// goes back to the model as a USER_MESSAGE with the errors, [`MAX_REPAIRS`] times;
    /// the next one fails the run.
    pub(super) fn final_answer(
        &mut self,
        content: &str,
        observer: &mut dyn Observer,
    ) -> Result<Verdict, EngineError> {
        let Some(schema) = &self.limits.output_schema else {
            return Ok(Verdict::Final(result_value(content)));
        };
        let errors = match schema.check(content) {
            Ok(value) => return Ok(Verdict::Final(value)),
            Err(errors) => errors,
        };
        if self.repairs < MAX_REPAIRS {
            self.repairs += 1;
            let request = schema.repair_request(&errors);
            self.journal
                .append(EventPayload::UserMessage(UserMessage { content: request }))?;
            let message = format!(
                "the final answer does not satisfy {} ({} problem(s)); sent back to the model \
                 ({}/{MAX_REPAIRS})",
                schema.path().display(),
                errors.len(),
                self.repairs
            );
            observer.on_event(&EngineEvent::Warning { message });
            return Ok(Verdict::Repair);
        }
        Ok(Verdict::Fail(
            ErrorInfo::new(
                ErrorType::OutputSchemaViolation,
                format!(
                    "the final answer does not satisfy the output schema {} after {MAX_REPAIRS} \
                     repair request(s)",
                    schema.path().display()
                ),
            )
            .with_details(errors.join("\n")),
        ))
    }
}
