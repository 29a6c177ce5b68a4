//! Placeholders and protected tokens: what a replacement text must keep, and how values
//! are put into a text.

use std::fmt;

/// A `{{ name }}` at `start` of `text` (spaces inside optional): its name and its end.
fn placeholder_at(text: &str, start: usize) -> Option<(&str, usize)> {
    let rest = text.get(start..)?.strip_prefix("{{")?;
    let inner_start = start + 2 + (rest.len() - rest.trim_start_matches(' ').len());
    let inner = &text[inner_start..];
    let name_len = inner
        .bytes()
        .take_while(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'_')
        .count();
    if name_len == 0 || !inner.as_bytes()[0].is_ascii_lowercase() {
        return None;
    }
    let name = &inner[..name_len];
    let after = &inner[name_len..];
    let trimmed = after.trim_start_matches(' ');
    let close = trimmed.strip_prefix("}}")?;
    let end = text.len() - close.len();
    Some((name, end))
}

/// The names of the `{{ name }}` placeholders in `text`, each once, in order. Anything
/// else in braces (`{x}`, `{{ a | b }}`, `{% … %}`) is not a placeholder.
pub fn placeholders(text: &str) -> Vec<&str> {
    let mut names: Vec<&str> = Vec::new();
    let mut i = 0;
    while let Some(found) = text[i..].find("{{") {
        let start = i + found;
        match placeholder_at(text, start) {
            Some((name, end)) => {
                if !names.contains(&name) {
                    names.push(name);
                }
                i = end;
            }
            None => i = start + 2,
        }
    }
    names
}

/// `text` with each `{{ name }}` whose name `values` gives replaced by its value, in one
/// pass (a value is never scanned again); every other brace stays as it is.
pub fn substitute(text: &str, values: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while let Some(found) = text[i..].find("{{") {
        let start = i + found;
        out.push_str(&text[i..start]);
        match placeholder_at(text, start)
            .and_then(|(name, end)| values.iter().find(|(n, _)| *n == name).map(|v| (v.1, end)))
        {
            Some((value, end)) => {
                out.push_str(value);
                i = end;
            }
            None => {
                out.push_str("{{");
                i = start + 2;
            }
        }
    }
    out.push_str(&text[i..]);
    out
}

/// The tokens a replacement of `text` must keep: every backticked span (`` `old_string` ``,
/// backticks included, unless it holds a placeholder), every `<tag>` and `</tag>`
/// (`<runtime-context>`), every `$NAME` (`$TMPDIR`), and the `declared` ones. Each once, in
/// order of first appearance.
pub fn protected_tokens(text: &str, declared: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut push = |t: &str| {
        if !out.iter().any(|o| o == t) {
            out.push(t.to_owned());
        }
    };
    let bytes = text.as_bytes();
    // Backticked spans, paired left to right within a line.
    for line in text.lines() {
        let mut rest = line;
        while let Some(open) = rest.find('`') {
            let after = &rest[open + 1..];
            let Some(close) = after.find('`') else { break };
            let inner = &after[..close];
            if !inner.trim().is_empty() && !inner.contains("{{") {
                push(&rest[open..open + close + 2]);
            }
            rest = &after[close + 1..];
        }
    }
    // Tags and environment variables.
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'<' => {
                let start = i;
                let mut j = i + 1;
                if bytes.get(j) == Some(&b'/') {
                    j += 1;
                }
                let name_start = j;
                while j < bytes.len()
                    && (bytes[j].is_ascii_lowercase() || (j > name_start && bytes[j] == b'-'))
                {
                    j += 1;
                }
                if j > name_start && bytes.get(j) == Some(&b'>') {
                    push(&text[start..=j]);
                    i = j + 1;
                    continue;
                }
            }
            b'$' => {
                let mut j = i + 1;
                while j < bytes.len() && (bytes[j].is_ascii_uppercase() || bytes[j] == b'_') {
                    j += 1;
                }
                if j > i + 2 {
                    push(&text[i..j]);
                    i = j;
                    continue;
                }
            }
            _ => {}
        }
        i += 1;
    }
    for t in declared {
        push(t);
    }
    out
}

/// What a replacement text lost.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MissingToken {
    /// A `{{ name }}` of the original.
    Placeholder(String),
    /// A protected token of the original.
    Token(String),
}

impl fmt::Display for MissingToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MissingToken::Placeholder(name) => write!(f, "placeholder `{{{{ {name} }}}}`"),
            MissingToken::Token(t) if t.starts_with('`') => write!(f, "protected token {t}"),
            MissingToken::Token(t) => write!(f, "protected token `{t}`"),
        }
    }
}

/// What `replacement` lost of `original`: its placeholders first, then its protected
/// tokens ([`protected_tokens`] with `declared`).
pub fn missing_tokens(original: &str, declared: &[&str], replacement: &str) -> Vec<MissingToken> {
    let kept = placeholders(replacement);
    let mut out: Vec<MissingToken> = placeholders(original)
        .into_iter()
        .filter(|p| !kept.contains(p))
        .map(|p| MissingToken::Placeholder(p.to_owned()))
        .collect();
    out.extend(
        protected_tokens(original, declared)
            .into_iter()
            .filter(|t| !replacement.contains(t.as_str()))
            .map(MissingToken::Token),
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_plain_names_only() {
        assert_eq!(
            placeholders("a {{ tool }} b {{tool}} {{ x|y }} {x} {% if a %}{{ n_2 }}{{ 9 }}"),
            ["tool", "n_2"]
        );
        assert!(placeholders("{{").is_empty());
        assert!(placeholders("{{ }}").is_empty());
    }

    #[test]
    fn substitution_touches_only_given_placeholders() {
        assert_eq!(
            substitute(
                "`{{ tool }}` {x} {{ y }} {{tool}} {{",
                &[("tool", "{{ y }}")]
            ),
            "`{{ y }}` {x} {{ y }} {{ y }} {{"
        );
        assert_eq!(substitute("ä{{ a }}ö", &[("a", "ü")]), "äüö");
    }

    #[test]
    fn protected_tokens_are_found() {
        assert_eq!(
            protected_tokens(
                "Use `offset` and `limit` in a <runtime-context> ... </runtime-context>, `{{ tool }}`, $TMPDIR, a < b, $5",
                &["read_file"]
            ),
            [
                "`offset`",
                "`limit`",
                "<runtime-context>",
                "</runtime-context>",
                "$TMPDIR",
                "read_file"
            ]
        );
    }

    #[test]
    fn missing_tokens_name_what_was_lost() {
        let missing = missing_tokens(
            "Error: `{{ tool }}` took {{ seconds }} s; see `--yes`.",
            &[],
            "Fehler: {{ tool }} dauerte zu lange.",
        );
        assert_eq!(
            missing,
            [
                MissingToken::Placeholder("seconds".into()),
                MissingToken::Token("`--yes`".into())
            ]
        );
        assert_eq!(missing[0].to_string(), "placeholder `{{ seconds }}`");
    }
}
