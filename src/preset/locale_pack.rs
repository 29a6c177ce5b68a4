//! Locale packs: YAML files mapping text ids to texts in one language, found where presets
//! are (`locales/<locale>.yaml` under each preset directory) and embedded for the built-in
//! locales.
//!
//! ```yaml
//! version: 1
//! locale: de
//! texts:
//!   tool.read_file.description: Liest eine UTF-8-Textdatei …
//!   section.standard.identity: |
//!     Du bist …
//! ```
//!
//! Packs of one locale from several sources merge id by id; the higher source wins
//! (project, then each `--preset-dir`, then the user directory, then the built-in pack).

use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use serde::de::{MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_saphyr::Spanned;

use super::catalog::PresetSource;
use super::source::{diagnostic_from_yaml, options};
use super::source_file::{MAX_PRESET_FILE_BYTES, SourceFile, file_too_large};
use crate::bounded::{BoundedReadError, read_bounded};
use crate::diagnostic::{Diagnostic, DiagnosticKind, Span};
use crate::prompt::TextOrigin;
use crate::source_files::SourceFiles;

/// The directory, under a preset directory, that holds locale packs.
pub const LOCALE_DIR: &str = "locales";

/// The built-in packs: `(locale, file text)`.
pub const BUILTIN_PACKS: &[(&str, &str)] = &[("de", include_str!("../../presets/locales/de.yaml"))];

/// The pattern a locale (and so a pack file's stem) must match: `de`, `pt-BR`.
pub const LOCALE_PATTERN: &str = "^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$";

/// Does `locale` match [`LOCALE_PATTERN`]?
pub fn is_valid_locale(locale: &str) -> bool {
    let mut parts = locale.split('-');
    let first = parts.next().unwrap_or_default();
    (2..=3).contains(&first.len())
        && first.bytes().all(|b| b.is_ascii_lowercase())
        && parts.all(|p| (2..=8).contains(&p.len()) && p.bytes().all(|b| b.is_ascii_alphanumeric()))
}

/// One `id: text` entry of a pack.
#[derive(Clone, Debug)]
pub struct PackEntry {
    /// The text id.
    pub id: String,
    /// The text.
    pub text: String,
    /// Where the id is written.
    pub key: Span,
    /// Where the text is written (maps offsets in it back to the file).
    pub origin: TextOrigin,
}

/// One pack file.
#[derive(Clone, Debug)]
pub struct LocalePack {
    /// Its locale.
    pub locale: String,
    /// Where it comes from.
    pub source: PresetSource,
    /// The file as shown (`.agent-presets/locales/de.yaml`, `<builtin>/locales/de.yaml`).
    pub display: Arc<str>,
    /// Its entries, in file order; empty when the file has problems.
    pub entries: Vec<PackEntry>,
    /// What is wrong with the file itself (it is then not used).
    pub problems: Vec<Diagnostic>,
    /// Where `locale:` is written.
    pub locale_span: Option<Span>,
    text: Option<Arc<str>>,
}

impl LocalePack {
    /// Parse a pack's bytes; `stem` is the file's stem, which must equal its `locale`.
    pub fn parse(source: PresetSource, display: Arc<str>, stem: &str, bytes: &[u8]) -> LocalePack {
        let mut pack = LocalePack {
            locale: stem.to_owned(),
            source,
            display: display.clone(),
            entries: Vec::new(),
            problems: Vec::new(),
            locale_span: None,
            text: None,
        };
        let file = match SourceFile::decode(display, bytes) {
            Ok(f) => f,
            Err(d) => {
                pack.problems.push(d);
                return pack;
            }
        };
        pack.text = Some(file.text.clone());
        let parsed = match serde_saphyr::from_str_with_options::<PackFile>(&file.text, options()) {
            Ok(p) => p,
            Err(e) => {
                pack.problems.push(diagnostic_from_yaml(&file, &e));
                return pack;
            }
        };
        if parsed.version.value != 1 {
            pack.problems.push(
                Diagnostic::new(
                    DiagnosticKind::UnsupportedVersion,
                    format!(
                        "locale pack format version {} is not supported",
                        parsed.version.value
                    ),
                )
                .at(file.span_of(&parsed.version))
                .help("write `version: 1`"),
            );
        }
        let locale_span = file.span_of(&parsed.locale);
        pack.locale_span = Some(locale_span.clone());
        if !is_valid_locale(&parsed.locale.value) {
            pack.problems.push(
                Diagnostic::new(
                    DiagnosticKind::InvalidName,
                    format!("`{}` is not a valid locale", parsed.locale.value),
                )
                .at(locale_span.clone())
                .help("a locale is a language code, optionally with a region: `de`, `pt-BR`"),
            );
        } else if parsed.locale.value != stem {
            pack.problems.push(
                Diagnostic::new(
                    DiagnosticKind::NameMismatch,
                    format!(
                        "the pack says `locale: {}` but its file name says `{stem}`",
                        parsed.locale.value
                    ),
                )
                .at(locale_span)
                .help(format!(
                    "rename the file to `{}.yaml`, or write `locale: {stem}`",
                    parsed.locale.value
                )),
            );
        }
        if pack.problems.is_empty() {
            pack.entries = parsed
                .texts
                .0
                .into_iter()
                .map(|(id, text)| PackEntry {
                    key: file.span_of(&id).with_len(char_count(&id.value)),
                    origin: file.text_origin(&text),
                    id: id.value,
                    text: text.value,
                })
                .collect();
        }
        pack
    }

    /// The entry for `id`, if any.
    pub fn get(&self, id: &str) -> Option<&PackEntry> {
        self.entries.iter().find(|e| e.id == id)
    }
}

fn char_count(s: &str) -> u32 {
    u32::try_from(s.chars().count()).unwrap_or(u32::MAX).max(1)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PackFile {
    version: Spanned<u32>,
    locale: Spanned<String>,
    texts: PackTexts,
}

/// `texts:` in file order, with positions (duplicate ids are refused by the parser).
struct PackTexts(Vec<(Spanned<String>, Spanned<String>)>);

impl<'de> Deserialize<'de> for PackTexts {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct MapVisitor;
        impl<'de> Visitor<'de> for MapVisitor {
            type Value = PackTexts;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a mapping from text ids to texts")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<PackTexts, A::Error> {
                let mut entries = Vec::new();
                while let Some(id) = map.next_key::<Spanned<String>>()? {
                    let text = map.next_value::<Spanned<String>>()?;
                    entries.push((id, text));
                }
                Ok(PackTexts(entries))
            }
        }
        deserializer.deserialize_map(MapVisitor)
    }
}

