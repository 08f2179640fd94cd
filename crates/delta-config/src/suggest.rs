//! "Did you mean …?" suggestions for misspelt keys, hook names and source types.

/// The candidate closest to `word`, if it is close enough to be a plausible typo.
///
/// Distance is optimal string alignment (Levenshtein plus adjacent transpositions), so
/// `exce` → `exec` counts as one edit. The threshold grows with the word so that a
/// two-letter key does not "suggest" an unrelated one. Ties go to the earlier candidate,
/// which keeps suggestions deterministic.
pub fn closest<'a, I>(word: &str, candidates: I) -> Option<&'a str>
where
    I: IntoIterator<Item = &'a str>,
{
    let word = word.to_lowercase();
    let limit = match word.chars().count() {
        0..=3 => 1,
        4..=7 => 2,
        _ => 3,
    };
    let mut best: Option<(usize, &'a str)> = None;
    for candidate in candidates {
        let distance = osa_distance(&word, &candidate.to_lowercase());
        if distance <= limit && best.is_none_or(|(d, _)| distance < d) {
            best = Some((distance, candidate));
        }
    }
    best.map(|(_, candidate)| candidate)
}

/// Optimal string alignment distance between two strings, counted in chars.
fn osa_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    // Three rolling rows: the transposition step looks two rows back.
    let mut before_prev: Vec<usize> = vec![0; b.len() + 1];
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur: Vec<usize> = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        cur[0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(before_prev[j - 2] + 1);
            }
            cur[j] = best;
        }
        std::mem::swap(&mut before_prev, &mut prev);
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distance_counts_one_edit_per_typo_kind() {
        assert_eq!(osa_distance("exce", "exec"), 1);
        assert_eq!(osa_distance("on_mising", "on_missing"), 1);
        assert_eq!(osa_distance("comand", "command"), 1);
        assert_eq!(osa_distance("shel", "shell"), 1);
        assert_eq!(osa_distance("", "abc"), 3);
        assert_eq!(osa_distance("same", "same"), 0);
        assert_eq!(osa_distance("kitten", "sitting"), 3);
    }

    #[test]
    fn suggests_only_plausible_candidates() {
        let keys = ["name", "description", "exec", "shell", "command", "stdin"];
        assert_eq!(closest("exce", keys), Some("exec"));
        assert_eq!(closest("EXEC", keys), Some("exec"));
        assert_eq!(closest("descripton", keys), Some("description"));
        assert_eq!(closest("zzzzzz", keys), None);
        assert_eq!(closest("id", ["ip", "path"]), Some("ip"));
        assert_eq!(closest("xy", ["path"]), None);
    }
}
