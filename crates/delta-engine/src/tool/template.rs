//! Template text: the `${name}` / `${name:raw}` placeholder syntax shared by both modes, and
//! the POSIX-word lexer that splits an `exec:` template into argv words.
//!
//! The lexer is hand-written rather than `shlex::split` because it must know, for every
//! character, whether it stood quoted: DESIGN.md accepts shell metacharacters inside quotes
//! (they are literal text no shell will ever see) and rejects them unquoted, and
//! placeholders must be told apart from literal `${` written as `\${`.
//!
//! Rules (POSIX shell word rules where a shell would apply, without any expansion):
//! - blanks and newlines separate words; a backslash escapes the next character and a
//!   backslash-newline is removed;
//! - inside `'…'` every character is literal except placeholders (no shell will run, so a
//!   placeholder there still means the parameter; write `\${` outside quotes for literal
//!   text); inside `"…"` a backslash escapes only `$`, `` ` ``, `"`, `\` and newline;
//! - unquoted `|`, `&`, `;`, `<`, `>`, `` ` ``, `$(` and `$NAME` are rejected, as a shell
//!   would act on them; `#`, `*`, `?`, `~`, `(` and `)` are plain characters (Python's
//!   `shlex.split` treats them the same way);
//! - a placeholder never splits or joins words: `--out=${file}` stays one argument.

use super::error::ToolError;
use super::vars::EngineVars;

/// A parsed `${…}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Placeholder {
    /// A tool parameter.
    Param { name: String, raw: bool },
    /// `${AGENT_HOME}` or `${CWD}`, already resolved to its value.
    Engine(String),
}

/// Parses the placeholder whose `$` is at `chars[start]` (with `{` after it).
/// Returns it and the index just past its `}`.
pub(crate) fn parse_placeholder(
    chars: &[char],
    start: usize,
    mode: &'static str,
    vars: &EngineVars,
) -> Result<(Placeholder, usize), ToolError> {
    let body_start = start + 2;
    let close = chars[body_start..]
        .iter()
        .position(|&c| c == '}' || c == '\n')
        .map(|off| body_start + off)
        .filter(|&i| chars[i] == '}');
    let Some(close) = close else {
        let end = chars[start..]
            .iter()
            .position(|&c| c == '\n')
            .map_or(chars.len(), |off| start + off);
        return Err(malformed(&chars[start..end], mode, "missing closing '}'"));
    };
    let body: String = chars[body_start..close].iter().collect();
    let text = &chars[start..=close];
    let (name, modifier) = match body.split_once(':') {
        Some((name, modifier)) => (name, Some(modifier)),
        None => (body.as_str(), None),
    };
    if name.is_empty() {
        return Err(malformed(text, mode, "the parameter name is empty"));
    }
    if !is_identifier(name) {
        return Err(malformed(
            text,
            mode,
            "a parameter name starts with a letter or '_' and contains only letters, digits and '_'",
        ));
    }
    let raw = match modifier {
        None => false,
        Some("raw") => true,
        Some(_) => return Err(malformed(text, mode, "the only modifier is :raw")),
    };
    let engine = match name {
        "AGENT_HOME" => Some(&vars.agent_home),
        "CWD" => Some(&vars.cwd),
        _ => None,
    };
    let placeholder = match engine {
        Some(_) if raw => {
            return Err(ToolError::RawOnEngineVariable {
                name: name.to_string(),
            });
        }
        Some(path) => Placeholder::Engine(path.to_string_lossy().into_owned()),
        None => Placeholder::Param {
            name: name.to_string(),
            raw,
        },
    };
    Ok((placeholder, close + 1))
}

fn malformed(text: &[char], mode: &'static str, reason: &'static str) -> ToolError {
    const SHOWN: usize = 40;
    let mut shown: String = text.iter().take(SHOWN).collect();
    if text.len() > SHOWN {
        shown.push('…');
    }
    ToolError::MalformedPlaceholder {
        text: shown,
        mode,
        reason,
    }
}

/// `[A-Za-z_][A-Za-z0-9_]*`: a name that can appear in a placeholder.
pub(crate) fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// 1-based line and column (in characters) of `chars[index]`.
pub(crate) fn line_col(chars: &[char], index: usize) -> (usize, usize) {
    let before = &chars[..index.min(chars.len())];
    let line = before.iter().filter(|&&c| c == '\n').count() + 1;
    let column = before.iter().rev().take_while(|&&c| c != '\n').count() + 1;
    (line, column)
}

/// One piece of an `exec:` word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Piece {
    Text(String),
    Param(String),
}

/// One argv element of an `exec:` template: literal text and placeholders, in order, with
/// adjacent text merged and no empty text pieces.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Word(pub(crate) Vec<Piece>);