/// The built-in packs, parsed on first use (most runs never need one).
static BUILTIN_BUILT: OnceLock<Vec<LocalePack>> = OnceLock::new();

fn builtin_packs() -> &'static [LocalePack] {
    BUILTIN_BUILT.get_or_init(|| {
        BUILTIN_PACKS
            .iter()
            .map(|(locale, text)| {
                LocalePack::parse(
                    PresetSource::Builtin,
                    format!("<builtin>/{LOCALE_DIR}/{locale}.yaml").into(),
                    locale,
                    text.as_bytes(),
                )
            })
            .collect()
    })
}

/// Every locale pack on offer, highest precedence first.
#[derive(Clone, Debug, Default)]
pub struct LocalePacks {
    /// The packs found in preset directories, highest precedence first (the built-in
    /// ones come after them).
    found: Vec<LocalePack>,
    /// Directories that could not be read.
    problems: Vec<Diagnostic>,
    /// Set once this set handed out a built-in pack: only then are the built-in packs'
    /// texts among its [`source_files`](LocalePacks::source_files) (they are parsed once
    /// per process, so whether they are parsed says nothing about this set).
    builtin_used: OnceLock<()>,
}

impl LocalePacks {
    /// The built-in packs only.
    pub fn builtin() -> LocalePacks {
        LocalePacks::default()
    }

