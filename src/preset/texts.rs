//! Which texts a preset's model reads: every known text id (the built-in English table
//! and the sections and contexts of the built-in presets), a chain's locale pack and
//! `texts:` overrides resolved into one [`Texts`], and the checks of both.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, OnceLock};

use super::catalog::BUILTIN_PRESETS;
use super::locale_pack::{LocalePack, LocalePacks};
use super::source::{ParsedPreset, parse_preset};
use crate::diagnostic::{Diagnostic, DiagnosticKind, Span};
use crate::prompt::{Layer, TextOrigin};
use crate::suggest::help_did_you_mean;
use crate::texts::{TextSource, Texts, builtin_texts, missing_tokens};

/// The locale that needs no pack: the built-in texts are English.
pub const ENGLISH_LOCALE: &str = "en";

/// Most untranslated ids a warning names one by one.
const MAX_NAMED_IDS: usize = 12;

/// One text a preset or a pack may replace.
#[derive(Clone, Debug)]
pub struct KnownText {
    /// The id.
    pub id: String,
    /// The English original.
    pub english: Arc<str>,
    /// Tokens the original declares besides the automatic ones.
    pub declared: &'static [&'static str],
    /// The built-in preset whose section or context this is (`None`: a library text).
    pub preset: Option<&'static str>,
}

/// Every text id, in id order: the built-in texts, then `section.<preset>.<name>` and
/// `context.<preset>.<name>` for the sections and contexts of the built-in presets.
pub fn known_texts() -> &'static [KnownText] {
    static KNOWN: OnceLock<Vec<KnownText>> = OnceLock::new();
    KNOWN.get_or_init(|| {
        let mut out: Vec<KnownText> = builtin_texts()
            .iter()
            .map(|t| KnownText {
                id: t.id.to_owned(),
                english: t.text.into(),
                declared: t.protected,
                preset: None,
            })
            .collect();
        for (name, text) in BUILTIN_PRESETS {
            let Ok(parsed) = parse_preset(format!("<builtin>/{name}.yaml").into(), text.as_bytes())
            else {
                continue;
            };
            for s in parsed
                .file
                .persona
                .iter()
                .flat_map(|p| p.sections.iter().flatten())
            {
                out.push(KnownText {
                    id: format!("section.{name}.{}", s.name.value),
                    english: s.text.value.as_str().into(),
                    declared: &[],
                    preset: Some(name),
                });
            }
            for c in parsed.file.contexts.iter().flatten() {
                out.push(KnownText {
                    id: format!("context.{name}.{}", c.name.value),
                    english: c.text.value.as_str().into(),
                    declared: &[],
                    preset: Some(name),
                });
            }
        }
        out.sort_by(|a, b| a.id.cmp(&b.id));
        out
    })
}

/// The known text `id`, if any.
pub fn known_text(id: &str) -> Option<&'static KnownText> {
    let all = known_texts();
    all.binary_search_by(|k| k.id.as_str().cmp(id))
        .ok()
        .map(|i| &all[i])
}

/// Is `preset` (a file of a chain) the built-in preset it is named after?
fn builtin_name(preset: &ParsedPreset) -> Option<&'static str> {
    BUILTIN_PRESETS
        .iter()
        .map(|(n, _)| *n)
        .find(|n| *preset.source.display == *format!("<builtin>/{n}.yaml"))
}

/// The ids that matter for a chain: the library's texts and those of the built-in presets
/// it extends.
fn relevant(chain: &[&ParsedPreset]) -> impl Iterator<Item = &'static KnownText> {
    let builtins: BTreeSet<&str> = chain.iter().filter_map(|p| builtin_name(p)).collect();
    known_texts()
        .iter()
        .filter(move |k| k.preset.is_none_or(|p| builtins.contains(p)))
}

/// `unknown-text`: an id no text has.
fn unknown_id(id: &str, span: Span, whose: &str) -> Diagnostic {
    let help = help_for_unknown_id(id);
    Diagnostic::new(
        DiagnosticKind::UnknownText,
        format!("{whose} replaces `{id}`, but no text has that id"),
    )
    .at(span)
    .help(help)
    .maybe_fix(
        id,
        crate::suggest::did_you_mean(id, known_texts().iter().map(|k| k.id.as_str())),
    )
}

