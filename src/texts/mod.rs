//! Every text the library sends or says to the model, addressable by a stable id.
//!
//! The built-in English texts live in one table ([`builtin_texts`], written in
//! `english.rs`): tool descriptions and guidance (`tool.read_file.description`,
//! `tool.read_file.guidance`), the run loop's refusals (`agent.refused.no-tty`, …), the
//! tool registry's errors (`tools.unknown-tool`, …) and the runtime-context wrapper and
//! notice (`context.wrapper`, `context.notice`). The sections and contexts of the
//! built-in presets are addressable too (`section.standard.identity`,
//! `context.standard.date`); their English text is the preset file itself, so that id
//! list is made by `preset/` (see `preset::text_ids`).
//!
//! A [`Texts`] is the resolved table of one preset: a locale pack's texts, then the
//! chain's `texts:` overrides (child wins), over English. An override or a translation
//! must keep every `{{ placeholder }}` of the original and every protected token it
//! declares ([`missing_tokens`]); values are put in by [`substitute`], which replaces
//! exactly the placeholders it is given and leaves every other brace alone.
//!
//! This module is a leaf: it knows no tools, presets or prompts.

mod english;
mod tokens;
mod tool_messages;

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

use crate::diagnostic::Span;

pub use english::*;
pub use tokens::{MissingToken, missing_tokens, placeholders, protected_tokens, substitute};
pub use tool_messages::*;

/// One built-in English text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BuiltinText {
    /// The stable id (`tool.read_file.description`).
    pub id: &'static str,
    /// The English text. `{{ name }}` marks a placeholder the caller fills in.
    pub text: &'static str,
    /// Tokens a replacement must keep besides the automatic ones (backticked spans and
    /// `<tag>`s, see [`protected_tokens`]): tool and parameter names written bare.
    pub protected: &'static [&'static str],
}

/// The built-in texts, in id order.
pub fn builtin_texts() -> &'static [&'static BuiltinText] {
    static ALL: OnceLock<Vec<&'static BuiltinText>> = OnceLock::new();
    ALL.get_or_init(|| {
        let mut all: Vec<&'static BuiltinText> = english::ALL
            .iter()
            .chain(tool_messages::ALL.iter())
            .copied()
            .collect();
        all.sort_by(|a, b| a.id.cmp(b.id));
        all
    })
}

/// The built-in text with this id, if any.
pub fn builtin_text(id: &str) -> Option<&'static BuiltinText> {
    let all = builtin_texts();
    all.binary_search_by(|t| t.id.cmp(id)).ok().map(|i| all[i])
}

/// Where a text in effect comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TextSource {
    /// The built-in English text.
    Builtin,
    /// A locale pack (the file and line of the entry).
    Pack {
        /// The pack's locale.
        locale: String,
        /// The entry's key.
        at: Span,
    },
    /// A preset's `texts:` entry.
    Preset {
        /// The preset.
        preset: String,
        /// The entry's key.
        at: Span,
    },
}

impl TextSource {
    /// Where the text is written (`None`: built in).
    pub fn span(&self) -> Option<&Span> {
        match self {
            TextSource::Builtin => None,
            TextSource::Pack { at, .. } | TextSource::Preset { at, .. } => Some(at),
        }
    }

    /// `built-in`, `pack de (locales/de.yaml:12)`, `preset mine (.agent-presets/mine.yaml:9)`.
    pub fn describe(&self) -> String {
        match self {
            TextSource::Builtin => "built-in".to_owned(),
            TextSource::Pack { locale, at } => {
                format!("pack {locale} ({}:{})", at.file, at.line)
            }
            TextSource::Preset { preset, at } => {
                format!("preset {preset} ({}:{})", at.file, at.line)
            }
        }
    }
}

/// A text that replaces a built-in one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TextEntry {
    /// The text.
    pub text: String,
    /// Where it comes from.
    pub source: TextSource,
}

/// The texts in effect for one preset: replacements by id over the built-in English.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Texts {
    locale: Option<String>,
    entries: BTreeMap<String, TextEntry>,
}

impl Texts {
    /// English, nothing replaced (shared).
    pub fn english() -> Arc<Texts> {
        static ENGLISH: OnceLock<Arc<Texts>> = OnceLock::new();
        Arc::clone(ENGLISH.get_or_init(|| Arc::new(Texts::default())))
    }

    /// No replacement yet, for `locale` (`None`: English).
    pub fn new(locale: Option<String>) -> Texts {
        Texts {
            locale,
            entries: BTreeMap::new(),
        }
    }

    /// The locale whose pack was applied, if any.
    pub fn locale(&self) -> Option<&str> {
        self.locale.as_deref()
    }

    /// Replace the text of `id` (a later call wins).
    pub fn set(&mut self, id: impl Into<String>, text: impl Into<String>, source: TextSource) {
        self.entries.insert(
            id.into(),
            TextEntry {
                text: text.into(),
                source,
            },
        );
    }

    /// Nothing replaced?
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The replacement of `id`, if any.
    pub fn replacement(&self, id: &str) -> Option<&TextEntry> {
        self.entries.get(id)
    }

    /// Every replacement, by id.
    pub fn replacements(&self) -> impl Iterator<Item = (&str, &TextEntry)> {
        self.entries.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// The text in effect for a built-in text.
    pub fn get<'a>(&'a self, text: &'a BuiltinText) -> &'a str {
        self.entries
            .get(text.id)
            .map_or(text.text, |e| e.text.as_str())
    }

    /// The text in effect, with its placeholders filled in from `values`.
    pub fn render(&self, text: &BuiltinText, values: &[(&str, &str)]) -> String {
        substitute(self.get(text), values)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_sorted_and_well_formed() {
        let ids: Vec<&str> = builtin_texts().iter().map(|t| t.id).collect();
        let mut sorted = ids.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(ids, sorted, "ids unique and in order");
        let english: Vec<&str> = english::ALL.iter().map(|t| t.id).collect();
        let mut sorted_english = english.clone();
        sorted_english.sort_unstable();
        assert_eq!(english, sorted_english, "english.rs lists its ids in order");
        for id in ids {
            assert!(
                id.split('.').count() >= 2
                    && id.bytes().all(|b| b.is_ascii_lowercase()
                        || b.is_ascii_digit()
                        || b"._-".contains(&b)),
                "{id}"
            );
        }
    }

    #[test]
    fn declared_tokens_occur_in_their_text() {
        for t in builtin_texts() {
            for token in t.protected {
                assert!(t.text.contains(token), "{}: `{token}`", t.id);
            }
        }
    }

    #[test]
    fn replacements_win_and_render() {
        let mut texts = Texts::new(Some("de".into()));
        assert_eq!(texts.get(&TOOLS_TIMEOUT), TOOLS_TIMEOUT.text);
        texts.set(
            TOOLS_TIMEOUT.id,
            "Fehler: `{{ tool }}` lief länger als {{ seconds }} s. {x} {{ other }}",
            TextSource::Builtin,
        );
        assert_eq!(
            texts.render(&TOOLS_TIMEOUT, &[("tool", "bash"), ("seconds", "5")]),
            "Fehler: `bash` lief länger als 5 s. {x} {{ other }}"
        );
        assert_eq!(texts.locale(), Some("de"));
    }
}
