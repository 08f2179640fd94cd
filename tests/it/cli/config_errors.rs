//! Every kind of configuration error, through the binary: `delta tool expand` and
//! `delta run` both exit 126, name the file (with line and column where the parser knows
//! them), say how to fix it, and `run` creates nothing. The wording of each message is
//! pinned by the snapshots in tests/config; this table pins the exit code and the contract.

use crate::support::harness::Test;

const AGENT: &str = "name: broken\nllm:\n  model: gpt-4o-mini\n";

struct Case {
    name: &'static str,
    /// Builds the agent directory `a/` in the test's temp dir.
    setup: fn(Test) -> Test,
    /// Text the error must contain (the part of the message that names the problem).
    says: &'static str,
    /// `file:line` (or just the file) the error must point at, relative to the agent dir.
    at: &'static str,
}

fn with_tools(test: Test, tools: &str) -> Test {
    test.agent("a", &format!("{AGENT}tools:\n{tools}"))
}

const CASES: &[Case] = &[
    Case {
        name: "missing context.yaml",
        setup: |t| {
            t.file("a/agent.yaml", AGENT)
                .file("a/system_prompt.md", "hi\n")
        },
        says: "context.yaml not found",
        at: "a",
    },
    Case {
        name: "missing system prompt",
        setup: |t| {
            t.file("a/agent.yaml", AGENT)
                .file("a/context.yaml", "sources:\n  - type: journal\n")
        },
        says: "system_prompt.md",
        at: "a/agent.yaml",
    },
    Case {
        name: "import cycle",
        setup: |t| {
            t.agent("a", &format!("{AGENT}imports:\n  - tools/x.yaml\n"))
                .file("a/tools/x.yaml", "imports:\n  - y.yaml\ntools: []\n")
                .file("a/tools/y.yaml", "imports:\n  - x.yaml\ntools: []\n")
        },
        says: "Import cycle: agent.yaml -> tools/x.yaml -> tools/y.yaml -> tools/x.yaml",
        at: "a/tools/y.yaml:2",
    },
    Case {
        name: "import escaping by ../",
        setup: |t| {
            t.agent("a", &format!("{AGENT}imports:\n  - ../shared.yaml\n"))
                .file("shared.yaml", "tools: []\n")
        },
        says: "outside the agent directory",
        at: "a/agent.yaml:5",
    },
    Case {
        name: "import escaping by symlink",
        setup: |t| {
            let t = t
                .agent("a", &format!("{AGENT}imports:\n  - tools/link.yaml\n"))
                .file("shared.yaml", "tools: []\n");
            std::fs::create_dir_all(t.path().join("a/tools")).unwrap();
            std::os::unix::fs::symlink(
                t.path().join("shared.yaml"),
                t.path().join("a/tools/link.yaml"),
            )
            .unwrap();
            t
        },
        says: "outside the agent directory",
        at: "a/agent.yaml:5",
    },
    Case {
        name: "two execution modes in one tool",
        setup: |t| {
            with_tools(
                t,
                "  - name: t\n    exec: \"echo ${m}\"\n    shell: \"echo ${m}\"\n",
            )
        },
        says: "Tool must specify exactly one of: exec, shell, or command",
        at: "a/agent.yaml:5",
    },
    Case {
        name: "shell metacharacter in exec",
        setup: |t| with_tools(t, "  - name: t\n    exec: \"cat ${f} | wc -l\"\n"),
        says: "Shell metacharacter '|' not allowed in exec: mode",
        at: "a/agent.yaml:5",
    },
    Case {
        name: "misspelt tool key",
        setup: |t| with_tools(t, "  - name: t\n    exce: \"echo ${m}\"\n"),
        says: "did you mean `exec`?",
        at: "a/agent.yaml:6:5",
    },
    Case {
        name: "misspelt context key",
        setup: |t| {
            t.agent("a", AGENT).file(
                "a/context.yaml",
                "sources:\n  - type: file\n    path: x.md\n    on_mising: skip\n",
            )
        },
        says: "did you mean `on_missing`?",
        at: "a/context.yaml:4:5",
    },
    Case {
        name: "unknown hook",
        setup: |t| {
            t.agent("a", AGENT)
                .file("a/hooks.yaml", "pre_llm_requets:\n  command: [\"true\"]\n")
        },
        says: "pre_llm_request",
        at: "a/hooks.yaml:1",
    },
    Case {
        name: "invalid YAML",
        setup: |t| t.agent("a", "name: broken\nllm:\n  model: \"unterminated\n"),
        says: "invalid YAML syntax",
        at: "a/agent.yaml:4:1",
    },
    Case {
        name: "wrong type",
        setup: |t| t.agent("a", "name: broken\nllm: [gpt-4o]\n"),
        says: "invalid value for `llm`: expected a mapping",
        at: "a/agent.yaml:2:6",
    },
];

#[test]
fn every_configuration_error_exits_126_naming_the_file_and_the_fix() {
    for case in CASES {
        let test = (case.setup)(Test::new());
        let root = test.path().to_path_buf();
        let expand = test.args(["tool", "expand", "a"]).run().code(126);
        let stderr = expand.stderr().to_owned();
        let location = format!("{}/{}", root.display(), case.at);
        assert!(
            stderr.contains(case.says),
            "{}: stderr lacks {:?}:\n{stderr}",
            case.name,
            case.says
        );
        assert!(
            stderr.contains(&location),
            "{}: stderr does not point at {location}:\n{stderr}",
            case.name
        );
        // The fix is a help line; seed 000 §2.7.7 words the missing-context.yaml one as a
        // "Quick fix" template, and a type error states the expected form.
        assert!(
            stderr.contains("help:") || stderr.contains("Quick fix") || stderr.contains("expected"),
            "{}: no fix offered:\n{stderr}",
            case.name
        );
        assert_eq!(
            stderr.matches("error:").count(),
            1,
            "{}: the error is printed once:\n{stderr}",
            case.name
        );

        // `delta run` refuses the same agent before creating anything.
        let run = expand
            .then()
            .args(["run", "--agent", "a", "-y", "-m", "hi"])
            .env("DELTA_BASE_URL", "http://127.0.0.1:9/v1")
            .run()
            .code(126);
        assert!(
            run.stderr().contains(case.says),
            "{}: run:\n{}",
            case.name,
            run.stderr()
        );
        assert!(
            !root.join("a/workspaces").exists() && !root.join("a/.delta").exists(),
            "{}: run created files",
            case.name
        );
    }
}
