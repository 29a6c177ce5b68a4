//! Checks only `validate` runs: tools a section mentions but the preset hides, and
//! optional variables used without a guard.

use std::cell::RefCell;

use super::step::{RenderedSection, StepMode, StepValues};
use super::{Body, CompiledPiece, PromptAssembler};
use crate::diagnostic::{Diagnostic, DiagnosticKind, Diagnostics};
use crate::prompt::variables::Values;

impl PromptAssembler {
    /// `mentions-hidden-tool`: sections of the system prompt and runtime contexts (for
    /// `values`) whose rendered text names a known tool that is not visible. Each tool
    /// name counts as a whole word.
    /// Empty when the values do not render (that failure is reported on its own).
    pub fn hidden_tool_mentions(&self, values: &Values) -> Vec<Diagnostic> {
        self.mentions(values, None)
    }

    /// What validation renders, each system prompt section once where it can: the render
    /// check of `values` ([`check_renders`](Self::check_renders)), and then
    /// [`hidden_tool_mentions`](Self::hidden_tool_mentions) of `neutral`, which reuses a
    /// section's text (and charges its cost) when the section uses no variable whose value
    /// differs between the two. The results are what the two calls would give.
    pub(crate) fn check_renders_and_mentions(
        &self,
        values: &Values,
        neutral: &Values,
    ) -> (Result<(), Diagnostics>, Vec<Diagnostic>) {
        let record = RefCell::new(Vec::new());
        let checked = self
            .render_step(values, StepMode::Check, Some(&record))
            .map(drop);
        let rendered = record.into_inner();
        // Only a whole render lists every section the step sent.
        let mentions = self.mentions(neutral, Some((values, &rendered, checked.is_ok())));
        (checked, mentions)
    }

    /// `mentions-hidden-tool` for `values`; `prior`: sections already rendered for other
    /// values, reusable where the section's variables hold the same values.
    pub(super) fn mentions(
        &self,
        values: &Values,
        prior: Option<(&Values, &[RenderedSection], bool)>,
    ) -> Vec<Diagnostic> {
        let hidden: Vec<&str> = self
            .known_tools
            .iter()
            .map(String::as_str)
            .filter(|t| !self.registry.is_visible(t))
            .collect();
        if hidden.is_empty() {
            return Vec::new();
        }
        let step = StepValues::new(self, values);
        // The few names whose values differ from the prior set's, found once: a piece
        // that reads none of them renders as it did.
        let differing: Vec<&str> = prior.map_or_else(Vec::new, |(p, ..)| p.differing(values));
        // When no `when` reads one of them, the sections sent are the prior step's.
        let same_sections = |rendered: &[RenderedSection]| -> Vec<&CompiledPiece> {
            self.sections
                .iter()
                .filter(|p| rendered.iter().any(|r| std::ptr::eq(r.piece, *p)))
                .collect()
        };
        let pieces = match prior {
            Some((_, rendered, true))
                if self.sections.iter().all(|p| {
                    p.when
                        .as_ref()
                        .is_none_or(|c| !differing.iter().any(|d| c.vars.contains(*d)))
                }) =>
            {
                same_sections(rendered)
            }
            _ => match self.system_pieces(&step) {
                Ok(pieces) => pieces,
                Err(_) => return Vec::new(),
            },
        };
        let finder = WordFinder::new(&hidden);
        let reuse = |piece: &CompiledPiece| -> Option<&RenderedSection> {
            let (_, rendered, _) = prior?;
            let same = match &piece.body {
                Body::Verbatim(_) => true,
                Body::Template { vars, .. } => !differing.iter().any(|d| vars.contains(*d)),
            };
            if !same {
                return None;
            }
            rendered
                .iter()
                .find(|r| std::ptr::eq(r.piece, std::ptr::from_ref(piece)))
        };
        let mut out = Vec::new();
        // The system prompt's sections, then the runtime contexts (rendered only when
        // one can be sent): the model reads both.
        let contexts = self.contexts.iter().map(|p| ("context", p));
        for (kind, piece) in pieces.into_iter().map(|p| ("section", p)).chain(contexts) {
            let text = match reuse(piece).filter(|_| kind == "section") {
                Some(r) => {
                    step.budget.add(r.cost.0, r.cost.1);
                    r.text.clone()
                }
                None => match self.render_pieces(kind, &[piece], &step) {
                    Ok(text) => text,
                    Err(_) => return out,
                },
            };
            let mentioned = finder.mentioned(&text);
            let named: Vec<String> = hidden
                .iter()
                .zip(&mentioned)
                .filter(|(_, m)| **m)
                .map(|(t, _)| format!("`{t}`"))
                .collect();
            let Some(first) = hidden
                .iter()
                .zip(&mentioned)
                .find(|(_, m)| **m)
                .map(|(t, _)| *t)
            else {
                continue;
            };
            let span = match (&piece.origin.text, text_offset_of(&piece.text, first)) {
                (Some(o), Some(offset)) => Some(
                    o.span_at(&piece.text, offset)
                        .with_len(first.chars().count() as u32),
                ),
                _ => piece.span.clone(),
            };
            out.push(
                Diagnostic::new(
                    DiagnosticKind::MentionsHiddenTool,
                    format!(
                        "{kind} `{}` mentions {}, which the model cannot use: the tool is not visible in this preset",
                        piece.name,
                        named.join(", ")
                    ),
                )
                .at(span)
                .help(format!(
                    "reword it, or keep the sentence only while the tool is visible: `{{% if '{first}' in tools %}}…{{% endif %}}`"
                )),
            );
        }
        out
    }