/// `text-drops-token`: what a replacement of `known` lost, or nothing.
fn dropped(known: &KnownText, text: &str, span: &Span) -> Option<Diagnostic> {
    let missing = missing_tokens(&known.english, known.declared, text);
    let first = missing.first()?;
    let list: Vec<String> = missing.iter().map(ToString::to_string).collect();
    Some(
        Diagnostic::new(
            DiagnosticKind::TextDropsToken,
            format!(
                "the text for `{}` drops {}",
                known.id,
                list.join(", ")
            ),
        )
        .at(span.clone())
        .help(format!(
            "keep {first} as the original writes it: placeholders are filled in when the text is used, and tool names, parameters and tags are what the model and the harness match on (`agent-presets texts <preset> {}` shows the original's)",
            known.id
        )),
    )
}

/// Check a pack's entries: known ids, kept placeholders and protected tokens.
pub fn check_pack(pack: &LocalePack) -> Vec<Diagnostic> {
    let mut out = pack.problems.clone();
    let whose = format!("locale pack `{}`", pack.locale);
    for e in &pack.entries {
        match known_text(&e.id) {
            None => out.push(unknown_id(&e.id, e.key.clone(), &whose)),
            Some(k) => out.extend(dropped(k, &e.text, &e.key)),
        }
    }
    out
}

/// What `validate` says about the packs on offer: each pack's own problems, and a
/// warning for a project or user pack of a locale no preset in `used` names.
pub fn check_packs(packs: &LocalePacks, used: &BTreeSet<String>) -> Vec<Diagnostic> {
    let mut out: Vec<Diagnostic> = packs.problems().to_vec();
    for pack in packs.found() {
        out.extend(check_pack(pack));
        if !used.contains(&pack.locale) && pack.problems.is_empty() {
            out.push(
                Diagnostic::new(
                    DiagnosticKind::UnusedLocalePack,
                    format!("no preset uses locale pack `{}`", pack.locale),
                )
                .at(pack
                    .locale_span
                    .clone()
                    .unwrap_or_else(|| Span::new(pack.display.clone(), 1, 1)))
                .help(format!(
                    "set `locale: {}` on the presets it is for (or pass `--locale {}` to `render` and `run`); delete the pack if nothing needs it",
                    pack.locale, pack.locale
                )),
            );
        }
    }
    out
}

/// The texts of one chain, with where each replacement's text is written.
#[derive(Debug)]
pub(crate) struct ChainTexts {
    pub(crate) texts: Arc<Texts>,
    /// Per replaced id, where its text is written (for template errors in it).
    pub(crate) origins: BTreeMap<String, TextOrigin>,
    pub(crate) diagnostics: Vec<Diagnostic>,
}

impl ChainTexts {
    /// A built-in preset's layer with its sections and contexts replaced by this chain's
    /// texts, or `None` when nothing of it is replaced.
    pub(crate) fn patch_layer(&self, preset: &ParsedPreset, layer: &Layer) -> Option<Layer> {
        if self.texts.is_empty() {
            return None;
        }
        let name = builtin_name(preset)?;
        let mut patched = layer.clone();
        let mut changed = false;
        for s in &mut patched.sections {
            let id = format!("section.{name}.{}", s.name);
            if let Some(e) = self.texts.replacement(&id) {
                s.text.clone_from(&e.text);
                s.origin.text = self.origins.get(&id).cloned();
                changed = true;
            }
        }
        for c in &mut patched.contexts {
            let id = format!("context.{name}.{}", c.name);
            if let Some(e) = self.texts.replacement(&id) {
                c.text.clone_from(&e.text);
                c.origin.text = self.origins.get(&id).cloned();
                changed = true;
            }
        }
        changed.then_some(patched)
    }

    /// The replaced description and guidance of tool `name`.
    pub(crate) fn tool_texts(&self, name: &str) -> (Option<&str>, Option<&str>) {
        let get = |what: &str| {
            self.texts
                .replacement(&format!("tool.{name}.{what}"))
                .map(|e| e.text.as_str())
        };
        (get("description"), get("guidance"))
    }

    /// Does a replacement concern a tool?
    pub(crate) fn replaces_tools(&self) -> bool {
        self.texts
            .replacements()
            .any(|(id, _)| id.starts_with("tool."))
    }
}

