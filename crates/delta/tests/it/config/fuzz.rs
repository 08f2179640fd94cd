//! No input makes the configuration parsers panic: arbitrary strings and mutations of
//! valid documents either parse or come back as a `ConfigError` that renders.

use std::path::Path;

use delta_engine::config::{
    ConfigError, load_agent, parse_agent_yaml, parse_context_yaml, parse_hooks_yaml,
    parse_imported_yaml,
};
use proptest::prelude::*;
use proptest::sample::Index;

use crate::config::support::AgentDir;

const AGENT: &str = r#"name: fuzz-agent
version: 1.0.0
llm:
  model: gpt-4o
  temperature: 0.7
  top_p: 0.9
  pricing: {input_per_million: 2.5, output_per_million: 10}
system_prompt: system_prompt.md
imports: [tools/ops.yaml]
max_iterations: 10
tools:
  - name: greet
    description: "Say hello"
    exec: "echo ${msg}"
    parameters:
      - name: msg
        description: what to say
        default: hello
  - name: count
    shell: |
      cat ${file} | wc -l
  - name: write
    command: [tee]
    stdin: content
lifecycle_hooks:
  on_run_end: {command: [cleanup], timeout_ms: 100}
"#;

const CONTEXT: &str = r#"sources:
  - type: file
    id: system_prompt
    path: '${AGENT_HOME}/system_prompt.md'
  - type: file
    path: "${CWD}/DELTA.md"
    on_missing: skip
  - type: computed_file
    id: summary
    generator:
      command: ["python3", "${AGENT_HOME}/gen.py"]
      timeout_ms: 3000
    output_path: "${CWD}/.delta/summary.md"
  - type: journal
    max_iterations: 20
"#;

const HOOKS: &str = r#"pre_llm_request:
  command: ["python3", "${AGENT_HOME}/tools/opt.py"]
post_llm_resp:
  command: ["./log.sh"]
  timeout_ms: 500
lifecycle_hooks:
  on_error: {command: [notify]}
"#;

const IMPORTED: &str = r#"imports: [more.yaml]
tools:
  - name: read_file
    exec: "cat ${filepath}"
  - name: write_file
    exec: "tee ${filepath}"
    stdin: content
"#;

/// Which string-level parser a document goes to.
#[derive(Debug, Clone, Copy)]
enum Kind {
    Agent,
    Context,
    Hooks,
    Imported,
}

const KINDS: [(Kind, &str); 4] = [
    (Kind::Agent, AGENT),
    (Kind::Context, CONTEXT),
    (Kind::Hooks, HOOKS),
    (Kind::Imported, IMPORTED),
];

/// Run the parser; a panic fails the property, an error must render sensibly.
fn check(kind: Kind, text: &str) {
    let file = Path::new("/agent/file.yaml");
    let (home, cwd) = (Path::new("/agent"), Path::new("/work"));
    let result: Result<(), ConfigError> = match kind {
        Kind::Agent => parse_agent_yaml(text, file).map(drop),
        Kind::Context => parse_context_yaml(text, file, home, cwd).map(drop),
        Kind::Hooks => parse_hooks_yaml(text, file, home, cwd).map(drop),
        Kind::Imported => parse_imported_yaml(text, file).map(drop),
    };
    if let Err(err) = result {
        check_error(&err, text);
    }
}

fn check_error(err: &ConfigError, text: &str) {
    let rendered = err.to_string();
    assert!(rendered.starts_with("error: "), "{rendered}");
    assert!(!err.message.is_empty());
    if let Some(line) = err.line {
        let lines = u64::try_from(text.lines().count()).unwrap();
        assert!(
            line >= 1 && line <= lines + 1,
            "line {line} of {lines}: {rendered}"
        );
    }
}

