//! Keeps the API key out of everything the engine writes: [`Redactor`] replaces its exact
//! value with `[REDACTED]` in what processes print (tools, generators, hooks) and in log
//! lines, and [`StreamRedactor`] does the same on output that arrives in pieces.
//!
//! The key also reaches the engine's own records by other roads: a server that echoes it
//! in a response or an error, a model that copies it into a tool's arguments, credentials
//! in `DELTA_BASE_URL`'s userinfo. So every writer of a run file (journal lines,
//! `metadata.json`, `io/` records, hook inputs) is handed the run's redactor and passes
//! its bytes through it right before they reach the file: the journal writer holds it,
//! the metadata and interaction writers take it, the `io/` and hook writers take it from
//! the run's `OutputPolicy` ([`Redactor::write_masked`]). No state is shared between runs.
//!
//! Tools inherit the engine's environment on purpose (a sub-agent run as a tool needs the
//! key), so any tool can print it: `env`, `cat /proc/self/environ`. Stopping that at the
//! source would break those tools; redacting what the engine records keeps the rule that
//! the key is never written to a file, a log or an audit record.

use std::fmt;
use std::path::Path;
use std::sync::Arc;

use crate::llm::{Credentials, KEY_VARIABLES};

/// What a secret is replaced with.
pub const REDACTED: &str = "[REDACTED]";

/// Secrets shorter than this are not redacted: a key such as `test` or `x` (accepted by
/// local servers) would otherwise blank ordinary words all over the output.
pub const MIN_SECRET_LEN: usize = 8;

/// Replaces the exact values of a few secrets with [`REDACTED`]. Cheap to clone; its
/// `Debug` says how many secrets it holds, never what they are.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Redactor {
    /// Longest first, so that a secret containing another is replaced whole.
    secrets: Arc<[Box<[u8]>]>,
}

impl fmt::Debug for Redactor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Redactor")
            .field("secrets", &self.secrets.len())
            .finish()
    }
}

impl Redactor {
    /// A redactor of `secrets`; values shorter than [`MIN_SECRET_LEN`] bytes are ignored.
    pub fn new<S: AsRef<str>>(secrets: impl IntoIterator<Item = S>) -> Self {
        let mut kept: Vec<Box<[u8]>> = secrets
            .into_iter()
            .filter(|secret| secret.as_ref().len() >= MIN_SECRET_LEN)
            .map(|secret| secret.as_ref().as_bytes().into())
            .collect();
        kept.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        kept.dedup();
        Self {
            secrets: kept.into(),
        }
    }

    /// The redactor of a run: the key the run uses, the userinfo of its base URL (and the
    /// password in it), and the value of every API key variable in `env` (the process
    /// environment, which tools inherit), since any of them may be a live credential.
    pub fn for_run(credentials: &Credentials, env: impl Fn(&str) -> Option<String>) -> Self {
        let inherited = KEY_VARIABLES.iter().filter_map(|name| env(name));
        let userinfo = url_userinfo(credentials.base_url()).map(str::to_owned);
        let password = userinfo
            .as_deref()
            .and_then(|info| info.split_once(':'))
            .map(|(_, password)| password.to_owned());
        let run = Self::new(
            credentials
                .api_key()
                .map(str::to_owned)
                .into_iter()
                .chain(inherited)
                .chain(password),
        );
        // `user:pw@` whatever its length: with its `:` and `@` it is no ordinary word.
        let userinfo: Arc<[Box<[u8]>]> = userinfo
            .map(|info| format!("{info}@").into_bytes().into_boxed_slice())
            .into_iter()
            .collect();
        run.union(&Self { secrets: userinfo })
    }

    /// A redactor of the secrets of both.
    #[must_use]
    pub fn union(&self, other: &Redactor) -> Redactor {
        let mut kept: Vec<Box<[u8]>> = self
            .secrets
            .iter()
            .chain(other.secrets.iter())
            .cloned()
            .collect();
        kept.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        kept.dedup();
        Self {
            secrets: kept.into(),
        }
    }