/// Resolve a chain's texts: the pack of its locale (`locale_override`, else the nearest
/// `locale:`), then every preset's `texts:` root first, over English.
pub(crate) fn resolve(
    chain: &[&ParsedPreset],
    packs: &LocalePacks,
    locale_override: Option<&str>,
) -> ChainTexts {
    let chosen: Option<(String, Option<Span>)> = match locale_override {
        Some(l) => Some((l.to_owned(), None)),
        None => chain.iter().rev().find_map(|p| {
            p.file
                .locale
                .as_ref()
                .map(|l| (l.value.clone(), Some(p.span_of(l))))
        }),
    };
    let any_texts = chain.iter().any(|p| p.file.texts.is_some());
    if chosen.is_none() && !any_texts {
        return ChainTexts {
            texts: Texts::english(),
            origins: BTreeMap::new(),
            diagnostics: Vec::new(),
        };
    }
    let mut diagnostics = Vec::new();
    let mut origins = BTreeMap::new();
    let mut texts = Texts::new(chosen.as_ref().map(|(l, _)| l.clone()));
    if let Some((locale, span)) = &chosen {
        let of_locale: Vec<&LocalePack> = packs.of(locale).collect();
        if of_locale.is_empty() && locale != ENGLISH_LOCALE {
            let mut available = packs.locales();
            available.insert(0, ENGLISH_LOCALE);
            let help = help_did_you_mean(locale, available.iter().copied()).unwrap_or_else(|| {
                format!(
                    "locales on offer: {}; a pack is `locales/{locale}.yaml` beside your presets (see docs/format.md, \"Locale packs\")",
                    available.join(", ")
                )
            });
            diagnostics.push(
                Diagnostic::new(
                    DiagnosticKind::MissingLocale,
                    format!("no locale pack for `{locale}`"),
                )
                .at(span.clone())
                .help(help)
                .maybe_fix(
                    locale,
                    crate::suggest::did_you_mean(locale, available.iter().copied()),
                ),
            );
        }
        // Lowest precedence first, so a higher source's entry wins.
        for pack in of_locale.iter().rev() {
            let problems = check_pack(pack);
            let bad: BTreeSet<&str> = problems
                .iter()
                .filter_map(|d| d.span.as_ref())
                .flat_map(|s| pack.entries.iter().filter(move |e| e.key == *s))
                .map(|e| e.id.as_str())
                .collect();
            diagnostics.extend(problems);
            for e in &pack.entries {
                if bad.contains(e.id.as_str()) {
                    continue;
                }
                texts.set(
                    e.id.clone(),
                    e.text.clone(),
                    TextSource::Pack {
                        locale: locale.clone(),
                        at: e.key.clone(),
                    },
                );
                origins.insert(e.id.clone(), e.origin.clone());
            }
        }
        // English packs re-word; what they leave out is English anyway.
        if !of_locale.is_empty()
            && locale != ENGLISH_LOCALE
            && of_locale.iter().all(|p| p.problems.is_empty())
        {
            let missing: Vec<&str> = relevant(chain)
                .filter(|k| texts.replacement(&k.id).is_none())
                .map(|k| k.id.as_str())
                .collect();
            if !missing.is_empty() {
                let mut named: Vec<String> = missing
                    .iter()
                    .take(MAX_NAMED_IDS)
                    .map(|id| format!("`{id}`"))
                    .collect();
                if missing.len() > MAX_NAMED_IDS {
                    named.push(format!("and {} more", missing.len() - MAX_NAMED_IDS));
                }
                diagnostics.push(
                    Diagnostic::new(
                        DiagnosticKind::UntranslatedText,
                        format!(
                            "locale pack `{locale}` has no text for {}; English is used: {}",
                            if missing.len() == 1 {
                                "1 id".to_owned()
                            } else {
                                format!("{} ids", missing.len())
                            },
                            named.join(", ")
                        ),
                    )
                    .at(span.clone())
                    .help(format!(
                        "add the ids to `locales/{locale}.yaml` (`agent-presets texts <preset> --locale {locale}` lists each id with its source)"
                    )),
                );
            }
        }
    }
    for preset in chain {
        let Some(map) = &preset.file.texts else {
            continue;
        };
        let whose = format!("preset `{}`", preset.name());
        for (id, text) in map.iter() {
            let span = preset
                .span_of(id)
                .with_len(u32::try_from(id.value.chars().count()).unwrap_or(1).max(1));
            let Some(known) = known_text(&id.value) else {
                diagnostics.push(unknown_id(&id.value, span, &whose));
                continue;
            };
            if let Some(d) = dropped(known, &text.value, &span) {
                diagnostics.push(d);
                continue;
            }
            texts.set(
                id.value.clone(),
                text.value.clone(),
                TextSource::Preset {
                    preset: preset.name().to_owned(),
                    at: span,
                },
            );
            origins.insert(id.value.clone(), preset.text_origin(text));
        }
    }
    ChainTexts {
        texts: Arc::new(texts),
        origins,
        diagnostics,
    }
}

