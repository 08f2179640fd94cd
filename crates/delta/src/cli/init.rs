//! `delta init`: create a new agent directory from a built-in template.
//!
//! The directory is created with one `mkdir` (never `mkdir -p` on the target itself), so an
//! existing file or directory is detected atomically and never overwritten. If writing a
//! file fails afterwards, the half-made directory, which this command created, is removed.

use std::fs::{self, OpenOptions};
use std::io::{self, BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum, ValueHint};

use super::render;
use delta_engine::output::Exit;
use delta_engine::quote::quote;

/// The default `context.yaml` of seed 000 §2.4.4, comments included, shared by every template.
pub const DEFAULT_CONTEXT_YAML: &str = include_str!("init/context.yaml");

/// Arguments of `delta init`.
#[derive(Debug, Args)]
#[command(after_help = render::examples(&[
    ("An agent with four safe file tools, asking nothing", "delta init my-agent -t hello-world -y"),
    ("A bare agent (no tools) with a one-line description", "delta init agents/reviewer -d \"Reviews pull requests\""),
    ("Then check how its tools will run", "delta tool expand my-agent"),
]))]
pub struct InitArgs {
    /// Directory to create; its last component becomes the agent's name.
    #[arg(value_name = "NAME", value_hint = ValueHint::DirPath)]
    path: PathBuf,

    /// Template to start from [default: minimal].
    #[arg(short, long, value_enum)]
    template: Option<Template>,

    /// One-line description written to agent.yaml.
    #[arg(short, long)]
    description: Option<String>,

    /// Never ask: use the defaults for what the command line does not give (nothing is
    /// asked either unless stdin and stderr are terminals).
    #[arg(short, long)]
    yes: bool,
}

/// A built-in agent template.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Template {
    /// No tools: agent.yaml, a system prompt to fill in, the default context.yaml.
    Minimal,
    /// Four deterministic file tools (list, read, write via stdin, count lines).
    HelloWorld,
}

/// Why `delta init` could not create the agent.
#[derive(Debug, thiserror::Error)]
pub enum InitError {
    /// The destination exists (file, directory or dangling symlink).
    #[error("`{}` already exists", path.display())]
    Exists { path: PathBuf },
    /// The path has no last component to name the agent after (it ends in `..`).
    #[error("`{}` does not name a new directory", path.display())]
    NoName { path: PathBuf },
    /// Creating a directory or writing a file failed.
    #[error("cannot create `{}`: {source}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    /// Reading an answer to a question failed.
    #[error("cannot read an answer from standard input: {0}")]
    Prompt(#[source] io::Error),
}

impl InitError {
    /// 1 for a failed command, 126 for a permission denied, 2 for an unusable NAME.
    pub(super) fn exit(&self) -> Exit {
        match self {
            InitError::Exists { .. } | InitError::Prompt(_) => Exit::Failure,
            InitError::NoName { .. } => Exit::Usage,
            InitError::Write { source, .. } => {
                if source.kind() == io::ErrorKind::PermissionDenied {
                    Exit::Config
                } else {
                    Exit::Failure
                }
            }
        }
    }

    pub(super) fn help(&self) -> Option<String> {
        match self {
            InitError::Exists { path } => Some(format!(
                "delta init never overwrites; choose another NAME or move `{}` away first",
                path.display()
            )),
            InitError::NoName { .. } => {
                Some("give the path of the directory to create, e.g. `delta init my-agent`".into())
            }
            InitError::Write { .. } | InitError::Prompt(_) => None,
        }
    }
}

impl Template {
    /// The text written as `description:` when none is given.
    fn default_description(self) -> &'static str {
        match self {
            Template::Minimal => "A Delta Engine agent.",
            Template::HelloWorld => "Lists, reads and writes files in its workspace.",
        }
    }

