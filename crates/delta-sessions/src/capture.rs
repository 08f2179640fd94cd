//! A command's output read back from its file within a cap: a stream larger than
//! [`OUTPUT_CAP`] keeps its first and last halves of the cap, with a marker in place of the
//! middle that says how much was left out. The file itself may be any size (the command
//! wrote it); only the kept bytes are read, so a command that prints gigabytes costs the
//! holder and the client no more memory than the cap, and the session goes on.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;

/// The most bytes of one stream (stdout or stderr) an `exec` result carries: 4 MiB. Far
/// beyond what a model can read, and small enough that even in the worst case of JSON
/// escaping (a control byte becomes `\u0000`, and output that is not UTF-8 is also sent
/// as base64) the two streams of one result stay under the 64 MiB a `delta` tool's output
/// may have.
pub const OUTPUT_CAP: u64 = 4 * 1024 * 1024;

/// One stream as read back.
#[derive(Debug, Default, PartialEq)]
pub struct Captured {
    /// The stream, or its head, the marker and its tail.
    pub bytes: Vec<u8>,
    /// How many bytes the command wrote to it.
    pub total: u64,
    /// How many of them the marker stands for (0: the stream is whole).
    pub omitted: u64,
}

/// The stream in the file at `path`, capped at `cap` bytes (plus the marker). A file that
/// is missing or unreadable is an empty stream: the command wrote nothing we can return.
pub fn read_capped(path: &Path, cap: u64) -> Captured {
    read(path, cap).unwrap_or_default()
}

fn read(path: &Path, cap: u64) -> io::Result<Captured> {
    let mut file = File::open(path)?;
    // A background job of the command may still be writing: the size now is the stream.
    let total = file.metadata()?.len();
    capture(&mut file, total, cap)
}

/// The first `total` bytes of `file`, capped.
fn capture(file: &mut (impl Read + Seek), total: u64, cap: u64) -> io::Result<Captured> {
    if total <= cap {
        let mut bytes = Vec::new();
        file.by_ref().take(total).read_to_end(&mut bytes)?;
        return Ok(Captured {
            bytes,
            total,
            omitted: 0,
        });
    }
    let half = cap / 2;
    let mut head = Vec::new();
    file.by_ref().take(half).read_to_end(&mut head)?;
    cut_incomplete_character(&mut head);
    file.seek(SeekFrom::Start(total - half))?;
    let mut tail = Vec::new();
    file.by_ref().take(half).read_to_end(&mut tail)?;
    // A tail that starts inside a character starts at the next one.
    let inside = tail
        .iter()
        .take(3)
        .take_while(|byte| **byte & 0xC0 == 0x80)
        .count();
    tail.drain(..inside);
    let kept = u64::try_from(head.len() + tail.len()).unwrap_or(total);
    let omitted = total.saturating_sub(kept);
    let mut bytes = head;
    bytes.extend_from_slice(marker(omitted, total, cap).as_bytes());
    bytes.extend_from_slice(&tail);
    Ok(Captured {
        bytes,
        total,
        omitted,
    })
}

/// Drops a character cut in two at the end of `head`, so that UTF-8 output stays UTF-8.
fn cut_incomplete_character(head: &mut Vec<u8>) {
    if let Err(error) = std::str::from_utf8(head)
        && error.error_len().is_none()
    {
        head.truncate(error.valid_up_to());
    }
}

/// The text in place of the omitted middle of a stream.
fn marker(omitted: u64, total: u64, cap: u64) -> String {
    format!(
        "\n[delta-sessions: {omitted} bytes omitted here. The command wrote {total} bytes to \
         this stream, more than the {} a result carries: the first and last {} are shown. \
         Write large output to a file and read the parts you need.]\n",
        size(cap),
        size(cap / 2)
    )
}

/// `4 MiB`, or `1000 bytes` for a size that is not a whole number of MiB.
fn size(bytes: u64) -> String {
    const MIB: u64 = 1024 * 1024;
    if bytes >= MIB && bytes.is_multiple_of(MIB) {
        format!("{} MiB", bytes / MIB)
    } else {
        format!("{bytes} bytes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn captured(content: &[u8], cap: u64) -> Captured {
        let total = u64::try_from(content.len()).unwrap();
        capture(&mut io::Cursor::new(content), total, cap).unwrap()
    }

    #[test]
    fn a_stream_within_the_cap_is_whole() {
        let whole = captured(b"0123456789", 10);
        assert_eq!(
            whole,
            Captured {
                bytes: b"0123456789".to_vec(),
                total: 10,
                omitted: 0
            }
        );
    }

    #[test]
    fn a_larger_stream_keeps_its_head_and_tail_around_a_marker() {
        let content: Vec<u8> = (0..100u8).collect();
        let cut = captured(&content, 20);
        assert_eq!(cut.total, 100);
        assert_eq!(cut.omitted, 80);
        assert_eq!(&cut.bytes[..10], &content[..10]);
        assert_eq!(&cut.bytes[cut.bytes.len() - 10..], &content[90..]);
        let middle = String::from_utf8_lossy(&cut.bytes[10..cut.bytes.len() - 10]).into_owned();
        assert_eq!(middle, marker(80, 100, 20));
    }

    #[test]
    fn a_cut_never_splits_a_character() {
        // "é" is two bytes: halves of 11 bytes end and start inside one.
        let content = "é".repeat(50);
        let cut = captured(content.as_bytes(), 22);
        let text = String::from_utf8(cut.bytes).expect("still UTF-8");
        assert!(
            text.starts_with("ééééé\n[delta-sessions: 80 bytes"),
            "{text}"
        );
        assert!(text.ends_with("]\nééééé"), "{text}");
        assert_eq!(cut.omitted, 80);
    }

    #[test]
    fn a_missing_file_is_an_empty_stream() {
        let missing = Path::new("/proc/self/no-such-output");
        assert_eq!(read_capped(missing, 10), Captured::default());
    }
}
