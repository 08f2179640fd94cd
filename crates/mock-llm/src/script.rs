//! Reading a mock script (the types are `delta-scenario`'s): YAML or JSON, from a file or
//! text, with parse errors that carry the file, line and column.

use std::path::{Path, PathBuf};

use delta_scenario::mock_script::Script;
use serde_saphyr::MessageFormatter as _;

/// A mock script that could not be read or parsed.
#[derive(Debug, thiserror::Error)]
pub enum ScriptError {
    /// The file could not be read.
    #[error("cannot read mock script {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The text is not a valid script.
    #[error("invalid mock script{}: {message}", describe_place(path.as_deref(), *location))]
    Parse {
        /// The file, when the script came from one.
        path: Option<PathBuf>,
        /// 1-based line and column, when known.
        location: Option<(u64, u64)>,
        /// What is wrong, without the location.
        message: String,
    },
}

impl ScriptError {
    /// How to fix the error, for rendering below it.
    pub fn help(&self) -> &'static str {
        match self {
            Self::Read { .. } => "check the path given to --script",
            Self::Parse { .. } => {
                "a script is `steps:` (a list; each entry is one of `message`, `error`, \
                 `drop_connection`, `malformed`) with optional `mode` and `models`; \
                 see `mock-llm --help` or schemas/mock-script.schema.json"
            }
        }
    }

    fn with_path(self, path: &Path) -> Self {
        match self {
            Self::Parse {
                location, message, ..
            } => Self::Parse {
                path: Some(path.to_path_buf()),
                location,
                message,
            },
            other @ Self::Read { .. } => other,
        }
    }
}

fn describe_place(path: Option<&Path>, location: Option<(u64, u64)>) -> String {
    match (path, location) {
        (Some(path), Some((line, column))) => format!(" {}:{line}:{column}", path.display()),
        (Some(path), None) => format!(" {}", path.display()),
        (None, Some((line, column))) => format!(" at line {line}, column {column}"),
        (None, None) => String::new(),
    }
}

/// Reading a [`Script`] from a file or text, with the place of a mistake.
pub trait ReadScript: Sized {
    /// Reads a script file: JSON when the name ends in `.json`, YAML otherwise.
    ///
    /// # Errors
    /// [`ScriptError`] when the file cannot be read or is no valid script.
    fn from_path(path: impl AsRef<Path>) -> Result<Self, ScriptError>;

    /// Parses a YAML script (JSON is accepted too, being YAML flow syntax).
    ///
    /// # Errors
    /// [`ScriptError::Parse`], with the line and column when known.
    fn from_yaml_str(text: &str) -> Result<Self, ScriptError>;

    /// Parses a JSON script.
    ///
    /// # Errors
    /// [`ScriptError::Parse`], with the line and column when known.
    fn from_json_str(text: &str) -> Result<Self, ScriptError>;
}

impl ReadScript for Script {
    fn from_path(path: impl AsRef<Path>) -> Result<Self, ScriptError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| ScriptError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let is_json = path
            .extension()
            .is_some_and(|ext| ext.eq_ignore_ascii_case("json"));
        let parsed = if is_json {
            Self::from_json_str(&text)
        } else {
            Self::from_yaml_str(&text)
        };
        parsed.map_err(|err| err.with_path(path))
    }

    fn from_yaml_str(text: &str) -> Result<Self, ScriptError> {
        serde_saphyr::from_str(text).map_err(|err| {
            let plain = err.without_snippet();
            let message =
                without_control_chars(&serde_saphyr::DefaultMessageFormatter.format_message(plain));
            let location = plain
                .location()
                .filter(|loc| loc.line() > 0)
                .map(|loc| (loc.line(), loc.column()));
            ScriptError::Parse {
                path: None,
                location,
                message,
            }
        })
    }

    fn from_json_str(text: &str) -> Result<Self, ScriptError> {
        serde_json::from_str(text).map_err(|err| {
            let (line, column) = (err.line() as u64, err.column() as u64);
            let full = err.to_string();
            // serde_json appends the position to its message; it is reported separately.
            let suffix = format!(" at line {line} column {column}");
            let message = full.strip_suffix(&suffix).unwrap_or(&full).to_string();
            ScriptError::Parse {
                path: None,
                location: (line > 0).then_some((line, column)),
                message,
            }
        })
    }
}

/// The formatter's text may quote the input; a control character in it must not reach a
/// terminal raw.
fn without_control_chars(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_debug().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}
