//! Positions and the shape of the YAML around one: what an editor's cursor is on.
//!
//! A [`Span`](crate::Span) counts characters (1-based line and column); the protocol
//! counts UTF-8 bytes or UTF-16 code units, as negotiated. Lines end at `\n`; a `\r`
//! before it is part of the line end, not of the line.

/// How the client counts columns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    /// UTF-8 bytes (negotiated when the client offers it).
    Utf8,
    /// UTF-16 code units (the protocol's default).
    Utf16,
}

impl Encoding {
    fn units(self, c: char) -> u32 {
        match self {
            Encoding::Utf8 => c.len_utf8() as u32,
            Encoding::Utf16 => c.len_utf16() as u32,
        }
    }
}

/// Line `line` (0-based) of `text`, without its line end.
pub(crate) fn line_of(text: &str, line: u32) -> Option<&str> {
    let raw = text.split('\n').nth(usize::try_from(line).ok()?)?;
    Some(raw.strip_suffix('\r').unwrap_or(raw))
}

/// The protocol column of character `chars` (0-based) of `line`, clamped to its end.
pub(crate) fn column_of_char(line: &str, chars: u32, encoding: Encoding) -> u32 {
    line.chars()
        .take(usize::try_from(chars).unwrap_or(usize::MAX))
        .map(|c| encoding.units(c))
        .sum()
}

/// The byte offset in `line` of protocol column `column` (clamped to the line's end; a
/// column inside a character is that character's start).
pub(crate) fn byte_of_column(line: &str, column: u32, encoding: Encoding) -> usize {
    let mut units = 0;
    for (i, c) in line.char_indices() {
        let next = units + encoding.units(c);
        if next > column {
            return i;
        }
        units = next;
    }
    line.len()
}

/// The protocol column of byte `byte` of `line`.
pub(crate) fn column_of_byte(line: &str, byte: usize, encoding: Encoding) -> u32 {
    line.get(..byte)
        .unwrap_or(line)
        .chars()
        .map(|c| encoding.units(c))
        .sum()
}

/// A key the cursor's line sits under, with the line it is written on (0-based).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Key {
    pub(crate) name: String,
    pub(crate) line: u32,
}

/// `key: rest` of a line (after its indentation and any `- ` markers): the key and
/// the byte where it starts.
pub(crate) fn key_of(line: &str) -> Option<(&str, usize)> {
    let mut start = line.len() - line.trim_start().len();
    let mut rest = &line[start..];
    while let Some(after) = rest.strip_prefix("- ") {
        let trimmed = after.trim_start();
        start += rest.len() - trimmed.len();
        rest = trimmed;
    }
    if rest.starts_with('#') {
        return None;
    }
    let colon = rest.find(':')?;
    let key = &rest[..colon];
    let after = &rest[colon + 1..];
    let simple = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '/' | '*'));
    (simple && (after.is_empty() || after.starts_with([' ', '\t']))).then_some((key, start))
}

/// The column (bytes) where the content of `line` starts, `- ` markers counted as
/// indentation; `None` for a blank or comment line.
fn indent_of(line: &str) -> Option<usize> {
    let trimmed = line.trim_start();
    if trimmed.is_empty() || trimmed.starts_with('#') {
        return None;
    }
    let mut start = line.len() - trimmed.len();
    let mut rest = trimmed;
    while let Some(after) = rest.strip_prefix("- ") {
        let t = after.trim_start();
        start += rest.len() - t.len();
        rest = t;
    }
    Some(start)
}

/// The keys whose blocks hold position (`line`, byte `at`), outermost first. A `- `
/// item's first key counts as the item's, so `persona: sections: - name: x` gives
/// `persona`, `sections` for the `name` line.
pub(crate) fn keys_above(text: &str, line: u32, at: usize) -> Vec<Key> {
    let lines: Vec<&str> = text.split('\n').collect();
    let Some(current) = lines.get(line as usize) else {
        return Vec::new();
    };
    let current = current.strip_suffix('\r').unwrap_or(current);
    // The column the cursor's own content starts at: keys further left hold it.
    let mut limit = indent_of(current).map_or(at, |i| i.min(at));
    if current.trim().is_empty() {
        limit = at;
    }
    let mut out = Vec::new();
    for n in (0..line as usize).rev() {
        let raw = lines[n].strip_suffix('\r').unwrap_or(lines[n]);
        let Some(indent) = indent_of(raw) else {
            continue;
        };
        if indent >= limit {
            continue;
        }
        // A `- ` item line: its own keys are the item's, the list's key is above it.
        let dash = raw.trim_start().starts_with("- ");
        if let Some((key, start)) = key_of(raw)
            && (!dash || start < limit)
        {
            out.push(Key {
                name: key.to_owned(),
                line: n as u32,
            });
        }
        let outer = raw.len() - raw.trim_start().len();
        limit = if dash { outer } else { indent };
        if limit == 0 {
            break;
        }
    }
    out.reverse();
    // Items of a list: the `- name:` key itself is not a level.
    out.retain(|k| {
        let raw = lines[k.line as usize];
        let dash = raw.trim_start().starts_with("- ");
        !dash || key_of(raw).is_none_or(|(_, s)| s >= at)
    });
    out
}

