//! Just enough YAML writing for `show`: scalars (plain when unambiguous, else
//! double-quoted) and literal blocks for multi-line text.

/// `key: value` at `indent` spaces, with an optional trailing comment.
pub(crate) fn entry(
    out: &mut String,
    indent: usize,
    key: &str,
    value: &str,
    comment: Option<&str>,
) {
    out.push_str(&" ".repeat(indent));
    out.push_str(key);
    out.push(':');
    if !value.is_empty() {
        out.push(' ');
        out.push_str(value);
    }
    if let Some(comment) = comment {
        out.push_str("  # ");
        out.push_str(comment);
    }
    out.push('\n');
}

/// `key: <text>` where text may span lines: a literal block (`|`, `|-` or `|+`) when the
/// text can be one, else a double-quoted scalar.
pub(crate) fn text_entry(out: &mut String, indent: usize, key: &str, text: &str) {
    if !text.contains('\n') || !block_safe(text) {
        entry(out, indent, key, &scalar(text), None);
        return;
    }
    let body = text.trim_end_matches('\n');
    let trailing = text.len() - body.len();
    let chomp = match trailing {
        0 => "-",
        1 => "",
        _ => "+",
    };
    entry(out, indent, key, &format!("|{chomp}"), None);
    let pad = " ".repeat(indent + 2);
    for line in body.split('\n') {
        if !line.is_empty() {
            out.push_str(&pad);
            out.push_str(line);
        }
        out.push('\n');
    }
    // With `|+`, the trailing empty lines are content too.
    for _ in 1..trailing {
        out.push('\n');
    }
}

/// A literal block reproduces `text` exactly: no control characters, the first line does
/// not start with a space (that would need an indentation indicator), and the text has a
/// non-empty first line.
fn block_safe(text: &str) -> bool {
    !text.starts_with([' ', '\n'])
        && !text
            .chars()
            .any(|c| (c.is_control() && c != '\n' && c != '\t') || c == '\u{feff}')
}

/// A scalar in block context: plain when it reads back as the same string, else
/// double-quoted (a JSON string is a valid YAML double-quoted scalar).
pub(crate) fn scalar(text: &str) -> String {
    if plain_safe(text) {
        text.to_owned()
    } else {
        serde_json::Value::from(text).to_string()
    }
}

fn plain_safe(text: &str) -> bool {
    let Some(first) = text.chars().next() else {
        return false;
    };
    let reserved = [
        "true", "false", "yes", "no", "on", "off", "null", "y", "n", "~",
    ];
    first.is_alphanumeric()
        && !text.ends_with([' ', ':'])
        && !text.contains(": ")
        && !text.contains(" #")
        && !text.chars().any(char::is_control)
        && !reserved.iter().any(|r| text.eq_ignore_ascii_case(r))
        && !looks_numeric(text)
}

fn looks_numeric(text: &str) -> bool {
    let t = text.trim_start_matches(['+', '-']);
    t.parse::<f64>().is_ok()
        || t.starts_with("0x")
        || t.starts_with("0o")
        || t.eq_ignore_ascii_case(".inf")
        || t.eq_ignore_ascii_case(".nan")
        || t.chars()
            .all(|c| c.is_ascii_digit() || c == '_' || c == '.')
}

/// `key: <value>` for any JSON value, as block YAML that reads back as the same value:
/// mappings and lists of mappings as blocks, lists of scalars in flow style, text as
/// [`text_entry`] writes it. `key` is written as [`scalar`] spells it.
pub(crate) fn value_entry(
    out: &mut String,
    indent: usize,
    key: &str,
    value: &serde_json::Value,
    comment: Option<&str>,
) {
    use serde_json::Value;
    let key = scalar(key);
    match value {
        Value::Object(map) if !map.is_empty() => {
            entry(out, indent, &key, "", comment);
            for (k, v) in map {
                value_entry(out, indent + 2, k, v, None);
            }
        }
        Value::Array(items) if items.iter().any(|i| i.is_object() || i.is_array()) => {
            entry(out, indent, &key, "", comment);
            for item in items {
                list_item(out, indent + 2, item);
            }
        }
        Value::String(text) if comment.is_none() => text_entry(out, indent, &key, text),
        _ => entry(out, indent, &key, &flow(value), comment),
    }
}

