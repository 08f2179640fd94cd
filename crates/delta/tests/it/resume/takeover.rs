//! `resume::take_over` on hand-made run directories: the state table, the Janitor and the
//! journal repairs, checked on the files they leave.

use std::sync::{Arc, Barrier};

use delta_engine::journal::{
    ActionResult, ActionStatus, EventPayload, FsyncPolicy, MessageLevel, SystemMessage, UserMessage,
};
use delta_engine::resume::{
    AnswerSource, ContinueOptions, Entry, INTERRUPTED_NOT_RERUN, NOT_RUN, OwnerFinding,
    ResumeError, Resumed, inspect, preflight, take_over,
};
use delta_engine::run::{
    ErrorType, FinalStatus, ProcessIdentity, RunId, RunLock, RunStatus, read_metadata,
};
use delta_engine::secrets::Redactor;

use crate::resume::fixture::{
    Fixture, Sleeper, call, dead_identity, human_received, human_request, request, result, run_end,
    thought,
};

fn options(message: Option<&str>) -> ContinueOptions<'_> {
    ContinueOptions {
        message,
        force: false,
        max_iterations: 7,
        fsync: FsyncPolicy::OnSync,
        redactor: Redactor::default(),
    }
}

fn go(f: &Fixture, message: Option<&str>) -> Result<Resumed, ResumeError> {
    take_over(f.workspace(), &f.run_id(), &options(message))
}

fn ws(f: &Fixture) -> String {
    f.workspace().display().to_string()
}

/// The payloads journaled after the first `before` events.
fn appended(f: &Fixture, before: usize) -> Vec<EventPayload> {
    f.payloads().split_off(before)
}

fn assert_claimed(f: &Fixture) {
    let m = f.metadata();
    let me = ProcessIdentity::current();
    assert_eq!(m.status, RunStatus::Running);
    assert_eq!((m.pid, &m.hostname), (me.pid, &me.hostname));
    assert_eq!(m.process_start_time, me.start_ticks);
    assert_eq!(m.max_iterations, 7, "a fresh budget");
    assert_eq!(m.iterations, 2, "iterations count over the run's life");
    assert_eq!((m.error, m.result, m.end_time), (None, None, None));
}

/// Whether `payload` is the RUN_END the Janitor journals for a dead process's part.
fn is_orphan_end(payload: &EventPayload) -> bool {
    matches!(
        payload,
        EventPayload::RunEnd(delta_engine::journal::RunEnd {
            status: FinalStatus::Interrupted,
            error: Some(error),
            result: None,
        // The message names the dead process's pid and host: a search for the rest.
        }) if error.error_type == ErrorType::Interrupted
            && error.message.contains("stopped without recording an end")
    )
}

fn assert_gapless(f: &Fixture) {
    for (i, event) in f.events().iter().enumerate() {
        assert_eq!(event.seq, i as u64 + 1);
    }
}

// ---- the state table ----

#[test]
fn interrupted_continues_without_a_message_and_journals_nothing_new() {
    let f = Fixture::new("int-1", RunStatus::Interrupted, &dead_identity());
    let before = f.events().len();
    let resumed = go(&f, None).unwrap();
    assert_eq!(resumed.report.previous_status, RunStatus::Interrupted);
    assert_eq!(resumed.report.entry, Entry::Resume);
    assert_eq!(resumed.report.janitor, None);
    assert_eq!(appended(&f, before), vec![]);
    assert_eq!(resumed.journal.next_seq(), before as u64 + 1);
    assert_claimed(&f);
}

#[test]
fn interrupted_with_a_message_journals_it_as_a_user_message() {
    let f = Fixture::new("int-2", RunStatus::Interrupted, &dead_identity());
    let before = f.events().len();
    go(&f, Some("Skip validation step")).unwrap();
    assert_eq!(
        appended(&f, before),
        vec![EventPayload::UserMessage(UserMessage {
            content: "Skip validation step".to_owned()
        })]
    );
    assert_claimed(&f);
}

