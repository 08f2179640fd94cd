//! Rewrites a `shell:` template into the script run by `sh -c SCRIPT -- VALUES…`: each
//! placeholder becomes a positional parameter, quoted as its place in the script requires.
//!
//! The value never enters the script text; only `$N` does. What must be right is the
//! quoting around `$N`, which depends on where the placeholder stands, so the scanner
//! follows sh's quoting contexts (POSIX.1-2017 XCU 2.2–2.7):
//! - unquoted (top level, inside `$( … )` or `` `…` ``): `${x}` → `"$1"`, `${x:raw}` → `$1`;
//! - inside `"…"`, an unquoted here-document body or `$(( … ))`: `${x}` → `$1`, since the
//!   shell neither splits nor globs there (and `"$1"` would end the quotes);
//! - inside `'…'` or a quoted here-document body sh substitutes nothing, so a placeholder
//!   there is an error; other `${…}` text there is left alone (e.g. an awk or sed script);
//! - after an unquoted `#` that starts a word, the rest of the line is a comment and is
//!   copied unchanged;
//! - a backslash-escaped `\${x}` is literal text for sh and is copied unchanged.
//!
//! Placeholders are numbered by first appearance (position 0 is `$1`); a repeated
//! placeholder reuses its number. From 10 on, sh needs braces (`$10` is `${1}0`), so the
//! script says `"${10}"`. `${AGENT_HOME}` and `${CWD}` are replaced by their value, quoted
//! for the context. Everything else, newlines included, is copied unchanged.

use super::error::ToolError;
use super::template::{Placeholder, line_col, parse_placeholder};
use super::vars::EngineVars;

/// The rewritten script and its parameters in position order, with their `:raw` flag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ShellScript {
    pub(crate) script: String,
    pub(crate) params: Vec<(String, bool)>,
}

/// Rewrites `template`; see the module documentation.
pub(crate) fn rewrite_shell(template: &str, vars: &EngineVars) -> Result<ShellScript, ToolError> {
    let mut scanner = Scanner {
        chars: template.chars().collect(),
        pos: 0,
        out: String::with_capacity(template.len()),
        params: Vec::new(),
        vars,
        heredocs: Vec::new(),
    };
    scanner.code(End::Eof, 0)?;
    Ok(ShellScript {
        script: scanner.out,
        params: scanner.params,
    })
}

/// What ends a stretch of shell code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    Eof,
    /// The `)` of `$(`.
    Paren,
    /// The closing `` ` ``.
    Backquote,
}

/// Where a placeholder or engine variable is being written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Context {
    Unquoted,
    DoubleQuoted,
    /// An unquoted here-document body: expansions happen, quotes are literal.
    HereDocument,
    Arithmetic,
    SingleQuoted,
    /// A here-document whose delimiter was quoted: nothing is expanded.
    QuotedHereDocument,
}

#[derive(Debug)]
struct PendingHereDocument {
    delimiter: String,
    strip_tabs: bool,
    quoted: bool,
}

struct Scanner<'a> {
    chars: Vec<char>,
    pos: usize,
    out: String,
    params: Vec<(String, bool)>,
    vars: &'a EngineVars,
    /// Here-documents whose `<<` was seen; their bodies start on the next line.
    heredocs: Vec<PendingHereDocument>,
}