    /// Add the packs in `<dir>/locales/` (a missing directory is fine), below the ones
    /// added before and above the built-in ones. `shown` says how a path is displayed.
    pub fn scan(&mut self, dir: &Path, source: PresetSource, shown: &dyn Fn(&Path) -> Arc<str>) {
        let dir = dir.join(LOCALE_DIR);
        let read = match fs::read_dir(&dir) {
            Ok(read) => read,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return,
            Err(e) => {
                self.problems.push(Diagnostic::new(
                    DiagnosticKind::Io,
                    format!("cannot read locale directory `{}`: {e}", shown(&dir)),
                ));
                return;
            }
        };
        let mut files: Vec<PathBuf> = read
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| matches!(p.extension().and_then(|e| e.to_str()), Some("yaml" | "yml")))
            .collect();
        files.sort();
        let mut added: Vec<LocalePack> = Vec::new();
        for path in files {
            let display = shown(&path);
            let stem = path
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or_default()
                .to_owned();
            let mut pack = match read_bounded(&path, MAX_PRESET_FILE_BYTES as u64) {
                Ok(bytes) => LocalePack::parse(source, display, &stem, &bytes),
                Err(e) => {
                    let problem = match e {
                        BoundedReadError::TooLarge { size, .. } => {
                            file_too_large(display.clone(), size)
                        }
                        other => Diagnostic::new(
                            DiagnosticKind::Io,
                            format!("cannot read locale pack `{display}`: {other}"),
                        ),
                    };
                    let mut pack = LocalePack::parse(source, display, &stem, b"");
                    pack.problems = vec![problem];
                    pack
                }
            };
            if let Some(first) = added.iter().find(|p| p.locale == pack.locale) {
                pack.problems.push(
                    Diagnostic::new(
                        DiagnosticKind::DuplicatePreset,
                        format!(
                            "two locale packs for `{}` in one directory: `{}` and `{}`",
                            pack.locale, first.display, pack.display
                        ),
                    )
                    .at(Span::new(pack.display.clone(), 1, 1))
                    .help("keep one file per locale in a directory"),
                );
                pack.entries.clear();
            }
            added.push(pack);
        }
        self.found.extend(added);
    }

    /// The packs found in preset directories (not the built-in ones), highest
    /// precedence first.
    pub fn found(&self) -> impl Iterator<Item = &LocalePack> {
        self.found.iter()
    }

    /// Every pack, highest precedence first (the built-in ones last).
    pub fn iter(&self) -> impl Iterator<Item = &LocalePack> {
        let _ = self.builtin_used.set(());
        self.found.iter().chain(builtin_packs())
    }

    /// The packs of `locale`, highest precedence first.
    pub fn of(&self, locale: &str) -> impl Iterator<Item = &LocalePack> {
        let builtin = BUILTIN_PACKS.iter().any(|(l, _)| *l == locale);
        if builtin {
            let _ = self.builtin_used.set(());
        }
        self.found
            .iter()
            .chain(builtin.then(builtin_packs).into_iter().flatten())
            .filter(move |p| p.locale == locale)
    }

    /// Is there a pack for `locale`?
    pub fn has(&self, locale: &str) -> bool {
        self.of(locale).next().is_some()
    }

    /// The locales on offer, sorted, each once.
    pub fn locales(&self) -> Vec<&str> {
        let mut out: Vec<&str> = self
            .found
            .iter()
            .map(|p| p.locale.as_str())
            .chain(BUILTIN_PACKS.iter().map(|(l, _)| *l))
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Directories that could not be read.
    pub fn problems(&self) -> &[Diagnostic] {
        &self.problems
    }

    /// The text of every pack read, for snippets.
    pub fn source_files(&self) -> SourceFiles {
        let mut files = SourceFiles::new();
        let builtin = match self.builtin_used.get() {
            Some(()) => BUILTIN_BUILT.get().map(Vec::as_slice).unwrap_or_default(),
            None => &[],
        };
        for p in self.found.iter().chain(builtin) {
            if let Some(text) = &p.text {
                files.insert(
                    p.display.clone(),
                    crate::source_files::SourceText::new(text.clone()),
                );
            }
        }
        files
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locales_are_checked() {
        for ok in ["de", "fr", "pt-BR", "zh-Hant", "gsw"] {
            assert!(is_valid_locale(ok), "{ok}");
        }
        for bad in ["", "d", "DE", "deutsch", "de_DE", "de-", "de-X"] {
            assert!(!is_valid_locale(bad), "{bad}");
        }
    }

    #[test]
    fn a_pack_reads_its_entries_and_refuses_duplicates() {
        let pack = LocalePack::parse(
            PresetSource::Project,
            "de.yaml".into(),
            "de",
            b"version: 1\nlocale: de\ntexts:\n  context.notice: Nichts.\n  tools.timeout: x\n",
        );
        assert!(pack.problems.is_empty(), "{:?}", pack.problems);
        assert_eq!(pack.entries.len(), 2);
        assert_eq!(pack.entries[1].key.line, 5);
        let dup = LocalePack::parse(
            PresetSource::Project,
            "de.yaml".into(),
            "de",
            b"version: 1\nlocale: de\ntexts:\n  context.notice: a\n  context.notice: b\n",
        );
        assert_eq!(dup.problems[0].kind, DiagnosticKind::DuplicateKey);
        assert_eq!(dup.problems[0].span.as_ref().map(|s| s.line), Some(5));
        let wrong = LocalePack::parse(
            PresetSource::Project,
            "fr.yaml".into(),
            "fr",
            b"version: 1\nlocale: de\ntexts: {}\n",
        );
        assert_eq!(wrong.problems[0].kind, DiagnosticKind::NameMismatch);
    }

    /// The built-in packs are parsed once per process: a set of packs that never handed
    /// one out does not list their texts among its sources, whatever other sets did
    /// (one catalog's snippets do not depend on what another one read).
    #[test]
    fn builtin_pack_texts_are_sources_only_of_a_set_that_used_them() {
        let _ = builtin_packs();
        let unused = LocalePacks::builtin();
        assert!(unused.source_files().is_empty());
        let used = LocalePacks::builtin();
        assert!(used.has("de"));
        assert!(!used.source_files().is_empty());
        assert!(unused.source_files().is_empty());
    }

    #[test]
    fn the_builtin_packs_parse() {
        for pack in builtin_packs() {
            assert!(pack.problems.is_empty(), "{:?}", pack.problems);
            assert!(!pack.entries.is_empty());
        }
    }
}
