//! "Did you mean …?" — one helper used by every lookup of a name.

/// The closest candidate to `name`, if one is close enough to be a plausible typo.
pub fn did_you_mean<'a, I>(name: &str, candidates: I) -> Option<&'a str>
where
    I: IntoIterator<Item = &'a str>,
{
    let mut best: Option<(f64, &'a str)> = None;
    for candidate in candidates {
        if candidate == name {
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
/// difference in length, so most candidates are ruled out without computing it (which
/// matters when a hostile file holds a hundred thousand unknown names).
fn close_edit(name: &str, candidate: &str) -> bool {
    let limit = name.len().max(3) / 3;
    let (a, b) = (name.chars().count(), candidate.chars().count());
    a.abs_diff(b) <= limit && strsim::damerau_levenshtein(name, candidate) <= limit
}

/// `Some("did you mean `x`?")` when a candidate is close.
pub fn help_did_you_mean<'a, I>(name: &str, candidates: I) -> Option<String>
where
    I: IntoIterator<Item = &'a str>,
{
    did_you_mean(name, candidates).map(|c| format!("did you mean `{c}`?"))
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
    }
}
