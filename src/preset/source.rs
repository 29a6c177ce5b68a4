//! Reading one preset file: bytes → checked text ([`SourceFile`]) → [`PresetFile`], with
//! every failure a [`Diagnostic`] that has a kind, a position and a plain message.
//!
//! Order of checks: size; encoding (BOM dropped, invalid UTF-8 and NUL refused, CRLF and
//! lone CR read as LF); then the shape check (`preset::shape`), which reads the YAML once
//! under the parsing limits and reports every YAML syntax error, exceeded limit, duplicate
//! key, unknown key, wrong type, bad value and missing key at once — except that a file of
//! another format `version` gets only `unsupported-version`, since it may use keys
//! version 1 does not know; then, for a file of the right shape, the typed pass into
//! [`PresetFile`]. A file whose shape problems are all local is pruned of what they are
//! about and the rest goes through the typed pass too (`super::salvage`), only so that
//! `validate` can report the file's other problems with them: the file still fails.

use std::sync::Arc;

use serde_saphyr::budget::BudgetBreach;
use serde_saphyr::{Error as YamlError, Location, MessageFormatter, Spanned};

use super::salvage::{self, Salvaged};
use super::source_file::{MAX_RECORDED_ANCHOR_BYTES, MAX_RECORDED_ANCHOR_EVENTS};
use super::spec::{FORMAT_VERSION, PresetFile, key_set_owner};
use super::{shape, tree_de};
use crate::diagnostic::{Diagnostic, DiagnosticKind, Diagnostics, Span};
use crate::prompt::origin::TextOrigin;
use crate::suggest::{help_did_you_mean, list_names};

pub(crate) use super::source_file::file_too_large;
pub use super::source_file::{
    MAX_ALIAS_REPLAYED_BYTES, MAX_ALIAS_REPLAYED_EVENTS, MAX_PRESET_FILE_BYTES, MAX_YAML_ALIASES,
    MAX_YAML_DEPTH, MAX_YAML_NODES, SourceFile,
};

/// A parsed preset file and the text it came from.
#[derive(Clone, Debug)]
pub struct ParsedPreset {
    /// The text (for spans, snippets and [`TextOrigin`]s).
    pub source: SourceFile,
    /// The parsed content. A section or context that gives `textFile` has that file's
    /// text in its `text` once the preset is loaded from disk. Shared: a validated preset
    /// keeps its chain, and copying the chain copies no content.
    pub file: Arc<PresetFile>,
    /// The `textFile`s read into `file`.
    text_files: Vec<TextFile>,
}

/// The text of a `textFile`, read when its preset was loaded.
#[derive(Clone, Debug)]
pub struct TextFile {
    /// The file as shown to users (`.agent-presets/prompts/rules.md`).
    pub display: Arc<str>,
    /// Its decoded text (no BOM, LF line ends), as the section or context uses it.
    pub text: Arc<str>,
    /// Where its `textFile:` value is written in the preset.
    at: Location,
}

impl TextFile {
    /// The text read from `source` for the `textFile` value written at `at`.
    pub(crate) fn new(source: &SourceFile, at: Location) -> TextFile {
        TextFile {
            display: source.display.clone(),
            text: source.text.clone(),
            at,
        }
    }
}

impl ParsedPreset {
    /// The `name` the file declares.
    pub fn name(&self) -> &str {
        &self.file.name.value
    }

    /// The span of a spanned value of this file (see [`SourceFile::span_of`]).
    pub fn span_of<T>(&self, value: &Spanned<T>) -> Span {
        self.source.span_of(value)
    }

    /// The [`TextOrigin`] of a spanned string of this file (see
    /// [`SourceFile::text_origin`]); for the text of a `textFile`, positions in that file.
    pub fn text_origin(&self, value: &Spanned<String>) -> TextOrigin {
        match self.text_file_of(value) {
            Some(file) => TextOrigin::whole_file(file.display.clone()),
            None => self.source.text_origin(value),
        }
    }

