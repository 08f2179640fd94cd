//! The ToolExpander of seed 003 §5: validates one [`ToolDef`] and expands `exec:`/`shell:`
//! sugar into the internal [`ToolSpec`], merging explicit `parameters:` by §3.7.1.
//!
//! Expansion forms:
//! - `shell: SCRIPT` → `command: ["sh", "-c", REWRITTEN, "--"]`, one argument parameter per
//!   distinct placeholder, `position` = order of first appearance (see [`super::shell`]).
//! - `exec: TEMPLATE` → when every placeholder is a whole word (`${f}` or `"${f}"`), each
//!   placeholder appears once, and all of them come after the fixed words (every example in
//!   the seeds), `command` is the fixed prefix and the parameters carry positions 0..n
//!   (seed 003 §4.1). Otherwise (`--out=${f}`, `grep ${p} file.txt`, `${f}` twice) the
//!   words with placeholders stay in `command` in place, e.g.
//!   `command: ["grep", "${pattern}", "file.txt"]`; the parameters still get positions by
//!   first appearance, for the record, but the template decides where values go. That form
//!   has no v1.1 spelling, so `delta tool expand` output using it is for reading only.
//! - `command: [...]` (v1.1) → kept as literal words; parameters as declared.
//!
//! `${AGENT_HOME}` and `${CWD}` are replaced by [`EngineVars`] in all three forms (in a
//! `command:` array only those two exact spellings are touched). `stdin: NAME` declares the
//! one standard-input parameter in every form.

use std::collections::HashSet;

use super::error::ToolError;
use super::shell::rewrite_shell;
use super::spec::{CommandPart, Origin, ParamSpec, TemplatePiece, ToolSpec};
use super::template::{Piece, Word, is_identifier, lex_exec};
use super::vars::EngineVars;
use delta_config::tool::{InjectAs, ParamDef, ToolDef};

/// Name of the engine's built-in tool, which configuration may not redefine.
pub const ASK_HUMAN_TOOL: &str = "ask_human";

/// Validates `def` and expands it into the internal form.
pub fn expand(def: &ToolDef, vars: &EngineVars) -> Result<ToolSpec, ToolError> {
    check_tool_name(&def.name)?;
    for (key, present) in [
        ("message", def.message.is_some()),
        ("workspace", def.workspace.is_some()),
    ] {
        if present {
            return Err(ToolError::MisplacedKey {
                key,
                why: "belongs to agent tools (with `agent:`); a command tool takes its \
                      input from its parameters",
            });
        }
    }
    if def.timeout_ms == Some(0) {
        return Err(ToolError::ZeroTimeout);
    }
    let explicit = def.parameters.as_deref().unwrap_or_default();
    check_explicit(explicit)?;
    if let Some(stdin) = &def.stdin {
        check_param_name(stdin)?;
    }

    let (command, parameters, origin) = match (&def.exec, &def.shell, &def.command) {
        (Some(template), None, None) => {
            let (command, inferred) = expand_exec(template, vars)?;
            (command, merge(inferred, def, explicit)?, Origin::Exec)
        }
        (None, Some(template), None) => {
            let (command, inferred) = expand_shell(template, vars)?;
            (command, merge(inferred, def, explicit)?, Origin::Shell)
        }
        (None, None, Some(argv)) => (
            expand_command(argv, vars)?,
            command_params(def, explicit)?,
            Origin::Command,
        ),
        (exec, shell, command) => {
            let found = [
                exec.as_ref().map(|_| "exec"),
                shell.as_ref().map(|_| "shell"),
                command.as_ref().map(|_| "command"),
            ];
            return Err(ToolError::ModeCount {
                found: found.into_iter().flatten().collect(),
            });
        }
    };

    Ok(ToolSpec {
        name: def.name.clone(),
        description: def.description.clone(),
        command,
        parameters,
        timeout_ms: def.timeout_ms,
        origin,
    })
}

pub(super) fn check_tool_name(name: &str) -> Result<(), ToolError> {
    let valid = (1..=64).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if !valid {
        return Err(ToolError::InvalidToolName {
            name: name.to_string(),
        });
    }
    if name == ASK_HUMAN_TOOL {
        return Err(ToolError::ReservedToolName {
            name: name.to_string(),
        });
    }
    Ok(())
}

fn check_param_name(name: &str) -> Result<(), ToolError> {
    if is_identifier(name) && name.len() <= 64 {
        Ok(())
    } else {
        Err(ToolError::InvalidParameterName {
            name: name.to_string(),
        })
    }
}