#[test]
fn completed_and_failed_refuse_without_a_message_with_the_seed_error() {
    for (status, example) in [
        (RunStatus::Completed, "Now do something else"),
        (RunStatus::Failed, "Retry; the input file is data/input.csv"),
    ] {
        let f = Fixture::new("done-1", status, &dead_identity());
        let before = f.metadata();
        let error = go(&f, None).unwrap_err();
        assert!(error.is_usage());
        assert_eq!(
            error.to_string(),
            format!(
                "Run is {status}. To continue, provide a message using -m/--message\n\
                 Example: delta continue --run-id done-1 -w {} -m \"{example}\"",
                ws(&f)
            )
        );
        assert_eq!(f.metadata(), before, "a refusal changes nothing");
        let (paths, metadata) = inspect(f.workspace(), &f.run_id()).unwrap();
        assert_eq!(
            preflight(&paths, &metadata, &options(None))
                .unwrap_err()
                .to_string(),
            error.to_string()
        );
    }
}

#[test]
fn completed_and_failed_continue_with_the_message() {
    for status in [RunStatus::Completed, RunStatus::Failed] {
        let f = Fixture::new("done-2", status, &dead_identity());
        let before = f.events().len();
        let resumed = go(&f, Some("Now create a summary report")).unwrap();
        assert_eq!(resumed.report.previous_status, status);
        assert_eq!(
            appended(&f, before),
            vec![EventPayload::UserMessage(UserMessage {
                content: "Now create a summary report".to_owned()
            })]
        );
        assert_claimed(&f);
    }
}

/// A run paused by ask_human: THOUGHT, ACTION_REQUEST, HUMAN_INPUT_REQUEST, RUN_END, and
/// interaction/request.json.
fn waiting() -> Fixture {
    let f = Fixture::new("wait-1", RunStatus::WaitingForInput, &dead_identity());
    f.append(vec![
        thought(vec![call(
            "call_1",
            "ask_human",
            r#"{"prompt":"Deploy to production?"}"#,
        )]),
        request("act-ask", "call_1", "ask_human"),
        human_request("act-ask", "Deploy to production?"),
        run_end(FinalStatus::WaitingForInput),
    ]);
    f.ask("act-ask", "Deploy to production?");
    f
}

fn answered(answer: &str) -> Vec<EventPayload> {
    vec![
        human_received("act-ask", answer),
        EventPayload::ActionResult(ActionResult {
            action_id: "act-ask".to_owned(),
            tool_call_id: "call_1".to_owned(),
            status: ActionStatus::Success,
            observation_content: answer.to_owned(),
            exit_code: Some(0),
            execution_ref: "act-ask".to_owned(),
            subagent: None,
        }),
    ]
}

#[test]
fn waiting_for_input_takes_the_answer_from_the_message() {
    let f = waiting();
    f.respond("from the file\n");
    let before = f.events().len();
    let resumed = go(&f, Some("yes, proceed")).unwrap();
    assert_eq!(
        resumed.report.entry,
        Entry::Answer {
            text: "yes, proceed".to_owned(),
            source: AnswerSource::Message
        }
    );
    assert_eq!(appended(&f, before), answered("yes, proceed"));
    assert!(!f.paths.interaction_dir().exists(), "interaction/ removed");
    assert_claimed(&f);
    assert_gapless(&f);
}

#[test]
fn waiting_for_input_takes_the_answer_from_response_txt() {
    let f = waiting();
    f.respond("sk-abc123\n");
    let before = f.events().len();
    let resumed = go(&f, None).unwrap();
    assert_eq!(
        resumed.report.entry,
        Entry::Answer {
            text: "sk-abc123".to_owned(),
            source: AnswerSource::ResponseFile
        }
    );
    assert_eq!(appended(&f, before), answered("sk-abc123"));
    assert!(!f.paths.interaction_dir().exists());
}

