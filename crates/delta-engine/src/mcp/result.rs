//! What an MCP tool call leaves behind: the observation the model reads, and the complete
//! record in `io/tool_executions/{action_id}/` (`request.json`, `result.json` with
//! images and audio saved beside it as files).

use std::path::Path;
use std::time::Duration;

use base64::Engine as _;
use serde_json::{Map, Value, json};

use crate::journal::ActionStatus;
use crate::secrets::Redactor;

/// How a call ended, before it is recorded.
#[derive(Debug, Clone)]
pub struct McpCallOutcome {
    /// The `CallToolResult` as the server sent it, when it answered.
    result: Option<Value>,
    /// The observation of a call that got no result.
    failure: Option<String>,
    /// `exit_code.txt`: `0`, `tool error`, `error`, `timeout`, `crashed`, `not started`,
    /// `too large`.
    pub exit: String,
    /// Wall time of the call.
    pub duration: Duration,
}

/// The journal's view of a recorded call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallRecord {
    /// SUCCESS, or ERROR for every failure (the tool's own error result included).
    pub status: ActionStatus,
    /// What the model reads (not yet capped).
    pub observation: String,
}

impl McpCallOutcome {
    pub(super) fn error(observation: String, exit: &str, duration: Duration) -> Self {
        Self {
            result: None,
            failure: Some(observation),
            exit: exit.to_owned(),
            duration,
        }
    }

    pub(super) fn from_result(result: Value, duration: Duration) -> Self {
        let is_error = result.get("isError").and_then(Value::as_bool) == Some(true);
        Self {
            result: Some(result),
            failure: None,
            exit: if is_error { "tool error" } else { "0" }.to_owned(),
            duration,
        }
    }
}

/// Writes the call's files into `dir` (created), the secrets of `redactor` (the run's)
/// masked, and says what the model reads. `dir_ref` is how observations name `dir`
/// (`io/tool_executions/{action_id}/`).
pub fn write_call_record(
    dir: &Path,
    dir_ref: &str,
    server: &str,
    tool: &str,
    arguments: &Map<String, Value>,
    outcome: &McpCallOutcome,
    redactor: &Redactor,
) -> std::io::Result<CallRecord> {
    let write_masked = |path: &Path, bytes: &[u8]| redactor.write_masked(path, bytes);
    fs_err::create_dir_all(dir)?;
    let request = json!({"server": server, "tool": tool, "arguments": arguments});
    write_masked(&dir.join("request.json"), pretty(&request).as_bytes())?;
    let Some(result) = &outcome.result else {
        let observation = outcome.failure.clone().unwrap_or_default();
        write_masked(
            &dir.join("error.txt"),
            format!("{observation}\n").as_bytes(),
        )?;
        return Ok(CallRecord {
            status: ActionStatus::Error,
            observation,
        });
    };
    let mut kept = result.clone();
    let mut parts = Vec::new();
    if let Some(blocks) = kept.get_mut("content").and_then(Value::as_array_mut) {
        for (index, block) in blocks.iter_mut().enumerate() {
            parts.push(describe_block(block, index + 1, dir, dir_ref, redactor)?);
        }
    }
    write_masked(&dir.join("result.json"), pretty(&kept).as_bytes())?;
    let mut text = parts.join("\n");
    if text.is_empty() {
        text = match result.get("structuredContent") {
            Some(structured) => pretty(structured),
            None => "(the tool returned no content)".to_owned(),
        };
    }
    let is_error = result.get("isError").and_then(Value::as_bool) == Some(true);
    Ok(if is_error {
        CallRecord {
            status: ActionStatus::Error,
            observation: format!("Error: the tool reported an error: {text}"),
        }
    } else {
        CallRecord {
            status: ActionStatus::Success,
            observation: text,
        }
    })
}