/// One row of `agent-presets texts`: an id, the text in effect and where it comes from.
#[derive(Clone, Debug)]
pub struct TextRow {
    /// The id.
    pub id: &'static str,
    /// The text in effect.
    pub text: String,
    /// Where it comes from.
    pub source: TextSource,
    /// The original's placeholders and protected tokens, which a replacement keeps.
    pub placeholders: Vec<String>,
    /// The original's protected tokens.
    pub protected: Vec<String>,
}

/// Every text a chain's model may read, with the text in effect (`texts`) and its
/// source; without a chain, every known id.
pub fn text_rows(chain: Option<&[&ParsedPreset]>, texts: &Texts) -> Vec<TextRow> {
    let known: Vec<&'static KnownText> = match chain {
        Some(chain) => relevant(chain).collect(),
        None => known_texts().iter().collect(),
    };
    known
        .into_iter()
        .map(|k| {
            let (text, source) = match texts.replacement(&k.id) {
                Some(e) => (e.text.clone(), e.source.clone()),
                None => (k.english.to_string(), TextSource::Builtin),
            };
            TextRow {
                id: k.id.as_str(),
                text,
                source,
                placeholders: crate::texts::placeholders(&k.english)
                    .into_iter()
                    .map(str::to_owned)
                    .collect(),
                protected: crate::texts::protected_tokens(&k.english, k.declared),
            }
        })
        .collect()
}

/// The texts with `locale`'s pack applied and nothing else (for `texts --locale` without
/// a preset).
pub fn locale_texts(packs: &LocalePacks, locale: Option<&str>) -> (Arc<Texts>, Vec<Diagnostic>) {
    let resolved = resolve(&[], packs, locale);
    (resolved.texts, resolved.diagnostics)
}