#[test]
fn waiting_for_input_without_an_answer_names_the_question_and_both_ways_to_answer() {
    let f = waiting();
    let error = go(&f, None).unwrap_err();
    assert!(error.is_usage());
    assert_eq!(
        error.to_string(),
        format!(
            "Run is WAITING_FOR_INPUT. To continue, answer its question using -m/--message or \
             in {}\nQuestion: Deploy to production?\n\
             Example: delta continue --run-id wait-1 -w {} -m \"yes, proceed\"",
            f.paths.interaction_response().display(),
            ws(&f)
        )
    );
    assert_eq!(f.metadata().status, RunStatus::WaitingForInput);
    assert!(f.paths.interaction_request().exists(), "nothing removed");
}

#[test]
fn an_answer_without_a_pending_question_becomes_a_user_message() {
    let f = Fixture::new("wait-2", RunStatus::WaitingForInput, &dead_identity());
    let before = f.events().len();
    let resumed = go(&f, Some("carry on")).unwrap();
    assert!(resumed.report.answer_as_user_message);
    assert_eq!(
        appended(&f, before),
        vec![EventPayload::UserMessage(UserMessage {
            content: "carry on".to_owned()
        })]
    );
}

#[test]
fn unknown_run_ids_say_how_to_find_the_right_one() {
    let f = Fixture::new("exists", RunStatus::Interrupted, &dead_identity());
    let missing = RunId::parse("nope").unwrap();
    let error = take_over(f.workspace(), &missing, &options(None)).unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "no run nope in {}; list the runs there with `delta list-runs -w {}`",
            ws(&f),
            ws(&f)
        )
    );
    assert!(!error.is_usage());
}

// ---- the Janitor ----

#[test]
fn a_running_run_whose_owner_died_is_cleaned_up_and_continued() {
    let owner = dead_identity();
    let f = Fixture::new("orphan-1", RunStatus::Running, &owner);
    let resumed = go(&f, None).unwrap();
    let janitor = resumed.report.janitor.clone().unwrap();
    assert_eq!(resumed.report.previous_status, RunStatus::Running);
    assert_eq!(janitor.finding, OwnerFinding::Dead);
    assert_eq!(janitor.pid, owner.pid);
    assert_eq!(
        janitor.lines()[0],
        "[Janitor] Cleaned up orphaned run orphan-1 (dead process)"
    );
    assert_eq!(resumed.report.entry, Entry::Resume);
    assert_claimed(&f);
}

#[test]
fn a_refused_continue_still_leaves_a_cleaned_orphan_interrupted() {
    let f = Fixture::new("orphan-2", RunStatus::Running, &dead_identity());
    // A damaged middle line stops the takeover after the Janitor's transition.
    let journal = f.paths.journal();
    let mut text = std::fs::read_to_string(&journal).unwrap();
    text.push_str("{\"not\": \"an event\"}\n{}\n");
    std::fs::write(&journal, text).unwrap();
    let error = go(&f, None).unwrap_err();
    assert!(matches!(error, ResumeError::Journal(_)), "{error}");
    let m = f.metadata();
    assert_eq!(m.status, RunStatus::Interrupted);
    assert_eq!(m.error.unwrap().error_type, ErrorType::Interrupted);
}

#[test]
fn a_pid_reused_by_an_unrelated_process_counts_as_dead() {
    let sleeper = Sleeper::start();
    let owner = ProcessIdentity {
        pid: sleeper.pid(),
        start_ticks: Some(1),
        ..ProcessIdentity::current()
    };
    let f = Fixture::new("reused-1", RunStatus::Running, &owner);
    let resumed = go(&f, None).unwrap();
    let janitor = resumed.report.janitor.unwrap();
    assert_eq!(
        janitor.finding,
        OwnerFinding::PidReused {
            current_name: Some("sleep".to_owned())
        }
    );
    // This pins the pid, which a snapshot would filter.
    assert!(janitor.lines()[1].contains(&format!(
        "PID {} now belongs to another process (sleep)",
        sleeper.pid()
    )));
}

