//! How what a preset reaches is shown to the person asked to trust it: values with
//! control and bidirectional-text characters escaped ([`shown`]), the items aligned
//! ([`items_text`]), the changes since it was trusted ([`describe`]).

use super::{ReachChange, ReachItem};
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

/// One change since the preset was trusted: `+ field: value`, `- …`, `~ …`.
pub fn describe(change: &ReachChange) -> String {
    match change {
        ReachChange::Added(i) => format!("+ {}: {}", i.field, shown(&i.value)),
        ReachChange::Removed(i) => format!("- {}: {}", i.field, shown(&i.value)),
        ReachChange::Changed { old, new } if old.value == new.value => format!(
            "~ {}: {} now from {} (was {})",
            new.field,
            shown(&new.value),
            new.file,
            old.file
        ),
        ReachChange::Changed { old, new } => format!(
            "~ {}: {} → {}",
            new.field,
            shown(&old.value),
            shown(&new.value)
        ),
    }
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
