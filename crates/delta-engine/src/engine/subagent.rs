//! Agent tools in the loop (docs/subagents.md): a turn's consecutive calls of agent tools
//! start their sub-agent runs together, each through the one launch path (the
//! [`Spawner`] the launch hands in), and each child's end becomes its call's result.
//!
//! A group of calls goes in three phases. In call order: each call is checked (arguments,
//! the depth and concurrency caps, the budget), its ACTION_REQUEST journaled naming the
//! child run, and its `pre_tool_execution` hook run; refused calls are answered at once.
//! Then the children run concurrently on this run's task (futures, no threads), and each
//! call's ACTION_RESULT is journaled as soon as every earlier call of the group has its
//! own, so the journal reads in call order whatever order the children end in. Last, in
//! order, the hooks after each call.
//!
//! A child that ends for the tree's sake (a signal, an ancestor's spent budget, a question
//! for the human) leaves its call open: no ACTION_RESULT. This run then stops the same
//! way, and the `delta continue` of the tree's top continues that child
//! ([`ActiveRun::resume_children`]). A child that ends for its own reasons (its answer, a
//! failure, its own budgets) answers the call.

use std::cell::RefCell;
use std::fmt;
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Instant;

use futures_util::StreamExt as _;
use futures_util::stream::FuturesUnordered;
use serde_json::{Map, Value};

use super::act::{ExecutionRecord, parse_arguments};
use super::observation::cap_observation;
use super::{
    ActiveRun, EngineError, EngineEvent, Level, OBSERVATION_LIMIT_CHARS, Observer, Shutdown, Stop,
    interrupted,
};
use crate::config::{Agent, SubagentCaps};
use crate::hooks::{HookEvent, ToolCallInfo, ToolResultInfo};
use crate::journal::{
    ActionRequest, ActionResult, ActionStatus, EventPayload, HumanInputRequest, SubagentRef,
    ToolCall,
};
use crate::output::RunResult;
use crate::run::{
    CalledBy, ChildRef, ErrorType, FinalStatus, InteractionRequest, RunId, RunStatus, Timestamp,
    write_interaction_request,
};
use crate::subagent::{Ledger, child_run_id, subtree_of};
use crate::tool::AgentTool;

/// A boxed future that may borrow and need not be `Send`: children run on their parent's
/// task.
pub type LocalFuture<'a, T> = Pin<Box<dyn Future<Output = T> + 'a>>;

/// Starts and drives sub-agent runs: the launch's side of agent tools. The engine cannot
/// call the launch itself (the launch drives the engine), so the launch hands one in.
pub trait Spawner: fmt::Debug {
    /// Drives the child `call` describes to its end (creating it, or continuing it when
    /// `call.resume`), reporting its steps to `observer`, stopping on `shutdown`.
    fn spawn<'a>(
        &'a self,
        call: ChildCall,
        observer: &'a mut dyn Observer,
        shutdown: Shutdown,
    ) -> LocalFuture<'a, ChildOutcome>;
}

/// How a run sits in a tree of sub-agents.
#[derive(Debug, Clone)]
pub struct Tree {
    /// 0 for a top-level run, 1 for its children…
    pub depth: u32,
    /// The deepest a descendant may be: the smallest `subagents.max_depth` along the chain.
    pub max_depth: u32,
    /// Starts this run's children; without one, agent tools are refused.
    pub spawner: Option<Arc<dyn Spawner>>,
    /// The caller's budgets, which this run spends from too (none for a top-level run).
    pub parent: Option<Ledger>,
}

impl Default for Tree {
    fn default() -> Self {
        Self {
            depth: 0,
            max_depth: SubagentCaps::default().max_depth,
            spawner: None,
            parent: None,
        }
    }
}

impl Tree {
    /// The tree of a top-level run of `agent`, whose children `spawner` starts.
    #[must_use]
    pub fn root(agent: &Agent, spawner: Arc<dyn Spawner>) -> Self {
        Self {
            depth: 0,
            max_depth: agent.subagents.max_depth,
            spawner: Some(spawner),
            parent: None,
        }
    }
}

