//! Provenance: where each byte of a rendered request comes from. Every section and
//! runtime context with its order, the `file:line` that declared it, whether it is in the
//! cacheable prefix, its size in bytes and tokens; every tool with the rule that made it
//! visible and its share of the tools' tokens. The parts add up to the totals exactly:
//! bytes count the blank line joining a piece to the one before it, and each token of
//! the whole counts for the piece it starts in (see [`tokens::count_parts`]).

use std::borrow::Borrow;

use super::source::ParsedPreset;
use super::spec::Spanned;
use super::validate::ValidPreset;
use crate::diagnostic::{Diagnostics, Span};
use crate::prompt::{RenderedPiece, Values};
use crate::tokens::{self, TokenizerError};
use crate::tools::ToolPattern;

/// The blank line pieces are joined with.
const JOIN: &str = "\n\n";

/// A rendered request, piece by piece.
#[derive(Clone, Debug, PartialEq)]
pub struct Provenance {
    /// The system prompt's sections, in order (cacheable prefix).
    pub sections: Vec<PieceProvenance>,
    /// The runtime contexts, in order (sent after the history; not cached).
    pub contexts: Vec<PieceProvenance>,
    /// The visible tools, in wire order (cacheable prefix).
    pub tools: Vec<ToolProvenance>,
    /// The system prompt's size: the sum of the sections'.
    pub system: Size,
    /// The runtime context's size: the sum of the contexts'.
    pub context: Size,
    /// The tools' tokens: the sum of the tools' (as `render` counts them).
    pub tool_tokens: usize,
}

/// Bytes and tokens.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Size {
    /// UTF-8 bytes.
    pub bytes: usize,
    /// Tokens ([`tokens::ENCODING`]).
    pub tokens: usize,
}

/// One section or context.
#[derive(Clone, Debug, PartialEq)]
pub struct PieceProvenance {
    /// The rendered piece (name, order, text, where it was declared).
    pub piece: RenderedPiece,
    /// Part of the cacheable prefix (a section) or not (a runtime context)?
    pub in_prefix: bool,
    /// Its share of the whole: its text, plus the blank line before it (all but the first).
    pub size: Size,
}

/// One visible tool.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolProvenance {
    /// The wire name.
    pub name: String,
    /// What made it visible.
    pub admitted_by: ToolAdmission,
    /// Its share of the tools' tokens.
    pub tokens: usize,
}

/// What made a tool visible.
#[derive(Clone, Debug, PartialEq)]
pub enum ToolAdmission {
    /// An entry of a preset's `allow` (the nearest one that selects the tool).
    Allow {
        /// The preset.
        preset: String,
        /// The entry as written: a name or a glob.
        pattern: String,
        /// Where it was written.
        span: Span,
    },
    /// No preset of the chain has an `allow` list: every known tool not denied.
    NoAllowList,
}

/// Why provenance could not be worked out.
#[derive(Debug, thiserror::Error)]
pub enum ProvenanceError {
    /// The preset does not render with these values.
    #[error("{0}")]
    Render(Diagnostics),
    /// The tokenizer could not be loaded.
    #[error(transparent)]
    Tokenizer(#[from] TokenizerError),
}

impl ValidPreset {
    /// Where each piece of the request rendered with `values` comes from, with sizes.
    pub fn provenance(&self, values: &Values) -> Result<Provenance, ProvenanceError> {
        let assembler = self.assembler();
        let sections = assembler
            .rendered_sections(values)
            .map_err(ProvenanceError::Render)?;
        let contexts = assembler
            .rendered_contexts(values)
            .map_err(ProvenanceError::Render)?;
        let (sections, system) = sized(sections, true)?;
        let (contexts, context) = sized(contexts, false)?;
        let wire = assembler.registry().schemas();
        let shares = tokens::count_each_tool(&wire)?;
        let tools: Vec<ToolProvenance> = wire
            .iter()
            .zip(&shares)
            .map(|(tool, &tokens)| ToolProvenance {
                name: tool.name.clone(),
                admitted_by: admitting_rule(self.chain(), &tool.name).map_or(
                    ToolAdmission::NoAllowList,
                    |(preset, entry)| ToolAdmission::Allow {
                        preset: preset.file.name.value.clone(),
                        pattern: entry.value.clone(),
                        span: preset.span_of(entry),
                    },
                ),
                tokens,
            })
            .collect();
        Ok(Provenance {
            sections,
            contexts,
            tools,
            system,
            context,
            tool_tokens: shares.iter().sum(),
        })
    }
}

/// Sizes of pieces joined with blank lines, and of the whole.
fn sized(
    pieces: Vec<RenderedPiece>,
    in_prefix: bool,
) -> Result<(Vec<PieceProvenance>, Size), TokenizerError> {
    let mut whole = String::new();
    let mut ends = Vec::with_capacity(pieces.len());
    for piece in &pieces {
        if !whole.is_empty() {
            whole.push_str(JOIN);
        }
        whole.push_str(&piece.text);
        ends.push(whole.len());
    }
    let counts = tokens::count_parts(&whole, &ends)?;
    let mut start = 0;
    let out = pieces
        .into_iter()
        .zip(ends.iter().zip(counts))
        .map(|(piece, (&end, tokens))| {
            let size = Size {
                bytes: end - start,
                tokens,
            };
            start = end;
            PieceProvenance {
                piece,
                in_prefix,
                size,
            }
        })
        .collect();
    let total = Size {
        bytes: whole.len(),
        tokens: tokens::count(&whole)?,
    };
    Ok((out, total))
}

/// The nearest `allow` entry of the chain (root first) that selects `tool`, with its
/// preset; `None` when no preset has one that does (then no preset has an `allow` list
/// at all, or the tool would not be visible).
pub(crate) fn admitting_rule<'a>(
    chain: &'a [impl Borrow<ParsedPreset>],
    tool: &str,
) -> Option<(&'a ParsedPreset, &'a Spanned<String>)> {
    chain.iter().rev().find_map(|p| {
        let preset: &ParsedPreset = p.borrow();
        let allow = preset.file.tools.as_ref()?.value.allow.as_ref()?;
        allow
            .iter()
            .find(|entry| ToolPattern::new(&entry.value, None).is_ok_and(|pat| pat.matches(tool)))
            .map(|entry| (preset, entry))
    })
}