    /// The redactor of a run that uses no key of its own (`delta replay`): the value of
    /// every API key variable in `env`, which tools inherit.
    pub fn inherited(env: impl Fn(&str) -> Option<String>) -> Self {
        Self::new(KEY_VARIABLES.iter().filter_map(|name| env(name)))
    }

    /// Whether there is nothing to redact.
    pub fn is_empty(&self) -> bool {
        self.secrets.is_empty()
    }

    /// `bytes` with every secret replaced.
    pub fn redact_bytes(&self, bytes: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(bytes.len());
        let rest = self.replace_into(bytes, &mut out);
        out.extend_from_slice(&bytes[rest..]);
        out
    }

    /// `text` with every secret replaced.
    pub fn redact(&self, text: &str) -> String {
        if self.is_empty() {
            return text.to_owned();
        }
        // A secret is valid UTF-8 matched inside valid UTF-8, so it starts and ends on
        // character boundaries and the result stays valid: the conversion never loses.
        String::from_utf8_lossy(&self.redact_bytes(text.as_bytes())).into_owned()
    }

    /// Writes `bytes` to `path` (`fs_err::write`) with every secret replaced: for the run
    /// files written whole that are not metadata, interaction or journal files.
    ///
    /// # Errors
    /// Those of the write, naming the file.
    pub fn write_masked(&self, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
        fs_err::write(path, self.redact_bytes(bytes))
    }

    /// A redactor for one stream of output read in pieces.
    pub fn stream(&self) -> StreamRedactor {
        StreamRedactor {
            redactor: self.clone(),
            pending: Vec::new(),
        }
    }

    /// Appends `bytes` to `out` up to the end of the last secret found, replacing each
    /// secret; returns where the unexamined rest of `bytes` starts.
    fn replace_into(&self, bytes: &[u8], out: &mut Vec<u8>) -> usize {
        let mut from = 0;
        while let Some((start, len)) = self.find(bytes, from) {
            out.extend_from_slice(&bytes[from..start]);
            out.extend_from_slice(REDACTED.as_bytes());
            from = start + len;
        }
        from
    }

    /// The leftmost secret in `bytes[from..]`: its start and length.
    fn find(&self, bytes: &[u8], from: usize) -> Option<(usize, usize)> {
        self.secrets
            .iter()
            .filter_map(|secret| {
                find_bytes(&bytes[from..], secret).map(|at| (from + at, secret.len()))
            })
            // Longest first in `secrets`, and min_by_key keeps the first of equal starts.
            .min_by_key(|(start, _)| *start)
    }

    /// The longest secret: how many bytes a stream must hold back, and how far past the
    /// part of a file it keeps a bounded reader must read to see every secret in it whole.
    pub(crate) fn longest(&self) -> usize {
        self.secrets.first().map_or(0, |secret| secret.len())
    }
}

/// The userinfo (`user:password`) of an absolute URL, if it has one.
pub fn url_userinfo(url: &str) -> Option<&str> {
    let (_, rest) = url.split_once("://")?;
    let authority = rest.split(['/', '?', '#']).next().unwrap_or(rest);
    authority
        .rsplit_once('@')
        .map(|(info, _)| info)
        .filter(|info| !info.is_empty())
}

/// `url` with its userinfo replaced by [`REDACTED`]: the form in which a base URL is shown
/// or recorded.
pub fn url_without_userinfo(url: &str) -> String {
    match url_userinfo(url) {
        Some(info) => url.replacen(&format!("{info}@"), &format!("{REDACTED}@"), 1),
        None => url.to_owned(),
    }
}

