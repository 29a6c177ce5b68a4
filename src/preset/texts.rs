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

/// Every text id, in id order: the built-in texts, the built-in tools' parameter
/// descriptions (`tool.<name>.param.<path>`), and `section.<preset>.<name>` and
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
        // The parameter descriptions of the built-in tools: their schemars doc comments.
        for def in crate::tools::ToolCatalog::builtin().iter() {
            for (path, english) in crate::tools::schema::param_descriptions(&def.schemas().portable)
            {
                out.push(KnownText {
                    id: format!("tool.{}.param.{path}", def.name()),
                    english: english.into(),
                    declared: &[],
                    preset: None,
                });
            }
        }
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

/// The name a chain's preset gives its sections' and contexts' ids: a built-in preset's
/// own name, or the preset's `name`.
fn id_name(preset: &ParsedPreset) -> &str {
    builtin_name(preset).unwrap_or_else(|| preset.name())
}

/// Is `id` a section or context id of a preset that is not built in
/// (`section.<preset>.<name>`)? Such an id is known only to the chains that hold that
/// preset, so a pack's entry for it is checked where a chain uses the pack.
fn is_custom_id(id: &str) -> bool {
    let mut parts = id.splitn(3, '.');
    matches!(
        (parts.next(), parts.next(), parts.next()),
        (Some("section" | "context"), Some(p), Some(_))
            if !BUILTIN_PRESETS.iter().any(|(n, _)| *n == p)
    )
}

