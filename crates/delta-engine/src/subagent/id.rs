//! The id of a sub-agent run: derived from its parent's id and the call, so that a parent
//! continued after a crash finds the child it had started instead of starting another.

use crate::run::{MAX_RUN_ID_LEN, RunId};

/// The id of the `ordinal`-th sub-agent (from 1) a run started: `{parent}.{ordinal}`, e.g.
/// `20251014_043012_a1b2c3.2.1` for the first child of its second child. The ordinal is
/// counted from the parent's journal (its ACTION_REQUESTs that name a sub-agent), so it is
/// the same in every process that drives the parent. A parent id too long to take the
/// suffix keeps its first 100 characters and a hash of the whole.
#[must_use]
pub fn child_run_id(parent: &RunId, ordinal: u32) -> RunId {
    let suffix = format!(".{ordinal}");
    let whole = format!("{parent}{suffix}");
    let id = if whole.len() <= MAX_RUN_ID_LEN {
        whole
    } else {
        let head: String = parent.as_str().chars().take(100).collect();
        format!("{head}-{:08x}{suffix}", fnv1a(parent.as_str()))
    };
    // Both forms are characters of the parent's id, '.', '-', hex and digits, within the
    // length limit: always a valid id.
    RunId::parse(&id).unwrap_or_else(|_| parent.clone())
}

/// 32-bit FNV-1a: a stable hash, the same on every machine and in every version.
fn fnv1a(text: &str) -> u32 {
    text.bytes().fold(0x811c_9dc5, |hash, byte| {
        (hash ^ u32::from(byte)).wrapping_mul(0x0100_0193)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_id_names_its_parent_and_ordinal() {
        let parent = RunId::parse("20251014_043012_a1b2c3").unwrap();
        let child = child_run_id(&parent, 2);
        assert_eq!(child.as_str(), "20251014_043012_a1b2c3.2");
        assert_eq!(
            child_run_id(&child, 1).as_str(),
            "20251014_043012_a1b2c3.2.1"
        );
    }

    #[test]
    fn a_long_parent_id_is_shortened_deterministically() {
        let parent = RunId::parse(&"p".repeat(MAX_RUN_ID_LEN)).unwrap();
        let child = child_run_id(&parent, 12);
        assert!(child.as_str().len() <= MAX_RUN_ID_LEN, "{child}");
        assert!(child.as_str().ends_with(".12"), "{child}");
        assert_eq!(child, child_run_id(&parent, 12));
        assert_ne!(child, child_run_id(&parent, 13));
    }
}