/// Where `needle` (not empty) first occurs in `haystack`.
fn find_bytes(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    let (&first, rest) = needle.split_first()?;
    let last_start = haystack.len().checked_sub(needle.len())?;
    let mut at = 0;
    // Scanning for the first byte skips most positions without a slice comparison,
    // which matters on a tool writing megabytes.
    while at <= last_start {
        let offset = haystack[at..=last_start]
            .iter()
            .position(|&byte| byte == first)?;
        at += offset;
        if haystack[at + 1..at + needle.len()] == *rest {
            return Some(at);
        }
        at += 1;
    }
    None
}

/// Redacts a stream that arrives in pieces: a secret split across two reads is still
/// found, because the last bytes that could begin one are held back until the next piece
/// (or [`StreamRedactor::finish`]) shows how they continue.
#[derive(Debug)]
pub struct StreamRedactor {
    redactor: Redactor,
    pending: Vec<u8>,
}

impl StreamRedactor {
    /// Appends to `out` the redacted bytes of `chunk` that can no longer be part of a
    /// secret.
    pub fn push(&mut self, chunk: &[u8], out: &mut Vec<u8>) {
        if self.redactor.is_empty() {
            out.extend_from_slice(chunk);
            return;
        }
        self.pending.extend_from_slice(chunk);
        let examined = self.redactor.replace_into(&self.pending, out);
        // No secret starts before `examined + hold`: one starting there would end inside
        // `pending` and would have been found.
        let hold = (self.redactor.longest() - 1).min(self.pending.len() - examined);
        let emit_end = self.pending.len() - hold;
        out.extend_from_slice(&self.pending[examined..emit_end]);
        self.pending.drain(..emit_end);
    }

    /// Appends the bytes held back to `out`: the stream ended, so they hold no secret.
    pub fn finish(&mut self, out: &mut Vec<u8>) {
        out.append(&mut self.pending);
    }
}

/// Copies `reader` (a child's stderr) into `log` with every secret of `redactor`
/// replaced, until it ends, handing each redacted piece to `seen` as well (for a tail kept
/// for messages). A log that cannot be written (a full disk) stops being written; the
/// stream is still read to its end, so the child never blocks on it.
pub async fn pump_redacted(
    mut reader: impl tokio::io::AsyncRead + Unpin,
    mut log: Option<tokio::fs::File>,
    redactor: &Redactor,
    mut seen: impl FnMut(&[u8]),
) {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let mut redact = redactor.stream();
    let mut buffer = vec![0; 8192];
    let mut out = Vec::new();
    let mut ended = false;
    while !ended {
        out.clear();
        match reader.read(&mut buffer).await {
            Ok(0) | Err(_) => {
                redact.finish(&mut out);
                ended = true;
            }
            Ok(read) => redact.push(&buffer[..read], &mut out),
        }
        seen(&out);
        if let Some(file) = &mut log
            && file.write_all(&out).await.is_err()
        {
            log = None;
        }
    }
    if let Some(file) = &mut log {
        let _ = file.flush().await;
    }
}