#[test]
fn a_live_owner_holding_the_lock_is_refused_with_the_seed_error() {
    let f = Fixture::new("live-1", RunStatus::Running, &ProcessIdentity::current());
    let _held = RunLock::try_acquire(&f.paths.lock()).unwrap();
    let before = f.metadata();
    let error = go(&f, None).unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "Run live-1 is still active (PID {}). Cannot continue while original process is \
             running.",
            std::process::id()
        )
    );
    assert_eq!(f.metadata(), before);
    let (paths, metadata) = inspect(f.workspace(), &f.run_id()).unwrap();
    assert_eq!(
        preflight(&paths, &metadata, &options(None))
            .unwrap_err()
            .to_string(),
        error.to_string()
    );
}

#[test]
fn a_live_owner_that_does_not_lock_is_still_refused() {
    // Our own identity: alive, same start time, but no lock (another implementation).
    let f = Fixture::new("live-2", RunStatus::Running, &ProcessIdentity::current());
    let error = go(&f, None).unwrap_err();
    assert!(
        matches!(error, ResumeError::StillActive { pid, .. } if pid == std::process::id()),
        "{error}"
    );
    assert_eq!(f.metadata().status, RunStatus::Running);
}

#[test]
fn a_locked_run_that_is_not_running_is_busy() {
    let f = Fixture::new("busy-1", RunStatus::Interrupted, &dead_identity());
    let _held = RunLock::try_acquire(&f.paths.lock()).unwrap();
    let error = go(&f, None).unwrap_err();
    assert!(matches!(error, ResumeError::Busy { .. }), "{error}");
}

#[test]
fn another_host_is_refused_with_the_seed_error_and_accepted_with_force() {
    let owner = ProcessIdentity {
        hostname: "host-a".to_owned(),
        ..dead_identity()
    };
    let f = Fixture::new("xhost-1", RunStatus::Running, &owner);
    let this_host = ProcessIdentity::current().hostname;
    let error = go(&f, None).unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "Run xhost-1 was started on host 'host-a'.\n\
             Cannot verify process status from host '{this_host}'.\n\n\
             If you're certain the original process is dead, use:\n  \
             delta continue --run-id xhost-1 -w {} --force",
            ws(&f)
        )
    );
    assert_eq!(f.metadata().status, RunStatus::Running);

    let forced = ContinueOptions {
        force: true,
        ..options(None)
    };
    let resumed = take_over(f.workspace(), &f.run_id(), &forced).unwrap();
    let janitor = resumed.report.janitor.unwrap();
    assert_eq!(
        janitor.finding,
        OwnerFinding::ForcedFromOtherHost { this_host }
    );
    assert_eq!(janitor.hostname, "host-a");
    assert_claimed(&f);
}

#[test]
fn another_host_matters_only_while_running() {
    let owner = ProcessIdentity {
        hostname: "host-a".to_owned(),
        ..dead_identity()
    };
    let f = Fixture::new("xhost-2", RunStatus::Interrupted, &owner);
    go(&f, None).unwrap();
    assert_claimed(&f);
}

#[test]
fn of_two_simultaneous_takeovers_exactly_one_proceeds() {
    for round in 0..20 {
        let f = Arc::new(Fixture::new(
            &format!("race-{round}"),
            RunStatus::Running,
            &dead_identity(),
        ));
        let barrier = Arc::new(Barrier::new(2));
        let racers: Vec<_> = (0..2)
            .map(|_| {
                let (f, barrier) = (Arc::clone(&f), Arc::clone(&barrier));
                std::thread::spawn(move || {
                    barrier.wait();
                    go(&f, None)
                })
            })
            .collect();
        let outcomes: Vec<_> = racers.into_iter().map(|r| r.join().unwrap()).collect();
        let winners = outcomes.iter().filter(|o| o.is_ok()).count();
        assert_eq!(winners, 1, "round {round}: {outcomes:?}");
        for outcome in &outcomes {
            if let Err(error) = outcome {
                assert!(
                    matches!(
                        error,
                        ResumeError::StillActive { .. } | ResumeError::Busy { .. }
                    ),
                    "{error}"
                );
            }
        }
        assert_claimed(&f);
    }
}

// ---- journal repair ----