/// "did you mean" for an id no text has.
pub fn help_for_unknown_id(id: &str) -> String {
    help_did_you_mean(id, known_texts().iter().map(|k| k.id.as_str()))
        .unwrap_or_else(|| "`agent-presets texts` lists every text id".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::preset::catalog::PresetCatalog;
    use crate::preset::validate::validate_in_catalog;
    use crate::texts::builtin_text;
    use crate::tools::ToolCatalog;

    /// The English sentences (runs of at least four words between template tags,
    /// placeholders, line ends and sentence punctuation) of a built-in text.
    fn english_sentences(text: &str) -> Vec<String> {
        let mut plain = String::new();
        let mut rest = text;
        while let Some(open) = rest.find(['{', '`']) {
            plain.push_str(&rest[..open]);
            plain.push('|');
            let tail = &rest[open..];
            let close = match tail.as_bytes()[0] {
                b'`' => tail[1..].find('`').map(|i| i + 2),
                _ if tail.starts_with("{{") => tail.find("}}").map(|i| i + 2),
                _ if tail.starts_with("{%") => tail.find("%}").map(|i| i + 2),
                _ => Some(1),
            };
            rest = &tail[close.unwrap_or(tail.len())..];
        }
        plain.push_str(rest);
        plain
            .split(|c: char| "|\n.:;()—".contains(c))
            .map(str::trim)
            .filter(|s| {
                s.split_whitespace()
                    .filter(|w| w.chars().any(char::is_alphabetic))
                    .count()
                    >= 4
            })
            .map(str::to_owned)
            .collect()
    }

    #[test]
    fn english_sentences_are_found() {
        assert_eq!(
            english_sentences(
                "Use `x` to look at it; do not guess.{% if a %} Run the whole thing now{% endif %}"
            ),
            ["to look at it", "Run the whole thing now"]
        );
    }

    #[test]
    fn the_german_pack_is_complete_and_keeps_every_token() {
        let packs = LocalePacks::builtin();
        let de: Vec<&LocalePack> = packs.of("de").collect();
        assert_eq!(de.len(), 1);
        assert!(check_pack(de[0]).is_empty(), "{:#?}", check_pack(de[0]));
        let missing: Vec<&str> = known_texts()
            .iter()
            .filter(|k| de[0].get(&k.id).is_none())
            .map(|k| k.id.as_str())
            .collect();
        assert!(missing.is_empty(), "untranslated: {missing:?}");
    }

    /// `standard` (and `minimal`) with `--locale de`: under several tool subsets, every
    /// sandbox mode, with and without runtime context, the system prompt, the contexts,
    /// the tool descriptions on the wire and every library text hold no English sentence
    /// of any built-in text.
    #[test]
    fn standard_in_german_holds_no_english_sentence() {
        let sentences: Vec<(String, String)> = known_texts()
            .iter()
            .flat_map(|k| {
                english_sentences(&k.english)
                    .into_iter()
                    .map(|s| (k.id.clone(), s))
            })
            .collect();
        assert!(sentences.len() > 100, "{}", sentences.len());
        let tools = ToolCatalog::builtin();
        let mut checked = 0;
        for (parent, deny) in [
            ("standard", ""),
            ("standard", "bash"),
            ("standard", "edit_file, read_file, glob"),
            (
                "standard",
                "bash, edit_file, glob, grep, list_dir, read_file, todo_write, write_file",
            ),
            ("minimal", ""),
        ] {
            for suppress in [false, true] {
                let mut yaml = format!("version: 1\nname: child\nextends: {parent}\n");
                if suppress {
                    yaml.push_str("persona:\n  includeRuntimeContext: false\n");
                }
                if !deny.is_empty() {
                    yaml.push_str(&format!("tools:\n  deny: [{deny}]\n"));
                }
                let mut catalog = PresetCatalog::builtin();
                catalog
                    .add_text("child", "child.yaml", yaml.as_str())
                    .unwrap();
                catalog.set_locale(Some("de".into()));
                let validation = validate_in_catalog(&catalog, "child", &tools);
                let preset = validation
                    .preset
                    .unwrap_or_else(|| panic!("{:#?}", validation.diagnostics));
                assert!(
                    preset
                        .warnings()
                        .iter()
                        .all(|d| d.kind != DiagnosticKind::UntranslatedText)
                );
                for sandbox in ["read-only", "workspace-write", "full-access"] {
                    let values = preset
                        .default_values()
                        .with("cwd", "/w")
                        .with("os", "linux")
                        .with("shell", "sh")
                        .with("date", "2030-01-01")
                        .with("sandbox", sandbox);
                    let step = preset.assembler().assemble(&values).unwrap();
                    let mut seen = step.system.to_string();
                    seen.push_str(step.context.as_deref().unwrap_or_default());
                    for tool in step.tools.iter() {
                        seen.push_str(&tool.description);
                    }
                    for t in builtin_texts() {
                        seen.push_str(preset.texts().get(builtin_text(t.id).unwrap()));
                    }
                    for (id, sentence) in &sentences {
                        assert!(
                            !seen.contains(sentence.as_str()),
                            "{parent} - [{deny}], {sandbox}: English sentence of `{id}` left: {sentence:?}"
                        );
                    }
                    checked += 1;
                }
            }
        }
        assert_eq!(checked, 30);
    }

    /// The prefix fingerprint covers the texts on the wire: a replaced tool description
    /// changes it, a chain that replaces nothing (or says `locale: en`) keeps it.
    #[test]
    fn the_fingerprint_covers_replaced_tool_descriptions() {
        let tools = ToolCatalog::builtin();
        let fingerprint = |extra: &str| {
            let mut catalog = PresetCatalog::builtin();
            let yaml = format!("version: 1\nname: child\nextends: standard\n{extra}");
            catalog
                .add_text("child", "child.yaml", yaml.as_str())
                .unwrap();
            let v = validate_in_catalog(&catalog, "child", &tools);
            let preset = v.preset.unwrap_or_else(|| panic!("{:#?}", v.diagnostics));
            let values = preset
                .default_values()
                .with("cwd", "/w")
                .with("os", "linux")
                .with("shell", "sh")
                .with("date", "2030-01-01");
            preset.assembler().assemble(&values).unwrap().fingerprint
        };
        let plain = fingerprint("");
        assert_eq!(fingerprint("locale: en\n"), plain);
        assert_eq!(
            fingerprint("texts:\n  tools.timeout: \"`{{ tool }}`: {{ seconds }} s\"\n"),
            plain
        );
        assert_ne!(
            fingerprint(
                "texts:\n  tool.list_dir.description: \"List a directory; `/` ends a directory.\"\n"
            ),
            plain
        );
        assert_ne!(fingerprint("locale: de\n"), plain);
    }
}
