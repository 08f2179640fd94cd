//! Errors of the tool system: configuration errors found while expanding a tool
//! ([`ToolError`], shown to the user at load time) and argument errors found while building
//! a call ([`ArgumentError`], shown to the model as an observation).
//!
//! Where seed 003 words a message, [`ToolError`]'s `Display` is that message verbatim; the
//! other messages follow its style: what is wrong, naming the parameter or character.

use delta_config::tool::InjectAs;

/// A tool definition that cannot be expanded. `Display` is the one-line message; [`help`]
/// gives the fix. The config loader adds the file, line and column.
///
/// [`help`]: ToolError::help
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolError {
    /// None, or more than one, of `exec:`, `shell:` and `command:` is present.
    #[error("Tool must specify exactly one of: exec, shell, or command")]
    ModeCount {
        /// The keys that were present (empty when none).
        found: Vec<&'static str>,
    },

    /// The name cannot be an OpenAI function name.
    #[error(
        "Invalid tool name '{name}': a tool name must be 1 to 64 characters, each a letter, digit, '_' or '-'"
    )]
    InvalidToolName {
        /// The name as written.
        name: String,
    },

    /// The name of the engine's built-in tool.
    #[error("Tool name '{name}' is reserved for the engine's built-in tool")]
    ReservedToolName {
        /// The name as written.
        name: String,
    },

    /// `timeout_ms: 0`.
    #[error("timeout_ms must be greater than 0")]
    ZeroTimeout,

    /// An `exec:` or `shell:` template with nothing to run.
    #[error("{mode}: template is empty")]
    EmptyTemplate {
        /// `exec` or `shell`.
        mode: &'static str,
    },

    /// `command: []`, or an empty program name.
    #[error("command: must start with the program to run (found an empty {what})")]
    EmptyCommand {
        /// `list` or `program name`.
        what: &'static str,
    },

    /// An unquoted shell operator in an `exec:` template (seed 003 §10 Test 1.1/1.2).
    #[error(
        "Shell metacharacter '{token}' not allowed in exec: mode. Use shell: mode or remove {what}."
    )]
    ShellMetacharacter {
        /// The operator as written (`|`, `&&`, `>`, `$(` …).
        token: String,
        /// What the operator is (`pipe`, `redirection` …).
        what: &'static str,
    },

    /// A quote, command substitution or similar opened and never closed.
    #[error("Unterminated {what} in {mode}: template (opened at line {line}, column {column})")]
    Unterminated {
        /// `single quote`, `double quote`, `command substitution '$('` …
        what: &'static str,
        /// `exec` or `shell`.
        mode: &'static str,
        /// 1-based line within the template.
        line: usize,
        /// 1-based column (in characters) within that line.
        column: usize,
    },

    /// A backslash with nothing after it at the end of an `exec:` template.
    #[error("exec: template ends with a lone backslash")]
    TrailingBackslash,

    /// `${` that does not form `${name}` or `${name:raw}`.
    #[error("Malformed placeholder '{text}' in {mode}: template: {reason}")]
    MalformedPlaceholder {
        /// The placeholder as written (cut at the end of its line).
        text: String,
        /// `exec` or `shell`.
        mode: &'static str,
        /// Why it is malformed.
        reason: &'static str,
    },

    /// `${name:raw}` in `exec:` or a `raw: true` parameter of a `command:` tool
    /// (seed 003 §10 Test 3.2).
    #[error(":raw modifier is only allowed in shell: mode")]
    RawOutsideShell {
        /// The parameter carrying the modifier.
        name: String,
    },

    /// `${AGENT_HOME:raw}`: engine variables are substituted at load time, never quoted.
    #[error("Engine variable ${{{name}}} does not take a :raw modifier")]
    RawOnEngineVariable {
        /// `AGENT_HOME` or `CWD`.
        name: String,
    },

    /// `'${x}'` in `shell:`: sh never expands anything inside single quotes.
    #[error(
        "Placeholder ${{{name}}} is inside {quoting} in shell: mode, where sh never substitutes it"
    )]
    PlaceholderNotExpanded {
        /// The parameter.
        name: String,
        /// `single quotes` or `a quoted here-document`.
        quoting: &'static str,
    },

    /// The same parameter written both as `${x}` and `${x:raw}`.
    #[error("Placeholder ${{{name}}} is used both with and without :raw")]
    MixedRaw {
        /// The parameter.
        name: String,
    },

    /// An explicit `inject_as` that differs from the inferred one (seed 003 §3.7.1).
    #[error(
        "Cannot override inject_as for parameter '{name}' (inferred: {}, explicit: {})",
        inferred.as_str(),
        explicit.as_str()
    )]
    InjectAsOverride {
        /// The parameter.
        name: String,
        /// What the template (or `stdin:`) implies.
        inferred: InjectAs,
        /// What `parameters:` says.
        explicit: InjectAs,
    },

    /// An explicit `position` that differs from the inferred one (seed 003 §3.7.1).
    #[error(
        "Cannot override position for parameter '{name}' (inferred: {inferred}, explicit: {explicit})"
    )]
    PositionOverride {
        /// The parameter.
        name: String,
        /// Its order of first appearance in the template.
        inferred: u32,
        /// What `parameters:` says.
        explicit: u32,
    },

    /// A position on the standard-input parameter, which has none.
    #[error("Parameter '{name}' is passed on stdin and cannot have a position")]
    StdinPosition {
        /// The parameter.
        name: String,
    },

    /// `raw: true` in `parameters:` for a placeholder written without `:raw`.
    #[error(":raw modifier must be specified in template syntax (${{{name}:raw}})")]
    RawInParameters {
        /// The parameter.
        name: String,
    },

    /// `raw: false` in `parameters:` for a placeholder written with `:raw`.
    #[error(
        ":raw modifier must be removed in template syntax (${{{name}}} instead of ${{{name}:raw}})"
    )]
    RawRemovedInParameters {
        /// The parameter.
        name: String,
    },

    /// An explicit parameter that the template never mentions (seed 003 §10 Test 7.3).
    #[error("Parameter '{name}' not found in template")]
    UndefinedParameter {
        /// The parameter.
        name: String,
    },

    /// `stdin: x` while the template also uses `${x}`.
    #[error("Parameter '{name}' is declared as stdin but also used as ${{{name}}} in the template")]
    StdinAlsoPlaceholder {
        /// The parameter.
        name: String,
    },

    /// More than one standard-input parameter.
    #[error("At most one parameter may use inject_as: stdin (found '{first}' and '{second}')")]
    MultipleStdin {
        /// The first one declared.
        first: String,
        /// The next one.
        second: String,
    },

    /// A `type:` other than `string`.
    #[error("Parameter '{name}' has type '{found}'; only type 'string' is supported")]
    UnsupportedType {
        /// The parameter.
        name: String,
        /// The type as written.
        found: String,
    },

    /// `inject_as: option` without a flag to write before the value.
    #[error("Parameter '{name}' uses inject_as: option but has no option_name")]
    MissingOptionName {
        /// The parameter.
        name: String,
    },

    /// `option_name` on a parameter that is not an option.
    #[error(
        "Parameter '{name}' has option_name but is injected as {}; option_name is only used with inject_as: option",
        inject_as.as_str()
    )]
    OptionNameWithoutOption {
        /// The parameter.
        name: String,
        /// How it is injected.
        inject_as: InjectAs,
    },

    /// The same parameter listed twice in `parameters:`.
    #[error("Parameter '{name}' is defined more than once")]
    DuplicateParameter {
        /// The parameter.
        name: String,
    },

    /// Two `command:` parameters claiming the same position.
    #[error("Parameters '{first}' and '{second}' both have position {position}")]
    DuplicatePosition {
        /// The first one declared.
        first: String,
        /// The next one.
        second: String,
        /// The shared position.
        position: u32,
    },

    /// A parameter name the model could not send or a template could not name.
    #[error(
        "Invalid parameter name '{name}': a parameter name must start with a letter or '_' and contain only letters, digits and '_'"
    )]
    InvalidParameterName {
        /// The name as written.
        name: String,
    },

    /// `agent:` together with a command form.
    #[error("An agent tool runs a sub-agent, not a command: it cannot also have {}", .found.join(", "))]
    AgentWithCommand {
        /// The command keys present.
        found: Vec<&'static str>,
    },

    /// A key that means nothing for an agent tool (`stdin`, `timeout_ms`), or an agent
    /// tool's key on a command tool (`message`, `workspace`).
    #[error("`{key}` {why}")]
    MisplacedKey {
        /// The key.
        key: &'static str,
        /// Why it does not belong.
        why: &'static str,
    },

    /// A per-parameter key that only places a value on a command line.
    #[error(
        "Parameter '{name}' of an agent tool cannot have `{key}`: its value goes into the sub-agent's task"
    )]
    AgentParameterKey {
        /// The parameter.
        name: String,
        /// The key.
        key: &'static str,
    },

    /// `workspace:` that is not a plain relative path inside the calling run's workspace.
    #[error(
        "The sub-agent workspace '{path}' must be a relative path inside the calling run's workspace (no '..', not absolute)"
    )]
    AgentWorkspace {
        /// The path as written.
        path: String,
    },

    /// `agent:` or `message:` written empty.
    #[error("`{key}` of an agent tool is empty")]
    AgentEmpty {
        /// The key.
        key: &'static str,
    },
}

