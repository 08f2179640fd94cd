//! Seed citations: the sections a check's reference names (`003 §10 Test 2.1`, `002
//! §4.2.2, §5; 001 §7.2`), and finding the sentence a check quotes in those sections of
//! the seed texts (`--seeds DIR`: `NNN_*.txt`, Markdown).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One section of one seed document.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Section {
    /// The document's number, `000` … `003`.
    pub doc: String,
    /// The section's number, `10`, `4.2.2`.
    pub number: String,
}

impl std::fmt::Display for Section {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} §{}", self.doc, self.number)
    }
}

/// What a reference must start with: a seed document and a numbered section.
pub const FORM: &str = "NNN §x.y, e.g. `003 §10 Test 2.1` or `002 §4.2.2, §5; 001 §7.2`";

/// The section number at the start of `text` (`4.2.2` of `4.2.2, §5`), and the rest.
fn number(text: &str) -> Option<(&str, &str)> {
    let end = text
        .char_indices()
        .find(|(_, c)| !c.is_ascii_digit() && *c != '.')
        .map_or(text.len(), |(i, _)| i);
    let found = text[..end].trim_end_matches('.');
    let well_formed = !found.is_empty() && found.split('.').all(|part| !part.is_empty());
    well_formed.then(|| (found, &text[found.len()..]))
}

/// Whether `text` starts with a document number and a section: `003 §10`.
fn starts_with_section(text: &str) -> bool {
    let mut chars = text.chars();
    let doc = chars.by_ref().take(3).filter(char::is_ascii_digit).count() == 3;
    doc && chars.as_str().strip_prefix(" §").and_then(number).is_some()
}

/// The sections `reference` cites. It must start with one (`NNN §x.y`); later `§a.b` take
/// the document before them, `§3.1–3.3` is a range, and text in parentheses is prose.
pub fn sections(reference: &str) -> Result<Vec<Section>, String> {
    let plain = without_parentheses(reference);
    if !starts_with_section(&plain) {
        return Err(format!(
            "{reference:?} does not start with a seed section ({FORM})"
        ));
    }
    let mut doc = String::new();
    let mut out = Vec::new();
    let mut rest = plain.as_str();
    while let Some(at) = rest.find('§') {
        let before = &rest[..at];
        if let Some(named) = before
            .strip_suffix(' ')
            .and_then(|b| b.get(b.len().saturating_sub(3)..))
            .filter(|d| d.len() == 3 && d.chars().all(|c| c.is_ascii_digit()))
        {
            doc = named.to_string();
        }
        rest = &rest[at + '§'.len_utf8()..];
        let Some((first, after)) = number(rest) else {
            continue;
        };
        rest = after;
        let last = ['–', '-']
            .iter()
            .find_map(|dash| rest.strip_prefix(*dash))
            .and_then(number);
        let numbers = match last {
            Some((last, after)) => {
                rest = after;
                range(first, last)
            }
            None => vec![first.to_string()],
        };
        out.extend(numbers.into_iter().map(|number| Section {
            doc: doc.clone(),
            number,
        }));
    }
    Ok(out)
}

/// `3.1`–`3.3` → 3.1, 3.2, 3.3; `2.5.2`–`2.5.4` likewise; anything else its two ends.
fn range(first: &str, last: &str) -> Vec<String> {
    let (prefix_a, a) = first.rsplit_once('.').unwrap_or(("", first));
    let (prefix_b, b) = last.rsplit_once('.').unwrap_or(("", last));
    match (a.parse::<u32>(), b.parse::<u32>()) {
        (Ok(a), Ok(b)) if prefix_a == prefix_b && a < b && b - a < 20 => (a..=b)
            .map(|n| {
                if prefix_a.is_empty() {
                    n.to_string()
                } else {
                    format!("{prefix_a}.{n}")
                }
            })
            .collect(),
        _ => vec![first.to_string(), last.to_string()],
    }
}

fn without_parentheses(text: &str) -> String {
    let mut depth = 0_u32;
    let mut out = String::new();
    for c in text.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    out
}