    /// The `textFile`s whose text this preset holds, in file order.
    pub fn text_files(&self) -> &[TextFile] {
        &self.text_files
    }

    /// The `textFile` a section's or context's `text` came from, if it did.
    pub fn text_file_of(&self, value: &Spanned<String>) -> Option<&TextFile> {
        self.text_files
            .iter()
            .find(|f| f.at == value.defined && *f.text == *value.value)
    }

    /// Record that the `text` of a section or context came from `file`.
    pub(crate) fn add_text_file(&mut self, file: TextFile) {
        self.text_files.push(file);
    }
}

/// Parse one preset file. `display` is the path as shown to users.
///
/// Every error is a [`Diagnostic`] with a span: `limit-exceeded` (file size, nesting,
/// nodes, aliases), `encoding`, `yaml-syntax`, `duplicate-key` (at the second occurrence),
/// `unknown-key` (with "did you mean" or the list of allowed keys), `wrong-type` (a
/// quoted scalar is text, never a number or a boolean), `invalid-value`, `missing-field`,
/// `unsupported-version`. All problems of the file's shape are returned together, sorted
/// by position; an encoding error, a YAML syntax error or an exceeded limit stops the
/// reading and comes alone (with the duplicate keys found before it), and so does
/// `unsupported-version`.
///
/// A file with shape problems is an error here whatever they are. The catalog, which
/// validates, also keeps the file pruned of local shape problems (an unknown key, a wrong
/// type, a bad value), so that one `validate` reports the file's other problems (tools,
/// templates, variables, secrets) beside them; see `super::salvage`.
pub fn parse_preset(display: Arc<str>, bytes: &[u8]) -> Result<ParsedPreset, Diagnostics> {
    let source = SourceFile::decode(display, bytes)?;
    parse_source(source)
}

/// Parse already-decoded text (see [`parse_preset`]).
pub fn parse_source(source: SourceFile) -> Result<ParsedPreset, Diagnostics> {
    parse_salvaging(source).map_err(|refused| refused.problems)
}

/// A file that did not parse: its problems, and, when they are only local shape problems,
/// what is left of it once the parts they are about are pruned (see `super::salvage`).
pub(crate) struct Unparsed {
    pub(crate) problems: Diagnostics,
    pub(crate) salvaged: Option<Box<Salvaged>>,
}

impl From<Diagnostics> for Unparsed {
    fn from(problems: Diagnostics) -> Self {
        Unparsed {
            problems,
            salvaged: None,
        }
    }
}

/// [`parse_source`], keeping the pruned file of one refused for local shape problems only:
/// the full build of that finds the problems the shape problems would otherwise hide.
pub(crate) fn parse_salvaging(source: SourceFile) -> Result<ParsedPreset, Unparsed> {
    if is_effectively_empty(&source.text) {
        let empty = Diagnostic::new(
            DiagnosticKind::MissingField,
            "the file is empty: it holds no YAML document",
        )
        .at(source.start())
        .help("a preset starts with `version: 1` and `name: <file stem>`");
        return Err(Diagnostics::from(empty).into());
    }
    // Every problem of the file's shape at once.
    let tree = match shape::check_preset(&source) {
        Ok(tree) => tree,
        Err(refused) => return Err(salvage(source, refused)),
    };
    // The shape is right: the typed pass reads the tree the shape check built, so the YAML
    // is parsed once. What that reader does not reproduce exactly it leaves to
    // serde-saphyr, which parses the text again; its errors (there should be none after
    // the shape check) are mapped all the same.
    let typed = match tree_de::preset_file(&tree) {
        Ok(file) => Ok(file),
        Err(_) => serde_saphyr::from_str_with_options::<PresetFile>(&source.text, options()),
    };
    drop(tree);
    match typed {
        Ok(file) => Ok(ParsedPreset {
            source,
            file: Arc::new(file),
            text_files: Vec::new(),
        }),
        Err(e) => Err(Diagnostics::from(diagnostic_from_yaml(&source, &e)).into()),
    }
}