impl ToolError {
    /// A one-line suggestion for fixing the definition, printed as `= help:`.
    pub fn help(&self) -> Option<String> {
        let help = match self {
            ToolError::ModeCount { found } if found.is_empty() => {
                "add one of `exec: \"ls -la ${directory}\"`, `shell: \"cat ${file} | wc -l\"` or `command: [ls, -la]`".to_string()
            }
            ToolError::ModeCount { found } => {
                format!("keep only one of: {}", found.join(", "))
            }
            ToolError::InvalidToolName { name } => {
                let fixed: String = name
                    .chars()
                    .map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' })
                    .take(64)
                    .collect();
                if fixed.is_empty() {
                    "give the tool a name such as `list_files`".to_string()
                } else {
                    format!("rename it, e.g. `name: {fixed}`")
                }
            }
            ToolError::ReservedToolName { .. } => {
                "choose another name; `ask_human` is always offered to the model".to_string()
            }
            ToolError::ZeroTimeout => {
                "remove `timeout_ms` to use the default of 120000, or give a positive number of milliseconds".to_string()
            }
            ToolError::EmptyTemplate { mode } => {
                format!("write the command to run, e.g. `{mode}: \"ls -la ${{directory}}\"`")
            }
            ToolError::EmptyCommand { .. } => {
                "list the program first, then its fixed arguments, e.g. `command: [ls, -la]`".to_string()
            }
            ToolError::ShellMetacharacter { token, .. } => format!(
                "exec: runs the program directly, without a shell; write `shell:` instead of `exec:` to use '{token}', or quote it (\"{token}\") to pass it as literal text"
            ),
            ToolError::Unterminated { what, mode, .. } => {
                if *mode == "shell" && what.starts_with("command substitution") {
                    "close it; a case pattern inside $( ) must be written with a leading parenthesis, e.g. `(a) …`".to_string()
                } else {
                    format!("close the {what}, or escape it with a backslash if it is meant literally")
                }
            }
            ToolError::TrailingBackslash => {
                "remove the backslash, or write \\\\ for a literal backslash".to_string()
            }
            ToolError::MalformedPlaceholder { mode, .. } => {
                if *mode == "shell" {
                    "placeholders are ${name} or ${name:raw}; for a shell variable write $NAME without braces, or \\${NAME} for literal text".to_string()
                } else {
                    "placeholders are ${name}; write \\${ for literal text".to_string()
                }
            }
            ToolError::RawOutsideShell { name } => format!(
                "use `shell:` mode for shell word splitting, or write ${{{name}}} to pass the value as one argument"
            ),
            ToolError::RawOnEngineVariable { name } => format!("write ${{{name}}}"),
            ToolError::PlaceholderNotExpanded { name, quoting } => {
                if *quoting == "single quotes" {
                    format!(
                        "close the single quotes around it, e.g. 'text '${{{name}}}' more', or use double quotes"
                    )
                } else {
                    "remove the quotes around the here-document delimiter (<<EOF instead of <<'EOF')".to_string()
                }
            }
            ToolError::MixedRaw { name } => format!(
                "write every occurrence as ${{{name}}} (one safe word) or every one as ${{{name}:raw}}"
            ),
            ToolError::InjectAsOverride { name, inferred, .. } => match inferred {
                InjectAs::Argument => format!(
                    "remove `inject_as`; to pass '{name}' on standard input, drop ${{{name}}} from the template and write `stdin: {name}`"
                ),
                InjectAs::Stdin | InjectAs::Option => format!(
                    "remove `inject_as`: `stdin: {name}` already passes it on standard input"
                ),
            },
            ToolError::PositionOverride { .. } => {
                "remove `position`; the order of placeholders in the template decides it".to_string()
            }
            ToolError::StdinPosition { .. } => "remove `position`".to_string(),
            ToolError::RawInParameters { name } => {
                format!("remove `raw` and write ${{{name}:raw}} in the template")
            }
            ToolError::RawRemovedInParameters { name } => {
                format!("remove `raw: false` and write ${{{name}}} in the template")
            }
            ToolError::UndefinedParameter { name } => format!(
                "use ${{{name}}} in the template, declare `stdin: {name}`, or remove the parameter"
            ),
            ToolError::StdinAlsoPlaceholder { name } => format!(
                "a value goes either on standard input or on the command line: remove ${{{name}}} from the template or remove `stdin: {name}`"
            ),
            ToolError::MultipleStdin { .. } => {
                "a process has one standard input; pass the other value as an argument".to_string()
            }
            ToolError::UnsupportedType { .. } => {
                "remove `type` or write `type: string`; numbers and booleans from the model arrive as text".to_string()
            }
            ToolError::MissingOptionName { .. } => {
                "add the flag, e.g. `option_name: \"--port\"`".to_string()
            }
            ToolError::OptionNameWithoutOption { .. } => {
                "remove `option_name`, or set `inject_as: option` in a `command:` tool".to_string()
            }
            ToolError::DuplicateParameter { .. } => {
                "merge the two entries into one".to_string()
            }
            ToolError::DuplicatePosition { .. } => {
                "give each parameter its own position".to_string()
            }
            ToolError::InvalidParameterName { .. } => {
                "rename it, e.g. `file_path`".to_string()
            }
            ToolError::AgentWithCommand { found } => format!(
                "remove {}, or make it a separate tool",
                found.join(", ")
            ),
            ToolError::MisplacedKey { key, .. } => format!("remove `{key}`"),
            ToolError::AgentParameterKey { key, .. } => format!("remove `{key}`"),
            ToolError::AgentWorkspace { .. } => {
                "name a directory inside the workspace, e.g. `workspace: reviews`".to_string()
            }
            ToolError::AgentEmpty { key } => match *key {
                "agent" => "name the sub-agent's directory, e.g. `agent: ./reviewer`".to_string(),
                _ => "write the task, e.g. `message: \"Review ${file}\"`, or remove `message` to let the model write it".to_string(),
            },
        };
        Some(help)
    }
}