/// One child to drive.
#[derive(Debug, Clone)]
pub struct ChildCall {
    /// Its run id ([`child_run_id`]).
    pub run_id: RunId,
    /// Its workspace (absolute).
    pub workspace: PathBuf,
    /// Its agent directory (absolute).
    pub agent: PathBuf,
    /// Its task.
    pub task: String,
    /// The caller and its depth.
    pub called_by: CalledBy,
    /// Which of its caller's sub-agents it is (from 1).
    pub ordinal: u32,
    /// The deepest its own descendants may be (before its own agent lowers it).
    pub max_depth: u32,
    /// The caller's budgets.
    pub parent: Ledger,
    /// Whether `ask_human` may be offered (false when an ancestor runs without it).
    pub ask_human: bool,
    /// The child already exists (started by a process that stopped): continue it instead
    /// of creating it; created when it turns out never to have been.
    pub resume: bool,
    /// The answer to the child's pending question, relayed by the caller.
    pub answer: Option<String>,
}

/// How a child's part ended, for its caller.
#[derive(Debug)]
pub enum ChildOutcome {
    /// It ran (or had already ended): its result as on disk.
    Ended(Box<RunResult>),
    /// It could not be started or continued; what the model reads.
    NotStarted(String),
}

/// A call of the group that starts (or continues) a child.
struct Slot {
    action_id: String,
    tool_call_id: String,
    tool_name: String,
    tool_args: Map<String, Value>,
    child: ChildCall,
    started: Instant,
}

/// How a child's end leaves its call.
enum Answer {
    /// The call is answered.
    Result {
        status: ActionStatus,
        observation: String,
    },
    /// The call stays open for the tree's `delta continue`.
    Open(Open),
}

/// Why a child left its call open.
enum Open {
    /// A signal stopped the tree.
    Signal,
    /// An ancestor's budget is spent.
    Budget,
    /// The child waits for a human's answer.
    Question(InteractionRequest),
}

/// A sub-agent's events, handed to the caller's observer wrapped as
/// [`EngineEvent::Subagent`] (a grandchild's are already wrapped and pass as they are).
struct Forward<'s, 'o, 'd> {
    shared: &'s RefCell<&'o mut (dyn Observer + 'd)>,
    run_id: String,
    depth: u32,
}

impl Observer for Forward<'_, '_, '_> {
    fn on_event(&mut self, event: &EngineEvent) {
        if matches!(event, EngineEvent::Subagent { .. }) {
            self.shared.borrow_mut().on_event(event);
            return;
        }
        self.shared.borrow_mut().on_event(&EngineEvent::Subagent {
            run_id: self.run_id.clone(),
            depth: self.depth,
            event: Box::new(event.clone()),
        });
    }
}

impl ActiveRun {
    /// Runs in this tree as `tree` says (default: a top-level run whose agent tools are
    /// refused).
    #[must_use]
    pub fn with_tree(mut self, tree: Tree) -> Self {
        self.ledger = self
            .ledger
            .rebuilt(self.ledger.budget(), tree.parent.clone());
        self.tree = tree;
        self
    }

