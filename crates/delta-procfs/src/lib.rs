//! Linux `/proc/PID/stat`, parsed in one place for the engine (is a run's owner alive?)
//! and `delta-sessions` (the process tree under an interpreter).
//!
//! A pid alone can be reused; a pid together with its start time (field 22 of
//! `/proc/PID/stat`, clock ticks since boot) names one process for the life of the
//! machine: a [`ProcKey`].

use std::fs;

/// A process identity that survives pid reuse: (pid, start time in clock ticks).
pub type ProcKey = (i32, u64);

/// The fields of `/proc/PID/stat` the workspace needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcStat {
    /// Process id.
    pub pid: i32,
    /// The command name (field 2, `/proc/PID/comm`), e.g. `delta`.
    pub comm: String,
    /// The state letter (field 3): `R`, `S`, `Z`…
    pub state: char,
    /// Parent pid (field 4).
    pub ppid: i32,
    /// Session id (field 6).
    pub session: i32,
    /// Start time in clock ticks since boot (field 22).
    pub start_ticks: u64,
}

impl ProcStat {
    /// Its [`ProcKey`].
    #[must_use]
    pub fn key(&self) -> ProcKey {
        (self.pid, self.start_ticks)
    }

    /// Whether it has finished running: a zombie (`Z`) waiting to be reaped, or dead (`X`).
    #[must_use]
    pub fn has_exited(&self) -> bool {
        matches!(self.state, 'Z' | 'X')
    }
}

/// Reads process `pid`; `None` when it does not exist (or `/proc` is unavailable).
#[must_use]
pub fn read(pid: i32) -> Option<ProcStat> {
    let text = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse(&text)
}

/// Reads the calling process.
#[must_use]
pub fn read_self() -> Option<ProcStat> {
    let text = fs::read_to_string("/proc/self/stat").ok()?;
    parse(&text)
}

/// Every process visible in `/proc`.
#[must_use]
pub fn all() -> Vec<ProcStat> {
    let Ok(entries) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(read)
        .collect()
}

/// Parses the text of `/proc/PID/stat`. The command name (field 2) is in parentheses and
/// may itself contain spaces and parentheses, so the fixed fields are counted from the
/// *last* `)`.
#[must_use]
pub fn parse(text: &str) -> Option<ProcStat> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let pid = text.get(..open)?.trim().parse().ok()?;
    let comm = text.get(open + 1..close)?.to_owned();
    // Field 3 (state) onwards.
    let fields: Vec<&str> = text.get(close + 1..)?.split_ascii_whitespace().collect();
    Some(ProcStat {
        pid,
        comm,
        state: fields.first()?.chars().next()?,
        ppid: fields.get(1)?.parse().ok()?,
        session: fields.get(3)?.parse().ok()?,
        start_ticks: fields.get(19)?.parse().ok()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_with_parentheses_in_the_name_parses() {
        let text = "42 (a (b) c) S 7 42 40 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 123456 0 0";
        assert_eq!(
            parse(text),
            Some(ProcStat {
                pid: 42,
                comm: "a (b) c".to_owned(),
                state: 'S',
                ppid: 7,
                session: 40,
                start_ticks: 123456,
            })
        );
        assert_eq!(parse("42 (x) Z 7"), None);
    }

    #[test]
    fn this_process_reads_as_itself() {
        let me = read_self().unwrap();
        assert_eq!(me.pid, i32::try_from(std::process::id()).unwrap());
        assert_eq!(read(me.pid).map(|stat| stat.key()), Some(me.key()));
        assert!(!me.has_exited());
    }
}
