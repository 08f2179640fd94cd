//! The `mock-llm` process of one scenario: started on 127.0.0.1 with the scenario's script
//! and a record file, its port read from its first line of output, its recorded requests
//! read back for expectations.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, BufReader};
use tokio::process::{Child, Command};

/// How long mock-llm may take to print its port.
const START_TIMEOUT: Duration = Duration::from_secs(15);

/// A mock-llm that could not be started.
#[derive(Debug, thiserror::Error)]
pub enum MockError {
    /// The program could not be run.
    #[error("cannot start {}: {source}", program.display())]
    Spawn {
        /// The program.
        program: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// It ended, or printed something other than a port, instead of serving.
    #[error("mock-llm did not start: {detail}")]
    NoPort {
        /// What it printed or why it ended.
        detail: String,
    },
}

/// A running mock-llm; killed when dropped.
#[derive(Debug)]
pub struct MockLlm {
    child: Child,
    port: u16,
    record: PathBuf,
}

impl MockLlm {
    /// Starts `program --script SCRIPT --port 0 --record RECORD [--strict PROFILE]` and
    /// waits for its port.
    pub async fn start(
        program: &Path,
        script: &Path,
        record: &Path,
        strict: Option<&str>,
    ) -> Result<Self, MockError> {
        let mut command = Command::new(program);
        command
            .arg("--script")
            .arg(script)
            .args(["--port", "0", "--host", "127.0.0.1", "--record"])
            .arg(record);
        if let Some(profile) = strict {
            command.args(["--strict", profile]);
        }
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|source| MockError::Spawn {
                program: program.to_path_buf(),
                source,
            })?;
        let mut first = String::new();
        let read = match child.stdout.take() {
            Some(stdout) => {
                let mut lines = BufReader::new(stdout);
                tokio::time::timeout(START_TIMEOUT, lines.read_line(&mut first)).await
            }
            None => Ok(Ok(0)),
        };
        if let Ok(Ok(_)) = read
            && let Ok(port) = first.trim().parse::<u16>()
        {
            return Ok(Self {
                child,
                port,
                record: record.to_path_buf(),
            });
        }
        let _ignored = child.start_kill();
        let mut stderr = String::new();
        if let Some(mut pipe) = child.stderr.take() {
            let _ignored =
                tokio::time::timeout(Duration::from_secs(2), pipe.read_to_string(&mut stderr))
                    .await;
        }
        let detail = match read {
            Err(_) => format!("no port printed within {}s", START_TIMEOUT.as_secs()),
            Ok(Err(err)) => format!("cannot read its output: {err}"),
            Ok(Ok(_)) if first.is_empty() => "it exited without printing its port".to_string(),
            Ok(Ok(_)) => format!("its first line is not a port: {:?}", first.trim_end()),
        };
        Err(MockError::NoPort {
            detail: format!("{detail}; stderr: {}", stderr.trim_end()),
        })
    }

    /// `http://127.0.0.1:PORT/v1`.
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    /// The record file (one JSON line per chat request).
    pub fn record_file(&self) -> &Path {
        &self.record
    }

    /// Stops the server.
    pub async fn stop(mut self) {
        // It may have died already; either way it is gone afterwards.
        let _ignored = self.child.kill().await;
    }
}

/// The recorded chat requests so far: each line of the record file, parsed. A line that is
/// not JSON is kept as a string so the count stays right.
pub fn read_requests(record: &Path) -> Vec<Value> {
    std::fs::read_to_string(record)
        .unwrap_or_default()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|_| Value::String(line.to_string())))
        .collect()
}

/// The text of a recorded request: every message's content and every tool call's name and
/// arguments, one per line, for `contains`-style checks.
pub fn request_text(record: &Value) -> String {
    let mut lines = Vec::new();
    let messages = record
        .pointer("/body/messages")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    for message in messages {
        match message.get("content") {
            Some(Value::String(text)) => lines.push(text.clone()),
            Some(Value::Array(parts)) => lines.extend(
                parts
                    .iter()
                    .filter_map(|p| p.get("text").and_then(Value::as_str))
                    .map(str::to_string),
            ),
            Some(_) | None => {}
        }
        let calls = message
            .get("tool_calls")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        for call in calls {
            for key in ["/function/name", "/function/arguments"] {
                if let Some(text) = call.pointer(key).and_then(Value::as_str) {
                    lines.push(text.to_string());
                }
            }
        }
    }
    lines.join("\n")
}

/// A port on 127.0.0.1 that nothing listens on (bound, then released).
pub fn unused_port() -> std::io::Result<u16> {
    let listener = std::net::TcpListener::bind(("127.0.0.1", 0))?;
    Ok(listener.local_addr()?.port())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn request_text_joins_contents_and_tool_calls() {
        let record = json!({"body": {"messages": [
            {"role": "system", "content": "sys"},
            {"role": "user", "content": [{"type": "text", "text": "hi"}]},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "c", "type": "function", "function": {"name": "t", "arguments": "{\"a\":1}"}}
            ]},
            {"role": "tool", "content": "out"}
        ]}});
        assert_eq!(request_text(&record), "sys\nhi\nt\n{\"a\":1}\nout");
    }

    #[test]
    fn the_record_file_is_read_line_by_line() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("r.jsonl");
        std::fs::write(&file, "{\"index\":0}\nnot json\n").unwrap();
        assert_eq!(
            read_requests(&file),
            [json!({"index": 0}), json!("not json")]
        );
        assert!(read_requests(&dir.path().join("none")).is_empty());
    }

    #[tokio::test]
    async fn a_program_that_prints_no_port_is_reported() {
        let err = MockLlm::start(Path::new("true"), Path::new("s"), Path::new("r"), None)
            .await
            .unwrap_err();
        assert!(
            err.to_string().contains("exited without printing its port"),
            "{err}"
        );
    }
}
