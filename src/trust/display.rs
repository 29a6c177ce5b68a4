//! How what a preset reaches is shown to the person asked to trust it: values with
//! control and bidirectional-text characters escaped ([`shown`]), the items aligned
//! ([`items_text`]), the changes since it was trusted ([`describe`]).

use super::{ReachChange, ReachField, ReachItem};
use crate::report::Style;

/// What a preset reaches, one line each: `  field  value  file:line`, aligned.
pub fn items_text(items: &[ReachItem], style: Style) -> String {
    let mut out = String::new();
    let field_width = items
        .iter()
        .map(|i| i.field.as_str().len())
        .max()
        .unwrap_or(0);
    let values: Vec<String> = items
        .iter()
        .map(|i| {
            if i.implied {
                format!(
                    "{} (the provider's default key, sent there)",
                    shown(&i.value)
                )
            } else if i.inherited {
                format!(
                    "{} (in your own file; a file you did not write builds on it)",
                    shown(&i.value)
                )
            } else {
                shown(&i.value)
            }
        })
        .collect();
    let value_width = values.iter().map(|v| v.chars().count()).max().unwrap_or(0);
    for (item, value) in items.iter().zip(&values) {
        let pad = value_width - value.chars().count();
        out.push_str(&format!(
            "  {}  {value}{}  {}\n",
            style.bold(format!("{:<field_width$}", item.field.as_str())),
            " ".repeat(pad),
            style.dim(format!("{}:{}", item.span.file, item.span.line)),
        ));
    }
    out
}

/// One change since the preset was trusted, one line each: `+ field: value`, `- …`,
/// `~ field: old → new`. A server or command tool that changed is shown key by key of
/// its declaration (`~ commands.wc.run: ["python3","a.py"] → ["python3","b.py"]`), a
/// digest as the file (or lock entry) whose content changed; never two whole JSON texts.
pub fn describe(change: &ReachChange) -> Vec<String> {
    match change {
        ReachChange::Added(i) => vec![format!("+ {}: {}", i.field, shown(&i.value))],
        ReachChange::Removed(i) => vec![format!("- {}: {}", i.field, shown(&i.value))],
        ReachChange::Changed { old, new } if old.value == new.value => vec![format!(
            "~ {}: {} now from {} (was {})",
            new.field,
            shown(&new.value),
            new.file,
            old.file
        )],
        ReachChange::Changed { old, new } => {
            let field = ReachField::from_name(&new.field);
            let named = |v: &str| {
                v.split_once(": ")
                    .map(|(n, r)| (n.to_owned(), r.to_owned()))
            };
            match (field, named(&old.value), named(&new.value)) {
                (
                    Some(
                        ReachField::Command
                        | ReachField::McpServer
                        | ReachField::Hook
                        | ReachField::Check,
                    ),
                    Some((name, before)),
                    Some((_, after)),
                ) => declaration_changes(&new.field, &name, &before, &after),
                (Some(ReachField::FileDigest), Some((name, before)), Some((_, after))) => {
                    vec![format!(
                        "~ file {}: its content changed ({} → {})",
                        shown(&name),
                        short(&before),
                        short(&after)
                    )]
                }
                (Some(ReachField::LockEntry), Some((name, before)), Some((_, after))) => {
                    vec![format!(
                        "~ presets.lock: the entry of server `{}` changed ({} → {})",
                        shown(&name),
                        short(&before),
                        short(&after)
                    )]
                }
                _ => vec![format!(
                    "~ {}: {} → {}",
                    new.field,
                    shown(&old.value),
                    shown(&new.value)
                )],
            }
        }
    }
}

/// A digest as shown: `sha256:` and its first 12 hex digits.
fn short(digest: &str) -> String {
    match digest.strip_prefix("sha256:") {
        Some(hex) if hex.len() > 12 => format!("sha256:{}…", &hex[..12]),
        _ => shown(digest),
    }
}

/// `~ commands.NAME.KEY: old → new` for each key of a declaration (compact JSON) that
/// differs; `+`/`-` for keys added or removed. Text that is not a JSON object is compared
/// whole.
fn declaration_changes(field: &str, name: &str, before: &str, after: &str) -> Vec<String> {
    use serde_json::{Map, Value};
    let parse = |t: &str| serde_json::from_str::<Map<String, Value>>(t).ok();
    let (Some(old), Some(new)) = (parse(before), parse(after)) else {
        return vec![format!(
            "~ {field}.{}: {} → {}",
            shown(name),
            shown(before),
            shown(after)
        )];
    };
    let mut keys: Vec<&String> = old.keys().chain(new.keys()).collect();
    keys.sort();
    keys.dedup();
    let mut out = Vec::new();
    for key in keys {
        let at = format!("{field}.{}.{key}", shown(name));
        match (old.get(key), new.get(key)) {
            (Some(a), Some(b)) if a != b => out.push(format!(
                "~ {at}: {} → {}",
                shown(&a.to_string()),
                shown(&b.to_string())
            )),
            (Some(a), None) => out.push(format!("- {at}: {}", shown(&a.to_string()))),
            (None, Some(b)) => out.push(format!("+ {at}: {}", shown(&b.to_string()))),
            _ => {}
        }
    }
    out
}

/// A value as printed: control and bidirectional-text characters escaped, so a file
/// cannot make the terminal show something else than what it holds.
pub fn shown(value: &str) -> String {
    value
        .chars()
        .map(|c| {
            let bidi = matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}' | '\u{061C}');
            if c.is_control() || bidi {
                c.escape_unicode().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_cannot_hide_behind_control_characters() {
        assert_eq!(shown("a\u{202E}b\nc"), "a\\u{202e}b\\u{a}c");
        assert_eq!(shown("https://x"), "https://x");
    }
}