    pub(super) fn is_optional(&self, name: &str) -> bool {
        self.variables.get(name).is_some_and(|v| v.optional)
    }

    /// Uses of optional variables (declared with neither a default nor `required`) that
    /// no definedness test or `default(…)` guards: each fails whenever the caller does
    /// not pass the variable. `validate` reports them as `missing-value`.
    pub fn unguarded_optional_uses(&self) -> Vec<Diagnostic> {
        let mut out = Vec::new();
        if self.optional_variables().next().is_none() {
            return out;
        }
        let pieces = self
            .sections
            .iter()
            .map(|p| ("section", p))
            .chain(self.contexts.iter().map(|p| ("context", p)));
        for (kind, piece) in pieces {
            let parts = [
                piece.when.as_ref().map(|c| (&c.unguarded, true)),
                match &piece.body {
                    Body::Template { unguarded, .. } => Some((unguarded, false)),
                    Body::Verbatim(_) => None,
                },
            ];
            for (unguarded, in_when) in parts.into_iter().flatten() {
                for (var, offsets) in unguarded.iter() {
                    let Some(offset) = offsets.first().filter(|_| self.is_optional(var)) else {
                        continue;
                    };
                    out.push(
                        Diagnostic::new(
                            DiagnosticKind::MissingValue,
                            format!(
                                "{kind} `{}` uses optional variable `{var}` without a guard: it fails whenever no value is passed",
                                piece.name
                            ),
                        )
                        .at(piece.span_at(*offset, var, in_when))
                        .help(format!(
                            "use it as `{var} | default('…')` or under `{{% if {var} is defined %}}`, give it a `default`, or mark it `required: true`"
                        )),
                    );
                }
            }
        }
        out
    }
}

/// Whole-word searches for a few words, set up once and run over many texts.
pub(super) struct WordFinder<'w> {
    pub(super) finders: Vec<(&'w str, memchr::memmem::Finder<'w>)>,
}