/// The observation text of one content block; images and audio are decoded into
/// `content-N.EXT` files and their data replaced by the file's name in `result.json`.
fn describe_block(
    block: &mut Value,
    number: usize,
    dir: &Path,
    dir_ref: &str,
    redactor: &Redactor,
) -> std::io::Result<String> {
    let kind = block
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    match kind.as_str() {
        "text" => Ok(block
            .get("text")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()),
        "image" | "audio" => {
            let mime = block
                .get("mimeType")
                .and_then(Value::as_str)
                .unwrap_or("application/octet-stream")
                .to_owned();
            let data = block
                .get("data")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(data) else {
                return Ok(format!("[{kind} ({mime}) whose data is not valid base64]"));
            };
            let name = format!("content-{number}.{}", extension(&mime));
            redactor.write_masked(&dir.join(&name), &bytes)?;
            if let Some(object) = block.as_object_mut() {
                object.remove("data");
                object.insert("file".into(), name.clone().into());
            }
            Ok(format!(
                "[{kind} ({mime}, {} bytes) saved as {dir_ref}{name}]",
                bytes.len()
            ))
        }
        "resource" => {
            let resource = block.get("resource");
            let uri = resource
                .and_then(|r| r.get("uri"))
                .and_then(Value::as_str)
                .unwrap_or_default();
            match resource.and_then(|r| r.get("text")).and_then(Value::as_str) {
                Some(text) => Ok(format!("[resource {uri}]\n{text}")),
                None => Ok(format!(
                    "[resource {uri}: binary, see {dir_ref}result.json]"
                )),
            }
        }
        "resource_link" => {
            let uri = block.get("uri").and_then(Value::as_str).unwrap_or_default();
            Ok(format!("[resource link: {uri}]"))
        }
        _ => Ok(block.to_string()),
    }
}

fn extension(mime: &str) -> &str {
    match mime {
        "image/png" => "png",
        "image/jpeg" => "jpg",
        "image/gif" => "gif",
        "image/webp" => "webp",
        "image/svg+xml" => "svg",
        "audio/wav" | "audio/x-wav" => "wav",
        "audio/mpeg" => "mp3",
        "audio/ogg" => "ogg",
        _ => "bin",
    }
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default() + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recorded(dir: &tempfile::TempDir, dir_ref: &str, outcome: &McpCallOutcome) -> CallRecord {
        let redactor = Redactor::default();
        write_call_record(
            dir.path(),
            dir_ref,
            "s",
            "t",
            &Map::new(),
            outcome,
            &redactor,
        )
        .unwrap()
    }

    #[test]
    fn images_become_files_and_text_stays_text() {
        let dir = tempfile::tempdir().unwrap();
        let result = json!({
            "content": [
                {"type": "text", "text": "a tiny image:"},
                {"type": "image", "mimeType": "image/png", "data": "iVBORw=="}
            ]
        });
        let outcome = McpCallOutcome::from_result(result, Duration::ZERO);
        let record = recorded(&dir, "io/x/", &outcome);
        assert_eq!(record.status, ActionStatus::Success);
        assert_eq!(
            record.observation,
            "a tiny image:\n[image (image/png, 4 bytes) saved as io/x/content-2.png]"
        );
        assert_eq!(
            std::fs::read(dir.path().join("content-2.png")).unwrap(),
            b"\x89PNG"
        );
        let kept = std::fs::read_to_string(dir.path().join("result.json")).unwrap();
        assert!(!kept.contains("iVBORw"), "{kept}");
    }

    #[test]
    fn structured_content_alone_is_the_observation_and_errors_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let outcome = McpCallOutcome::from_result(
            json!({"content": [], "structuredContent": {"t": 1}}),
            Duration::ZERO,
        );
        let record = recorded(&dir, "r/", &outcome);
        assert_eq!(record.observation, "{\n  \"t\": 1\n}\n");
        let failed = McpCallOutcome::from_result(
            json!({"content": [{"type": "text", "text": "boom"}], "isError": true}),
            Duration::ZERO,
        );
        let record = recorded(&dir, "r/", &failed);
        assert_eq!(record.status, ActionStatus::Error);
        assert_eq!(
            record.observation,
            "Error: the tool reported an error: boom"
        );
        assert_eq!(failed.exit, "tool error");
    }
}