/// The problems of a file the shape check refused, with the file pruned of them when they
/// are all local and what is left reads as a preset. Only the typed pass from the pruned
/// tree counts: serde-saphyr would read the text, parts and all.
fn salvage(source: SourceFile, refused: shape::Refused) -> Unparsed {
    let problems = refused.problems;
    let salvaged = refused.tree.and_then(|mut tree| {
        let scope = salvage::prune(&source, &mut tree, &problems)?;
        let file = tree_de::preset_file(&tree).ok()?;
        drop(tree);
        Some(Box::new(Salvaged {
            preset: ParsedPreset {
                source,
                file: Arc::new(file),
                text_files: Vec::new(),
            },
            scope,
        }))
    });
    Unparsed {
        problems: Diagnostics::from_vec(problems),
        salvaged,
    }
}

/// Parse another kind of YAML document (a test case file) as a preset is parsed: the
/// shape check against `shape`'s schema (every problem at once, located), then the typed
/// pass from the same tree.
pub(crate) fn parse_document<T: serde::de::DeserializeOwned>(
    source: &SourceFile,
    shape: &'static shape::DocumentShape,
    start: &str,
) -> Result<T, Diagnostics> {
    if is_effectively_empty(&source.text) {
        return Err(Diagnostic::new(
            DiagnosticKind::MissingField,
            "the file is empty: it holds no YAML document",
        )
        .at(source.start())
        .help(start)
        .into());
    }
    let tree = shape::check_document(source, shape).map_err(Diagnostics::from_vec)?;
    let typed = match tree_de::document::<T>(&tree) {
        Ok(value) => Ok(value),
        Err(_) => serde_saphyr::from_str_with_options::<T>(&source.text, options()),
    };
    drop(tree);
    typed.map_err(|e| diagnostic_from_yaml(source, &e).into())
}

/// Nothing but blank lines, comments, directives and document markers?
fn is_effectively_empty(text: &str) -> bool {
    text.lines().all(|line| {
        let line = line.trim();
        line.is_empty()
            || line.starts_with('#')
            || line.starts_with('%')
            || line == "---"
            || line == "..."
            || line.starts_with("--- #")
    })
}

/// Options for the typed pass. The shape check has already enforced the limits (the
/// constants above), so these budgets are set well above them: they are a second line of
/// defence, never the one a user meets.
pub(crate) fn options() -> serde_saphyr::Options {
    let mut budget = serde_saphyr::Budget::default();
    budget.max_depth = 2 * MAX_YAML_DEPTH;
    budget.max_aliases = 2 * MAX_YAML_ALIASES;
    budget.max_anchors = 2 * MAX_YAML_NODES;
    budget.max_nodes = 2 * (MAX_YAML_NODES + MAX_ALIAS_REPLAYED_EVENTS);
    budget.max_events = 4 * (MAX_YAML_NODES + MAX_ALIAS_REPLAYED_EVENTS);
    budget.max_documents = 2;
    budget.max_total_scalar_bytes = 2 * (MAX_PRESET_FILE_BYTES + MAX_ALIAS_REPLAYED_BYTES);
    budget.max_merge_keys = 2 * MAX_YAML_NODES;
    budget.max_recorded_anchor_events = MAX_RECORDED_ANCHOR_EVENTS;
    budget.max_recorded_anchor_bytes = MAX_RECORDED_ANCHOR_BYTES;
    // The shape check counts what aliases really expand to instead of guessing from the
    // ratio of aliases to anchors.
    budget.enforce_alias_anchor_ratio = false;
    let mut options = serde_saphyr::Options::default();
    options.budget = Some(budget);
    options.duplicate_keys = serde_saphyr::DuplicateKeyPolicy::Error;
    options.alias_limits.max_total_replayed_events = 2 * MAX_ALIAS_REPLAYED_EVENTS;
    options.alias_limits.max_replay_stack_depth = 2 * MAX_YAML_DEPTH;
    options.alias_limits.max_alias_expansions_per_anchor = 2 * MAX_ALIAS_REPLAYED_EVENTS;
    options.strict_booleans = true;
    options.non_finite_float_policy = serde_saphyr::NonFiniteFloatPolicy::PassThrough;
    // We render our own snippets from `SourceFile`.
    options.with_snippet = false;
    options
}