/// Checks that hold for `parameters:` in every form.
pub(super) fn check_explicit(explicit: &[ParamDef]) -> Result<(), ToolError> {
    let mut seen = HashSet::new();
    for param in explicit {
        check_param_name(&param.name)?;
        if !seen.insert(param.name.as_str()) {
            return Err(ToolError::DuplicateParameter {
                name: param.name.clone(),
            });
        }
        if let Some(found) = param.param_type.as_deref().filter(|t| *t != "string") {
            return Err(ToolError::UnsupportedType {
                name: param.name.clone(),
                found: found.to_string(),
            });
        }
    }
    Ok(())
}

/// A parameter as the template (or `stdin:`) implies it, before `parameters:` are merged.
struct Inferred {
    name: String,
    inject_as: InjectAs,
    position: Option<u32>,
    raw: bool,
}

impl Inferred {
    fn argument(name: String, position: usize, raw: bool) -> Self {
        Inferred {
            name,
            inject_as: InjectAs::Argument,
            position: Some(u32::try_from(position).unwrap_or(u32::MAX)),
            raw,
        }
    }
}

fn expand_exec(
    template: &str,
    vars: &EngineVars,
) -> Result<(Vec<CommandPart>, Vec<Inferred>), ToolError> {
    let words = lex_exec(template, vars)?;
    if words.is_empty() {
        return Err(ToolError::EmptyTemplate { mode: "exec" });
    }
    let mut names: Vec<String> = Vec::new();
    for word in &words {
        for piece in &word.0 {
            if let Piece::Param(name) = piece
                && !names.contains(name)
            {
                names.push(name.clone());
            }
        }
    }
    let inferred = names
        .into_iter()
        .enumerate()
        .map(|(position, name)| Inferred::argument(name, position, false))
        .collect();

    let prefix_len = words
        .iter()
        .take_while(|w| w.0.iter().all(|p| matches!(p, Piece::Text(_))))
        .count();
    let tail = &words[prefix_len..];
    let mut tail_names = HashSet::new();
    let appended = prefix_len > 0
        && tail
            .iter()
            .all(|w| w.sole_param().is_some_and(|name| tail_names.insert(name)));
    let kept = if appended {
        &words[..prefix_len]
    } else {
        &words[..]
    };
    let command = kept.iter().map(command_part).collect();
    Ok((command, inferred))
}

fn command_part(word: &Word) -> CommandPart {
    match word.0.as_slice() {
        [] => CommandPart::Literal(String::new()),
        [Piece::Text(text)] => CommandPart::Literal(text.clone()),
        pieces => CommandPart::Template(
            pieces
                .iter()
                .map(|piece| match piece {
                    Piece::Text(text) => TemplatePiece::Text(text.clone()),
                    Piece::Param(name) => TemplatePiece::Param(name.clone()),
                })
                .collect(),
        ),
    }
}

fn expand_shell(
    template: &str,
    vars: &EngineVars,
) -> Result<(Vec<CommandPart>, Vec<Inferred>), ToolError> {
    if template.trim().is_empty() {
        return Err(ToolError::EmptyTemplate { mode: "shell" });
    }
    let rewritten = rewrite_shell(template, vars)?;
    let command = ["sh", "-c", &rewritten.script, "--"]
        .into_iter()
        .map(|s| CommandPart::Literal(s.to_string()))
        .collect();
    let inferred = rewritten
        .params
        .into_iter()
        .enumerate()
        .map(|(position, (name, raw))| Inferred::argument(name, position, raw))
        .collect();
    Ok((command, inferred))
}

fn expand_command(argv: &[String], vars: &EngineVars) -> Result<Vec<CommandPart>, ToolError> {
    match argv.first() {
        None => return Err(ToolError::EmptyCommand { what: "list" }),
        Some(program) if program.is_empty() => {
            return Err(ToolError::EmptyCommand {
                what: "program name",
            });
        }
        Some(_) => {}
    }
    Ok(argv
        .iter()
        .map(|arg| CommandPart::Literal(vars.substitute(arg)))
        .collect())
}

/// Seed 003 §3.7.1: inferred parameters plus `stdin:`, enriched by `parameters:`.
fn merge(
    mut inferred: Vec<Inferred>,
    def: &ToolDef,
    explicit: &[ParamDef],
) -> Result<Vec<ParamSpec>, ToolError> {
    if let Some(stdin) = &def.stdin {
        if inferred.iter().any(|p| p.name == *stdin) {
            return Err(ToolError::StdinAlsoPlaceholder {
                name: stdin.clone(),
            });
        }
        inferred.push(Inferred {
            name: stdin.clone(),
            inject_as: InjectAs::Stdin,
            position: None,
            raw: false,
        });
    }
    for param in explicit {
        let Some(base) = inferred.iter().find(|p| p.name == param.name) else {
            return Err(ToolError::UndefinedParameter {
                name: param.name.clone(),
            });
        };
        check_override(base, param)?;
    }
    Ok(inferred
        .into_iter()
        .map(|base| {
            let over = explicit.iter().find(|p| p.name == base.name);
            ParamSpec {
                description: over.and_then(|p| p.description.clone()),
                default: over.and_then(|p| p.default.clone()),
                required: over.and_then(|p| p.required),
                name: base.name,
                inject_as: base.inject_as,
                position: base.position,
                option_name: None,
                raw: base.raw,
            }
        })
        .collect())
}