    /// `agent.yaml` and `system_prompt.md`, with `{{name}}` and `{{description}}` slots.
    fn sources(self) -> (&'static str, &'static str) {
        match self {
            Template::Minimal => (
                include_str!("init/minimal/agent.yaml"),
                include_str!("init/minimal/system_prompt.md"),
            ),
            Template::HelloWorld => (
                include_str!("init/hello-world/agent.yaml"),
                include_str!("init/hello-world/system_prompt.md"),
            ),
        }
    }

    /// The template's scripted model (examples/hello-world's, kept equal by a test).
    fn mock_script(self) -> Option<&'static str> {
        match self {
            Template::Minimal => None,
            Template::HelloWorld => Some(include_str!("init/hello-world/mock-script.yaml")),
        }
    }

    fn label(self) -> String {
        self.to_possible_value()
            .map(|value| value.get_name().to_owned())
            .unwrap_or_default()
    }
}

/// The files of a new agent, in the order they are written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentFiles {
    pub agent_yaml: String,
    pub system_prompt: String,
    pub context_yaml: String,
    /// A scripted model for mock-llm, so the agent runs with no key and no network.
    pub mock_script: Option<String>,
}

/// Render `template` for an agent called `name`.
///
/// In YAML the values are written as double-quoted scalars (JSON strings are valid YAML),
/// so a name like `1.0` or a description with `: #` stays a string.
pub fn render(template: Template, name: &str, description: &str) -> AgentFiles {
    let (agent_yaml, system_prompt) = template.sources();
    AgentFiles {
        agent_yaml: agent_yaml
            .replace("{{name}}", &yaml_string(name))
            .replace("{{description}}", &yaml_string(description)),
        system_prompt: system_prompt.replace("{{name}}", name),
        context_yaml: DEFAULT_CONTEXT_YAML.to_owned(),
        mock_script: template.mock_script().map(str::to_owned),
    }
}

fn yaml_string(value: &str) -> String {
    serde_json::Value::from(value).to_string()
}

impl InitArgs {
    pub(super) fn run(self) -> Result<Exit, InitError> {
        // Checked before asking anything, so nobody answers questions for nothing; the
        // `mkdir` below is still what guarantees nothing is overwritten.
        if fs::symlink_metadata(&self.path).is_ok() {
            return Err(InitError::Exists { path: self.path });
        }
        let name = self
            .path
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .ok_or_else(|| InitError::NoName {
                path: self.path.clone(),
            })?;

        // Questions need someone to read them (stderr) and to answer them (stdin).
        let interactive = !self.yes && io::stdin().is_terminal() && io::stderr().is_terminal();
        let template = match self.template {
            Some(template) => template,
            None if interactive => ask_template()?,
            None => Template::Minimal,
        };
        let description = match self.description {
            Some(description) => description,
            None if interactive => ask("Description", template.default_description())?,
            None => template.default_description().to_owned(),
        };

        create(&self.path, &render(template, &name, &description))?;
        render::stderr(&next_steps(&self.path, &name, template));
        Ok(Exit::Success)
    }
}

/// Create `dir` and write the agent's files into it; on failure remove what was made.
fn create(dir: &Path, files: &AgentFiles) -> Result<(), InitError> {
    let write_error = |path: &Path| {
        let path = path.to_path_buf();
        move |source| InitError::Write { path, source }
    };
    if let Some(parent) = dir.parent().filter(|parent| !parent.as_os_str().is_empty()) {
        fs::create_dir_all(parent).map_err(write_error(parent))?;
    }
    fs::create_dir(dir).map_err(|source| {
        if source.kind() == io::ErrorKind::AlreadyExists {
            InitError::Exists {
                path: dir.to_path_buf(),
            }
        } else {
            InitError::Write {
                path: dir.to_path_buf(),
                source,
            }
        }
    })?;

    let written = [
        ("agent.yaml", Some(&files.agent_yaml)),
        ("system_prompt.md", Some(&files.system_prompt)),
        ("context.yaml", Some(&files.context_yaml)),
        ("mock-script.yaml", files.mock_script.as_ref()),
    ]
    .into_iter()
    .filter_map(|(file, contents)| contents.map(|contents| (file, contents)))
    .try_for_each(|(file, contents)| {
        let path = dir.join(file);
        OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .and_then(|mut out| out.write_all(contents.as_bytes()))
            .map_err(write_error(&path))
    });
    if written.is_err() {
        // The directory did not exist a moment ago, so everything in it is ours.
        let _ = fs::remove_dir_all(dir);
    }
    written
}