/// The error serde-saphyr wraps (alias and snippet wrappers removed).
fn innermost(mut err: &YamlError) -> &YamlError {
    loop {
        match err {
            YamlError::WithSnippet { error, .. } | YamlError::AliasError { error, .. } => {
                err = error;
            }
            other => return other,
        }
    }
}

/// Map a serde-saphyr error to one diagnostic of the right kind, at its position.
pub(crate) fn diagnostic_from_yaml(source: &SourceFile, err: &YamlError) -> Diagnostic {
    let inner = innermost(err);
    let location = err.location().or_else(|| inner.location());
    let mut span = location.map_or_else(|| source.start(), |l| source.span(&l));
    let found = || describe_node(source, &span);
    let (kind, message, help): (DiagnosticKind, String, Option<String>) = match inner {
        YamlError::SerdeUnknownField {
            field, expected, ..
        } => {
            span = span.with_len(char_len(field));
            let owner = key_set_owner(expected);
            let message = match owner {
                Some(owner) => format!("unknown key `{field}` in {owner}"),
                None => format!("unknown key `{field}`"),
            };
            let help = help_did_you_mean(field, expected.iter().copied()).unwrap_or_else(|| {
                format!(
                    "allowed keys here: {}",
                    list_names(expected.iter().copied())
                )
            });
            (DiagnosticKind::UnknownKey, message, Some(help))
        }
        YamlError::SerdeMissingField { field, .. } => {
            // serde-saphyr reports the last key it read; point at the mapping's first.
            span = mapping_start(source, &span);
            let example = if *field == "version" {
                format!("{field}: {FORMAT_VERSION}")
            } else {
                format!("{field}: ...")
            };
            (
                DiagnosticKind::MissingField,
                format!("missing required key `{field}`"),
                Some(format!("add `{example}` to this mapping")),
            )
        }
        YamlError::DuplicateMappingKey { key, .. } => {
            let key = key.clone().unwrap_or_default();
            let first = first_occurrence(source, &span, &key);
            span = span.with_len(char_len(&key).max(1));
            let help = match first {
                Some(line) => {
                    format!("`{key}` is already set on line {line}; keep one of the two")
                }
                None => "a key may appear only once in a mapping; keep one of them".to_owned(),
            };
            (
                DiagnosticKind::DuplicateKey,
                format!("duplicate key `{key}`"),
                Some(help),
            )
        }
        YamlError::SerdeUnknownVariant {
            variant, expected, ..
        } => {
            let what = if expected.contains(&"openai-compatible") {
                "provider"
            } else {
                "value"
            };
            let help = help_did_you_mean(variant, expected.iter().copied()).unwrap_or_else(|| {
                format!("expected one of {}", list_names(expected.iter().copied()))
            });
            (
                DiagnosticKind::InvalidValue,
                format!("unknown {what} `{variant}`"),
                Some(help),
            )
        }
        YamlError::SerdeInvalidType {
            unexpected,
            expected,
            ..
        } => (
            DiagnosticKind::WrongType,
            format!("expected {expected}, found {unexpected}"),
            None,
        ),
        YamlError::SerdeInvalidValue {
            unexpected,
            expected,
            ..
        } => (
            DiagnosticKind::InvalidValue,
            format!("invalid value {unexpected}; expected {expected}"),
            None,
        ),
        YamlError::SerdeInvalidLength { len, expected, .. } => (
            DiagnosticKind::WrongType,
            format!("expected {expected}, found {len} elements"),
            None,
        ),
        YamlError::Unexpected { expected, .. } => wrong_type(expected, &found()),
        YamlError::InvalidScalar { ty, .. } => (
            DiagnosticKind::WrongType,
            format!("expected {}, found {}", describe_scalar_type(ty), found()),
            None,
        ),
        YamlError::InvalidBooleanStrict { .. } => (
            DiagnosticKind::WrongType,
            format!("expected `true` or `false`, found {}", found()),
            Some(
                "YAML 1.1 spellings such as `yes`, `no`, `on` and `off` are not booleans here"
                    .into(),
            ),
        ),
        YamlError::NullIntoString { .. } => (
            DiagnosticKind::WrongType,
            "expected text, found nothing (null)".into(),
            Some("write a value after the colon, or remove the key".into()),
        ),
        YamlError::NonFiniteFloat { value, .. } => (
            DiagnosticKind::WrongType,
            format!("`{value}` is not a finite number"),
            None,
        ),
        YamlError::Eof { .. } => {
            span = source.start();
            (
                DiagnosticKind::MissingField,
                "the file is empty: it holds no YAML document".into(),
                Some("a preset starts with `version: 1` and `name: <file stem>`".into()),
            )
        }
        YamlError::MultipleDocuments { .. } => (
            DiagnosticKind::YamlSyntax,
            "a preset file holds exactly one YAML document; this starts a second one".into(),
            Some("remove the `---` line and what follows, or move it to its own file".into()),
        ),
        YamlError::UnknownAnchor { .. } => (
            DiagnosticKind::YamlSyntax,
            "this alias refers to an anchor that is not defined before it".into(),
            Some("define the anchor (`&name`) before using it (`*name`)".into()),
        ),
        YamlError::Budget { breach, .. } => (
            DiagnosticKind::LimitExceeded,
            describe_breach(breach),
            Some(LIMIT_HELP.into()),
        ),
        YamlError::AliasReplayLimitExceeded {
            max_total_replayed_events,
            ..
        } => (
            DiagnosticKind::LimitExceeded,
            format!(
                "aliases expand to more than {max_total_replayed_events} YAML nodes (an alias bomb?)"
            ),
            Some(LIMIT_HELP.into()),
        ),
        YamlError::AliasExpansionLimitExceeded {
            max_expansions_per_anchor,
            ..
        } => (
            DiagnosticKind::LimitExceeded,
            format!("an anchor is expanded more than {max_expansions_per_anchor} times"),
            Some(LIMIT_HELP.into()),
        ),
        YamlError::AliasReplayStackDepthExceeded { max_depth, .. } => (
            DiagnosticKind::LimitExceeded,
            format!("aliases nest more than {max_depth} deep"),
            Some(LIMIT_HELP.into()),
        ),
        YamlError::InvalidUtf8Input | YamlError::IOError { .. } => (
            DiagnosticKind::Encoding,
            "the file could not be decoded as UTF-8".into(),
            None,
        ),
        other => (DiagnosticKind::YamlSyntax, plain_message(other), None),
    };
    Diagnostic::new(kind, message).at(span).maybe_help(help)
}

