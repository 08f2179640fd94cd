//! The message a run is given (`delta run`'s task, `delta continue`'s instruction or
//! answer, a batch task's `message`): how large it may be, read and checked the same
//! wherever it comes from, so that the batch driver refuses what `delta run` would.

use std::io::{self, Read};

/// The largest message, in bytes: about five million tokens, beyond any model's window.
/// A message is journaled whole, in one line (RUN_START, USER_MESSAGE) that every reader
/// of the journal holds in memory.
pub const MAX_MESSAGE_BYTES: u64 = 16 << 20;

/// Checks that `message` is at most [`MAX_MESSAGE_BYTES`].
///
/// # Errors
/// What is wrong and how to fix it.
pub fn check(message: &str) -> Result<(), String> {
    if message.len() as u64 > MAX_MESSAGE_BYTES {
        return Err(too_large(message.len() as u64));
    }
    Ok(())
}

/// The message `reader` holds (a file, stdin), never reading more than one byte past
/// [`MAX_MESSAGE_BYTES`]: a message from `/dev/zero` is refused, not read forever.
///
/// # Errors
/// The read's error; `InvalidData` when the message is too large or not UTF-8 text.
pub fn read(reader: impl Read) -> io::Result<String> {
    let mut bytes = Vec::new();
    reader.take(MAX_MESSAGE_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_MESSAGE_BYTES {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("it holds more than {} MiB", MAX_MESSAGE_BYTES >> 20),
        ));
    }
    String::from_utf8(bytes).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            "stream did not contain valid UTF-8",
        )
    })
}

fn too_large(len: u64) -> String {
    format!(
        "the message is {len} bytes, more than the {} MiB a run's message may have; put \
         large inputs in a file of the workspace and name it in the message",
        MAX_MESSAGE_BYTES >> 20
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_is_bounded_wherever_it_comes_from() {
        assert!(check("short").is_ok());
        let big = "x".repeat(usize::try_from(MAX_MESSAGE_BYTES).unwrap() + 1);
        assert!(check(&big).unwrap_err().contains("more than the 16 MiB"));
        assert_eq!(read("hi".as_bytes()).unwrap(), "hi");
        let endless = io::repeat(b'x');
        assert_eq!(
            read(endless).unwrap_err().to_string(),
            "it holds more than 16 MiB"
        );
        assert_eq!(
            read(&[0xff_u8][..]).unwrap_err().kind(),
            io::ErrorKind::InvalidData
        );
    }
}