#[test]
fn a_torn_last_line_is_cut_and_reported_in_the_journal() {
    let f = Fixture::new("torn-1", RunStatus::Running, &dead_identity());
    f.tear(r#"{"seq":2,"timestamp":"2025-10-14T10:30:00.000Z","type":"THOU"#);
    let resumed = go(&f, None).unwrap();
    let tail = resumed.report.torn_tail.clone().unwrap();
    assert_eq!(tail.line, 2);
    drop(resumed);
    let events = f.events();
    assert_eq!(events.len(), 3);
    assert!(is_orphan_end(&events[2].payload));
    assert_eq!(
        events[1].payload,
        EventPayload::SystemMessage(SystemMessage {
            level: MessageLevel::Warn,
            content: format!(
                "The journal's last line (line 2, {} bytes) was incomplete: the process writing \
                 it was stopped mid-write. It was removed when the run was continued.",
                tail.len
            ),
        })
    );
    assert_gapless(&f);
    assert!(
        std::fs::read_to_string(f.paths.journal())
            .unwrap()
            .ends_with("}\n")
    );
}

#[test]
fn a_tool_call_in_progress_gets_an_error_result_and_is_not_run_again() {
    let f = Fixture::new("dangling-1", RunStatus::Running, &dead_identity());
    f.append(vec![
        thought(vec![
            call("call_1", "write", "{}"),
            call("call_2", "write", "{}"),
        ]),
        request("act-1", "call_1", "write"),
        result("act-1", "call_1", "ok"),
        request("act-2", "call_2", "write"),
    ]);
    let before = f.events().len();
    let resumed = go(&f, None).unwrap();
    assert_eq!(resumed.report.repairs.interrupted_actions, vec!["act-2"]);
    let mut new = appended(&f, before);
    assert!(
        is_orphan_end(&new.pop().unwrap()),
        "the dead part ends with RUN_END"
    );
    assert_eq!(
        new,
        vec![EventPayload::ActionResult(ActionResult {
            action_id: "act-2".to_owned(),
            tool_call_id: "call_2".to_owned(),
            status: ActionStatus::Error,
            observation_content: INTERRUPTED_NOT_RERUN.to_owned(),
            exit_code: None,
            execution_ref: "act-2".to_owned(),
            subagent: None,
        })]
    );
    assert!(INTERRUPTED_NOT_RERUN.starts_with("Error: interrupted; not re-run."));
}

#[test]
fn calls_that_never_started_get_a_request_and_an_error_result_each() {
    let f = Fixture::new("unstarted-1", RunStatus::Running, &dead_identity());
    f.append(vec![thought(vec![
        call("call_1", "write", r#"{"line":"a"}"#),
        call("call_2", "read", "not json"),
    ])]);
    let before = f.events().len();
    let resumed = go(&f, Some("go on")).unwrap();
    assert_eq!(
        resumed.report.repairs.not_run_calls,
        vec!["call_1", "call_2"]
    );
    let new = appended(&f, before);
    assert_eq!(new.len(), 6, "{new:#?}");
    assert!(is_orphan_end(&new[4]));
    for (pair, (call_id, tool, args)) in new.chunks(2).take(2).zip([
        ("call_1", "write", serde_json::json!({"line": "a"})),
        ("call_2", "read", serde_json::json!({})),
    ]) {
        let (EventPayload::ActionRequest(req), EventPayload::ActionResult(res)) =
            (&pair[0], &pair[1])
        else {
            panic!("expected a request and its result: {pair:#?}");
        };
        assert_eq!(
            (req.tool_call_id.as_str(), req.tool_name.as_str()),
            (call_id, tool)
        );
        assert_eq!(serde_json::Value::Object(req.tool_args.clone()), args);
        assert_eq!(req.resolved_command, None);
        assert_eq!(res.action_id, req.action_id);
        assert_eq!(res.tool_call_id, call_id);
        assert_eq!(res.status, ActionStatus::Error);
        assert_eq!(res.observation_content, NOT_RUN);
    }
    assert_eq!(
        new[5],
        EventPayload::UserMessage(UserMessage {
            content: "go on".to_owned()
        })
    );
}

#[test]
fn results_of_earlier_thoughts_do_not_answer_reused_call_ids() {
    let f = Fixture::new("reused-ids", RunStatus::Interrupted, &dead_identity());
    f.append(vec![
        thought(vec![call("call_1", "write", "{}")]),
        request("act-1", "call_1", "write"),
        result("act-1", "call_1", "ok"),
        thought(vec![call("call_1", "write", "{}")]),
    ]);
    let resumed = go(&f, None).unwrap();
    assert_eq!(resumed.report.repairs.not_run_calls, vec!["call_1"]);
}

#[test]
fn an_answer_journaled_by_a_continue_that_died_is_delivered_not_lost() {
    let f = Fixture::new("half-1", RunStatus::Running, &dead_identity());
    f.append(vec![
        thought(vec![call("call_1", "ask_human", r#"{"prompt":"Name?"}"#)]),
        request("act-ask", "call_1", "ask_human"),
        human_request("act-ask", "Name?"),
        human_received("act-ask", "Ada"),
    ]);
    let before = f.events().len();
    let resumed = go(&f, None).unwrap();
    assert_eq!(resumed.report.repairs.recovered_answers, vec!["act-ask"]);
    let mut new = appended(&f, before);
    assert!(is_orphan_end(&new.pop().unwrap()));
    assert_eq!(new, answered("Ada")[1..].to_vec());
}

#[test]
fn an_unanswered_question_of_a_crashed_run_is_an_interrupted_call() {
    let f = Fixture::new("ask-crash", RunStatus::Running, &dead_identity());
    f.append(vec![
        thought(vec![call("call_1", "ask_human", r#"{"prompt":"Name?"}"#)]),
        request("act-ask", "call_1", "ask_human"),
        human_request("act-ask", "Name?"),
    ]);
    let resumed = go(&f, Some("continue please")).unwrap();
    assert_eq!(resumed.report.repairs.interrupted_actions, vec!["act-ask"]);
    assert_eq!(resumed.report.repairs.answered, None);
}

#[test]
fn the_lock_is_held_until_the_resumed_run_is_dropped() {
    let f = Fixture::new("held-1", RunStatus::Interrupted, &dead_identity());
    let resumed = go(&f, None).unwrap();
    assert!(matches!(go(&f, None), Err(ResumeError::StillActive { .. })));
    drop(resumed);
    assert_eq!(
        read_metadata(&f.paths.metadata()).unwrap().status,
        RunStatus::Running
    );
    // The dropped run's owner (this process) is alive but no longer locks the run.
    assert!(matches!(go(&f, None), Err(ResumeError::StillActive { .. })));
}

#[test]
fn a_run_whose_process_journaled_its_end_before_dying_gets_that_end_back() {
    let f = Fixture::new("ended-1", RunStatus::Running, &dead_identity());
    f.append(vec![
        thought(vec![]),
        EventPayload::RunEnd(delta_engine::journal::RunEnd {
            status: FinalStatus::Completed,
            error: None,
            result: Some(serde_json::json!({"answer": 42})),
        }),
    ]);
    // Issue 12 item 3: the finish is completed and that is all (it used to be a usage
    // error asking for -m).
    let finished = go(&f, None).unwrap();
    assert_eq!(finished.report.entry, Entry::Finished);
    drop(finished);
    let m = f.metadata();
    assert_eq!(m.status, RunStatus::Completed);
    assert_eq!(m.result, Some(serde_json::json!({"answer": 42})));

    let resumed = go(&f, Some("one more thing")).unwrap();
    assert_eq!(resumed.report.previous_status, RunStatus::Completed);
}

#[test]
fn the_janitor_report_says_when_the_end_was_restored() {
    let f = Fixture::new("ended-2", RunStatus::Running, &dead_identity());
    f.append(vec![run_end(FinalStatus::Failed)]);
    let resumed = go(&f, Some("retry")).unwrap();
    let janitor = resumed.report.janitor.unwrap();
    assert_eq!(janitor.restored, Some(FinalStatus::Failed));
    assert_eq!(
        janitor.lines()[2],
        "[Janitor] The journal shows the run had ended FAILED before its process died; \
         metadata.json now says so too"
    );
    assert_eq!(resumed.report.previous_status, RunStatus::Running);
}

#[test]
fn an_empty_journal_gets_its_run_start_from_the_metadata() {
    let f = Fixture::new("empty-1", RunStatus::Running, &dead_identity());
    // A process that died before its first line had done no iteration (a journal emptied
    // later is refused: e2e::run_files).
    let mut m = f.metadata();
    m.iterations = 0;
    delta_engine::run::write_metadata(&f.paths.metadata(), &m, &Redactor::default()).unwrap();
    std::fs::write(f.paths.journal(), "").unwrap();
    let resumed = go(&f, None).unwrap();
    assert!(resumed.report.run_start_restored);
    drop(resumed);
    let payloads = f.payloads();
    assert_eq!(
        payloads[0],
        EventPayload::RunStart(delta_engine::journal::RunStart {
            run_id: f.run_id(),
            task: "Do the task".to_owned(),
            agent_ref: "/agents/bot".to_owned(),
            environment: None,
        })
    );
    assert_eq!(payloads.len(), 2);
    assert!(is_orphan_end(&payloads[1]));
}

#[test]
fn a_torn_first_line_is_replaced_by_a_run_start_then_reported() {
    let f = Fixture::new("empty-2", RunStatus::Running, &dead_identity());
    // A process that died before its first line had done no iteration (a journal emptied
    // later is refused: e2e::run_files).
    let mut m = f.metadata();
    m.iterations = 0;
    delta_engine::run::write_metadata(&f.paths.metadata(), &m, &Redactor::default()).unwrap();
    std::fs::write(f.paths.journal(), "{\"seq\":1,\"timest").unwrap();
    go(&f, None).unwrap();
    let types: Vec<&str> = f.payloads().iter().map(EventPayload::type_name).collect();
    assert_eq!(types, vec!["RUN_START", "SYSTEM_MESSAGE", "RUN_END"]);
    assert_gapless(&f);
}

#[test]
fn a_final_answer_journaled_before_the_process_died_completes_the_run() {
    let f = Fixture::new("answered-1", RunStatus::Running, &dead_identity());
    f.append(vec![EventPayload::Thought(
        delta_engine::journal::Thought {
            content: "{\"total\": 3}".to_owned(),
            llm_invocation_ref: "inv-9".to_owned(),
            tool_calls: vec![],
            reasoning: None,
            passback: None,
            usage: None,
        },
    )]);
    let before = f.events().len();
    // Issue 12 item 3: finishing the interrupted finish is the whole continuation; it
    // used to end in "provide -m" (exit 2) after marking the run COMPLETED.
    let resumed = go(&f, None).unwrap();
    assert_eq!(resumed.report.entry, Entry::Finished);
    drop(resumed);
    assert_eq!(
        appended(&f, before),
        vec![EventPayload::RunEnd(delta_engine::journal::RunEnd {
            status: FinalStatus::Completed,
            error: None,
            result: Some(serde_json::json!({"total": 3})),
        })]
    );
    let m = f.metadata();
    assert_eq!(m.status, RunStatus::Completed);
    assert_eq!(m.result, Some(serde_json::json!({"total": 3})));
    assert_gapless(&f);
}

/// Regression: a `delta` killed right after forking a tool left the child holding the lock
/// until its exec; the next continue was refused as "still active" (crash suite).
#[test]
fn a_lock_that_briefly_outlives_its_dead_owner_is_waited_for() {
    let f = Arc::new(Fixture::new(
        "linger-1",
        RunStatus::Running,
        &dead_identity(),
    ));
    let held = RunLock::try_acquire(&f.paths.lock()).unwrap();
    let releaser = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(150));
        drop(held);
    });
    let resumed = go(&f, None).unwrap();
    releaser.join().unwrap();
    assert_eq!(resumed.report.janitor.unwrap().finding, OwnerFinding::Dead);
}