const LIMIT_HELP: &str =
    "presets are small: flatten deep nesting and do not expand aliases (`*name`) many times";

/// serde-saphyr's own user-facing message, without location or snippet.
fn plain_message(err: &YamlError) -> String {
    let text = serde_saphyr::UserMessageFormatter.format_message(err);
    let text = text.trim();
    if text.is_empty() {
        "the file is not valid YAML".to_owned()
    } else {
        text.to_owned()
    }
}

fn wrong_type(expected: &str, found: &str) -> (DiagnosticKind, String, Option<String>) {
    match expected {
        "mapping start" => (
            DiagnosticKind::WrongType,
            format!("expected a mapping (`key: value` entries), found {found}"),
            None,
        ),
        "sequence start" => (
            DiagnosticKind::WrongType,
            format!("expected a list, found {found}"),
            Some("write a list as `[a, b]` or as lines starting with `- `".into()),
        ),
        "string scalar" => (
            DiagnosticKind::WrongType,
            format!("expected a single value, found {found}"),
            None,
        ),
        other => (
            DiagnosticKind::WrongType,
            format!("expected {other}, found {found}"),
            None,
        ),
    }
}

fn describe_scalar_type(ty: &str) -> String {
    match ty {
        "u8" | "u16" | "u32" | "u64" | "u128" | "usize" => "a whole number (0 or more)".to_owned(),
        "i8" | "i16" | "i32" | "i64" | "i128" | "isize" => "a whole number".to_owned(),
        t if t.contains("float") || t == "f32" || t == "f64" => "a number".to_owned(),
        "bool" | "boolean" => "`true` or `false`".to_owned(),
        other => other.to_owned(),
    }
}