/// A text compared as a reader sees it: Markdown emphasis and code marks dropped, runs
/// of whitespace (line breaks included) one space.
pub fn normalize(text: &str) -> String {
    text.replace("**", "")
        .replace('`', "")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// The seed texts of a directory, by document number.
#[derive(Debug, Clone)]
pub struct Seeds {
    dir: PathBuf,
    docs: BTreeMap<String, String>,
}

/// A seeds directory that cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("{}: {reason}", dir.display())]
pub struct SeedsError {
    /// The directory.
    pub dir: PathBuf,
    /// Why.
    pub reason: String,
}

impl Seeds {
    /// Reads every `NNN_*.txt` of `dir`.
    pub fn load(dir: &Path) -> Result<Self, SeedsError> {
        let failed = |reason: String| SeedsError {
            dir: dir.to_path_buf(),
            reason,
        };
        let entries = std::fs::read_dir(dir).map_err(|e| failed(e.to_string()))?;
        let mut docs = BTreeMap::new();
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Some(doc) = name
                .get(..3)
                .filter(|d| d.chars().all(|c| c.is_ascii_digit()))
                .filter(|_| name.ends_with(".txt"))
            else {
                continue;
            };
            let text = std::fs::read_to_string(entry.path())
                .map_err(|e| failed(format!("{name}: {e}")))?;
            docs.insert(doc.to_string(), text);
        }
        if docs.is_empty() {
            return Err(failed(
                "holds no seed texts (NNN_*.txt, e.g. 000_….txt)".into(),
            ));
        }
        Ok(Self {
            dir: dir.to_path_buf(),
            docs,
        })
    }

    /// The directory they came from.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The text of a section: from its heading to the next heading (outside code blocks)
    /// that ranks above it or is numbered outside it.
    pub fn section(&self, section: &Section) -> Option<String> {
        let text = self.docs.get(&section.doc)?;
        let mut fenced = false;
        let mut start: Option<usize> = None;
        let mut lines = Vec::new();
        for line in text.lines() {
            if line.trim_start().starts_with("```") {
                fenced = !fenced;
            }
            let heading = (!fenced).then(|| heading(line)).flatten();
            if let (Some((level, number)), Some(start_level)) = (&heading, start) {
                let inside = number
                    .as_deref()
                    .is_none_or(|n| n.starts_with(&format!("{}.", section.number)));
                if *level < start_level || !inside {
                    break;
                }
            }
            if start.is_none() {
                if let Some((level, Some(number))) = &heading
                    && *number == section.number
                {
                    start = Some(*level);
                } else {
                    continue;
                }
            }
            lines.push(line);
        }
        start.map(|_| lines.join("\n"))
    }

    /// Whether `quote` occurs in one of `sections`; else why not.
    pub fn find(&self, sections: &[Section], quote: &str) -> Result<(), String> {
        let wanted = normalize(quote);
        let mut missing = Vec::new();
        for section in sections {
            match self.section(section) {
                Some(text) if normalize(&text).contains(&wanted) => return Ok(()),
                Some(_) => {}
                None => missing.push(section.to_string()),
            }
        }
        let shown: Vec<String> = sections.iter().map(ToString::to_string).collect();
        if missing.len() == sections.len() {
            Err(format!(
                "no such section in {}: {}",
                self.dir.display(),
                missing.join(", ")
            ))
        } else {
            Err(format!("{quote:?} is not in {}", shown.join(", ")))
        }
    }
}

/// A Markdown heading: its level (the number of `#`) and its section number, if any.
fn heading(line: &str) -> Option<(usize, Option<String>)> {
    let level = line.chars().take_while(|c| *c == '#').count();
    let title = line.get(level..)?.strip_prefix(' ')?;
    if level == 0 {
        return None;
    }
    let number = number(title.trim_start())
        .filter(|(_, rest)| rest.is_empty() || rest.starts_with(['.', ' ']))
        .map(|(n, _)| n.to_string());
    Some((level, number))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cited(reference: &str) -> Vec<String> {
        sections(reference)
            .unwrap()
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn references_name_their_sections() {
        assert_eq!(cited("003 §10 Test 2.1"), ["003 §10"]);
        assert_eq!(
            cited("002 §4.2.2, §5; 001 §7.2"),
            ["002 §4.2.2", "002 §5", "001 §7.2"]
        );
        assert_eq!(cited("002 §3.1–3.3"), ["002 §3.1", "002 §3.2", "002 §3.3"]);
        assert_eq!(
            cited("001 §6.3 (stdout.log; seed 000 §1.2 lays io/ out otherwise)"),
            ["001 §6.3"]
        );
        assert_eq!(
            cited("000 §2.5.2–2.5.4"),
            ["000 §2.5.2", "000 §2.5.3", "000 §2.5.4"]
        );
    }

    #[test]
    fn a_reference_must_start_with_a_seed_section() {
        for bad in [
            "issue 11 (real model servers)",
            "§4.3",
            "004 (v1.2.1 naming)",
            "DESIGN.md",
        ] {
            assert!(
                sections(bad)
                    .unwrap_err()
                    .contains("does not start with a seed section"),
                "{bad}"
            );
        }
    }

    const DOC: &str = "# Title\n\n## 7. Log\n\nintro\n\n### 7.1 Envelope\n\nAll **events** share\na `common` envelope.\n\n```\n# not a heading\n```\n\n### 7.2 Payloads\n\n### A. Run events\n\nRUN_END ends a run.\n\n## 8. Next\n\nafter\n";

    fn seeds() -> (tempfile::TempDir, Seeds) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("001_abc.txt"), DOC).unwrap();
        std::fs::write(dir.path().join("README.md"), "not a seed").unwrap();
        let seeds = Seeds::load(dir.path()).unwrap();
        (dir, seeds)
    }

    #[test]
    fn sections_run_to_the_next_heading_outside_them() {
        let (_dir, seeds) = seeds();
        let section = |n: &str| {
            seeds.section(&Section {
                doc: "001".into(),
                number: n.into(),
            })
        };
        let log = section("7").unwrap();
        assert!(
            log.contains("RUN_END ends a run.") && !log.contains("after"),
            "{log}"
        );
        let envelope = section("7.1").unwrap();
        assert!(envelope.contains("# not a heading") && !envelope.contains("RUN_END"));
        assert!(section("7.2").unwrap().contains("RUN_END ends a run."));
        assert!(section("9").is_none());
    }

    #[test]
    fn quotes_are_found_as_a_reader_sees_them() {
        let (_dir, seeds) = seeds();
        let at = sections("001 §7.1").unwrap();
        seeds
            .find(&at, "All events share a common envelope.")
            .unwrap();
        let miss = seeds.find(&at, "RUN_END ends a run.").unwrap_err();
        assert!(miss.contains("is not in 001 §7.1"), "{miss}");
        let nowhere = seeds.find(&sections("002 §1").unwrap(), "x").unwrap_err();
        assert!(nowhere.contains("no such section"), "{nowhere}");
    }
}