/// `- <item>` at `indent`: a mapping's first key on the dash's line.
fn list_item(out: &mut String, indent: usize, item: &serde_json::Value) {
    match item {
        serde_json::Value::Object(map) if !map.is_empty() => {
            let mut body = String::new();
            for (k, v) in map {
                value_entry(&mut body, indent + 2, k, v, None);
            }
            out.push_str(&" ".repeat(indent));
            out.push_str("- ");
            out.push_str(&body[indent + 2..]);
        }
        serde_json::Value::Array(inner) if inner.iter().any(|i| i.is_object() || i.is_array()) => {
            out.push_str(&" ".repeat(indent));
            out.push_str("-\n");
            for i in inner {
                list_item(out, indent + 2, i);
            }
        }
        other => {
            out.push_str(&" ".repeat(indent));
            out.push_str("- ");
            out.push_str(&flow(other));
            out.push('\n');
        }
    }
}

/// A value on one line: scalars as [`scalar`] (text) or JSON (numbers, booleans, null)
/// writes them; lists and mappings in flow style, their text JSON-quoted unless it is a
/// plain word (flow style gives `,`, `[`, `]`, `{`, `}` a meaning).
fn flow(value: &serde_json::Value) -> String {
    use serde_json::Value;
    match value {
        Value::String(text) => scalar(text),
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(flow_item).collect();
            format!("[{}]", items.join(", "))
        }
        Value::Object(map) => {
            let items: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{}: {}", flow_text(k), flow_item(v)))
                .collect();
            format!("{{{}}}", items.join(", "))
        }
        other => other.to_string(),
    }
}

fn flow_item(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::String(text) => flow_text(text),
        other => flow(other),
    }
}

fn flow_text(text: &str) -> String {
    let word = text
        .chars()
        .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '/' | '@' | '+' | '='));
    if word && plain_safe(text) {
        text.to_owned()
    } else {
        serde_json::Value::from(text).to_string()
    }
}

/// A number as YAML writes it (`-100`, `150`, `0.5`).
pub(crate) fn number(value: f64) -> String {
    format!("{value}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalars() {
        assert_eq!(scalar("deepseek-v4-flash"), "deepseek-v4-flash");
        assert_eq!(
            scalar("Read-only reviewer; it reads."),
            "Read-only reviewer; it reads."
        );
        assert_eq!(scalar("'grep' in tools"), "\"'grep' in tools\"");
        assert_eq!(scalar("true"), "\"true\"");
        assert_eq!(scalar("1.5"), "\"1.5\"");
        assert_eq!(scalar("a: b"), "\"a: b\"");
        assert_eq!(scalar(""), "\"\"");
        assert_eq!(scalar("<rest>"), "\"<rest>\"");
        assert_eq!(scalar("tool:read_file"), "tool:read_file");
    }

    fn roundtrip(text: &str) -> String {
        let mut out = String::new();
        text_entry(&mut out, 2, "text", text);
        #[derive(serde::Deserialize)]
        struct T {
            text: String,
        }
        let doc = format!("x:\n{out}");
        let parsed: std::collections::BTreeMap<String, T> =
            serde_saphyr::from_str(&doc).unwrap_or_else(|e| panic!("{doc}\n{e}"));
        parsed["x"].text.clone()
    }

    #[test]
    fn text_blocks_round_trip() {
        for text in [
            "one line",
            "two\nlines\n",
            "two\nlines",
            "kept\n\n\n",
            "gap\n\nin between\n",
            "  leading space\n",
            "{{ model }} is \"quoted\"\n",
            "tab\there\n",
            "",
        ] {
            assert_eq!(roundtrip(text), text, "{text:?}");
        }
    }

    #[test]
    fn any_json_value_reads_back_the_same() {
        let values = serde_json::json!([
            {"run": ["python3", "tools/x.py", "--flag=a,b", "[x]", "true", "1.5", "a: b", ""]},
            {"parameters": {"type": "object", "properties": {"path": {"type": "string",
                "description": "Line one.\nLine two.\n"}}, "required": ["path"],
                "additionalProperties": false}},
            {"headers": {"Authorization": {"fromEnv": "TOKEN", "prefix": "Bearer "}}},
            {"empty": {}, "none": [], "null": null, "n": -3, "f": 0.25, "b": true},
            {"nested": [[1, 2], [{"a": 1}, "x"]], "objects": [{"a": {"b": [1]}, "c": "d"}, {}]},
            {"$ref": "#/defs/x", "weird key: yes": "v", "multi": "a\n  b\n"},
            [],
            "text # not a comment",
            {"flowmap": [{"k": "v,w"}]}
        ]);
        for value in values.as_array().unwrap() {
            let mut out = String::new();
            value_entry(&mut out, 2, "v", value, None);
            let doc = format!("x:\n{out}");
            let parsed: std::collections::BTreeMap<
                String,
                std::collections::BTreeMap<String, serde_json::Value>,
            > = serde_saphyr::from_str(&doc).unwrap_or_else(|e| panic!("{doc}\n{e}"));
            assert_eq!(&parsed["x"]["v"], value, "{doc}");
        }
    }
}