/// The typed pass's own budget (a backstop above the shape check's limits) was exceeded.
fn describe_breach(breach: &BudgetBreach) -> String {
    match breach {
        BudgetBreach::Depth { .. } => "the file nests lists and mappings too deep".to_owned(),
        BudgetBreach::Aliases { aliases } => {
            format!("the file uses too many aliases ({aliases} so far)")
        }
        BudgetBreach::Anchors { anchors } => {
            format!("the file defines too many anchors ({anchors} so far)")
        }
        BudgetBreach::AliasAnchorRatio { aliases, anchors } => format!(
            "the file uses {aliases} aliases for {anchors} anchors, which looks like an alias bomb"
        ),
        BudgetBreach::Nodes { nodes } => format!("the file has too many YAML nodes ({nodes})"),
        BudgetBreach::Events { events } => format!("the file has too many YAML events ({events})"),
        BudgetBreach::Documents { .. } => "the file holds more than one YAML document".to_owned(),
        BudgetBreach::ScalarBytes { total_scalar_bytes } => {
            format!("the file's values add up to too much text ({total_scalar_bytes} bytes)")
        }
        BudgetBreach::RecordedAnchorEvents { .. } | BudgetBreach::RecordedAnchorBytes { .. } => {
            "anchors and aliases in the file expand to too much content (an alias bomb?)".to_owned()
        }
        _ => "the file exceeds a parsing limit".to_owned(),
    }
}

/// A short description of the YAML node at `span`, for "found ..." in messages.
fn describe_node(source: &SourceFile, span: &Span) -> String {
    let Some(line) = source.line(span.line) else {
        return "something else".to_owned();
    };
    let rest: String = line
        .chars()
        .skip(usize::try_from(span.column.saturating_sub(1)).unwrap_or(usize::MAX))
        .collect();
    let rest = rest.trim_end();
    let mut chars = rest.chars();
    match chars.next() {
        None => "nothing".to_owned(),
        Some('[') => "a list".to_owned(),
        Some('{') => "a mapping".to_owned(),
        Some('-') if matches!(chars.next(), None | Some(' ')) => "a list".to_owned(),
        Some('|' | '>') => "a block of text".to_owned(),
        Some('"' | '\'') => format!("the text {}", shorten(rest)),
        Some(_) => {
            let token: String = rest
                .chars()
                .take_while(|c| !matches!(c, ',' | ']' | '}' | '#'))
                .collect();
            let token = token.trim_end();
            if token.ends_with(':') || token.contains(": ") {
                "a mapping".to_owned()
            } else if matches!(token, "~" | "null" | "Null" | "NULL") {
                "nothing (null)".to_owned()
            } else {
                format!("`{}`", shorten(token))
            }
        }
    }
}

fn shorten(text: &str) -> String {
    const MAX: usize = 40;
    if text.chars().count() <= MAX {
        text.to_owned()
    } else {
        let cut: String = text.chars().take(MAX).collect();
        format!("{cut}…")
    }
}

fn char_len(text: &str) -> u32 {
    u32::try_from(text.chars().count()).unwrap_or(u32::MAX)
}