impl Scanner<'_> {
    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.pos + ahead).copied()
    }

    fn copy(&mut self, count: usize) {
        let end = (self.pos + count).min(self.chars.len());
        self.out.extend(&self.chars[self.pos..end]);
        self.pos = end;
    }

    fn unterminated(&self, what: &'static str, open: usize) -> ToolError {
        let (line, column) = line_col(&self.chars, open);
        ToolError::Unterminated {
            what,
            mode: "shell",
            line,
            column,
        }
    }

    /// Shell code until `end`; `open` is where the construct began (for errors).
    fn code(&mut self, end: End, open: usize) -> Result<(), ToolError> {
        let mut depth = 0u32;
        loop {
            let Some(c) = self.peek(0) else {
                return match end {
                    End::Eof => Ok(()),
                    End::Paren => Err(self.unterminated("command substitution '$('", open)),
                    End::Backquote => Err(self.unterminated("backquote", open)),
                };
            };
            match c {
                '\\' => self.copy(2),
                '\'' => self.single_quoted()?,
                '"' => {
                    let start = self.pos;
                    self.copy(1);
                    self.double_quoted(start)?;
                }
                '`' if end == End::Backquote => {
                    self.copy(1);
                    return Ok(());
                }
                '`' => {
                    let start = self.pos;
                    self.copy(1);
                    self.code(End::Backquote, start)?;
                }
                '$' => self.dollar(Context::Unquoted)?,
                '(' => {
                    depth += 1;
                    self.copy(1);
                }
                ')' => {
                    self.copy(1);
                    if end == End::Paren {
                        if depth == 0 {
                            return Ok(());
                        }
                        depth -= 1;
                    }
                }
                '#' if self.at_word_start() => {
                    while self.peek(0).is_some_and(|c| c != '\n') {
                        self.copy(1);
                    }
                }
                '<' if self.peek(1) == Some('<') => self.here_document_operator(),
                '\n' => {
                    self.copy(1);
                    self.here_document_bodies()?;
                }
                _ => self.copy(1),
            }
        }
    }

    fn at_word_start(&self) -> bool {
        self.pos == 0
            || self.chars[self.pos - 1].is_whitespace()
            || ";&|()".contains(self.chars[self.pos - 1])
    }

    fn single_quoted(&mut self) -> Result<(), ToolError> {
        let open = self.pos;
        self.copy(1);
        loop {
            match self.peek(0) {
                None => return Err(self.unterminated("single quote", open)),
                Some('\'') => {
                    self.copy(1);
                    return Ok(());
                }
                Some('$') if self.peek(1) == Some('{') => {
                    self.literal_context_placeholder(Context::SingleQuoted)?;
                }
                Some(_) => self.copy(1),
            }
        }
    }

    /// After the opening `"` at `open`.
    fn double_quoted(&mut self, open: usize) -> Result<(), ToolError> {
        loop {
            match self.peek(0) {
                None => return Err(self.unterminated("double quote", open)),
                Some('"') => {
                    self.copy(1);
                    return Ok(());
                }
                Some('\\') => self.copy(2),
                Some('$') => self.dollar(Context::DoubleQuoted)?,
                Some('`') => {
                    let start = self.pos;
                    self.copy(1);
                    self.code(End::Backquote, start)?;
                }
                Some(_) => self.copy(1),
            }
        }
    }

    /// After the opening `$((` at `open`.
    fn arithmetic(&mut self, open: usize) -> Result<(), ToolError> {
        let mut depth = 0u32;
        loop {
            match self.peek(0) {
                None => return Err(self.unterminated("arithmetic expansion '$(('", open)),
                Some(')') if depth == 0 && self.peek(1) == Some(')') => {
                    self.copy(2);
                    return Ok(());
                }
                Some(')') => {
                    depth = depth.saturating_sub(1);
                    self.copy(1);
                }
                Some('(') => {
                    depth += 1;
                    self.copy(1);
                }
                Some('\\') => self.copy(2),
                Some('$') => self.dollar(Context::Arithmetic)?,
                Some(_) => self.copy(1),
            }
        }
    }

    /// A `$` in a context where sh expands it.
    fn dollar(&mut self, context: Context) -> Result<(), ToolError> {
        let start = self.pos;
        match (self.peek(1), self.peek(2)) {
            (Some('{'), _) => {
                let (placeholder, next) =
                    parse_placeholder(&self.chars, self.pos, "shell", self.vars)?;
                self.pos = next;
                match placeholder {
                    Placeholder::Param { name, raw } => self.param(name, raw, context)?,
                    Placeholder::Engine(value) => self.engine_value(&value, context),
                }
            }
            (Some('('), Some('(')) => {
                self.copy(3);
                self.arithmetic(start)?;
            }
            (Some('('), _) => {
                self.copy(2);
                self.code(End::Paren, start)?;
            }
            _ => self.copy(1),
        }
        Ok(())
    }

    /// `${…}` where sh substitutes nothing: engine variables are still written in (they
    /// are configuration, not model input); a parameter could never arrive, so it is an
    /// error; anything else is someone else's syntax and is copied.
    fn literal_context_placeholder(&mut self, context: Context) -> Result<(), ToolError> {
        match parse_placeholder(&self.chars, self.pos, "shell", self.vars) {
            Ok((Placeholder::Engine(value), next)) => {
                self.pos = next;
                self.engine_value(&value, context);
                Ok(())
            }
            Ok((Placeholder::Param { name, .. }, _)) => Err(ToolError::PlaceholderNotExpanded {
                name,
                quoting: if context == Context::SingleQuoted {
                    "single quotes"
                } else {
                    "a quoted here-document"
                },
            }),
            Err(_) => {
                self.copy(1);
                Ok(())
            }
        }
    }

    fn param(&mut self, name: String, raw: bool, context: Context) -> Result<(), ToolError> {
        let index = match self.params.iter().position(|(n, _)| *n == name) {
            Some(index) if self.params[index].1 != raw => {
                return Err(ToolError::MixedRaw { name });
            }
            Some(index) => index,
            None => {
                self.params.push((name, raw));
                self.params.len() - 1
            }
        };
        let number = index + 1;
        let reference = if number < 10 {
            format!("${number}")
        } else {
            format!("${{{number}}}")
        };
        if context == Context::Unquoted && !raw {
            self.out.push('"');
            self.out.push_str(&reference);
            self.out.push('"');
        } else {
            self.out.push_str(&reference);
        }
        Ok(())
    }

    /// Writes a configuration value so that sh reads it back as exactly that text.
    fn engine_value(&mut self, value: &str, context: Context) {
        let escape_with_backslash = |specials: &str| {
            value.chars().fold(String::new(), |mut acc, c| {
                if specials.contains(c) {
                    acc.push('\\');
                }
                acc.push(c);
                acc
            })
        };
        let text = match context {
            Context::Unquoted => sh_quote(value),
            Context::DoubleQuoted => escape_with_backslash("\\$`\""),
            Context::HereDocument => escape_with_backslash("\\$`"),
            Context::SingleQuoted => value.replace('\'', r"'\''"),
            Context::Arithmetic | Context::QuotedHereDocument => value.to_string(),
        };
        self.out.push_str(&text);
    }

    /// `<<` or `<<-` and its delimiter word.
    fn here_document_operator(&mut self) {
        self.copy(2);
        let strip_tabs = self.peek(0) == Some('-');
        if strip_tabs {
            self.copy(1);
        }
        while self.peek(0).is_some_and(|c| c == ' ' || c == '\t') {
            self.copy(1);
        }
        let mut delimiter = String::new();
        let mut quoted = false;
        while let Some(c) = self.peek(0) {
            if c.is_whitespace() || ";&|<>()".contains(c) {
                break;
            }
            match c {
                '\'' | '"' => {
                    quoted = true;
                    self.copy(1);
                    while let Some(inner) = self.peek(0) {
                        self.copy(1);
                        if inner == c {
                            break;
                        }
                        delimiter.push(inner);
                    }
                }
                '\\' => {
                    quoted = true;
                    self.copy(1);
                    if let Some(escaped) = self.peek(0) {
                        delimiter.push(escaped);
                        self.copy(1);
                    }
                }
                _ => {
                    delimiter.push(c);
                    self.copy(1);
                }
            }
        }
        if !delimiter.is_empty() {
            self.heredocs.push(PendingHereDocument {
                delimiter,
                strip_tabs,
                quoted,
            });
        }
    }

    /// The bodies of pending here-documents, which start right after a newline.
    fn here_document_bodies(&mut self) -> Result<(), ToolError> {
        for heredoc in std::mem::take(&mut self.heredocs) {
            self.here_document_body(&heredoc)?;
        }
        Ok(())
    }

    fn here_document_body(&mut self, heredoc: &PendingHereDocument) -> Result<(), ToolError> {
        loop {
            // At the start of a line.
            if self.peek(0).is_none() {
                return Ok(());
            }
            let line_end = self.chars[self.pos..]
                .iter()
                .position(|&c| c == '\n')
                .map_or(self.chars.len(), |off| self.pos + off);
            let line: String = self.chars[self.pos..line_end].iter().collect();
            let compared = if heredoc.strip_tabs {
                line.trim_start_matches('\t')
            } else {
                line.as_str()
            };
            if compared == heredoc.delimiter {
                self.copy(line_end - self.pos + 1);
                return Ok(());
            }
            while let Some(c) = self.peek(0) {
                match c {
                    '\n' => {
                        self.copy(1);
                        break;
                    }
                    '$' if heredoc.quoted && self.peek(1) == Some('{') => {
                        self.literal_context_placeholder(Context::QuotedHereDocument)?;
                    }
                    '\\' if !heredoc.quoted => self.copy(2),
                    '$' if !heredoc.quoted => self.dollar(Context::HereDocument)?,
                    '`' if !heredoc.quoted => {
                        let start = self.pos;
                        self.copy(1);
                        self.code(End::Backquote, start)?;
                    }
                    _ => self.copy(1),
                }
            }
        }
    }
}

