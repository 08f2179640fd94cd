//! Hand-made run directories: metadata in any status with any owner, journals written event
//! by event (torn lines included), interaction files.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use delta_engine::journal::{
    ActionRequest, ActionResult, ActionStatus, Event, EventPayload, FsyncPolicy,
    HumanInputReceived, HumanInputRequest, Journal, RunEnd, RunStart, Thought, ToolCall,
    read_journal,
};
use delta_engine::run::{
    ErrorInfo, ErrorType, FinalStatus, InputType, InteractionRequest, Metadata, MetadataInit,
    ProcessIdentity, RunId, RunPaths, RunStatus, Timestamp, create_run, read_metadata,
    write_interaction_request, write_metadata,
};
use delta_engine::secrets::Redactor;
use serde_json::json;
use tempfile::TempDir;

/// One hand-made run in its own temp workspace.
pub struct Fixture {
    dir: TempDir,
    pub paths: RunPaths,
}

/// The identity of a process that has exited: its pid is free.
pub fn dead_identity() -> ProcessIdentity {
    let mut child = Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    ProcessIdentity {
        pid,
        start_ticks: Some(1),
        process_name: "delta".to_owned(),
        ..ProcessIdentity::current()
    }
}

/// A long-lived unrelated process (`sleep`), killed on drop.
pub struct Sleeper(pub Child);

impl Sleeper {
    pub fn start() -> Self {
        Sleeper(
            Command::new("sleep")
                .arg("300")
                .stdin(Stdio::null())
                .spawn()
                .unwrap(),
        )
    }

    pub fn pid(&self) -> u32 {
        self.0.id()
    }
}

impl Drop for Sleeper {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

pub fn call(id: &str, name: &str, arguments: &str) -> ToolCall {
    ToolCall {
        id: id.to_owned(),
        name: name.to_owned(),
        arguments: arguments.to_owned(),
    }
}

pub fn thought(calls: Vec<ToolCall>) -> EventPayload {
    EventPayload::Thought(Thought {
        content: String::new(),
        llm_invocation_ref: "inv-1".to_owned(),
        reasoning: None,
        tool_calls: calls,
        passback: None,
        usage: None,
    })
}

pub fn request(action_id: &str, call_id: &str, tool: &str) -> EventPayload {
    EventPayload::ActionRequest(ActionRequest {
        action_id: action_id.to_owned(),
        tool_call_id: call_id.to_owned(),
        tool_name: tool.to_owned(),
        tool_args: serde_json::Map::new(),
        resolved_command: Some(format!("{tool} ...")),
        subagent: None,
        environment: None,
    })
}

pub fn result(action_id: &str, call_id: &str, text: &str) -> EventPayload {
    EventPayload::ActionResult(ActionResult {
        action_id: action_id.to_owned(),
        tool_call_id: call_id.to_owned(),
        status: ActionStatus::Success,
        observation_content: text.to_owned(),
        exit_code: Some(0),
        execution_ref: action_id.to_owned(),
        subagent: None,
    })
}

pub fn human_request(request_id: &str, prompt: &str) -> EventPayload {
    EventPayload::HumanInputRequest(HumanInputRequest {
        request_id: request_id.to_owned(),
        prompt: prompt.to_owned(),
        input_type: InputType::Text,
        sensitive: false,
    })
}

pub fn human_received(request_id: &str, response: &str) -> EventPayload {
    EventPayload::HumanInputReceived(HumanInputReceived {
        request_id: request_id.to_owned(),
        response: response.to_owned(),
    })
}

pub fn run_end(status: FinalStatus) -> EventPayload {
    EventPayload::RunEnd(RunEnd {
        status,
        error: None,
        result: None,
    })
}

impl Fixture {
    /// Run `id` in a fresh workspace, in `status`, owned by `owner`; RUN_START journaled.
    pub fn new(id: &str, status: RunStatus, owner: &ProcessIdentity) -> Self {
        let dir = tempfile::Builder::new()
            .prefix("delta-resume-")
            .tempdir()
            .unwrap();
        let run_id = RunId::parse(id).unwrap();
        let paths = create_run(dir.path(), &run_id).unwrap();
        let mut metadata = Metadata::new(
            MetadataInit {
                run_id: run_id.clone(),
                agent_name: "bot".to_owned(),
                agent_home: PathBuf::from("/agents/bot"),
                work_dir: dir.path().to_path_buf(),
                workspace_id: None,
                task: "Do the task".to_owned(),
                max_iterations: 10,
            },
            owner,
            Timestamp::now(),
        );
        metadata.iterations = 2;
        let now = Timestamp::now();
        match status {
            RunStatus::Running => {}
            RunStatus::WaitingForInput => metadata.wait_for_input(now),
            RunStatus::Completed => metadata.complete(json!("done"), now),
            RunStatus::Failed => metadata.fail(ErrorInfo::new(ErrorType::LlmError, "api"), now),
            RunStatus::Interrupted => metadata.interrupt(
                ErrorInfo::new(ErrorType::MaxIterationsReached, "budget"),
                now,
            ),
        }
        write_metadata(&paths.metadata(), &metadata, &Redactor::default()).unwrap();
        let fixture = Fixture { dir, paths };
        fixture.append(vec![EventPayload::RunStart(RunStart {
            run_id,
            task: "Do the task".to_owned(),
            agent_ref: "/agents/bot".to_owned(),
            environment: None,
        })]);
        fixture
    }

    pub fn workspace(&self) -> &Path {
        self.dir.path()
    }

    pub fn run_id(&self) -> RunId {
        self.paths.run_id().clone()
    }

    pub fn append(&self, payloads: Vec<EventPayload>) -> &Self {
        let journal = Journal::open_with(
            &self.paths.journal(),
            FsyncPolicy::OnSync,
            Redactor::default(),
        )
        .unwrap();
        for payload in payloads {
            journal.append(payload).unwrap();
        }
        self
    }

    /// Appends bytes without a newline: what a writer killed mid-write leaves.
    pub fn tear(&self, bytes: &str) -> &Self {
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(self.paths.journal())
            .unwrap();
        file.write_all(bytes.as_bytes()).unwrap();
        self
    }

    pub fn ask(&self, request_id: &str, prompt: &str) -> &Self {
        write_interaction_request(
            &self.paths,
            &InteractionRequest {
                request_id: request_id.to_owned(),
                timestamp: Timestamp::now(),
                prompt: prompt.to_owned(),
                input_type: InputType::Text,
                sensitive: false,
            },
            &Redactor::default(),
        )
        .unwrap();
        self
    }

    pub fn respond(&self, text: &str) -> &Self {
        std::fs::write(self.paths.interaction_response(), text).unwrap();
        self
    }

    pub fn events(&self) -> Vec<Event> {
        read_journal(&self.paths.journal()).unwrap().events
    }

    pub fn payloads(&self) -> Vec<EventPayload> {
        self.events().into_iter().map(|e| e.payload).collect()
    }

    pub fn metadata(&self) -> Metadata {
        read_metadata(&self.paths.metadata()).unwrap()
    }
}