/// The first key of the block mapping that holds the key at `span` (same column, above
/// it, not past a less-indented line; a `- ` item start counts as the first key).
fn mapping_start(source: &SourceFile, span: &Span) -> Span {
    let column = usize::try_from(span.column.saturating_sub(1)).unwrap_or(usize::MAX);
    let mut best = span.line;
    let mut line = span.line;
    while line > 1 {
        line -= 1;
        let Some(text) = source.line(line) else {
            break;
        };
        let content = text.trim_start();
        if content.is_empty() || content.starts_with('#') {
            continue;
        }
        let indent = text.len() - content.len();
        if indent + 2 == column && (content.starts_with("- ") || content == "-") {
            best = line;
            break;
        }
        if indent == column && !content.starts_with('-') {
            best = line;
            continue;
        }
        if indent < column {
            break;
        }
    }
    if best == span.line {
        return span.clone();
    }
    let start = Span::new(span.file.clone(), best, span.column);
    let len = source.token_len(best, span.column);
    start.with_len(len)
}

/// The line where `key` first appears at the same column as the duplicate at `span`,
/// within the same block mapping.
fn first_occurrence(source: &SourceFile, span: &Span, key: &str) -> Option<u32> {
    let column = usize::try_from(span.column.checked_sub(1)?).ok()?;
    for number in (1..span.line).rev() {
        let line = source.line(number)?;
        let indent = line.chars().take_while(|c| *c == ' ').count();
        let content = line.trim_start();
        if content.is_empty() || content.starts_with('#') {
            continue;
        }
        let content = content.strip_prefix("- ").unwrap_or(content);
        if indent == column || (indent + 2 == column && line.trim_start().starts_with("- ")) {
            let key_part = content
                .strip_prefix(key)
                .map(|r| r.trim_start().starts_with(':'))
                .unwrap_or(false);
            let quoted = [format!("\"{key}\""), format!("'{key}'")]
                .iter()
                .any(|q| content.starts_with(q.as_str()));
            if key_part || quoted {
                return Some(number);
            }
        }
        if indent < column && !line.trim_start().starts_with("- ") {
            break;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<ParsedPreset, Diagnostics> {
        parse_preset("t.yaml".into(), text.as_bytes())
    }

    #[test]
    fn minimal_file_parses() {
        let p = parse("version: 1\nname: x\n").unwrap();
        assert_eq!(p.name(), "x");
        assert_eq!(p.span_of(&p.file.name), Span::new("t.yaml".into(), 2, 7));
    }

    #[test]
    fn span_len_covers_the_value() {
        let p = parse("version: 1\nname: reviewer\nextends: \"standard\"\n").unwrap();
        assert_eq!(p.span_of(&p.file.name).len, 8);
        let extends = p.file.extends.as_ref().unwrap();
        let span = p.span_of(extends);
        assert_eq!((span.line, span.column, span.len), (3, 10, 10));
    }

    #[test]
    fn text_origin_from_spanned() {
        let p = parse(
            "version: 1\nname: x\npersona:\n  sections:\n    - name: a\n      order: 0\n      text: |\n        one\n        two\n        {{ cwdd }}\n",
        )
        .unwrap();
        let section = &p.file.persona.as_ref().unwrap().sections.as_ref().unwrap()[0];
        let origin = p.text_origin(&section.text);
        let offset = section.text.value.find("cwdd").unwrap();
        let span = origin.span_at(&section.text.value, offset);
        assert_eq!((span.line, span.column), (10, 12));
    }

    #[test]
    fn first_occurrence_finds_the_earlier_key() {
        let src = SourceFile::decode("t".into(), b"a: 1\nb:\n  c: 1\n  c: 2\n").unwrap();
        assert_eq!(
            first_occurrence(&src, &Span::new("t".into(), 4, 3), "c"),
            Some(3)
        );
        let src = SourceFile::decode("t".into(), b"a: 1\nb: 2\na: 3\n").unwrap();
        assert_eq!(
            first_occurrence(&src, &Span::new("t".into(), 3, 1), "a"),
            Some(1)
        );
    }
}