/// The word at byte `at` of `line`: letters, digits and `_-.:*` (tool names, globs,
/// text ids, preset names), with its byte range.
pub(crate) fn word_at(line: &str, at: usize) -> Option<(&str, usize, usize)> {
    let is_word = |c: char| c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '*');
    let mut start = at.min(line.len());
    while start > 0 {
        let c = line[..start].chars().next_back()?;
        if !is_word(c) {
            break;
        }
        start -= c.len_utf8();
    }
    let mut end = at.min(line.len());
    while end < line.len() {
        let c = line[end..].chars().next()?;
        if !is_word(c) {
            break;
        }
        end += c.len_utf8();
    }
    (end > start).then(|| (&line[start..end], start, end))
}

/// Is byte `at` of `line` inside an unclosed `{{` (or `{%`)?
pub(crate) fn in_template(line: &str, at: usize) -> bool {
    let before = line.get(..at).unwrap_or(line);
    let open = before.rfind("{{").max(before.rfind("{%"));
    let close = before.rfind("}}").max(before.rfind("%}"));
    match (open, close) {
        (Some(o), Some(c)) => o > c,
        (Some(_), None) => true,
        _ => false,
    }
}

/// The value of `key: value` on `line`, unquoted, with its byte range.
pub(crate) fn value_of<'a>(line: &'a str, key: &str) -> Option<(&'a str, usize)> {
    let (found, start) = key_of(line)?;
    if found != key {
        return None;
    }
    let after = start + key.len() + 1;
    let rest = line.get(after..)?;
    let value = rest.trim_start();
    let mut begin = after + (rest.len() - value.len());
    let value = value.split(" #").next().unwrap_or_default().trim_end();
    let unquoted = value
        .strip_prefix(['"', '\''])
        .and_then(|v| v.strip_suffix(['"', '\'']));
    match unquoted {
        Some(v) => {
            begin += 1;
            Some((v, begin))
        }
        None => Some((value, begin)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_in_both_encodings() {
        let line = "a\té😀中b";
        // chars: a \t é 😀 中 b
        assert_eq!(column_of_char(line, 4, Encoding::Utf16), 1 + 1 + 1 + 2);
        assert_eq!(column_of_char(line, 4, Encoding::Utf8), 1 + 1 + 2 + 4);
        assert_eq!(column_of_char(line, 5, Encoding::Utf16), 6);
        assert_eq!(column_of_char(line, 5, Encoding::Utf8), 11);
        assert_eq!(
            byte_of_column(line, 5, Encoding::Utf16),
            line.find('中').unwrap()
        );
        assert_eq!(
            byte_of_column(line, 8, Encoding::Utf8),
            line.find('中').unwrap()
        );
        // Inside the emoji's surrogate pair: its start.
        assert_eq!(
            byte_of_column(line, 4, Encoding::Utf16),
            line.find('😀').unwrap()
        );
        assert_eq!(byte_of_column(line, 99, Encoding::Utf16), line.len());
        assert_eq!(column_of_byte(line, line.len(), Encoding::Utf16), 7);
    }

    #[test]
    fn crlf_is_not_part_of_a_line() {
        let text = "a: 1\r\nb: 2\r\n";
        assert_eq!(line_of(text, 0), Some("a: 1"));
        assert_eq!(line_of(text, 1), Some("b: 2"));
        assert_eq!(line_of(text, 2), Some(""));
        assert_eq!(line_of(text, 3), None);
    }

    #[test]
    fn keys_above_a_position() {
        let text = "persona:\n  sections:\n    - name: a\n      text: x\ntools:\n  allow:\n    - read_file\n";
        let names = |line, at| -> Vec<String> {
            keys_above(text, line, at)
                .into_iter()
                .map(|k| k.name)
                .collect()
        };
        assert_eq!(names(3, 12), ["persona", "sections"]);
        assert_eq!(names(2, 10), ["persona", "sections"]);
        assert_eq!(names(6, 8), ["tools", "allow"]);
        assert_eq!(names(4, 0), Vec::<String>::new());
    }

    #[test]
    fn words_templates_and_values() {
        assert_eq!(word_at("  - read_file", 6), Some(("read_file", 4, 13)));
        assert_eq!(word_at("a b", 1), Some(("a", 0, 1)));
        assert!(in_template("x {{ pro", 8));
        assert!(!in_template("x {{ a }} b", 10));
        assert_eq!(
            value_of("extends: \"base\" # c", "extends"),
            Some(("base", 10))
        );
        assert_eq!(value_of("  - extends: base", "extends"), Some(("base", 13)));
    }
}