/// Quotes `value` as one sh word; plain words stay readable.
fn sh_quote(value: &str) -> String {
    let plain = !value.is_empty()
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-./,:=+@%".contains(c));
    if plain {
        value.to_string()
    } else {
        format!("'{}'", value.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn vars() -> EngineVars {
        EngineVars {
            agent_home: PathBuf::from("/agents/it's mine"),
            cwd: PathBuf::from("/work/dir"),
        }
    }

    fn rewrite(template: &str) -> Result<(String, Vec<(String, bool)>), String> {
        rewrite_shell(template, &vars())
            .map(|s| (s.script, s.params))
            .map_err(|e| e.to_string())
    }

    fn script(template: &str) -> String {
        rewrite(template).unwrap().0
    }

    #[rstest::rstest]
    #[case::seed_4_2("grep ${pattern} ${file} | wc -l", r#"grep "$1" "$2" | wc -l"#)]
    #[case::seed_4_3("docker run ${options:raw} ${image}", r#"docker run $1 "$2""#)]
    #[case::repeated(
        "cp ${a} ${a}.bak && echo ${b} ${a}",
        r#"cp "$1" "$1".bak && echo "$2" "$1""#
    )]
    #[case::in_double_quotes(r#"echo "value: ${v}!""#, r#"echo "value: $1!""#)]
    #[case::raw_in_double_quotes(r#"echo "${v:raw}""#, r#"echo "$1""#)]
    #[case::escaped_placeholder(r"echo \${HOME} ${x}", r#"echo \${HOME} "$1""#)]
    #[case::escaped_in_double_quotes(r#"echo "\${x}""#, r#"echo "\${x}""#)]
    #[case::shell_variables_untouched(
        "echo $HOME $1 $# $(date) `id` $((1+2))",
        "echo $HOME $1 $# $(date) `id` $((1+2))"
    )]
    #[case::command_substitution_starts_new_quoting(
        r#"echo "$(grep "${x}" ${f})""#,
        r#"echo "$(grep "$1" "$2")""#
    )]
    #[case::command_substitution(r#"n=$(wc -l < ${f})"#, r#"n=$(wc -l < "$1")"#)]
    #[case::nested_parens("x=$( (cd ${d}; ls) )", r#"x=$( (cd "$1"; ls) )"#)]
    #[case::backquotes("echo `cat ${f}`", r#"echo `cat "$1"`"#)]
    #[case::backquotes_in_double_quotes(r#"echo "`cat ${f}`""#, r#"echo "`cat "$1"`""#)]
    #[case::arithmetic("echo $(( ${n} + 1 ))", "echo $(( $1 + 1 ))")]
    #[case::single_quotes_other_syntax(
        "awk '{print $1}' ${f}; sed 's/${a:-b}/x/'",
        r#"awk '{print $1}' "$1"; sed 's/${a:-b}/x/'"#
    )]
    #[case::comment(
        "echo ${a} # uses ${b}\necho ${c}",
        "echo \"$1\" # uses ${b}\necho \"$2\""
    )]
    #[case::hash_inside_word("echo a#${b}", r#"echo a#"$1""#)]
    #[case::heredoc(
        "cat <<EOF\nhi ${name}\n\"${name}\"\nEOF\necho ${x}",
        "cat <<EOF\nhi $1\n\"$1\"\nEOF\necho \"$2\""
    )]
    #[case::heredoc_strip_tabs(
        "cat <<-END >${f}\n\tv=${v}\n\tEND\n",
        "cat <<-END >\"$1\"\n\tv=$2\n\tEND\n"
    )]
    #[case::heredoc_quoted_other_syntax(
        "cat <<'EOF'\n${a:-b} $x\nEOF\n",
        "cat <<'EOF'\n${a:-b} $x\nEOF\n"
    )]
    #[case::heredoc_command_substitution(
        "cat <<EOF\n$(echo ${x})\nEOF\n",
        "cat <<EOF\n$(echo \"$1\")\nEOF\n"
    )]
    #[case::shift_in_arithmetic("echo $(( 1 << ${n} ))", "echo $(( 1 << $1 ))")]
    #[case::multi_line_unchanged(
        "export VAR=${value}\necho \"Processing...\"\n./script.sh \"$VAR\"\n",
        "export VAR=\"$1\"\necho \"Processing...\"\n./script.sh \"$VAR\"\n"
    )]
    #[case::engine_unquoted(
        "cd ${AGENT_HOME} && ls ${CWD}",
        r#"cd '/agents/it'\''s mine' && ls /work/dir"#
    )]
    #[case::engine_double_quoted(r#"echo "${AGENT_HOME}/x""#, r#"echo "/agents/it's mine/x""#)]
    #[case::engine_single_quoted("echo '${AGENT_HOME}'", r#"echo '/agents/it'\''s mine'"#)]
    fn rewrites(#[case] template: &str, #[case] expected: &str) {
        assert_eq!(script(template), expected);
    }

    #[test]
    fn positions_from_ten_use_braces() {
        let template: String = (0..12).map(|i| format!("${{p{i}}} ")).collect();
        let expected = r#""$1" "$2" "$3" "$4" "$5" "$6" "$7" "$8" "$9" "${10}" "${11}" "${12}" "#;
        assert_eq!(script(&template), expected);
        let raw = script("${a}${b}${c}${d}${e}${f}${g}${h}${i}${j:raw} \"${j:raw}\"");
        assert!(raw.ends_with(r#"${10} "${10}""#), "{raw}");
    }

    #[test]
    fn params_in_order_of_first_appearance_with_raw_flag() {
        let (_, params) = rewrite("x ${b} ${a:raw} ${b} ${c}").unwrap();
        let expected = [("b", false), ("a", true), ("c", false)];
        assert_eq!(params, expected.map(|(n, r)| (n.to_string(), r)).to_vec());
    }

    #[test]
    fn engine_value_in_double_quotes_is_escaped() {
        let vars = EngineVars {
            agent_home: PathBuf::from(r#"/a"b$c`d\e"#),
            cwd: PathBuf::from("/"),
        };
        let rewritten = rewrite_shell(
            r#"echo "${AGENT_HOME}" <<E
${AGENT_HOME}
E
"#,
            &vars,
        )
        .unwrap();
        assert_eq!(
            rewritten.script,
            "echo \"/a\\\"b\\$c\\`d\\\\e\" <<E\n/a\"b\\$c\\`d\\\\e\nE\n"
        );
        assert!(rewritten.params.is_empty());
    }

    #[rstest::rstest]
    #[case::single_quotes(
        "echo '${x}'",
        "Placeholder ${x} is inside single quotes in shell: mode, where sh never substitutes it"
    )]
    #[case::quoted_heredoc(
        "cat <<'EOF'\n${x}\nEOF\n",
        "Placeholder ${x} is inside a quoted here-document in shell: mode, where sh never substitutes it"
    )]
    #[case::mixed_raw(
        "echo ${x} ${x:raw}",
        "Placeholder ${x} is used both with and without :raw"
    )]
    #[case::unterminated_double(
        "echo \"${x}",
        "Unterminated double quote in shell: template (opened at line 1, column 6)"
    )]
    #[case::unterminated_single(
        "echo ok\necho 'x",
        "Unterminated single quote in shell: template (opened at line 2, column 6)"
    )]
    #[case::unterminated_substitution(
        "echo $(ls",
        "Unterminated command substitution '$(' in shell: template (opened at line 1, column 6)"
    )]
    #[case::unterminated_backquote(
        "echo `ls",
        "Unterminated backquote in shell: template (opened at line 1, column 6)"
    )]
    #[case::unterminated_arithmetic(
        "echo $((1+2)",
        "Unterminated arithmetic expansion '$((' in shell: template (opened at line 1, column 6)"
    )]
    #[case::shell_expansion_syntax(
        "echo ${HOME:-/}",
        "Malformed placeholder '${HOME:-/}' in shell: template: the only modifier is :raw"
    )]
    #[case::positional_braces(
        "echo ${1}",
        "Malformed placeholder '${1}' in shell: template: a parameter name starts with a letter or '_' and contains only letters, digits and '_'"
    )]
    #[case::empty(
        "echo ${}",
        "Malformed placeholder '${}' in shell: template: the parameter name is empty"
    )]
    #[case::unterminated_placeholder(
        "echo ${x",
        "Malformed placeholder '${x' in shell: template: missing closing '}'"
    )]
    fn rejects(#[case] template: &str, #[case] message: &str) {
        assert_eq!(rewrite(template), Err(message.to_string()));
    }

    #[rstest::rstest]
    #[case("plain-path/x.txt", "plain-path/x.txt")]
    #[case("", "''")]
    #[case("a b", "'a b'")]
    #[case("it's", r"'it'\''s'")]
    fn quotes_for_sh(#[case] value: &str, #[case] expected: &str) {
        assert_eq!(sh_quote(value), expected);
    }
}