#[derive(Debug, Clone)]
enum Mutation {
    DeleteLine(Index),
    DuplicateLine(Index),
    SwapLines(Index, Index),
    FlipChar(Index, char),
    Insert(Index, &'static str),
    Truncate(Index),
}

const INSERTS: &[&str] = &[
    ":", "-", "\t", "\"", "'", "[", "]", "{", "}", "&a ", "*a", "\n", "  ", "#", "!!str ", "? ",
    "|", ">", "~", "0", "-1", "1e999", ".nan", "${", "<<: *a", "\u{0}", "é",
];

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<Index>().prop_map(Mutation::DeleteLine),
        any::<Index>().prop_map(Mutation::DuplicateLine),
        (any::<Index>(), any::<Index>()).prop_map(|(a, b)| Mutation::SwapLines(a, b)),
        (any::<Index>(), any::<char>()).prop_map(|(i, c)| Mutation::FlipChar(i, c)),
        (any::<Index>(), proptest::sample::select(INSERTS))
            .prop_map(|(i, s)| Mutation::Insert(i, s)),
        any::<Index>().prop_map(Mutation::Truncate),
    ]
}

fn apply(text: &str, mutations: &[Mutation]) -> String {
    let mut text = text.to_owned();
    for mutation in mutations {
        let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
        let chars: Vec<char> = text.chars().collect();
        match mutation {
            Mutation::DeleteLine(i) if !lines.is_empty() => {
                lines.remove(i.index(lines.len()));
                text = lines.join("\n");
            }
            Mutation::DuplicateLine(i) if !lines.is_empty() => {
                let at = i.index(lines.len());
                lines.insert(at, lines[at].clone());
                text = lines.join("\n");
            }
            Mutation::SwapLines(a, b) if !lines.is_empty() => {
                let (a, b) = (a.index(lines.len()), b.index(lines.len()));
                lines.swap(a, b);
                text = lines.join("\n");
            }
            Mutation::FlipChar(i, c) if !chars.is_empty() => {
                let mut chars = chars;
                let at = i.index(chars.len());
                chars[at] = *c;
                text = chars.into_iter().collect();
            }
            Mutation::Insert(i, s) => {
                let at = i.index(chars.len() + 1);
                let mut out: String = chars[..at].iter().collect();
                out.push_str(s);
                out.extend(&chars[at..]);
                text = out;
            }
            Mutation::Truncate(i) => {
                text = chars[..i.index(chars.len() + 1)].iter().collect();
            }
            Mutation::DeleteLine(_)
            | Mutation::DuplicateLine(_)
            | Mutation::SwapLines(..)
            | Mutation::FlipChar(..) => {}
        }
    }
    text
}

#[test]
fn the_base_documents_are_valid() {
    let file = Path::new("/agent/file.yaml");
    let (home, cwd) = (Path::new("/agent"), Path::new("/work"));
    parse_agent_yaml(AGENT, file).unwrap();
    parse_context_yaml(CONTEXT, file, home, cwd).unwrap();
    parse_hooks_yaml(HOOKS, file, home, cwd).unwrap();
    parse_imported_yaml(IMPORTED, file).unwrap();
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1500, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_strings_never_panic(text in any::<String>()) {
        for (kind, _) in KINDS {
            check(kind, &text);
        }
    }

    #[test]
    fn yaml_like_strings_never_panic(text in "[a-z_ :\\-\n\t\"'\\[\\]{},#&*!|>?~0-9.$]{0,120}") {
        for (kind, _) in KINDS {
            check(kind, &text);
        }
    }

    #[test]
    fn mutated_documents_never_panic(
        doc in 0..KINDS.len(),
        mutations in proptest::collection::vec(mutation(), 1..6),
    ) {
        let (kind, base) = KINDS[doc];
        check(kind, &apply(base, &mutations));
    }
}

proptest! {
    // Whole loads touch the file system (imports, tool expansion), so fewer cases.
    #![proptest_config(ProptestConfig { cases: 200, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn mutated_agent_directories_never_panic(
        agent in proptest::collection::vec(mutation(), 0..4),
        imported in proptest::collection::vec(mutation(), 0..4),
        context in proptest::collection::vec(mutation(), 0..3),
    ) {
        let dir = AgentDir::new()
            .file("agent.yaml", &apply(AGENT, &agent))
            .file("tools/ops.yaml", &apply(&IMPORTED.replace("imports: [more.yaml]\n", ""), &imported))
            .file("context.yaml", &apply(CONTEXT, &context));
        if let Err(err) = load_agent(&dir.home, &dir.cwd) {
            assert!(err.to_string().starts_with("error: "));
        }
    }
}