    /// The agent tool called `name`, if it is one.
    pub(super) fn agent_tool<'a>(agent: &'a Agent, name: &str) -> Option<&'a AgentTool> {
        if agent.tools.iter().any(|tool| tool.name == name) {
            return None;
        }
        agent.agent_tools.iter().find(|tool| tool.name == name)
    }

    /// `subtree` in the metadata being maintained, once the run has children: its own
    /// usage plus what its children's files say they and their descendants spent.
    pub(super) fn refresh_subtree(&mut self) {
        if !self.metadata.children.is_empty() {
            self.metadata.subtree = Some(subtree_of(&self.metadata));
        }
    }

    /// Runs a turn's consecutive agent calls (see the module's documentation); the reason
    /// to stop, when their children stopped the tree.
    pub(super) async fn run_agent_calls(
        &mut self,
        agent: &Agent,
        calls: &[ToolCall],
        truncated: bool,
        observer: &mut dyn Observer,
        shutdown: &mut Shutdown,
    ) -> Result<Option<Stop>, EngineError> {
        let mut slots = Vec::new();
        for call in calls {
            // Calls already requested stay open: their children start when the tree is
            // continued.
            if let Some(signal) = shutdown.requested() {
                self.write_metadata()?;
                return Ok(Some(interrupted(signal)));
            }
            if let Some(exceeded) = self.budget_spent() {
                self.write_metadata()?;
                return self.budget_stop(exceeded, observer).map(Some);
            }
            let started = Instant::now();
            let action_id = uuid::Uuid::new_v4().to_string();
            let parsed = parse_arguments(&call.arguments);
            let tool_args = parsed.clone().unwrap_or_default();
            let checked = match (&parsed, Self::agent_tool(agent, &call.name)) {
                (Err(observation), _) if truncated => Err(format!(
                    "{observation} (the response was cut by the token limit, so the arguments \
                     were most likely cut short; call it again with shorter arguments)"
                )),
                (Err(observation), _) => Err(observation.clone()),
                (Ok(_), None) => Err(format!(
                    "Error: there is no agent tool named '{}'.",
                    call.name
                )),
                (Ok(args), Some(tool)) => self.check_call(agent, tool, args, slots.len()),
            };
            let (tool, task) = match checked {
                Ok(checked) => checked,
                Err(observation) => {
                    self.refuse(
                        call,
                        &action_id,
                        &tool_args,
                        observation,
                        observer,
                        shutdown,
                    )
                    .await?;
                    continue;
                }
            };
            let child = self.child_call(agent, tool, &action_id, &call.name, task);
            let subagent = SubagentRef {
                run_id: child.run_id.clone(),
                work_dir: (child.workspace != self.paths.workspace())
                    .then(|| child.workspace.clone()),
            };
            self.journal
                .append(EventPayload::ActionRequest(ActionRequest {
                    action_id: action_id.clone(),
                    tool_call_id: call.id.clone(),
                    tool_name: call.name.clone(),
                    tool_args: tool_args.clone(),
                    resolved_command: None,
                    subagent: Some(subagent.clone()),
                    environment: None,
                }))?;
            observer.on_event(&EngineEvent::ToolStarted {
                action_id: action_id.clone(),
                tool_name: call.name.clone(),
                arguments: call.arguments.clone(),
                command: None,
            });
            let hook_call = ToolCallInfo {
                action_id: &action_id,
                tool_call_id: &call.id,
                tool_name: &call.name,
                tool_args: &tool_args,
                resolved_command: None,
            };
            if let Some(observation) = self
                .pre_tool_execution(hook_call, observer, shutdown)
                .await?
            {
                self.answer_call(
                    (&action_id, &call.id, &call.name),
                    ActionStatus::Error,
                    observation.clone(),
                    None,
                    started,
                    observer,
                )?;
                let result = ToolResultInfo {
                    status: ActionStatus::Error,
                    exit_code: None,
                    observation: &observation,
                };
                self.post_tool_execution(hook_call, result, true, observer, shutdown)
                    .await?;
                continue;
            }
            self.metadata.children.push(ChildRef {
                run_id: subagent.run_id,
                action_id: action_id.clone(),
                work_dir: subagent.work_dir,
            });
            slots.push(Slot {
                action_id,
                tool_call_id: call.id.clone(),
                tool_name: call.name.clone(),
                tool_args,
                child,
                started,
            });
        }
        self.run_children(slots, observer, shutdown).await
    }

    /// Continues the children of agent calls an earlier process left open (a crash, a
    /// signal, a spent budget of the tree, a question now answered), as one group; a child
    /// that never came to exist is created with the call's task. Nothing is started twice:
    /// the child's id comes from the call.
    pub(super) async fn resume_children(
        &mut self,
        agent: &Agent,
        open: Vec<crate::resume::OpenChild>,
        observer: &mut dyn Observer,
        shutdown: &mut Shutdown,
    ) -> Result<Option<Stop>, EngineError> {
        let mut slots = Vec::new();
        for crate::resume::OpenChild { request, answer } in open {
            let Some(subagent) = request.subagent.clone() else {
                continue;
            };
            let tool = Self::agent_tool(agent, &request.tool_name);
            let task = tool
                .and_then(|tool| tool.task(&request.tool_args).ok())
                .unwrap_or_default();
            let workspace = subagent
                .work_dir
                .clone()
                .unwrap_or_else(|| self.paths.workspace().to_path_buf());
            if !self
                .metadata
                .children
                .iter()
                .any(|c| c.run_id == subagent.run_id)
            {
                self.metadata.children.push(ChildRef {
                    run_id: subagent.run_id.clone(),
                    action_id: request.action_id.clone(),
                    work_dir: subagent.work_dir.clone(),
                });
            }
            let ordinal = subagent
                .run_id
                .as_str()
                .rsplit('.')
                .next()
                .and_then(|n| n.parse().ok())
                .unwrap_or(0);
            let mut child = self.child(
                agent,
                (subagent.run_id, ordinal, workspace),
                (&request.action_id, &request.tool_name),
                (
                    tool.map(|tool| tool.agent.clone()).unwrap_or_default(),
                    task,
                ),
            );
            child.resume = true;
            child.answer = answer;
            slots.push(Slot {
                child,
                action_id: request.action_id,
                tool_call_id: request.tool_call_id,
                tool_name: request.tool_name,
                tool_args: request.tool_args,
                started: Instant::now(),
            });
        }
        self.run_children(slots, observer, shutdown).await
    }

    /// The tool's checks that refuse a call: its arguments, the depth cap and the
    /// concurrency cap (`running`: the group's children so far). The tool and the task.
    fn check_call<'a>(
        &self,
        agent: &'a Agent,
        tool: &'a AgentTool,
        args: &Map<String, Value>,
        running: usize,
    ) -> Result<(&'a AgentTool, String), String> {
        let task = tool.task(args).map_err(|error| format!("Error: {error}"))?;
        if self.tree.spawner.is_none() {
            return Err(
                "Error: not run: sub-agents cannot be started here (this run was not \
                        started through `delta run`)."
                    .to_owned(),
            );
        }
        let depth = self.tree.depth + 1;
        if depth > self.tree.max_depth {
            return Err(format!(
                "Error: not run: sub-agents nest at most {} deep (subagents.max_depth, the \
                 smallest along this tree); this run is at depth {}, so its sub-agent would be \
                 at depth {depth}. Do this part of the work yourself.",
                self.tree.max_depth, self.tree.depth
            ));
        }
        let cap = agent.subagents.max_concurrent;
        if running >= usize::try_from(cap).unwrap_or(usize::MAX) {
            return Err(format!(
                "Error: not run: at most {cap} sub-agents run at once (subagents.max_concurrent \
                 of agent '{}'), and this turn already starts {running}. Call it again after \
                 their answers have come.",
                agent.name
            ));
        }
        Ok((tool, task))
    }

    /// The child a call of `tool` starts: the next ordinal, its workspace.
    fn child_call(
        &mut self,
        agent: &Agent,
        tool: &AgentTool,
        action_id: &str,
        tool_name: &str,
        task: String,
    ) -> ChildCall {
        self.ordinals += 1;
        let ordinal = self.ordinals;
        let workspace = tool.workspace.as_ref().map_or_else(
            || self.paths.workspace().to_path_buf(),
            |dir| self.paths.workspace().join(dir),
        );
        let run_id = child_run_id(&self.metadata.run_id, ordinal);
        self.child(
            agent,
            (run_id, ordinal, workspace),
            (action_id, tool_name),
            (tool.agent.clone(), task),
        )
    }

    /// The child `run_id` (this run's `ordinal`-th) in `workspace`, of the call
    /// `action_id` of `tool_name`, running `agent_dir` on `task`.
    fn child(
        &self,
        agent: &Agent,
        (run_id, ordinal, workspace): (RunId, u32, PathBuf),
        (action_id, tool_name): (&str, &str),
        (agent_dir, task): (PathBuf, String),
    ) -> ChildCall {
        let own = self.paths.workspace().to_path_buf();
        ChildCall {
            run_id,
            called_by: CalledBy {
                run_id: self.metadata.run_id.clone(),
                action_id: action_id.to_owned(),
                tool_name: tool_name.to_owned(),
                depth: self.tree.depth + 1,
                work_dir: (workspace != own).then_some(own),
            },
            workspace,
            agent: agent_dir,
            task,
            ordinal,
            max_depth: self.tree.max_depth.min(agent.subagents.max_depth),
            parent: self.ledger.clone(),
            ask_human: self.limits.ask_human,
            resume: false,
            answer: None,
        }
    }

    /// A call refused before anything started: its ACTION_REQUEST and ERROR result, and
    /// the hooks after it.
    async fn refuse(
        &mut self,
        call: &ToolCall,
        action_id: &str,
        tool_args: &Map<String, Value>,
        observation: String,
        observer: &mut dyn Observer,
        shutdown: &mut Shutdown,
    ) -> Result<(), EngineError> {
        self.request_action(call, action_id, tool_args, None, None, observer)?;
        self.answer_call(
            (action_id, &call.id, &call.name),
            ActionStatus::Error,
            observation.clone(),
            None,
            Instant::now(),
            observer,
        )?;
        let hook_call = ToolCallInfo {
            action_id,
            tool_call_id: &call.id,
            tool_name: &call.name,
            tool_args,
            resolved_command: None,
        };
        let result = ToolResultInfo {
            status: ActionStatus::Error,
            exit_code: None,
            observation: &observation,
        };
        self.post_tool_execution(hook_call, result, false, observer, shutdown)
            .await
    }

    /// Journals a call's ACTION_RESULT (naming its child, when it ran one) and reports it.
    fn answer_call(
        &mut self,
        (action_id, tool_call_id, tool_name): (&str, &str, &str),
        status: ActionStatus,
        observation: String,
        subagent: Option<SubagentRef>,
        started: Instant,
        observer: &mut dyn Observer,
    ) -> Result<(), EngineError> {
        let exit_code = match status {
            ActionStatus::Success => Some(0),
            ActionStatus::Failed | ActionStatus::Error => None,
        };
        self.journal
            .append(EventPayload::ActionResult(ActionResult {
                action_id: action_id.to_owned(),
                tool_call_id: tool_call_id.to_owned(),
                status,
                observation_content: observation.clone(),
                exit_code,
                execution_ref: action_id.to_owned(),
                subagent,
            }))?;
        observer.on_event(&EngineEvent::ToolFinished {
            action_id: action_id.to_owned(),
            tool_name: tool_name.to_owned(),
            status,
            exit_code,
            elapsed: started.elapsed(),
            observation,
        });
        Ok(())
    }

    /// Drives the children of `slots` concurrently, answers their calls in order, runs the
    /// hooks after them, and says whether the tree stops here.
    async fn run_children(
        &mut self,
        slots: Vec<Slot>,
        observer: &mut dyn Observer,
        shutdown: &mut Shutdown,
    ) -> Result<Option<Stop>, EngineError> {
        if slots.is_empty() {
            return Ok(None);
        }
        self.write_metadata()?;
        let Some(spawner) = self.tree.spawner.clone() else {
            return Ok(None);
        };
        let mut answers: Vec<Option<Answer>> = Vec::new();
        let mut outcomes: Vec<Option<ChildOutcome>> = Vec::new();
        outcomes.resize_with(slots.len(), || None);
        answers.resize_with(slots.len(), || None);
        {
            let shared = RefCell::new(&mut *observer);
            let mut running: FuturesUnordered<LocalFuture<'_, (usize, ChildOutcome)>> =
                FuturesUnordered::new();
            for (index, slot) in slots.iter().enumerate() {
                let child = slot.child.clone();
                let spawner = Arc::clone(&spawner);
                let shared = &shared;
                let stop = shutdown.clone();
                running.push(Box::pin(async move {
                    let mut forward = Forward {
                        shared,
                        run_id: child.run_id.to_string(),
                        depth: child.called_by.depth,
                    };
                    (index, spawner.spawn(child, &mut forward, stop).await)
                }));
            }
            let mut next = 0;
            while let Some((index, outcome)) = running.next().await {
                if let Some(place) = outcomes.get_mut(index) {
                    *place = Some(outcome);
                }
                self.refresh_subtree();
                // Results go to the journal in call order, each as soon as it can.
                while let (Some(slot), Some(Some(outcome))) = (slots.get(next), outcomes.get(next))
                {
                    let answer = self.answer_of(slot, outcome, shutdown);
                    if let Answer::Result {
                        status,
                        observation,
                    } = &answer
                    {
                        let mut guard = shared.borrow_mut();
                        let observer: &mut dyn Observer = &mut **guard;
                        self.record_child(slot, outcome)?;
                        self.answer_call(
                            (&slot.action_id, &slot.tool_call_id, &slot.tool_name),
                            *status,
                            observation.clone(),
                            Some(SubagentRef {
                                run_id: slot.child.run_id.clone(),
                                work_dir: slot
                                    .child
                                    .called_by
                                    .work_dir
                                    .as_ref()
                                    .map(|_| slot.child.workspace.clone()),
                            }),
                            slot.started,
                            observer,
                        )?;
                    }
                    if let Some(place) = answers.get_mut(next) {
                        *place = Some(answer);
                    }
                    next += 1;
                }
            }
        }
        self.write_metadata()?;
        let mut stop = None;
        for ((slot, answer), outcome) in slots.iter().zip(answers).zip(&outcomes) {
            let hook_call = ToolCallInfo {
                action_id: &slot.action_id,
                tool_call_id: &slot.tool_call_id,
                tool_name: &slot.tool_name,
                tool_args: &slot.tool_args,
                resolved_command: None,
            };
            if let Some(ChildOutcome::Ended(result)) = outcome {
                let event = HookEvent::OnSubagentEnd {
                    call: hook_call,
                    run_id: result.run_id.as_str(),
                    status: result.status,
                    error: result.error.as_ref(),
                    result: result.result.as_ref(),
                };
                self.hook(event, observer, shutdown).await?;
            }
            match answer {
                Some(Answer::Result {
                    status,
                    observation,
                }) => {
                    let result = ToolResultInfo {
                        status,
                        exit_code: None,
                        observation: &observation,
                    };
                    self.post_tool_execution(hook_call, result, false, observer, shutdown)
                        .await?;
                }
                Some(Answer::Open(open)) => {
                    let rank = |open: &Open| match open {
                        Open::Signal => 0,
                        Open::Budget => 1,
                        Open::Question(_) => 2,
                    };
                    let first = match &stop {
                        None => true,
                        Some((_, held)) => rank(&open) < rank(held),
                    };
                    if first {
                        stop = Some((slot.action_id.clone(), open));
                    }
                }
                None => {}
            }
        }
        let Some((action_id, open)) = stop else {
            return Ok(None);
        };
        match open {
            Open::Signal => Ok(Some(interrupted(
                shutdown.requested().unwrap_or(super::StopSignal::Interrupt),
            ))),
            Open::Budget => {
                let exceeded = self.duration_spent();
                self.budget_stop(exceeded, observer).map(Some)
            }
            Open::Question(question) => {
                self.relay_question(&action_id, question, observer)?;
                Ok(Some(Stop::WaitingForInput))
            }
        }
    }

    /// What a child's end means for its call.
    fn answer_of(&self, slot: &Slot, outcome: &ChildOutcome, shutdown: &Shutdown) -> Answer {
        let result = match outcome {
            ChildOutcome::NotStarted(reason) => {
                return Answer::Result {
                    status: ActionStatus::Error,
                    observation: format!("Error: the sub-agent could not be started: {reason}"),
                };
            }
            ChildOutcome::Ended(result) => result,
        };
        let id = &result.run_id;
        let workspace = slot.child.workspace.display();
        let full = format!(
            "{}/.delta/{id}/metadata.json",
            slot.child.workspace.display()
        );
        match result.status {
            FinalStatus::Completed => {
                let text = match &result.result {
                    Some(Value::String(text)) => text.clone(),
                    Some(other) => other.to_string(),
                    None => String::new(),
                };
                Answer::Result {
                    status: ActionStatus::Success,
                    observation: cap_observation(&text, 0, OBSERVATION_LIMIT_CHARS, &full),
                }
            }
            FinalStatus::WaitingForInput => match &result.interaction {
                Some(interaction) => Answer::Open(Open::Question(InteractionRequest {
                    request_id: slot.action_id.clone(),
                    timestamp: Timestamp::now(),
                    prompt: interaction.prompt.clone(),
                    input_type: interaction.input_type,
                    sensitive: interaction.sensitive,
                })),
                None => Answer::Result {
                    status: ActionStatus::Error,
                    observation: format!(
                        "Error: the sub-agent run {id} waits for an answer, but its question \
                         ({workspace}/.delta/{id}/interaction/request.json) is missing."
                    ),
                },
            },
            FinalStatus::Interrupted | FinalStatus::Failed => {
                let error = result.error.as_ref();
                let error_type = error.map(|e| &e.error_type);
                if result.status == FinalStatus::Interrupted {
                    if error_type == Some(&ErrorType::Interrupted) && shutdown.requested().is_some()
                    {
                        return Answer::Open(Open::Signal);
                    }
                    if error_type == Some(&ErrorType::BudgetExceeded)
                        && self.budget_spent().is_some()
                    {
                        return Answer::Open(Open::Budget);
                    }
                }
                let (kind, message) = error.map_or_else(
                    || ("Error".to_owned(), String::new()),
                    |e| (e.error_type.to_string(), e.message.clone()),
                );
                let how = if result.status == FinalStatus::Failed {
                    "failed"
                } else {
                    "stopped before its answer"
                };
                let text = format!(
                    "Error: the sub-agent run {id} {how} ({kind}): {message}. Its files are in \
                     {workspace}/.delta/{id}/; `delta continue --run-id {id} -w {workspace}` \
                     can take it further."
                );
                Answer::Result {
                    status: ActionStatus::Failed,
                    observation: cap_observation(&text, 0, OBSERVATION_LIMIT_CHARS, &full),
                }
            }
        }
    }

    /// `io/tool_executions/{action_id}/` of a child's call: which run it was, how it ended
    /// and how long it took.
    fn record_child(&self, slot: &Slot, outcome: &ChildOutcome) -> Result<(), EngineError> {
        let exit = match outcome {
            ChildOutcome::Ended(result) => RunStatus::from(result.status).to_string(),
            ChildOutcome::NotStarted(_) => "not started".to_owned(),
        };
        let record = ExecutionRecord {
            command: format!(
                "sub-agent {} --run-id {} -w {}",
                slot.child.agent.display(),
                slot.child.run_id,
                slot.child.workspace.display()
            ),
            logs: None,
            exit,
            duration: slot.started.elapsed(),
        };
        record.write(
            &self.paths.tool_execution_dir(&slot.action_id),
            &self.output.redactor,
        )?;
        Ok(())
    }

    /// A child's question becomes this run's: HUMAN_INPUT_REQUEST journaled (its id is the
    /// agent call's action id) and `interaction/request.json` written, so that `delta
    /// continue -m ANSWER` of this run reaches the child.
    fn relay_question(
        &mut self,
        action_id: &str,
        question: InteractionRequest,
        observer: &mut dyn Observer,
    ) -> Result<(), EngineError> {
        self.journal
            .append(EventPayload::HumanInputRequest(HumanInputRequest {
                request_id: action_id.to_owned(),
                prompt: question.prompt.clone(),
                input_type: question.input_type,
                sensitive: question.sensitive,
            }))?;
        write_interaction_request(&self.paths, &question, &self.output.redactor)?;
        observer.detail(
            Level::Info,
            format!(
                "action {action_id}: a sub-agent asks the human; the answer goes to it through \
                 {}",
                self.paths.interaction_response().display()
            ),
        );
        Ok(())
    }
}