/// Ask on stderr, read one line of stdin; an empty answer or end of input keeps `default`.
fn ask(question: &str, default: &str) -> Result<String, InitError> {
    render::stderr(&format!("{question} [{default}]: "));
    let mut answer = String::new();
    io::stdin()
        .lock()
        .read_line(&mut answer)
        .map_err(InitError::Prompt)?;
    let answer = answer.trim();
    Ok(if answer.is_empty() { default } else { answer }.to_owned())
}

fn ask_template() -> Result<Template, InitError> {
    let names: Vec<String> = Template::value_variants()
        .iter()
        .map(|template| template.label())
        .collect();
    let question = format!("Template ({})", names.join(", "));
    loop {
        let answer = ask(&question, &Template::Minimal.label())?;
        match Template::from_str(&answer, true) {
            Ok(template) => return Ok(template),
            Err(_) => render::warning(&format!("unknown template `{answer}`")),
        }
    }
}

fn next_steps(dir: &Path, name: &str, template: Template) -> String {
    let file = |file: &str| dir.join(file).display().to_string();
    let shown = dir.display().to_string();
    // Quoted so the suggested command can be pasted as is.
    let pasteable = quote(&shown);
    let width = file("system_prompt.md").chars().count();
    let mock = match template {
        Template::HelloWorld => format!(
            "  {script:width$}  a scripted model: runs with no key and no network\n",
            script = file("mock-script.yaml"),
        ),
        Template::Minimal => String::new(),
    };
    let try_it = match template {
        // Issue 30 item 10: the template had no mock script, and nothing said mock-llm
        // exists; a newcomer's first run needed a key.
        Template::HelloWorld => format!(
            "  Try it now, with no key and no network, against its scripted model (mock-llm \
             comes\n  with `cargo install --path crates/mock-llm`):\n  \
             mock-llm --script {script} --port 8089 &\n  \
             DELTA_BASE_URL=http://127.0.0.1:8089/v1 delta run --agent {pasteable} -y -m \
             \"Create hello.txt\"\n",
            script = quote(&file("mock-script.yaml")),
        ),
        Template::Minimal => "  Test it without a model: mock-llm serves a scripted one \
             (crates/mock-llm/README.md;\n  `delta init -t hello-world` comes with a \
             script).\n"
            .to_owned(),
    };
    format!(
        "Created agent `{name}` from template `{template}`:\n  \
         {agent:width$}  model and tools\n  \
         {prompt:width$}  instructions for the model\n  \
         {context:width$}  what the model sees on every call\n\
         {mock}\n{header}\n  \
         Edit the system prompt and the tools, then see how each tool will run:\n  \
         delta tool expand {pasteable}\n\
         {try_it}  \
         Reach a model: OpenAI with `export DELTA_API_KEY=sk-...`, or any OpenAI-compatible\n  \
         server with `export DELTA_BASE_URL=http://localhost:11434/v1` (Ollama; no key needed),\n  \
         and set llm.model in agent.yaml to a model it serves. Then run it:\n  \
         delta run --agent {pasteable} -y -m \"Say hello\"\n",
        template = template.label(),
        agent = file("agent.yaml"),
        prompt = file("system_prompt.md"),
        context = file("context.yaml"),
        header = render::styled("Next steps:", render::HEADER),
    )
}