impl Word {
    fn push_text(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        if let Some(Piece::Text(last)) = self.0.last_mut() {
            last.push_str(text);
        } else {
            self.0.push(Piece::Text(text.to_string()));
        }
    }

    /// The parameter name if the word is exactly one placeholder (`${f}`, `"${f}"`).
    pub(crate) fn sole_param(&self) -> Option<&str> {
        match self.0.as_slice() {
            [Piece::Param(name)] => Some(name),
            _ => None,
        }
    }
}

/// Splits an `exec:` template into words. Engine variables are substituted as literal text
/// (they cannot split a word, whatever the path contains).
pub(crate) fn lex_exec(template: &str, vars: &EngineVars) -> Result<Vec<Word>, ToolError> {
    ExecLexer {
        chars: template.chars().collect(),
        pos: 0,
        vars,
        words: Vec::new(),
        current: None,
    }
    .run()
}

struct ExecLexer<'a> {
    chars: Vec<char>,
    pos: usize,
    vars: &'a EngineVars,
    words: Vec<Word>,
    /// `Some` once a word has started, even if empty (`""` is an empty argument).
    current: Option<Word>,
}

impl ExecLexer<'_> {
    fn run(mut self) -> Result<Vec<Word>, ToolError> {
        while let Some(c) = self.peek(0) {
            match c {
                ' ' | '\t' | '\n' | '\r' => {
                    self.finish_word();
                    self.pos += 1;
                }
                '\\' => match self.peek(1) {
                    None => return Err(ToolError::TrailingBackslash),
                    Some('\n') => self.pos += 2,
                    Some(escaped) => {
                        self.text(escaped);
                        self.pos += 2;
                    }
                },
                '\'' => self.single_quoted()?,
                '"' => self.double_quoted()?,
                '$' => self.dollar()?,
                '|' | '&' | ';' | '<' | '>' | '`' => return Err(self.metacharacter(c)),
                other => {
                    self.text(other);
                    self.pos += 1;
                }
            }
        }
        self.finish_word();
        Ok(self.words)
    }

    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.pos + ahead).copied()
    }

    fn word(&mut self) -> &mut Word {
        self.current.get_or_insert_with(Word::default)
    }

    fn text(&mut self, c: char) {
        let mut buf = [0u8; 4];
        self.word().push_text(c.encode_utf8(&mut buf));
    }

    fn finish_word(&mut self) {
        if let Some(word) = self.current.take() {
            self.words.push(word);
        }
    }

    fn unterminated(&self, what: &'static str, open: usize) -> ToolError {
        let (line, column) = line_col(&self.chars, open);
        ToolError::Unterminated {
            what,
            mode: "exec",
            line,
            column,
        }
    }

    fn single_quoted(&mut self) -> Result<(), ToolError> {
        let open = self.pos;
        self.word();
        self.pos += 1;
        loop {
            match self.peek(0) {
                None => return Err(self.unterminated("single quote", open)),
                Some('\'') => {
                    self.pos += 1;
                    return Ok(());
                }
                Some('$') if self.peek(1) == Some('{') => self.placeholder()?,
                Some(c) => {
                    self.text(c);
                    self.pos += 1;
                }
            }
        }
    }

    fn double_quoted(&mut self) -> Result<(), ToolError> {
        let open = self.pos;
        self.word();
        self.pos += 1;
        loop {
            match self.peek(0) {
                None => return Err(self.unterminated("double quote", open)),
                Some('"') => {
                    self.pos += 1;
                    return Ok(());
                }
                Some('\\') => match self.peek(1) {
                    Some('\n') => self.pos += 2,
                    Some(escaped @ ('$' | '`' | '"' | '\\')) => {
                        self.text(escaped);
                        self.pos += 2;
                    }
                    Some(_) | None => {
                        self.text('\\');
                        self.pos += 1;
                    }
                },
                Some('$') if self.peek(1) == Some('{') => self.placeholder()?,
                Some(c) => {
                    self.text(c);
                    self.pos += 1;
                }
            }
        }
    }

    fn dollar(&mut self) -> Result<(), ToolError> {
        match self.peek(1) {
            Some('{') => self.placeholder(),
            Some('(') => Err(ToolError::ShellMetacharacter {
                token: "$(".to_string(),
                what: "command substitution",
            }),
            Some(c) if c.is_ascii_alphanumeric() || "_@*#?$!-".contains(c) => {
                Err(ToolError::ShellMetacharacter {
                    token: "$".to_string(),
                    what: "variable expansion",
                })
            }
            Some(_) | None => {
                self.text('$');
                self.pos += 1;
                Ok(())
            }
        }
    }

    fn placeholder(&mut self) -> Result<(), ToolError> {
        let (placeholder, next) = parse_placeholder(&self.chars, self.pos, "exec", self.vars)?;
        match placeholder {
            Placeholder::Engine(value) => self.word().push_text(&value),
            Placeholder::Param { name, raw: true } => {
                return Err(ToolError::RawOutsideShell { name });
            }
            Placeholder::Param { name, raw: false } => self.word().0.push(Piece::Param(name)),
        }
        self.pos = next;
        Ok(())
    }

    fn metacharacter(&self, c: char) -> ToolError {
        let doubled = c != '`' && self.peek(1) == Some(c);
        let what = match (c, doubled) {
            ('|', false) => "pipe",
            ('|', true) => "or-list",
            ('&', false) => "background operator",
            ('&', true) => "and-list",
            ('<' | '>', _) => "redirection",
            ('`', _) => "command substitution",
            (_, _) => "command separator",
        };
        let token = if doubled {
            format!("{c}{c}")
        } else {
            c.to_string()
        };
        ToolError::ShellMetacharacter { token, what }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn vars() -> EngineVars {
        EngineVars {
            agent_home: PathBuf::from("/agents/my agent"),
            cwd: PathBuf::from("/work"),
        }
    }

    /// Renders words as `[text|{param}]` strings for compact expectations.
    fn lex(template: &str) -> Result<Vec<String>, String> {
        lex_exec(template, &vars())
            .map(|words| {
                words
                    .iter()
                    .map(|w| {
                        w.0.iter()
                            .map(|p| match p {
                                Piece::Text(t) => t.clone(),
                                Piece::Param(n) => format!("{{{n}}}"),
                            })
                            .collect()
                    })
                    .collect()
            })
            .map_err(|e| e.to_string())
    }

    #[rstest::rstest]
    #[case::plain("ls -la ${dir}", &["ls", "-la", "{dir}"])]
    #[case::double_quoted_static(r#"grep "fixed pattern" ${file}"#, &["grep", "fixed pattern", "{file}"])]
    #[case::single_quoted_static("grep 'a  b' ${f}", &["grep", "a  b", "{f}"])]
    #[case::empty_quotes(r#"echo "" ''"#, &["echo", "", ""])]
    #[case::adjacent_quotes(r#"echo a"b c"'d e'"#, &["echo", "ab cd e"])]
    #[case::escaped_space(r"echo a\ b", &["echo", "a b"])]
    #[case::escaped_quote(r#"echo \"x\" "say \"hi\"""#, &["echo", "\"x\"", "say \"hi\""])]
    #[case::backslash_in_double_quotes_kept(r#"echo "a\nb""#, &["echo", r"a\nb"])]
    #[case::backslash_in_single_quotes_kept(r"echo 'a\'", &["echo", r"a\"])]
    #[case::line_continuation("echo a\\\nb", &["echo", "ab"])]
    #[case::newlines_and_tabs("echo\n\ta\t b\n", &["echo", "a", "b"])]
    #[case::quoted_metacharacters(r#"echo "a | b" '; && >' "$(x)" '`'"#, &["echo", "a | b", "; && >", "$(x)", "`"])]
    #[case::escaped_metacharacters(r"echo \| \; \> \& \$(x)", &["echo", "|", ";", ">", "&", "$(x)"])]
    #[case::escaped_placeholder(r"echo \${x} ", &["echo", "${x}"])]
    #[case::placeholder_in_word("cp --out=${f} x${a}y${b}", &["cp", "--out={f}", "x{a}y{b}"])]
    #[case::placeholder_in_double_quotes(r#"echo "${f}" "n: ${f}""#, &["echo", "{f}", "n: {f}"])]
    #[case::placeholder_in_single_quotes("echo '${f}'", &["echo", "{f}"])]
    #[case::engine_vars_stay_one_word("ls ${AGENT_HOME}/x ${CWD}", &["ls", "/agents/my agent/x", "/work"])]
    #[case::lone_dollar("echo $ a$ 100$", &["echo", "$", "a$", "100$"])]
    #[case::glob_and_tilde_are_literal("ls *.log ~ a?b (x)", &["ls", "*.log", "~", "a?b", "(x)"])]
    #[case::hash_is_literal("echo #x a#b", &["echo", "#x", "a#b"])]
    #[case::unicode("echo héllo 名前=${x}", &["echo", "héllo", "名前={x}"])]
    fn lexes(#[case] template: &str, #[case] expected: &[&str]) {
        assert_eq!(
            lex(template),
            Ok(expected.iter().map(|s| s.to_string()).collect())
        );
    }

    #[rstest::rstest]
    #[case::pipe(
        "cat ${f} | wc -l",
        "Shell metacharacter '|' not allowed in exec: mode. Use shell: mode or remove pipe."
    )]
    #[case::or(
        "a || b",
        "Shell metacharacter '||' not allowed in exec: mode. Use shell: mode or remove or-list."
    )]
    #[case::and(
        "a && b",
        "Shell metacharacter '&&' not allowed in exec: mode. Use shell: mode or remove and-list."
    )]
    #[case::background(
        "sleep 1 &",
        "Shell metacharacter '&' not allowed in exec: mode. Use shell: mode or remove background operator."
    )]
    #[case::semicolon(
        "a; b",
        "Shell metacharacter ';' not allowed in exec: mode. Use shell: mode or remove command separator."
    )]
    #[case::redirect_out(
        "echo ${m} > ${f}",
        "Shell metacharacter '>' not allowed in exec: mode. Use shell: mode or remove redirection."
    )]
    #[case::append(
        "echo >>f",
        "Shell metacharacter '>>' not allowed in exec: mode. Use shell: mode or remove redirection."
    )]
    #[case::redirect_in(
        "wc < f",
        "Shell metacharacter '<' not allowed in exec: mode. Use shell: mode or remove redirection."
    )]
    #[case::stderr_redirect(
        "cmd 2>err",
        "Shell metacharacter '>' not allowed in exec: mode. Use shell: mode or remove redirection."
    )]
    #[case::backtick(
        "echo `id`",
        "Shell metacharacter '`' not allowed in exec: mode. Use shell: mode or remove command substitution."
    )]
    #[case::dollar_paren(
        "echo $(id)",
        "Shell metacharacter '$(' not allowed in exec: mode. Use shell: mode or remove command substitution."
    )]
    #[case::variable(
        "ls $HOME",
        "Shell metacharacter '$' not allowed in exec: mode. Use shell: mode or remove variable expansion."
    )]
    #[case::positional(
        "echo $1",
        "Shell metacharacter '$' not allowed in exec: mode. Use shell: mode or remove variable expansion."
    )]
    #[case::metachar_glued_to_word(
        "echo a;b",
        "Shell metacharacter ';' not allowed in exec: mode. Use shell: mode or remove command separator."
    )]
    #[case::unterminated_double(
        "echo \"abc",
        "Unterminated double quote in exec: template (opened at line 1, column 6)"
    )]
    #[case::unterminated_single(
        "echo\n  'abc",
        "Unterminated single quote in exec: template (opened at line 2, column 3)"
    )]
    #[case::trailing_backslash("echo \\", "exec: template ends with a lone backslash")]
    #[case::raw("echo ${flags:raw}", ":raw modifier is only allowed in shell: mode")]
    #[case::empty_placeholder(
        "echo ${}",
        "Malformed placeholder '${}' in exec: template: the parameter name is empty"
    )]
    #[case::space_in_placeholder(
        "echo ${a b}",
        "Malformed placeholder '${a b}' in exec: template: a parameter name starts with a letter or '_' and contains only letters, digits and '_'"
    )]
    #[case::digit_placeholder(
        "echo ${1}",
        "Malformed placeholder '${1}' in exec: template: a parameter name starts with a letter or '_' and contains only letters, digits and '_'"
    )]
    #[case::unterminated_placeholder(
        "echo ${abc\nx}",
        "Malformed placeholder '${abc' in exec: template: missing closing '}'"
    )]
    #[case::unknown_modifier(
        "echo ${a:-x}",
        "Malformed placeholder '${a:-x}' in exec: template: the only modifier is :raw"
    )]
    #[case::non_ascii_name(
        "echo ${名}",
        "Malformed placeholder '${名}' in exec: template: a parameter name starts with a letter or '_' and contains only letters, digits and '_'"
    )]
    #[case::engine_raw(
        "ls ${CWD:raw}",
        "Engine variable ${CWD} does not take a :raw modifier"
    )]
    fn rejects(#[case] template: &str, #[case] message: &str) {
        assert_eq!(lex(template), Err(message.to_string()));
    }

    #[test]
    fn long_malformed_placeholder_is_cut() {
        let template = format!("echo ${{{}", "a".repeat(100));
        let message = lex(&template).unwrap_err();
        assert!(
            message.contains(&format!("'${{{}…'", "a".repeat(38))),
            "{message}"
        );
    }

    #[test]
    fn sole_param_only_for_whole_word_placeholders() {
        let words = lex_exec(r#"x ${a} "${b}" ""${c} ${d}e"#, &vars()).unwrap();
        let sole: Vec<_> = words.iter().map(Word::sole_param).collect();
        assert_eq!(sole, [None, Some("a"), Some("b"), Some("c"), None]);
    }

    #[rstest::rstest]
    #[case("ab", 0, (1, 1))]
    #[case("ab\ncd", 4, (2, 2))]
    #[case("ab\n", 3, (2, 1))]
    fn line_and_column(#[case] text: &str, #[case] index: usize, #[case] expected: (usize, usize)) {
        let chars: Vec<char> = text.chars().collect();
        assert_eq!(line_col(&chars, index), expected);
    }
}