/// Appends `bytes` to `tail`, keeping its last `max` bytes.
pub fn keep_tail(tail: &mut Vec<u8>, bytes: &[u8], max: usize) {
    tail.extend_from_slice(bytes);
    let excess = tail.len().saturating_sub(max);
    tail.drain(..excess);
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "sk-test-0123456789";

    #[test]
    fn every_occurrence_is_replaced() {
        let redactor = Redactor::new([KEY]);
        assert_eq!(
            redactor.redact(&format!("a={KEY}\nb={KEY}{KEY}.")),
            "a=[REDACTED]\nb=[REDACTED][REDACTED]."
        );
        assert_eq!(redactor.redact("nothing here"), "nothing here");
    }

    #[test]
    fn short_values_are_not_secrets() {
        let redactor = Redactor::new(["test", "1234567"]);
        assert!(redactor.is_empty());
        assert_eq!(redactor.redact("test 1234567"), "test 1234567");
    }

    #[test]
    fn a_secret_containing_another_is_replaced_whole() {
        let redactor = Redactor::new(["abcdefgh", "xxabcdefghyy"]);
        assert_eq!(
            redactor.redact("1xxabcdefghyy2abcdefgh"),
            "1[REDACTED]2[REDACTED]"
        );
    }

    #[test]
    fn url_userinfo_is_found_and_hidden() {
        let url = "http://user:TOKEN-123456@host:8080/v1/chat?x=a@b";
        assert_eq!(url_userinfo(url), Some("user:TOKEN-123456"));
        assert_eq!(
            url_without_userinfo(url),
            "http://[REDACTED]@host:8080/v1/chat?x=a@b"
        );
        assert_eq!(url_userinfo("https://host/v1/a@b"), None);
        assert_eq!(url_without_userinfo("https://host/v1"), "https://host/v1");
        let credentials = Credentials::new("http://u:pw@127.0.0.1:1/v1", None).unwrap();
        let redactor = Redactor::for_run(&credentials, |_| None);
        assert_eq!(
            redactor.redact("GET http://u:pw@127.0.0.1:1/v1"),
            "GET http://[REDACTED]127.0.0.1:1/v1",
            "the userinfo and its `@` are masked"
        );
    }

    #[test]
    fn debug_never_shows_a_secret() {
        let shown = format!("{:?}", Redactor::new([KEY]));
        assert_eq!(shown, "Redactor { secrets: 1 }");
    }

    #[test]
    fn a_run_redacts_its_key_and_the_inherited_key_variables() {
        let credentials =
            Credentials::new("http://127.0.0.1:1/v1", Some("sk-resolved-key".to_owned())).unwrap();
        let env = |name: &str| (name == "OPENAI_API_KEY").then(|| "sk-other-inherited".to_owned());
        let redactor = Redactor::for_run(&credentials, env);
        assert_eq!(
            redactor.redact("sk-resolved-key sk-other-inherited"),
            "[REDACTED] [REDACTED]"
        );
    }

    fn streamed(redactor: &Redactor, pieces: &[&[u8]]) -> Vec<u8> {
        let mut stream = redactor.stream();
        let mut out = Vec::new();
        for piece in pieces {
            stream.push(piece, &mut out);
        }
        stream.finish(&mut out);
        out
    }

    #[test]
    fn a_secret_split_at_any_point_is_found() {
        let redactor = Redactor::new([KEY, "another-secret"]);
        let text = format!("env: K={KEY}\0X=1\0another-secret!{KEY}");
        let expected = redactor.redact(&text).into_bytes();
        let bytes = text.as_bytes();
        for first in 0..=bytes.len() {
            for second in first..=bytes.len() {
                let pieces = [&bytes[..first], &bytes[first..second], &bytes[second..]];
                assert_eq!(
                    streamed(&redactor, &pieces),
                    expected,
                    "split at {first} and {second}"
                );
            }
        }
    }

    #[test]
    fn byte_by_byte_streams_lose_nothing() {
        let redactor = Redactor::new([KEY]);
        let text = format!("sk-test-01{KEY}sk-test-0");
        let pieces: Vec<&[u8]> = text.as_bytes().chunks(1).collect();
        assert_eq!(
            streamed(&redactor, &pieces),
            b"sk-test-01[REDACTED]sk-test-0"
        );
    }

    #[test]
    fn without_secrets_a_stream_passes_through_at_once() {
        let mut stream = Redactor::default().stream();
        let mut out = Vec::new();
        stream.push(b"abc", &mut out);
        assert_eq!(out, b"abc");
    }

    #[test]
    fn find_bytes_handles_edges() {
        assert_eq!(find_bytes(b"", b"ab"), None);
        assert_eq!(find_bytes(b"ab", b"ab"), Some(0));
        assert_eq!(find_bytes(b"aab", b"ab"), Some(1));
        assert_eq!(find_bytes(b"a", b"ab"), None);
        assert_eq!(find_bytes(b"xxab", b"b"), Some(3));
    }
}