/// The structural contract comes from the template; `parameters:` may only restate it.
fn check_override(base: &Inferred, param: &ParamDef) -> Result<(), ToolError> {
    let name = || param.name.clone();
    if let Some(explicit) = param.inject_as.filter(|&i| i != base.inject_as) {
        return Err(ToolError::InjectAsOverride {
            name: name(),
            inferred: base.inject_as,
            explicit,
        });
    }
    if let Some(explicit) = param.position {
        match base.position {
            None => return Err(ToolError::StdinPosition { name: name() }),
            Some(inferred) if inferred != explicit => {
                return Err(ToolError::PositionOverride {
                    name: name(),
                    inferred,
                    explicit,
                });
            }
            Some(_) => {}
        }
    }
    match (param.raw, base.raw) {
        (Some(true), false) => return Err(ToolError::RawInParameters { name: name() }),
        (Some(false), true) => return Err(ToolError::RawRemovedInParameters { name: name() }),
        (Some(_) | None, _) => {}
    }
    if param.option_name.is_some() {
        return Err(ToolError::OptionNameWithoutOption {
            name: name(),
            inject_as: base.inject_as,
        });
    }
    Ok(())
}

/// Parameters of a v1.1 `command:` tool, validated.
fn command_params(def: &ToolDef, explicit: &[ParamDef]) -> Result<Vec<ParamSpec>, ToolError> {
    let mut params: Vec<ParamSpec> = Vec::with_capacity(explicit.len() + 1);
    for param in explicit {
        let stdin_keyword = def.stdin.as_deref() == Some(param.name.as_str());
        let inject_as = match param.inject_as {
            Some(explicit) if stdin_keyword && explicit != InjectAs::Stdin => {
                return Err(ToolError::InjectAsOverride {
                    name: param.name.clone(),
                    inferred: InjectAs::Stdin,
                    explicit,
                });
            }
            _ if stdin_keyword => InjectAs::Stdin,
            Some(explicit) => explicit,
            None => InjectAs::Argument,
        };
        if param.raw == Some(true) {
            return Err(ToolError::RawOutsideShell {
                name: param.name.clone(),
            });
        }
        let option_name = param.option_name.clone().filter(|o| !o.is_empty());
        match (inject_as, &option_name) {
            (InjectAs::Option, None) => {
                return Err(ToolError::MissingOptionName {
                    name: param.name.clone(),
                });
            }
            (InjectAs::Argument | InjectAs::Stdin, Some(_)) => {
                return Err(ToolError::OptionNameWithoutOption {
                    name: param.name.clone(),
                    inject_as,
                });
            }
            (InjectAs::Option, Some(_)) | (InjectAs::Argument | InjectAs::Stdin, None) => {}
        }
        if inject_as == InjectAs::Stdin && param.position.is_some() {
            return Err(ToolError::StdinPosition {
                name: param.name.clone(),
            });
        }
        params.push(ParamSpec {
            name: param.name.clone(),
            description: param.description.clone(),
            inject_as,
            position: param.position,
            option_name,
            default: param.default.clone(),
            required: param.required,
            raw: false,
        });
    }
    if let Some(stdin) = &def.stdin
        && !params.iter().any(|p| p.name == *stdin)
    {
        params.push(ParamSpec {
            name: stdin.clone(),
            description: None,
            inject_as: InjectAs::Stdin,
            position: None,
            option_name: None,
            default: None,
            required: None,
            raw: false,
        });
    }

    let mut stdin_params = params.iter().filter(|p| p.inject_as == InjectAs::Stdin);
    if let (Some(first), Some(second)) = (stdin_params.next(), stdin_params.next()) {
        return Err(ToolError::MultipleStdin {
            first: first.name.clone(),
            second: second.name.clone(),
        });
    }
    for (i, param) in params.iter().enumerate() {
        let Some(position) = param.position else {
            continue;
        };
        if let Some(other) = params[i + 1..]
            .iter()
            .find(|p| p.position == Some(position))
        {
            return Err(ToolError::DuplicatePosition {
                first: param.name.clone(),
                second: other.name.clone(),
                position,
            });
        }
    }
    Ok(params)
}