impl<'w> WordFinder<'w> {
    pub(super) fn new(words: &[&'w str]) -> Self {
        WordFinder {
            finders: words
                .iter()
                .map(|w| (*w, memchr::memmem::Finder::new(w.as_bytes())))
                .collect(),
        }
    }

    /// Per word, does `text` mention it as a whole word (not inside a longer word)?
    pub(super) fn mentioned(&self, text: &str) -> Vec<bool> {
        let is_word = |c: char| c.is_alphanumeric() || c == '_';
        self.finders
            .iter()
            .map(|(word, finder)| {
                // A match of a non-empty word starts and ends on char boundaries; the
                // empty word matches between bytes too, and counts only between chars.
                finder.find_iter(text.as_bytes()).any(|i| {
                    if !text.is_char_boundary(i) {
                        return false;
                    }
                    let before = text.get(..i).and_then(|t| t.chars().next_back());
                    let after = text.get(i + word.len()..).and_then(|t| t.chars().next());
                    !before.is_some_and(is_word) && !after.is_some_and(is_word)
                })
            })
            .collect()
    }
}

/// The byte offset of the first whole-word occurrence of `word` in `text`.
pub(super) fn text_offset_of(text: &str, word: &str) -> Option<usize> {
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(word).map(|(i, _)| i).find(|&i| {
        let before = text[..i].chars().next_back();
        let after = text[i + word.len()..].chars().next();
        !before.is_some_and(is_word) && !after.is_some_and(is_word)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prompt::assembler::AssemblerBuilder;
    use crate::prompt::layer::Layer;
    use crate::prompt::section::PromptSection;
    use crate::prompt::variables::{BUILTIN_VARIABLES, is_derived_variable};
    use crate::tools::ToolCatalog;
    use proptest::prelude::*;

    /// The reference: one search per word.
    pub(super) fn mentions_word(text: &str, word: &str) -> bool {
        text_offset_of(text, word).is_some()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// The one-pass search says what one search per word says, for tool-like names,
        /// names with other characters, and text with Unicode word characters.
        #[test]
        fn word_finder_agrees_with_mentions_word(
            text in "[a-z_ .,`éß0-9\n-]{0,60}",
            words in proptest::collection::vec("[a-z_é-]{0,6}", 0..5),
        ) {
            let words: Vec<&str> = words.iter().map(String::as_str).collect();
            let fast = WordFinder::new(&words).mentioned(&text);
            let slow: Vec<bool> = words.iter().map(|w| mentions_word(&text, w)).collect();
            prop_assert_eq!(fast, slow);
        }
    }

    const TEXTS: &[&str] = &[
        "Use grep to search.",
        "Your shell is {{ shell }}; grep is not for you.",
        "Prefer {{ shell }} over bash.",
        "{% if 'grep' in tools %}grep{% else %}read_file{% endif %} first.",
        "Plain words about glob and {{ os }}.",
        "{{ shell | upper }} and list_dir",
        "Nothing to see.",
    ];
    const WHENS: &[Option<&str>] = &[None, Some("shell == 'bash'"), Some("os != 'windows'")];

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Rendering each section once for both checks gives what the two calls give.
        #[test]
        fn check_renders_and_mentions_equals_the_two_calls(
            picks in proptest::collection::vec((0..TEXTS.len(), 0..WHENS.len()), 1..6),
            allow in proptest::sample::subsequence(vec!["bash", "read_file", "glob", "grep"], 0..=4),
        ) {
            let catalog = ToolCatalog::builtin();
            let mut layer = Layer::new("p");
            for (i, (t, w)) in picks.iter().enumerate() {
                let mut section = PromptSection::new(&format!("s{i}"), i as f64, TEXTS[*t])
                    .expect("section");
                section.when = WHENS[*w].map(str::to_owned);
                layer = layer.section(section);
            }
            if !allow.is_empty() {
                layer = layer.tools(crate::tools::ToolRestriction::allow(allow).expect("allow"));
            }
            let a = AssemblerBuilder::new(&catalog).layer(layer).build().expect("builds");
            let mut values = Values::new();
            for b in BUILTIN_VARIABLES {
                if !is_derived_variable(b.name) {
                    values.set(b.name, b.example);
                }
            }
            let mut neutral = values.clone();
            neutral.set("shell", "<shell>");
            let (checked, mentions) = a.check_renders_and_mentions(&values, &neutral);
            prop_assert_eq!(checked.is_ok(), a.check_renders(&values).is_ok());
            prop_assert_eq!(
                format!("{mentions:?}"),
                format!("{:?}", a.hidden_tool_mentions(&neutral))
            );
        }
    }

    #[test]
    pub(super) fn word_finder_finds_whole_words_only() {
        let text = "use grep_all or `grep`, not regrep; read_file.";
        assert_eq!(
            WordFinder::new(&["grep", "read_file", "bash", "grep_all", "re"]).mentioned(text),
            [true, true, false, true, false]
        );
        // The empty word sits only between chars, never inside `é`'s two bytes.
        assert_eq!(WordFinder::new(&[""]).mentioned("aé"), [false]);
        assert_eq!(WordFinder::new(&[""]).mentioned("a  é"), [true]);
    }
}
