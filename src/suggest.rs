//! "Did you mean …?" — one helper used by every lookup of a name.

/// Longest name (and candidate) compared: the edit distance costs time and memory
/// proportional to the product of the lengths, and nothing longer is a plausible typo of
/// a name (file names stop at 255 bytes, tool names at 64).
const MAX_COMPARED_LEN: usize = 256;

/// The closest candidate to `name`, if one is close enough to be a plausible typo.
pub fn did_you_mean<'a, I>(name: &str, candidates: I) -> Option<&'a str>
where
    I: IntoIterator<Item = &'a str>,
{
    if name.len() > MAX_COMPARED_LEN {
        return None;
    }
    let mut best: Option<(f64, &'a str)> = None;
    for candidate in candidates {
        if candidate == name || candidate.len() > MAX_COMPARED_LEN {
            continue;
        }
        let score = strsim::jaro_winkler(name, candidate);
        if score < 0.8 && !close_edit(name, candidate) {
            continue;
        }
        // Ties keep the first candidate in byte order, so suggestions are stable.
        match best {
            Some((s, c)) if s > score || (s == score && c <= candidate) => {}
            _ => best = Some((score, candidate)),
        }
    }
    best.map(|(_, c)| c)
}

/// At most `name.len().max(3) / 3` edits apart? The edit distance is at least the
/// difference in length and at least the [`bag_distance`], so most candidates are
/// ruled out without computing it (which matters when a hostile file holds a hundred
/// thousand unknown names).
fn close_edit(name: &str, candidate: &str) -> bool {
    let limit = name.len().max(3) / 3;
    let (a, b) = (name.chars().count(), candidate.chars().count());
    a.abs_diff(b) <= limit
        && bag_distance(name, candidate) <= limit
        && strsim::damerau_levenshtein(name, candidate) <= limit
}

/// How many characters of one string the other lacks, counted as multisets (the larger
/// of the two counts). An insertion, deletion or substitution changes it by at most
/// one and a transposition not at all, so it never exceeds the Damerau-Levenshtein
/// distance.
fn bag_distance(a: &str, b: &str) -> usize {
    let mut unmatched: Vec<char> = b.chars().collect();
    let mut missing = 0;
    for c in a.chars() {
        match unmatched.iter().position(|u| *u == c) {
            Some(i) => {
                unmatched.swap_remove(i);
            }
            None => missing += 1,
        }
    }
    missing.max(unmatched.len())
}

/// `Some("did you mean `x`?")` when a candidate is close.
pub fn help_did_you_mean<'a, I>(name: &str, candidates: I) -> Option<String>
where
    I: IntoIterator<Item = &'a str>,
{
    did_you_mean(name, candidates).map(|c| format!("did you mean `{c}`?"))
}

/// `` `a`, `b`, `c` `` for messages.
pub(crate) fn list_names<'a>(names: impl IntoIterator<Item = &'a str>) -> String {
    names
        .into_iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_close_names_only() {
        let tools = ["read_file", "write_file", "grep", "glob", "bash"];
        assert_eq!(did_you_mean("read_fiel", tools), Some("read_file"));
        assert_eq!(did_you_mean("grepp", tools), Some("grep"));
        assert_eq!(did_you_mean("kubernetes", tools), None);
        assert_eq!(did_you_mean("cdw", ["cwd", "date"]), Some("cwd"));
        let huge = "read_file".repeat(100_000);
        assert_eq!(did_you_mean(&huge, tools), None);
    }

    #[test]
    fn bag_distance_is_a_lower_bound_of_the_edit_distance() {
        let words = [
            "",
            "a",
            "ab",
            "ba",
            "abc",
            "acb",
            "version",
            "verison",
            "name",
            "nmae",
            "tools",
            "k12345",
            "persona",
            "prsona",
            "contexts",
            "model",
            "mdoel",
            "aab",
            "bba",
            "é",
            "ée",
            "read_file",
            "raed_flie",
        ];
        for a in words {
            for b in words {
                let bag = bag_distance(a, b);
                assert!(bag <= strsim::damerau_levenshtein(a, b), "{a} {b}");
                assert_eq!(bag, bag_distance(b, a), "{a} {b}");
            }
        }
        assert_eq!(bag_distance("k12345", "version"), 7);
        assert_eq!(bag_distance("verison", "version"), 0);
    }
}