/// The sections and contexts of a chain's own presets (those not built in), as texts a
/// pack or a `texts:` entry may replace: `section.<preset>.<name>`, `context.<preset>.<name>`.
pub(crate) fn custom_texts(chain: &[&ParsedPreset]) -> Vec<KnownText> {
    let mut out = Vec::new();
    for preset in chain.iter().filter(|p| builtin_name(p).is_none()) {
        let name = preset.name();
        for s in preset
            .file
            .persona
            .iter()
            .flat_map(|p| p.sections.iter().flatten())
        {
            out.push(KnownText {
                id: format!("section.{name}.{}", s.name.value),
                english: s.text.value.as_str().into(),
                declared: &[],
                preset: None,
            });
        }
        for c in preset.file.contexts.iter().flatten() {
            out.push(KnownText {
                id: format!("context.{name}.{}", c.name.value),
                english: c.text.value.as_str().into(),
                declared: &[],
                preset: None,
            });
        }
    }
    out.sort_by(|a, b| a.id.cmp(&b.id));
    out.dedup_by(|a, b| a.id == b.id);
    out
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
            // Checked against the chain that holds the preset (see `resolve`).
            None if is_custom_id(&e.id) => {}
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
        let name = id_name(preset);
        let mut patched = layer.clone();
        let mut changed = false;
        for s in &mut patched.sections {
            let id = format!("section.{name}.{}", s.name);
            if let Some(e) = self.texts.replacement(&id) {
                s.text.clone_from(&e.text);
                s.origin.text = self.origins.get(&id).cloned();
                // Where the text in effect is written, for `render --explain`.
                if let Some(span) = e.source.span() {
                    s.origin.name = Some(span.clone());
                }
                changed = true;
            }
        }
        for c in &mut patched.contexts {
            let id = format!("context.{name}.{}", c.name);
            if let Some(e) = self.texts.replacement(&id) {
                c.text.clone_from(&e.text);
                c.origin.text = self.origins.get(&id).cloned();
                if let Some(span) = e.source.span() {
                    c.origin.name = Some(span.clone());
                }
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

    /// The replaced description of parameter `path` of tool `name`.
    pub(crate) fn param_text(&self, name: &str, path: &str) -> Option<String> {
        self.texts
            .replacement(&format!("tool.{name}.param.{path}"))
            .map(|e| e.text.clone())
    }

    /// Does a replacement concern a tool?
    pub(crate) fn replaces_tools(&self) -> bool {
        self.texts
            .replacements()
            .any(|(id, _)| id.starts_with("tool."))
    }
}

/// Resolve a chain's texts: the pack of its locale (`locale_override`, else the nearest
/// `locale:`), then every preset's `texts:` root first, over English. When every file of
/// the chain is the user's own (`own_file`), the packs of a project or `--preset-dir`
/// do not apply (the user's presets read the same in every repository): a
/// `locale-pack-not-applied` warning names each one left out and the pack used.
pub(crate) fn resolve(
    chain: &[&ParsedPreset],
    packs: &LocalePacks,
    locale_override: Option<&str>,
    own_file: Option<&dyn Fn(&ParsedPreset) -> bool>,
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
    let custom = custom_texts(chain);
    let chain_names: BTreeSet<&str> = chain.iter().map(|p| p.name()).collect();
    let known_here = |id: &str| -> Option<KnownText> {
        known_text(id)
            .cloned()
            .or_else(|| custom.iter().find(|k| k.id == id).cloned())
    };
    if let Some((locale, span)) = &chosen {
        let mut of_locale: Vec<&LocalePack> = packs.of(locale).collect();
        let foreign = |p: &LocalePack| {
            !matches!(
                p.source,
                super::catalog::PresetSource::User | super::catalog::PresetSource::Builtin
            )
        };
        let own_chain =
            !chain.is_empty() && own_file.is_some_and(|own| chain.iter().all(|p| own(p)));
        if own_chain && of_locale.iter().any(|p| foreign(p)) {
            let (left_out, used): (Vec<&LocalePack>, Vec<&LocalePack>) =
                of_locale.iter().partition(|p| foreign(p));
            let name = chain[chain.len() - 1].name();
            let used_text = match used.first() {
                Some(p) => format!("it uses `{}`", p.display),
                None => "no other pack of this locale is on offer".to_owned(),
            };
            for pack in left_out {
                diagnostics.push(
                    Diagnostic::new(
                        DiagnosticKind::LocalePackNotApplied,
                        format!(
                            "locale pack `{}` does not apply to `{name}`: every file of its chain is yours, and a project's pack re-words only the project's presets; {used_text}",
                            pack.display
                        ),
                    )
                    .at(pack
                        .locale_span
                        .clone()
                        .unwrap_or_else(|| Span::new(pack.display.clone(), 1, 1)))
                    .help(format!(
                        "to use it for `{name}`, copy it to `locales/` of your user directory; or run a project preset that extends `{name}`"
                    )),
                );
            }
            of_locale = used;
        }
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
            let whose = format!("locale pack `{}`", pack.locale);
            for e in &pack.entries {
                if bad.contains(e.id.as_str()) {
                    continue;
                }
                // A custom id: this chain's preset's text, another chain's, or unknown.
                if known_text(&e.id).is_none() {
                    let owner = e.id.split('.').nth(1).unwrap_or_default();
                    match known_here(&e.id) {
                        Some(k) => {
                            if let Some(d) = dropped(&k, &e.text, &e.key) {
                                diagnostics.push(d);
                                continue;
                            }
                        }
                        None if chain_names.contains(owner) => {
                            diagnostics.push(unknown_id(&e.id, e.key.clone(), &whose));
                            continue;
                        }
                        None => continue,
                    }
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
            let Some(known) = known_here(&id.value) else {
                diagnostics.push(unknown_id(&id.value, span, &whose));
                continue;
            };
            if let Some(d) = dropped(&known, &text.value, &span) {
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
    pub id: String,
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
/// source; without a chain, every known id. A chain's own sections and contexts are
/// listed too (`section.<preset>.<name>`), and a section or context that a later preset
/// of the chain declares again is reported as that preset's, text and place, because
/// that is what the request carries (over a pack's or a `texts:` entry's).
pub fn text_rows(chain: Option<&[&ParsedPreset]>, texts: &Texts) -> Vec<TextRow> {
    let mut known: Vec<KnownText> = match chain {
        Some(chain) => relevant(chain).cloned().collect(),
        None => known_texts().to_vec(),
    };
    if let Some(chain) = chain {
        known.extend(custom_texts(chain));
        known.sort_by(|a, b| a.id.cmp(&b.id));
    }
    known
        .into_iter()
        .map(|k| {
            let declared_later = chain.and_then(|chain| declared_again(chain, &k.id));
            let (text, source) = match (declared_later, texts.replacement(&k.id)) {
                (Some(later), _) => later,
                (None, Some(e)) => (e.text.clone(), e.source.clone()),
                (None, None) => match chain.and_then(|chain| own_declaration(chain, &k.id)) {
                    Some(own) => own,
                    None => (k.english.to_string(), TextSource::Builtin),
                },
            };
            TextRow {
                placeholders: crate::texts::placeholders(&k.english)
                    .into_iter()
                    .map(str::to_owned)
                    .collect(),
                protected: crate::texts::protected_tokens(&k.english, k.declared),
                id: k.id,
                text,
                source,
            }
        })
        .collect()
}

/// The section or context an id names, as the preset it belongs to declares it: its
/// text and where (for a chain's own presets; `None` for a built-in one).
fn own_declaration(chain: &[&ParsedPreset], id: &str) -> Option<(String, TextSource)> {
    let (kind, owner, name) = split_piece_id(id)?;
    let preset = chain
        .iter()
        .find(|p| builtin_name(p).is_none() && p.name() == owner)?;
    piece_of(preset, kind, name)
}

/// The same section or context declared again by a preset after its owner in the chain
/// (the last one wins, as in the request).
fn declared_again(chain: &[&ParsedPreset], id: &str) -> Option<(String, TextSource)> {
    let (kind, owner, name) = split_piece_id(id)?;
    let at = chain.iter().position(|p| id_name(p) == owner)?;
    chain[at + 1..]
        .iter()
        .rev()
        .find_map(|p| piece_of(p, kind, name))
}

fn split_piece_id(id: &str) -> Option<(&str, &str, &str)> {
    let mut parts = id.splitn(3, '.');
    let kind = parts
        .next()
        .filter(|k| *k == "section" || *k == "context")?;
    Some((kind, parts.next()?, parts.next()?))
}

/// `preset`'s section (`kind` "section") or context named `name`: its text and place.
fn piece_of(preset: &ParsedPreset, kind: &str, name: &str) -> Option<(String, TextSource)> {
    let source = |span: Span| TextSource::Preset {
        preset: preset.name().to_owned(),
        at: span,
    };
    if kind == "section" {
        preset
            .file
            .persona
            .iter()
            .flat_map(|p| p.sections.iter().flatten())
            .rfind(|s| s.name.value == name)
            .map(|s| (s.text.value.clone(), source(preset.span_of(&s.name))))
    } else {
        preset
            .file
            .contexts
            .iter()
            .flatten()
            .rfind(|c| c.name.value == name)
            .map(|c| (c.text.value.clone(), source(preset.span_of(&c.name))))
    }
}

impl TextRow {
    /// The row as JSON: `{"id", "source": {"kind", "locale"|"preset", "file", "line"},
    /// "text", "placeholders", "protected"}` (what `texts --format json` exports).
    pub fn to_json(&self) -> serde_json::Value {
        let source = match &self.source {
            TextSource::Builtin => serde_json::json!({ "kind": "builtin" }),
            TextSource::Pack { locale, at } => serde_json::json!({
                "kind": "pack", "locale": locale, "file": at.file.to_string(), "line": at.line,
            }),
            TextSource::Preset { preset, at } => serde_json::json!({
                "kind": "preset", "preset": preset, "file": at.file.to_string(), "line": at.line,
            }),
        };
        serde_json::json!({
            "id": self.id,
            "source": source,
            "text": self.text,
            "placeholders": self.placeholders,
            "protected": self.protected,
        })
    }

    /// The text with `values` put into its placeholders. A name that is not one of them
    /// is an error naming the ones there are; `{% … %}` blocks are left as written.
    pub fn render(&self, values: &[(String, String)]) -> Result<String, String> {
        if let Some((name, _)) = values
            .iter()
            .find(|(n, _)| !self.placeholders.iter().any(|p| p == n))
        {
            return Err(format!(
                "`{}` has no placeholder `{name}` (it has: {})",
                self.id,
                if self.placeholders.is_empty() {
                    "none".to_owned()
                } else {
                    self.placeholders.join(", ")
                }
            ));
        }
        let pairs: Vec<(&str, &str)> = values
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        Ok(crate::texts::substitute(&self.text, &pairs))
    }
}

/// Does a chain bring tools whose texts are their own (command tools, MCP servers)?
pub fn has_own_tool_texts(chain: &[&ParsedPreset]) -> bool {
    chain
        .iter()
        .any(|p| p.file.commands.is_some() || p.file.mcp_servers.is_some())
}

/// The texts with `locale`'s pack applied and nothing else (for `texts --locale` without
/// a preset).
pub fn locale_texts(packs: &LocalePacks, locale: Option<&str>) -> (Arc<Texts>, Vec<Diagnostic>) {
    let resolved = resolve(&[], packs, locale, None);
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
                        // The parameter descriptions, as the wire carries them.
                        for (_, d) in crate::tools::schema::param_descriptions(&tool.parameters) {
                            seen.push_str(&d);
                            seen.push('|');
                        }
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

    /// Every prohibition in the built-in English texts (`do not …`, `never …` at the
    /// start of a clause) offers what to do instead, in its own sentence or the next one.
    #[test]
    fn every_prohibition_offers_an_alternative() {
        const ALTERNATIVE: &[&str] = &[
            "instead",
            "rather than",
            "unless",
            "say",
            "ask",
            "describe",
            "look",
            "tell",
            "point",
            "use ",
            "prefer",
            "explain",
        ];
        let mut bare = Vec::new();
        for k in known_texts() {
            // Template tags and placeholders are not prose.
            let mut plain = String::new();
            let mut rest: &str = &k.english;
            while let Some(open) = rest.find("{%") {
                plain.push_str(&rest[..open]);
                plain.push_str(". ");
                rest = rest[open..]
                    .find("%}")
                    .map_or("", |i| &rest[open + i + 2..]);
            }
            plain.push_str(rest);
            let sentences: Vec<String> = plain
                .split(". ")
                .map(|s| s.trim().to_lowercase())
                .filter(|s| !s.is_empty())
                .collect();
            for (i, sentence) in sentences.iter().enumerate() {
                let forbids = ["do not ", "don't ", "never "].iter().any(|p| {
                    sentence.starts_with(p)
                        || [": ", "; ", ", so ", ", and ", "(", ", "]
                            .iter()
                            .any(|before| sentence.contains(&format!("{before}{p}")))
                });
                if !forbids {
                    continue;
                }
                let next = sentences.get(i + 1).map_or("", String::as_str);
                if !ALTERNATIVE
                    .iter()
                    .any(|a| sentence.contains(a) || next.contains(a))
                {
                    bare.push(format!("{}: {sentence:?}", k.id));
                }
            }
        }
        assert!(
            bare.is_empty(),
            "prohibitions without an alternative: {bare:#?}"
        );
    }

    /// What is left of an English text once its placeholders, template tags and the
    /// tokens a translation keeps are taken out: the words a translation must change.
    fn prose(k: &KnownText) -> String {
        let mut rest = k.english.to_string();
        for token in crate::texts::protected_tokens(&k.english, k.declared) {
            rest = rest.replace(&token, " ");
        }
        let mut plain = String::new();
        let mut tail = rest.as_str();
        while let Some(open) = tail.find(['{', '`']) {
            plain.push_str(&tail[..open]);
            plain.push(' ');
            let t = &tail[open..];
            let close = match t.as_bytes()[0] {
                b'`' => t[1..].find('`').map(|i| i + 2),
                _ if t.starts_with("{{") => t.find("}}").map(|i| i + 2),
                _ if t.starts_with("{%") => t.find("%}").map(|i| i + 2),
                _ => Some(1),
            };
            tail = &t[close.unwrap_or(t.len())..];
        }
        plain.push_str(tail);
        plain
    }

    /// Every text of the German pack differs from its English original, except where the
    /// original has no word to translate (`{{ status }}\n--- stdout ---\n…`): so nothing
    /// English passes for German by being copied over.
    #[test]
    fn the_german_pack_copies_no_english_text() {
        let packs = LocalePacks::builtin();
        let de = packs.of("de").next().unwrap();
        let mut copied = Vec::new();
        for k in known_texts() {
            let Some(entry) = de.get(&k.id) else { continue };
            let words = prose(k)
                .split(|c: char| !c.is_alphabetic())
                .filter(|w| w.len() >= 2)
                .count();
            if entry.text.trim() == k.english.trim() && words > 0 {
                copied.push(k.id.clone());
            }
        }
        assert!(copied.is_empty(), "copied from English: {copied:?}");
    }

    /// Under `--locale de`, every error path of every built-in tool (and of the registry)
    /// and their ordinary results hand the model no English text of the catalog: no
    /// sentence of four words or more, and no whole text of three words or more.
    #[test]
    fn tool_results_in_german_hold_no_english_text() {
        use serde_json::json;
        use std::os::unix::fs::symlink;
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join("a.txt"), "eins\nzwei\ndrei\n").unwrap();
        std::fs::write(root.join("dup.txt"), "dup\ndup\n").unwrap();
        std::fs::write(root.join("empty.txt"), "").unwrap();
        std::fs::write(root.join("bin.dat"), b"x\0y").unwrap();
        std::fs::write(root.join("latin1.txt"), b"caf\xe9\n").unwrap();
        std::fs::create_dir(root.join("dir")).unwrap();
        std::fs::create_dir(root.join("emptydir")).unwrap();
        // A path longer than messages repeat whole: cut in the result's language.
        let long_dir = "l".repeat(230);
        std::fs::create_dir(root.join(&long_dir)).unwrap();
        symlink("/", root.join("out")).unwrap();
        symlink("loop", root.join("loop")).unwrap();
        symlink("missing-target", root.join("broken")).unwrap();
        let ctx = crate::tools::ToolContext::new(root).unwrap();

        let mut catalog = PresetCatalog::builtin();
        catalog
            .add_text(
                "child",
                "child.yaml",
                concat!(
                    "version: 1\nname: child\nextends: standard\n",
                    // Command tools: their programs' words are their own, the frames ours.
                    "commands:\n",
                    "  quiet: {description: Q, run: [\"true\"]}\n",
                    "  fails: {description: F, run: [sh, -c, 'exit 3']}\n",
                    "  fails_loud: {description: L, run: [sh, -c, 'echo kaputt >&2; exit 1']}\n",
                    "  both: {description: B, run: [sh, -c, 'echo aus; echo fehler >&2']}\n",
                    "  slow: {description: S, run: [sleep, '5'], timeout: 100ms}\n",
                    "  missing: {description: M, run: [/nonexistent/program]}\n",
                    "tools:\n  allow: ['*']\n",
                ),
            )
            .unwrap();
        catalog.set_locale(Some("de".into()));
        let v = validate_in_catalog(&catalog, "child", &ToolCatalog::builtin());
        let preset = v.preset.unwrap_or_else(|| panic!("{:#?}", v.diagnostics));
        let registry = preset.assembler().registry().clone();

        let long = "x".repeat(600);
        let calls = [
            ("read_file", json!({"path": ""})),
            ("read_file", json!({"path": "a\u{0}b"})),
            ("read_file", json!({"path": "../elsewhere"})),
            ("read_file", json!({"path": "nope.txt"})),
            ("read_file", json!({"path": "a.tx"})),
            ("read_file", json!({"path": "dir"})),
            ("read_file", json!({"path": "bin.dat"})),
            ("read_file", json!({"path": "latin1.txt"})),
            ("read_file", json!({"path": "a.txt", "offset": 99})),
            (
                "read_file",
                json!({"path": "a.txt", "offset": 2, "limit": 1}),
            ),
            ("read_file", json!({"path": "empty.txt"})),
            ("read_file", json!({"path": "a.txt/"})),
            ("read_file", json!({"path": "nodir/x.txt"})),
            ("read_file", json!({"path": "a.txt/x"})),
            ("read_file", json!({"path": "out/etc"})),
            ("read_file", json!({"path": "loop/x"})),
            ("read_file", json!({"path": "broken/x"})),
            ("read_file", json!({"path": 5})),
            ("list_dir", json!({"path": "a.txt"})),
            ("list_dir", json!({"path": "nope"})),
            ("list_dir", json!({"path": "emptydir"})),
            ("list_dir", json!({})),
            ("glob", json!({"pattern": "/abs/*"})),
            ("glob", json!({"pattern": "[", "path": "."})),
            ("glob", json!({"pattern": "*", "path": "a.txt"})),
            ("glob", json!({"pattern": "*.none"})),
            ("glob", json!({"pattern": "*.txt"})),
            ("glob", json!({"pattern": "*.txt", "path": "nope"})),
            ("grep", json!({"pattern": "x", "glob": "["})),
            ("grep", json!({"pattern": "zzz"})),
            ("grep", json!({"pattern": "zwei|dup|y"})),
            ("grep", json!({"pattern": "x", "path": "nope"})),
            (
                "edit_file",
                json!({"path": "a.txt", "old_string": "", "new_string": "x"}),
            ),
            (
                "edit_file",
                json!({"path": "a.txt", "old_string": "x", "new_string": "x"}),
            ),
            (
                "edit_file",
                json!({"path": "a.txt", "old_string": "vier", "new_string": "x"}),
            ),
            (
                "edit_file",
                json!({"path": "dup.txt", "old_string": "dup", "new_string": "x"}),
            ),
            (
                "edit_file",
                json!({"path": "a.txt", "old_string": "eins", "new_string": "1"}),
            ),
            (
                "edit_file",
                json!({"path": "dup.txt", "old_string": "dup", "new_string": "x", "replace_all": true}),
            ),
            ("write_file", json!({"path": "dir/", "content": "x"})),
            ("write_file", json!({"path": "dir", "content": "x"})),
            ("write_file", json!({"path": "new.txt", "content": "x\n"})),
            (
                "write_file",
                json!({"path": "new.txt", "content": "x\ny\n"}),
            ),
            ("todo_write", json!({"todos": []})),
            (
                "todo_write",
                json!({"todos": [{"content": " ", "status": "pending"}]}),
            ),
            (
                "todo_write",
                json!({"todos": [{"content": "a\nb", "status": "pending"}]}),
            ),
            (
                "todo_write",
                json!({"todos": [{"content": long, "status": "pending"}]}),
            ),
            (
                "todo_write",
                json!({"todos": [{"content": "Testen", "status": "pending"}]}),
            ),
            (
                "todo_write",
                json!({"todos": [{"content": "a", "status": "pending"}, {"content": "b", "status": "completed"}]}),
            ),
            ("bash", json!({"command": " "})),
            ("bash", json!({"command": "echo hallo"})),
            // The argument check and the pattern parsers, whose own messages are English.
            ("read_file", json!({})),
            ("read_file", json!({"path": "a.txt", "offset": 0})),
            ("read_file", json!({"path": "a.txt", "extra": 1})),
            ("read_file", json!({"path": "a.txt", "limit": "x"})),
            (
                "todo_write",
                json!({"todos": [{"content": "a", "status": "bogus"}]}),
            ),
            ("grep", json!({"pattern": "(offen"})),
            ("grep", json!({"pattern": "a)"})),
            ("grep", json!({"pattern": "*x"})),
            ("grep", json!({"pattern": "\\p{Nope}"})),
            ("grep", json!({"pattern": "x", "glob": "{a,b"})),
            ("glob", json!({"pattern": "[z-a]"})),
            ("glob", json!({"pattern": format!("{}[", "x".repeat(300))})),
            ("grep", json!({"pattern": "q".repeat(300)})),
            ("nope", json!({"x": "y".repeat(300)})),
            ("nope", json!({})),
            ("read_fil", json!({})),
            ("list_dir", json!({"path": long_dir})),
            ("read_file", json!({"path": format!("{long_dir}/nope.txt")})),
            (
                "write_file",
                json!({"path": format!("{long_dir}/new.txt"), "content": "x"}),
            ),
            ("quiet", json!({})),
            ("fails", json!({})),
            ("fails_loud", json!({})),
            ("both", json!({})),
            ("slow", json!({})),
            ("missing", json!({})),
        ];
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let sentences: Vec<(String, String)> = known_texts()
            .iter()
            .flat_map(|k| {
                english_sentences(&k.english)
                    .into_iter()
                    .map(|s| (k.id.clone(), s))
            })
            .collect();
        let whole: Vec<(&str, String)> = known_texts()
            .iter()
            .map(|k| (k.id.as_str(), prose(k).trim().to_owned()))
            .filter(|(_, p)| p.split_whitespace().count() >= 3 && !p.contains("  "))
            .collect();
        // ` characters in all)`: what the English `tools.cut` says after the count.
        let cut_in_english = crate::texts::TOOLS_CUT.text.rsplit("}}").next().unwrap();
        for (tool, args) in calls {
            let out = runtime.block_on(registry.call_for_model(tool, args.clone(), &ctx));
            assert!(
                !out.content.contains(cut_in_english),
                "{tool} {args}: a long input cut in English: {:?}",
                out.content
            );
            for (id, sentence) in &sentences {
                assert!(
                    !out.content.contains(sentence.as_str()),
                    "{tool} {args}: English sentence of `{id}` left: {sentence:?} in {:?}",
                    out.content
                );
            }
            for (id, text) in &whole {
                assert!(
                    !out.content.contains(text.as_str()),
                    "{tool} {args}: English text of `{id}` left: {text:?} in {:?}",
                    out.content
                );
            }
            // The words of the schema validator's, globset's and the regex crate's own
            // (English) messages.
            for english in [
                "is not of type",
                "is a required property",
                "Additional properties",
                "is not one of",
                "less than the minimum",
                "regex parse error",
                "error:",
                "unclosed",
                "unopened",
                "invalid range",
                "characters in all",
            ] {
                assert!(
                    !out.content.contains(english),
                    "{tool} {args}: the library's English {english:?} left in {:?}",
                    out.content
                );
            }
        }
    }

    /// `maxContextTokens` holds at every step: a preset within it at validate fails the
    /// step whose facts make the context longer, before anything is sent.
    #[test]
    fn the_context_budget_holds_at_every_step() {
        let mut catalog = PresetCatalog::builtin();
        catalog
            .add_text(
                "child",
                "child.yaml",
                "version: 1\nname: child\nextends: standard\nbudget:\n  maxContextTokens: 80\n",
            )
            .unwrap();
        let v = validate_in_catalog(&catalog, "child", &ToolCatalog::builtin());
        let preset = v.preset.unwrap_or_else(|| panic!("{:#?}", v.diagnostics));
        let values = |cwd: &str| {
            preset
                .default_values()
                .with("cwd", cwd)
                .with("os", "linux")
                .with("shell", "sh")
                .with("date", "2030-01-01")
        };
        assert!(preset.assembler().assemble(&values("/w")).is_ok());
        let long = format!("/{}", "deep/".repeat(100));
        let err = preset.assembler().assemble(&values(&long)).unwrap_err();
        assert!(
            err.iter().any(|d| d.kind == DiagnosticKind::BudgetExceeded
                && d.message.contains("maxContextTokens")),
            "{err:?}"
        );
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