/// Arguments from the model that do not fit the tool. The engine sends `Display` back to
/// the model as the observation, so it is worded for the model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArgumentError {
    /// Names that are not parameters of the tool.
    #[error("{}", unknown_message(.tool, .names, .accepted))]
    Unknown {
        /// The tool called.
        tool: String,
        /// The names that do not exist.
        names: Vec<String>,
        /// Every parameter name of the tool.
        accepted: Vec<String>,
    },
    /// Required parameters without a value or default.
    #[error("{}", missing_message(.tool, .names))]
    Missing {
        /// The tool called.
        tool: String,
        /// The parameters missing.
        names: Vec<String>,
    },
    /// A value that the operating system cannot carry in an argument.
    #[error(
        "Parameter '{name}' of tool '{tool}' contains a NUL character (\\u0000), which cannot be passed as a command-line argument. Remove it and call the tool again."
    )]
    Nul {
        /// The tool called.
        tool: String,
        /// The parameter.
        name: String,
    },
}

fn quoted_list(names: &[String]) -> String {
    names
        .iter()
        .map(|n| format!("'{n}'"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn unknown_message(tool: &str, names: &[String], accepted: &[String]) -> String {
    let what = if names.len() == 1 {
        "Unknown parameter"
    } else {
        "Unknown parameters"
    };
    let accepted = if accepted.is_empty() {
        format!("Tool '{tool}' takes no parameters.")
    } else {
        format!("Accepted parameters: {}.", quoted_list(accepted))
    };
    format!(
        "{what} {} for tool '{tool}'. {accepted} Call the tool again with only these names.",
        quoted_list(names)
    )
}

fn missing_message(tool: &str, names: &[String]) -> String {
    let what = if names.len() == 1 {
        "Missing required parameter"
    } else {
        "Missing required parameters"
    };
    format!(
        "{what} {} for tool '{tool}'. Call the tool again with a value for each.",
        quoted_list(names)
    )
}
