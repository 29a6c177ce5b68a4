//! The shape check: every structural problem of a preset file, found in one pass and
//! reported together, each at its own line and column.
//!
//! The file's YAML events (serde-saphyr's `granit_parser`) are read once into a small tree
//! of nodes with positions — mappings with their keys, sequences, scalars with their
//! style — under the same budgets as the rest of parsing: nesting depth, node count, alias
//! uses and what aliases expand to ([`MAX_YAML_DEPTH`], [`MAX_YAML_NODES`],
//! [`MAX_YAML_ALIASES`], [`MAX_ALIAS_REPLAYED_EVENTS`], [`MAX_ALIAS_REPLAYED_BYTES`]). An
//! alias is kept as a reference to its anchor's node and never copied, so an alias bomb
//! costs what its text costs; the expansion it *would* cost is added up as the aliases are
//! read, and the alias that crosses a limit is the one reported.
//!
//! The tree is then checked against the preset's JSON Schema ([`preset_json_schema`], one
//! source of truth with `schemas/preset.schema.json`): `$ref`, `type` (arrays with `"null"`
//! included), `properties`, `additionalProperties`, `required`, `items`, `enum`, `const`,
//! `anyOf`/`oneOf`, `minimum` and `format: uint32`. Patterns are left to the validator,
//! which says more about a bad name than a pattern can. The schema is compiled once into
//! rules (`rules`), so the walk reads fields at each node instead of looking keywords up.
//!
//! Scalars are typed as YAML 1.2's core schema types them: a quoted or block scalar is
//! text; a plain one is null (`~`, `null`, nothing), a boolean (`true`/`false`), an
//! integer, a float (`.inf` and `.nan` included) or else text. Where the schema wants text,
//! any plain scalar is accepted as its text (`default: 400` is the text `400`); where it
//! wants a number or a boolean, text is refused (`order: "5"`).
//!
//! The typed deserialization into [`PresetFile`](super::spec::PresetFile) runs only when
//! this check finds nothing, and accepts what it accepts. It reads the same tree
//! (`super::tree_de`): each node keeps the position serde-saphyr gives it as well.

use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

use serde_json::Value;
use serde_saphyr::granit_parser::{ErrorKind, Event, Parser, ScalarStyle, ScanError, Span as At};

use super::source::{
    MAX_ALIAS_REPLAYED_BYTES, MAX_ALIAS_REPLAYED_EVENTS, MAX_YAML_ALIASES, MAX_YAML_DEPTH,
    MAX_YAML_NODES, SourceFile, list_names,
};
use super::spec::{FORMAT_VERSION, preset_json_schema};
use crate::diagnostic::{Diagnostic, DiagnosticKind, Span};
use crate::prompt::VariableType;
use crate::suggest::{did_you_mean, help_did_you_mean};
use crate::yaml_scalar::{is_yaml11_bool, parse_float, parse_int, yaml_trim, yaml12_bool};

use rules::{Additional, Allowed, Const, RuleId, Rules, Special, Ty, UnknownKeyWords};

mod rules;
mod yaml_traps;

/// Every shape problem of `source`, sorted by position (never empty); or, when the file
/// has the shape of a preset, its tree, for the typed pass. A YAML syntax error or an
/// exceeded limit stops the reading: it is then the only problem reported (with any
/// duplicate keys found before it). A file of another format `version` gets only
/// `unsupported-version` (and duplicate keys): its other keys may be right for its version.
pub(crate) fn check(source: &SourceFile) -> Result<Tree, Vec<Diagnostic>> {
    let tree = match Tree::read(source) {
        Ok(tree) => tree,
        Err(stop) => {
            let mut out = stop.duplicates;
            out.push(stop.problem);
            return Err(finish(out));
        }
    };
    let mut checker = Checker {
        tree: &tree,
        source,
        rules: rules::rules(),
        out: Vec::new(),
    };
    checker.check_root();
    if tree.duplicates.is_empty() && checker.out.is_empty() {
        return Ok(tree);
    }
    let mut out = tree.duplicates.clone();
    out.append(&mut checker.out);
    Err(finish(out))
}

/// Sort by position and drop repeats (a node reached through several aliases is checked
/// each time).
fn finish(mut out: Vec<Diagnostic>) -> Vec<Diagnostic> {
    out.sort_by(|a, b| {
        let key = |d: &Diagnostic| d.span.as_ref().map(|s| (s.line, s.column));
        key(a)
            .cmp(&key(b))
            .then_with(|| a.kind.cmp(&b.kind))
            .then_with(|| a.message.cmp(&b.message))
    });
    out.dedup();
    out
}

/// The preset schema, generated once (and compiled once into [`rules`]).
fn schema() -> &'static Value {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    SCHEMA.get_or_init(preset_json_schema)
}

// ---------------------------------------------------------------------------------------
// The tree
// ---------------------------------------------------------------------------------------

pub(super) type NodeId = usize;

/// Where a node is: 1-based lines, 1-based columns in characters, end exclusive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Pos {
    line: u32,
    column: u32,
    end_line: u32,
    end_column: u32,
}

impl Pos {
    fn of(at: &At) -> Pos {
        Pos {
            line: to_u32(at.start.line()).max(1),
            column: to_u32(at.start.col()).saturating_add(1),
            end_line: to_u32(at.end.line()).max(1),
            end_column: to_u32(at.end.col()).saturating_add(1),
        }
    }
}

/// Where a node is as serde-saphyr's [`Location`](serde_saphyr::Location) says it (built
/// from the parser's span the same way), for the `Spanned` values of the typed pass.
#[derive(Clone, Copy, Debug)]
pub(super) struct Loc {
    /// 1-based line.
    pub(super) line: u32,
    /// 1-based column, in characters.
    pub(super) column: u32,
    /// Characters (and bytes) from the start of the text.
    pub(super) span: serde_saphyr::Span,
}

impl Loc {
    fn of(at: &At) -> Loc {
        // As `Span::len`, without its debug-build panic should the end precede the start.
        let len = at.end.index().wrapping_sub(at.start.index());
        let mut span = serde_saphyr::Span::new(at.start.index() as u64, len as u64);
        if let (Some(start), Some(end)) = (at.start.byte_offset(), at.end.byte_offset()) {
            let len = end.saturating_sub(start);
            if u32::try_from(start).is_ok() && u32::try_from(len).is_ok() {
                span = span.with_byte_info(start as u64, len as u64);
            }
        }
        Loc {
            line: to_u32(at.start.line()),
            column: to_u32(at.start.col().saturating_add(1)),
            span,
        }
    }
}

/// How a scalar was written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Style {
    Plain,
    /// `'...'` or `"..."`, with its quote character.
    Quoted(char),
    /// `|` or `>`.
    Block,
}

/// A scalar's tag, as far as typing goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum CoreTag {
    None,
    Str,
    Int,
    Float,
    Bool,
    Null,
    Other,
}

#[derive(Debug)]
pub(super) enum Kind {
    Scalar {
        text: Box<str>,
        style: Style,
        tag: CoreTag,
    },
    Seq(Vec<NodeId>),
    Map(Vec<Entry>),
    /// `*name`: the anchored node.
    Alias(NodeId),
}

#[derive(Clone, Copy, Debug)]
pub(super) struct Entry {
    pub(super) key: NodeId,
    pub(super) value: NodeId,
    /// The key repeats an earlier key of the mapping (reported; not checked further).
    duplicate: bool,
}

/// What a node costs once its aliases are expanded.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Cost {
    /// YAML events: one per scalar, two per collection plus its content.
    pub(super) events: u64,
    /// Bytes of scalar text.
    pub(super) bytes: u64,
    /// Nesting levels of collections (a scalar: 0).
    height: u32,
}

#[derive(Debug)]
pub(super) struct Node {
    pub(super) kind: Kind,
    pos: Pos,
    /// The same start as serde-saphyr's `Location` of the node.
    pub(super) loc: Loc,
    cost: Cost,
    /// The node's end has been read (an alias to an unfinished node is recursive).
    done: bool,
}

/// A preset file as a tree of nodes, with the duplicate keys found while reading it.
#[derive(Debug)]
pub(crate) struct Tree {
    pub(super) nodes: Vec<Node>,
    pub(super) root: Option<NodeId>,
    duplicates: Vec<Diagnostic>,
    /// A collection has a tag, or a scalar has a tag other than `!!str` / `!`: the typed
    /// pass leaves such a file to serde-saphyr, which has rules of its own for tags.
    pub(super) unusual_tags: bool,
    /// What serde-saphyr copies to keep anchored nodes for replay: the anchored nodes'
    /// costs added up (it has a budget for that; the shape check does not).
    pub(super) anchored: Cost,
}

/// Why reading stopped: a syntax error or an exceeded limit.
struct Stop {
    problem: Diagnostic,
    duplicates: Vec<Diagnostic>,
}

/// An open collection while reading.
struct Open {
    id: NodeId,
    /// For a mapping: the key read and waiting for its value (and whether it repeats one),
    /// and the keys seen so far with the line of their first occurrence.
    map: Option<OpenMap>,
}

#[derive(Default)]
struct OpenMap {
    pending: Option<(NodeId, bool)>,
    /// A mapping of more than [`SCAN_KEYS`] keys: its keys so far, with the line of their
    /// first occurrence. A smaller one (nearly all) compares a new key with the keys before
    /// it instead: no copy of each key and no hashing.
    index: Option<HashMap<Box<str>, u32>>,
}

/// Mappings with up to this many keys are checked for duplicate keys by comparing each
/// key with the ones before it; larger ones index their keys.
const SCAN_KEYS: usize = 16;

struct Reader<'s> {
    source: &'s SourceFile,
    nodes: Vec<Node>,
    stack: Vec<Open>,
    /// Anchor id (from the parser) → its node.
    anchors: HashMap<usize, NodeId>,
    root: Option<NodeId>,
    documents: usize,
    /// A second document started: the next node is reported.
    second_document: bool,
    aliases: usize,
    replayed_events: u64,
    replayed_bytes: u64,
    duplicates: Vec<Diagnostic>,
    unusual_tags: bool,
}

impl Tree {
    fn read(source: &SourceFile) -> Result<Tree, Stop> {
        let mut reader = Reader {
            source,
            // About one node per 40 bytes in presets as written: grown a few times less.
            nodes: Vec::with_capacity(source.text.len() / 40),
            stack: Vec::new(),
            anchors: HashMap::new(),
            root: None,
            documents: 0,
            second_document: false,
            aliases: 0,
            replayed_events: 0,
            replayed_bytes: 0,
            duplicates: Vec::new(),
            unusual_tags: false,
        };
        let parser = Parser::new_from_str(&source.text);
        for item in parser {
            let result = match item {
                Ok((event, at)) => reader.event(event, &at),
                Err(e) => Err(syntax_error(source, &e)),
            };
            if let Err(problem) = result {
                return Err(Stop {
                    problem,
                    duplicates: reader.duplicates,
                });
            }
        }
        let mut anchored = Cost::default();
        for &id in reader.anchors.values() {
            let cost = reader.nodes[id].cost;
            anchored.events = anchored.events.saturating_add(cost.events);
            anchored.bytes = anchored.bytes.saturating_add(cost.bytes);
        }
        Ok(Tree {
            nodes: reader.nodes,
            root: reader.root,
            duplicates: reader.duplicates,
            unusual_tags: reader.unusual_tags,
            anchored,
        })
    }

    /// The node itself, or the anchored node an alias refers to.
    pub(super) fn deref(&self, id: NodeId) -> NodeId {
        match self.nodes[id].kind {
            Kind::Alias(target) => target,
            _ => id,
        }
    }

    /// The text of a scalar key (through an alias), if it is one.
    fn key_text(&self, id: NodeId) -> Option<&str> {
        match &self.nodes[self.deref(id)].kind {
            Kind::Scalar { text, .. } => Some(text),
            _ => None,
        }
    }

    /// The `(key, value)` of `entries` whose key is `name`.
    fn entry(&self, entries: &[(NodeId, NodeId)], name: &str) -> Option<(NodeId, NodeId)> {
        entries
            .iter()
            .find(|(k, _)| self.key_text(*k) == Some(name))
            .copied()
    }

    /// Is this key the merge key `<<` (plain, untagged)?
    pub(super) fn is_merge_key(&self, id: NodeId) -> bool {
        is_merge_key(&self.nodes[id].kind)
    }
}

fn syntax_error(source: &SourceFile, e: &ScanError) -> Diagnostic {
    let marker = e.marker();
    let line = to_u32(marker.line()).max(1);
    if let Some(tab) = tab_indentation(source, line) {
        return tab;
    }
    let span = Span::new(
        source.display.clone(),
        line,
        to_u32(marker.col()).saturating_add(1),
    );
    let trap = match e.kind() {
        // A plain value runs on over the next lines: the tab that stopped it is at the
        // start of a later line, not on this one.
        ErrorKind::TabInPlainScalar
        | ErrorKind::TabInIndentation
        | ErrorKind::TabInBlockIndentation
        | ErrorKind::TabNotAllowed => tab_after_value(source, line),
        ErrorKind::MappingValueNotAllowed => yaml_traps::colon_in_value(source, &span),
        ErrorKind::InvalidTrailingSingleQuotedScalar
        | ErrorKind::InvalidTrailingDoubleQuotedScalar => {
            yaml_traps::starts_with_quote(source, &span)
        }
        _ => None,
    };
    if let Some(trap) = trap {
        return trap;
    }
    let (message, help) = match e.kind() {
        ErrorKind::UnknownAnchor => (
            "this alias refers to an anchor that is not defined before it".to_owned(),
            Some("define the anchor (`&name`) before using it (`*name`)"),
        ),
        _ => {
            let info = e.info();
            let info = info.trim();
            let message = if info.is_empty() {
                "the file is not valid YAML".to_owned()
            } else {
                info.to_owned()
            };
            (message, None)
        }
    };
    Diagnostic::new(DiagnosticKind::YamlSyntax, message)
        .at(span)
        .maybe_help(help.map(str::to_owned))
}

/// A syntax error on a line indented with a tab (YAML indents with spaces only): said
/// plainly, at the tab, with the line written with spaces.
fn tab_indentation(source: &SourceFile, line: u32) -> Option<Diagnostic> {
    let text = source.line(line)?;
    let indent: String = text
        .chars()
        .take_while(|c| *c == ' ' || *c == '\t')
        .collect();
    let column = indent.chars().position(|c| c == '\t')?;
    let content = &text[indent.len()..];
    let written = match yaml_traps::intended_indent(source, line) {
        Some(spaces) if !content.is_empty() => {
            format!(": write it as `{}{content}`", " ".repeat(spaces))
        }
        _ => String::new(),
    };
    Some(
        Diagnostic::new(
            DiagnosticKind::YamlSyntax,
            "this line is indented with a tab; YAML indents with spaces only",
        )
        .at(Span::new(source.display.clone(), line, to_u32(column) + 1).with_len(1))
        .help(format!("replace the tab with spaces{written} (2 spaces per level is usual; many editors can convert tabs to spaces)")),
    )
}

/// A tab found while reading a value that continues past `line`: the first later line
/// (blank lines aside) indented with a tab, reported there.
fn tab_after_value(source: &SourceFile, line: u32) -> Option<Diagnostic> {
    let mut next = line.checked_add(1)?;
    while let Some(text) = source.line(next) {
        if let Some(tab) = tab_indentation(source, next) {
            return Some(tab);
        }
        if !text.trim().is_empty() {
            return None;
        }
        next = next.checked_add(1)?;
    }
    None
}

const LIMIT_HELP: &str =
    "presets are small: flatten deep nesting and do not expand aliases (`*name`) many times";

fn limit(span: Span, message: String) -> Diagnostic {
    Diagnostic::new(DiagnosticKind::LimitExceeded, message)
        .at(span)
        .help(LIMIT_HELP)
}

impl Reader<'_> {
    fn span(&self, pos: Pos) -> Span {
        node_span(self.source, pos)
    }

    fn event(&mut self, event: Event<'_>, at: &At) -> Result<(), Diagnostic> {
        let pos = Pos::of(at);
        let loc = Loc::of(at);
        if self.second_document && event.is_node() {
            return Err(Diagnostic::new(
                DiagnosticKind::YamlSyntax,
                "a preset file holds exactly one YAML document; this starts a second one",
            )
            .at(self.span(pos))
            .help("remove the `---` line and what follows, or move it to its own file"));
        }
        match event {
            Event::DocumentStart(..) => {
                self.documents += 1;
                if self.documents > 1 {
                    self.second_document = true;
                }
            }
            Event::Scalar(text, style, anchor, tag) => {
                self.count_node(pos)?;
                let tag = match tag.as_deref() {
                    None => CoreTag::None,
                    Some(tag) => match (tag.core_suffix(), tag.parts()) {
                        (Some("str"), _) | (None, ("!", "")) => CoreTag::Str,
                        (Some("int"), _) => CoreTag::Int,
                        (Some("float"), _) => CoreTag::Float,
                        (Some("bool"), _) => CoreTag::Bool,
                        (Some("null"), _) => CoreTag::Null,
                        _ => CoreTag::Other,
                    },
                };
                self.unusual_tags |= !matches!(tag, CoreTag::None | CoreTag::Str);
                let style = match style {
                    ScalarStyle::Plain => Style::Plain,
                    ScalarStyle::SingleQuoted => Style::Quoted('\''),
                    ScalarStyle::DoubleQuoted => Style::Quoted('"'),
                    _ => Style::Block,
                };
                let cost = Cost {
                    events: 1,
                    bytes: text.len() as u64,
                    height: 0,
                };
                let id = self.push(
                    Kind::Scalar {
                        text: text.into_owned().into_boxed_str(),
                        style,
                        tag,
                    },
                    pos,
                    loc,
                    cost,
                    true,
                );
                self.anchor(anchor, id);
                self.add(id);
            }
            Event::SequenceStart(_, anchor, ref tag) | Event::MappingStart(_, anchor, ref tag) => {
                self.count_node(pos)?;
                self.unusual_tags |= tag.is_some();
                if self.stack.len() >= MAX_YAML_DEPTH {
                    return Err(limit(
                        self.span(pos),
                        format!(
                            "the file nests lists and mappings more than {MAX_YAML_DEPTH} deep"
                        ),
                    ));
                }
                let is_map = matches!(event, Event::MappingStart(..));
                let kind = if is_map {
                    Kind::Map(Vec::new())
                } else {
                    Kind::Seq(Vec::new())
                };
                let id = self.push(kind, pos, loc, Cost::default(), false);
                self.anchor(anchor, id);
                self.stack.push(Open {
                    id,
                    map: is_map.then(OpenMap::default),
                });
            }
            Event::SequenceEnd | Event::MappingEnd => {
                if let Some(open) = self.stack.pop() {
                    self.close(open.id);
                    self.add(open.id);
                }
            }
            Event::Alias(anchor) => {
                self.alias(anchor, pos, loc)?;
            }
            _ => {}
        }
        Ok(())
    }

    fn push(&mut self, kind: Kind, pos: Pos, loc: Loc, cost: Cost, done: bool) -> NodeId {
        self.nodes.push(Node {
            kind,
            pos,
            loc,
            cost,
            done,
        });
        self.nodes.len() - 1
    }

    fn anchor(&mut self, anchor: usize, id: NodeId) {
        if anchor != 0 {
            self.anchors.insert(anchor, id);
        }
    }

    fn count_node(&self, pos: Pos) -> Result<(), Diagnostic> {
        // Alias nodes are counted by the alias limits, not here.
        let real = self.nodes.len() - self.aliases;
        if real >= MAX_YAML_NODES {
            return Err(limit(
                self.span(pos),
                format!(
                    "the file has more than {MAX_YAML_NODES} YAML nodes (values, lists and mappings)"
                ),
            ));
        }
        Ok(())
    }

    fn alias(&mut self, anchor: usize, pos: Pos, loc: Loc) -> Result<(), Diagnostic> {
        let span = self.span(pos);
        self.aliases += 1;
        if self.aliases > MAX_YAML_ALIASES {
            return Err(limit(
                span,
                format!("the file uses more than {MAX_YAML_ALIASES} aliases (`*name`)"),
            ));
        }
        let Some(&target) = self.anchors.get(&anchor) else {
            return Err(Diagnostic::new(
                DiagnosticKind::YamlSyntax,
                "this alias refers to an anchor that is not defined before it",
            )
            .at(span)
            .help("define the anchor (`&name`) before using it (`*name`)"));
        };
        if !self.nodes[target].done {
            return Err(Diagnostic::new(
                DiagnosticKind::YamlSyntax,
                "this alias refers to the list or mapping it is part of (a recursive alias)",
            )
            .at(span)
            .help("an alias (`*name`) may only refer to a value that ends before it"));
        }
        let cost = self.nodes[target].cost;
        self.replayed_events = self.replayed_events.saturating_add(cost.events);
        if self.replayed_events > MAX_ALIAS_REPLAYED_EVENTS as u64 {
            return Err(limit(
                span,
                format!(
                    "aliases expand to more than {MAX_ALIAS_REPLAYED_EVENTS} YAML events (an alias bomb?)"
                ),
            ));
        }
        self.replayed_bytes = self.replayed_bytes.saturating_add(cost.bytes);
        if self.replayed_bytes > MAX_ALIAS_REPLAYED_BYTES as u64 {
            return Err(limit(
                span,
                format!(
                    "aliases expand to more than {MAX_ALIAS_REPLAYED_BYTES} bytes of text (an alias bomb?)"
                ),
            ));
        }
        if self.stack.len() as u64 + u64::from(cost.height) > MAX_YAML_DEPTH as u64 {
            return Err(limit(
                span,
                format!(
                    "with this alias expanded, the file nests lists and mappings more than {MAX_YAML_DEPTH} deep"
                ),
            ));
        }
        let id = self.push(Kind::Alias(target), pos, loc, cost, true);
        self.add(id);
        Ok(())
    }

    /// A collection ended: add up what it costs.
    fn close(&mut self, id: NodeId) {
        let mut cost = Cost {
            events: 2,
            bytes: 0,
            height: 1,
        };
        let mut add = |c: Cost| {
            cost.events = cost.events.saturating_add(c.events);
            cost.bytes = cost.bytes.saturating_add(c.bytes);
            cost.height = cost.height.max(c.height.saturating_add(1));
        };
        match &self.nodes[id].kind {
            Kind::Seq(items) => {
                for &item in items {
                    add(self.nodes[item].cost);
                }
            }
            Kind::Map(entries) => {
                for e in entries {
                    add(self.nodes[e.key].cost);
                    add(self.nodes[e.value].cost);
                }
            }
            _ => {}
        }
        let node = &mut self.nodes[id];
        node.cost = cost;
        node.done = true;
    }

    /// A node is complete: attach it to the open collection (or make it the root).
    fn add(&mut self, id: NodeId) {
        let Some(open) = self.stack.last_mut() else {
            if self.root.is_none() {
                self.root = Some(id);
            }
            return;
        };
        let parent = open.id;
        let Some(map) = &mut open.map else {
            if let Kind::Seq(items) = &mut self.nodes[parent].kind {
                items.push(id);
            }
            return;
        };
        match map.pending.take() {
            None => {
                // A key: is it a repeat?
                let mut duplicate = false;
                let key = match &self.nodes[id].kind {
                    Kind::Alias(target) => *target,
                    _ => id,
                };
                let is_merge = is_merge_key(&self.nodes[id].kind);
                if let Kind::Scalar { text, .. } = &self.nodes[key].kind
                    && !is_merge
                {
                    let entries = match &self.nodes[parent].kind {
                        Kind::Map(entries) => entries.as_slice(),
                        _ => &[],
                    };
                    let first = match &map.index {
                        Some(index) => index.get(&**text).copied(),
                        None => first_line(&self.nodes, entries, text),
                    };
                    match first {
                        Some(first) => {
                            duplicate = true;
                            let span = node_span(self.source, self.nodes[id].pos);
                            let help = duplicate_key_help(&self.nodes, entries, text, first);
                            self.duplicates.push(
                                Diagnostic::new(
                                    DiagnosticKind::DuplicateKey,
                                    format!("duplicate key `{text}`"),
                                )
                                .at(span)
                                .help(help),
                            );
                        }
                        None => {
                            let line = self.nodes[id].pos.line;
                            if let Some(index) = &mut map.index {
                                index.insert(text.clone(), line);
                            } else if entries.len() >= SCAN_KEYS {
                                let mut index = index_keys(&self.nodes, entries);
                                index.insert(text.clone(), line);
                                map.index = Some(index);
                            }
                        }
                    }
                }
                map.pending = Some((id, duplicate));
            }
            Some((key, duplicate)) => {
                if let Kind::Map(entries) = &mut self.nodes[parent].kind {
                    entries.push(Entry {
                        key,
                        value: id,
                        duplicate,
                    });
                }
            }
        }
    }
}

/// Is this the merge key `<<` (plain, untagged)?
fn is_merge_key(kind: &Kind) -> bool {
    matches!(
        kind,
        Kind::Scalar { text, style: Style::Plain, tag: CoreTag::None } if &**text == "<<"
    )
}

/// The text of a scalar key (through an alias) that is not the merge key.
fn plain_key(nodes: &[Node], key: NodeId) -> Option<&str> {
    if is_merge_key(&nodes[key].kind) {
        return None;
    }
    let target = match nodes[key].kind {
        Kind::Alias(target) => target,
        _ => key,
    };
    match &nodes[target].kind {
        Kind::Scalar { text, .. } => Some(text),
        _ => None,
    }
}

/// The line where `text` is first a key of `entries` (merge keys aside), if it is one.
fn first_line(nodes: &[Node], entries: &[Entry], text: &str) -> Option<u32> {
    entries
        .iter()
        .find(|e| plain_key(nodes, e.key) == Some(text))
        .map(|e| nodes[e.key].pos.line)
}

/// The keys of the format whose value is a block of entries or a list of items.
const BLOCK_KEYS: &[&str] = &[
    "variables",
    "model",
    "persona",
    "sections",
    "remove",
    "contexts",
    "tools",
    "allow",
    "deny",
    "order",
    "budget",
    "passEnv",
    "enum",
];

/// The help of a repeated key: a repeated block of the format (`variables:` twice) is
/// merged; anything else (a value, one variable declared twice) is chosen.
fn duplicate_key_help(nodes: &[Node], entries: &[Entry], text: &str, first: u32) -> String {
    let first_value = entries
        .iter()
        .find(|e| plain_key(nodes, e.key) == Some(text))
        .filter(|_| BLOCK_KEYS.contains(&text))
        .map(|e| &nodes[e.value].kind);
    match first_value {
        Some(Kind::Map(_)) => format!(
            "`{text}` is already set on line {first}; merge the two: move the entries of this \
             `{text}:` into the one on line {first} and delete this key"
        ),
        Some(Kind::Seq(_)) => format!(
            "`{text}` is already set on line {first}; merge the two: move the items of this \
             `{text}:` into the list on line {first} and delete this key"
        ),
        _ => format!("`{text}` is already set on line {first}; keep one of the two"),
    }
}

/// The keys of `entries` (merge keys aside) with the line of their first occurrence.
fn index_keys(nodes: &[Node], entries: &[Entry]) -> HashMap<Box<str>, u32> {
    let mut index = HashMap::with_capacity(2 * entries.len());
    for e in entries {
        if let Some(text) = plain_key(nodes, e.key) {
            index.entry(text.into()).or_insert(nodes[e.key].pos.line);
        }
    }
    index
}

/// The span of a node: its start, covering its characters on its first line.
fn node_span(source: &SourceFile, pos: Pos) -> Span {
    let len = if pos.end_line == pos.line && pos.end_column > pos.column {
        pos.end_column - pos.column
    } else {
        source.token_len(pos.line, pos.column)
    };
    Span::new(source.display.clone(), pos.line, pos.column).with_len(len)
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

// ---------------------------------------------------------------------------------------
// Scalar typing (YAML 1.2 core schema, as serde-saphyr reads it)
// ---------------------------------------------------------------------------------------

/// A scalar as the checker sees it.
#[derive(Clone, Copy)]
struct Scalar<'t> {
    text: &'t str,
    style: Style,
    tag: CoreTag,
}

impl Scalar<'_> {
    /// Text however it looks: quoted, a block, or tagged `!!str`.
    fn is_text(self) -> bool {
        self.tag == CoreTag::Str
            || (self.style != Style::Plain
                && !matches!(
                    self.tag,
                    CoreTag::Int | CoreTag::Float | CoreTag::Bool | CoreTag::Null
                ))
    }

    fn is_null(self) -> bool {
        self.tag == CoreTag::Null
            || (matches!(self.tag, CoreTag::None | CoreTag::Other)
                && self.style == Style::Plain
                && matches!(self.text, "" | "~" | "null" | "Null" | "NULL"))
    }

    fn as_bool(self) -> Option<bool> {
        if self.is_text() || !matches!(self.tag, CoreTag::None | CoreTag::Other | CoreTag::Bool) {
            return None;
        }
        yaml12_bool(self.text)
    }

    fn as_int(self) -> Option<i128> {
        if self.is_text() || !matches!(self.tag, CoreTag::None | CoreTag::Other | CoreTag::Int) {
            return None;
        }
        parse_int(self.text)
    }

    fn as_float(self) -> Option<f64> {
        if self.is_text()
            || !matches!(
                self.tag,
                CoreTag::None | CoreTag::Other | CoreTag::Float | CoreTag::Int
            )
        {
            return None;
        }
        parse_float(self.text)
    }
}

// ---------------------------------------------------------------------------------------
// The schema check
// ---------------------------------------------------------------------------------------

struct Checker<'a> {
    tree: &'a Tree,
    source: &'a SourceFile,
    rules: &'static Rules,
    out: Vec<Diagnostic>,
}

/// What a node is, for choosing among `anyOf` branches.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Shape {
    Null,
    Scalar,
    List,
    Mapping,
}

impl<'a> Checker<'a> {
    fn span(&self, id: NodeId) -> Span {
        node_span(self.source, self.tree.nodes[id].pos)
    }

    fn scalar(&self, id: NodeId) -> Option<Scalar<'a>> {
        match &self.tree.nodes[self.tree.deref(id)].kind {
            Kind::Scalar { text, style, tag } => Some(Scalar {
                text,
                style: *style,
                tag: *tag,
            }),
            _ => None,
        }
    }

    fn shape(&self, id: NodeId) -> Shape {
        match &self.tree.nodes[self.tree.deref(id)].kind {
            Kind::Seq(_) => Shape::List,
            Kind::Map(_) => Shape::Mapping,
            _ => match self.scalar(id) {
                Some(s) if s.is_null() => Shape::Null,
                _ => Shape::Scalar,
            },
        }
    }

    /// "a list", "`grep`", "the text \"5\"", ... for "found ..." in messages.
    fn describe(&self, id: NodeId) -> String {
        match self.shape(id) {
            Shape::List => "a list".to_owned(),
            Shape::Mapping => "a mapping".to_owned(),
            Shape::Null => "nothing (null)".to_owned(),
            Shape::Scalar => {
                let Some(s) = self.scalar(id) else {
                    return "something else".to_owned();
                };
                match s.style {
                    Style::Block => "a block of text".to_owned(),
                    Style::Quoted(q) => format!("the text {q}{}{q}", shorten(s.text)),
                    Style::Plain => format!("`{}`", shorten(s.text)),
                }
            }
        }
    }

    fn check_root(&mut self) {
        let Some(root) = self.tree.root else {
            self.out.push(
                Diagnostic::new(
                    DiagnosticKind::MissingField,
                    "the file is empty: it holds no YAML document",
                )
                .at(self.source.start())
                .help("a preset starts with `version: 1` and `name: <file stem>`"),
            );
            return;
        };
        if self.shape(root) != Shape::Mapping {
            let found = self.describe(root);
            self.out.push(
                Diagnostic::new(
                    DiagnosticKind::WrongType,
                    format!("the top level of a preset file must be a mapping, found {found}"),
                )
                .at(self.span(root))
                .help("a preset starts with `version: 1` and `name: <file stem>`"),
            );
            return;
        }
        let root = self.tree.deref(root);
        if let Some(unsupported) = self.unsupported_version(root) {
            // Another format version: its other keys may be right for it.
            self.out = vec![unsupported];
            return;
        }
        self.check(root, self.rules.root(), None);
    }

    /// `unsupported-version` if the file declares a version this build does not read.
    fn unsupported_version(&mut self, root: NodeId) -> Option<Diagnostic> {
        let entries = self.entries(root);
        let (_, value) = entries
            .iter()
            .find(|(k, _)| self.tree.key_text(*k) == Some("version"))?;
        let shown = match self.shape(*value) {
            Shape::List => "a list".to_owned(),
            Shape::Mapping => "a mapping".to_owned(),
            Shape::Null => "null".to_owned(),
            Shape::Scalar => {
                let s = self.scalar(*value)?;
                if let Some(n) = s.as_int() {
                    if n == i128::from(FORMAT_VERSION) {
                        return None;
                    }
                    n.to_string()
                } else if let Some(x) = s.as_float() {
                    format!("{x:?}")
                } else if let Some(b) = s.as_bool() {
                    b.to_string()
                } else if yaml_trim(s.text) == FORMAT_VERSION.to_string() {
                    // `"1"`: the right version written as text, a wrong type.
                    return None;
                } else {
                    format!("{:?}", s.text)
                }
            }
        };
        Some(
            Diagnostic::new(
                DiagnosticKind::UnsupportedVersion,
                format!(
                    "unsupported preset format version {shown}; this build reads version {FORMAT_VERSION}"
                ),
            )
            .at(self.span(*value))
            .help(format!(
                "write `version: {FORMAT_VERSION}` (a file written for a newer format needs a newer agent-presets)"
            )),
        )
    }

    /// Check the node at `at` (an alias is checked as its anchor's node, but a wrong type
    /// is reported where the alias is) against the rule `rule`. `key` is the mapping key
    /// the node is the value of, for messages.
    fn check(&mut self, at: NodeId, rule: RuleId, key: Option<&str>) {
        let rules = self.rules;
        let rule = &rules[rule];
        if let Some(allowed) = &rule.enumeration {
            self.check_enum(at, allowed, key);
            return;
        }
        if let Some(branches) = &rule.union {
            self.check_union(at, branches, &rule.union_types, key);
            return;
        }
        if !rule.types.is_empty() && !self.check_type(at, &rule.types, key) {
            return;
        }
        let tree = self.tree;
        let node = tree.deref(at);
        match &tree.nodes[node].kind {
            Kind::Map(_) => self.check_object(node, rule, key),
            Kind::Seq(items) => {
                if let Some(item) = rule.items {
                    for &i in items {
                        self.check(i, item, None);
                    }
                }
            }
            Kind::Scalar { .. } => self.check_scalar_value(at, rule, key),
            Kind::Alias(_) => {}
        }
    }

    /// `branch_types`: the types of all the branches, for a node that fits none.
    fn check_union(
        &mut self,
        at: NodeId,
        branches: &[RuleId],
        branch_types: &[Allowed],
        key: Option<&str>,
    ) {
        let rules = self.rules;
        let shape = self.shape(at);
        let fits = |b: &RuleId| {
            let types = &rules[*b].types;
            types.is_empty() || types.iter().any(|a| shape_fits(shape, a.ty))
        };
        let mut candidates = branches.iter().copied().filter(fits);
        let Some(first) = candidates.next() else {
            self.check_type(at, branch_types, key);
            return;
        };
        if candidates.next().is_none() {
            self.check(at, first, key);
            return;
        }
        for c in branches.iter().copied().filter(fits) {
            let mark = self.out.len();
            self.check(at, c, key);
            if self.out.len() == mark {
                return;
            }
            self.out.truncate(mark);
        }
        self.check(at, first, key);
    }

    fn check_enum(&mut self, at: NodeId, allowed: &[&str], key: Option<&str>) {
        let value = match self.shape(at) {
            Shape::Scalar => self.scalar(at).map(|s| s.text),
            _ => None,
        };
        let Some(value) = value else {
            self.check_type(at, &[Allowed::plain(Ty::String)], key);
            return;
        };
        if allowed.contains(&value) {
            return;
        }
        let help = help_did_you_mean(value, allowed.iter().copied())
            .unwrap_or_else(|| format!("expected one of {}", list_names(allowed.iter().copied())));
        let what = key.unwrap_or("value");
        self.out.push(
            Diagnostic::new(
                DiagnosticKind::InvalidValue,
                format!("unknown {what} `{value}`"),
            )
            .at(self.span(at))
            .help(help),
        );
    }

    /// Does the node have one of `types`? Reports `wrong-type` if not. `true`: go on and
    /// check the content; `false`: stop (reported, or an allowed null).
    fn check_type(&mut self, at: NodeId, types: &[Allowed], key: Option<&str>) -> bool {
        let has = |t: Ty| types.iter().any(|a| a.ty == t);
        let shape = self.shape(at);
        let fits = match shape {
            Shape::Null => return has(Ty::Null) || self.wrong_type(at, types, key),
            Shape::List => has(Ty::Array),
            Shape::Mapping => has(Ty::Object),
            Shape::Scalar => match self.scalar(at) {
                Some(s) => {
                    has(Ty::String)
                        || (has(Ty::Integer) && s.as_int().is_some())
                        || (has(Ty::Number) && s.as_float().is_some())
                        || (has(Ty::Boolean) && s.as_bool().is_some())
                }
                None => false,
            },
        };
        fits || self.wrong_type(at, types, key)
    }

    /// Report a `wrong-type`; always `false`.
    fn wrong_type(&mut self, at: NodeId, types: &[Allowed], key: Option<&str>) -> bool {
        let shape = self.shape(at);
        let mut expected: Vec<&str> = Vec::new();
        for allowed in types {
            let text = match allowed.ty {
                Ty::String if shape == Shape::Null => "text",
                Ty::String => "a single value",
                Ty::Integer if allowed.minimum.is_some_and(|m| m >= 0.0) => {
                    "a whole number (0 or more)"
                }
                Ty::Integer => "a whole number",
                Ty::Number => "a number",
                Ty::Boolean => "`true` or `false`",
                Ty::Array => "a list",
                Ty::Object => "a mapping (`key: value` entries)",
                Ty::Null | Ty::Other => continue,
            };
            if !expected.contains(&text) {
                expected.push(text);
            }
        }
        // "a single value" already covers numbers and booleans.
        if expected.contains(&"a single value") {
            expected.retain(|e| {
                !matches!(
                    *e,
                    "a whole number"
                        | "a whole number (0 or more)"
                        | "a number"
                        | "`true` or `false`"
                )
            });
        }
        let expected = if expected.is_empty() {
            "something else".to_owned()
        } else {
            expected.join(" or ")
        };
        let found = self.describe(at);
        if key == Some("extends") && shape == Shape::List {
            self.out.push(self.extends_list(at));
            return false;
        }
        let non_null: Vec<Ty> = types
            .iter()
            .map(|a| a.ty)
            .filter(|t| *t != Ty::Null)
            .collect();
        let help = match shape {
            Shape::Null if key.is_some() => {
                Some("write a value after the colon, or remove the key".to_owned())
            }
            Shape::Null => Some("write a value here, or remove this entry".to_owned()),
            _ if non_null.iter().all(|t| *t == Ty::Array) => {
                Some("write a list as `[a, b]` or as lines starting with `- `".to_owned())
            }
            Shape::Scalar => self.scalar(at).and_then(|s| {
                let fits_unquoted = |s: Scalar<'_>| {
                    let plain = Scalar {
                        style: Style::Plain,
                        tag: CoreTag::None,
                        ..s
                    };
                    (non_null.contains(&Ty::Integer) && plain.as_int().is_some())
                        || (non_null.contains(&Ty::Number) && plain.as_float().is_some())
                        || (non_null.contains(&Ty::Boolean) && plain.as_bool().is_some())
                };
                if s.is_text() && fits_unquoted(s) {
                    let value = yaml_trim(s.text);
                    Some(match key {
                        Some(k) => format!("write `{k}: {value}` without quotes"),
                        None => format!("write `{value}` without quotes"),
                    })
                } else if non_null.contains(&Ty::Boolean) && is_yaml11_bool(s.text) {
                    Some(
                        "YAML 1.1 spellings such as `yes`, `no`, `on` and `off` are not booleans here"
                            .to_owned(),
                    )
                } else {
                    None
                }
            }),
            _ => None,
        };
        self.out.push(
            Diagnostic::new(
                DiagnosticKind::WrongType,
                format!("expected {expected}, found {found}"),
            )
            .at(self.span(at))
            .maybe_help(help),
        );
        false
    }

    /// `extends: [standard]`: a preset builds on exactly one other.
    fn extends_list(&self, at: NodeId) -> Diagnostic {
        let names: Vec<&str> = match &self.tree.nodes[self.tree.deref(at)].kind {
            Kind::Seq(items) => items
                .iter()
                .filter_map(|&i| self.scalar(i))
                .map(|s| s.text)
                .collect(),
            _ => Vec::new(),
        };
        let help = match names.as_slice() {
            [] => "write the one preset this one builds on, e.g. `extends: standard`".to_owned(),
            [one] => format!("write `extends: {one}`, without brackets"),
            [first, ..] => format!(
                "a preset extends one other: write `extends: {first}`, and to combine several, \
                 let each extend the next (a chain)"
            ),
        };
        // A flow list on one line is underlined whole.
        let mut span = self.span(at);
        if let Some(line) = self.source.line(span.line) {
            let rest: String = line
                .chars()
                .skip(usize::try_from(span.column.saturating_sub(1)).unwrap_or(usize::MAX))
                .collect();
            if rest.starts_with('[')
                && let Some(end) = rest.find(']')
            {
                span = span.with_len(to_u32(rest[..=end].chars().count()));
            }
        }
        Diagnostic::new(
            DiagnosticKind::WrongType,
            "`extends` names one preset, not a list",
        )
        .at(span)
        .help(help)
    }

    /// `const`, `minimum` and integer formats of a scalar whose type is right.
    fn check_scalar_value(&mut self, at: NodeId, rule: &'static rules::Rule, key: Option<&str>) {
        let Some(s) = self.scalar(at) else {
            return;
        };
        let types = &rule.types;
        let is_integer = types.iter().any(|a| a.ty == Ty::Integer);
        if is_integer && !types.iter().any(|a| a.ty == Ty::String) {
            let Some(n) = s.as_int() else {
                return;
            };
            let min = rule.minimum;
            let unsigned = min.is_some_and(|m| m >= 0.0) || rule.unsigned_format;
            if unsigned && yaml_trim(s.text).starts_with('-') {
                self.wrong_type(at, types, key);
                return;
            }
            if let Some(m) = min
                && (n as f64) < m
            {
                let what = key.map_or("the value".to_owned(), |k| format!("`{k}`"));
                self.out.push(
                    Diagnostic::new(
                        DiagnosticKind::InvalidValue,
                        format!("{what} must be at least {m}"),
                    )
                    .at(self.span(at)),
                );
                return;
            }
            if let Some(max) = rule.format_max
                && n > max
            {
                let what = key.map_or("the value".to_owned(), |k| format!("`{k}`"));
                self.out.push(
                    Diagnostic::new(
                        DiagnosticKind::InvalidValue,
                        format!("{what} is too large: at most {max}"),
                    )
                    .at(self.span(at)),
                );
                return;
            }
        }
        if let Some((constant, expected)) = &rule.constant {
            let matches = match constant {
                Const::Int(n) => s.as_int() == Some(i128::from(*n)),
                Const::OtherNumber => false,
                Const::Str(t) => s.text == *t,
                Const::Bool(b) => s.as_bool() == Some(*b),
            };
            if !matches {
                self.out.push(
                    Diagnostic::new(
                        DiagnosticKind::InvalidValue,
                        format!("expected `{expected}`, found {}", self.describe(at)),
                    )
                    .at(self.span(at)),
                );
            }
        }
    }

    /// The entries of a mapping with merge keys (`<<`) applied: the mapping's own keys,
    /// then merged keys it does not set itself (an earlier merge wins over a later one).
    /// Repeated keys are left out (they are reported already).
    fn entries(&mut self, map: NodeId) -> Vec<(NodeId, NodeId)> {
        let tree = self.tree;
        let Kind::Map(entries) = &tree.nodes[tree.deref(map)].kind else {
            return Vec::new();
        };
        if !entries
            .iter()
            .any(|e| !e.duplicate && tree.is_merge_key(e.key))
        {
            // No merge: the keys that are not repeats are all different already.
            return entries
                .iter()
                .filter(|e| !e.duplicate)
                .map(|e| (e.key, e.value))
                .collect();
        }
        let mut out = Vec::new();
        let mut names: HashSet<&'a str> = HashSet::new();
        self.collect_entries(map, &mut out, &mut names, 0);
        out
    }

    fn collect_entries(
        &mut self,
        map: NodeId,
        out: &mut Vec<(NodeId, NodeId)>,
        names: &mut HashSet<&'a str>,
        depth: usize,
    ) {
        let tree = self.tree;
        let Kind::Map(entries) = &tree.nodes[tree.deref(map)].kind else {
            return;
        };
        let mut merges = Vec::new();
        for e in entries {
            if e.duplicate {
                continue;
            }
            if tree.is_merge_key(e.key) {
                merges.push(e.value);
                continue;
            }
            match tree.key_text(e.key) {
                Some(name) => {
                    if names.insert(name) {
                        out.push((e.key, e.value));
                    }
                }
                None => out.push((e.key, e.value)),
            }
        }
        if depth > MAX_YAML_DEPTH {
            return;
        }
        for value in merges {
            let items: Vec<NodeId> = match &tree.nodes[tree.deref(value)].kind {
                Kind::Map(_) => vec![value],
                Kind::Seq(items) => items.clone(),
                _ => {
                    self.bad_merge(value);
                    continue;
                }
            };
            for item in items {
                if matches!(tree.nodes[tree.deref(item)].kind, Kind::Map(_)) {
                    self.collect_entries(item, out, names, depth + 1);
                } else {
                    self.bad_merge(item);
                }
            }
        }
    }

    fn bad_merge(&mut self, at: NodeId) {
        let found = self.describe(at);
        self.out.push(
            Diagnostic::new(
                DiagnosticKind::WrongType,
                format!("a merge (`<<`) takes a mapping or a list of mappings, found {found}"),
            )
            .at(self.span(at)),
        );
    }

    /// `key`: the mapping key the object is the value of (a variable's name, for one
    /// under `variables`).
    fn check_object(&mut self, map: NodeId, rule: &'static rules::Rule, key: Option<&str>) {
        let tree = self.tree;
        let entries = self.entries(map);
        // Keys set right (by index into the rule's properties), worked out at the first
        // unknown key: an unknown key is not suggested to be one of them.
        let mut known: Option<Vec<bool>> = None;
        // Keys an unknown key is probably a misspelling of: not reported missing as well.
        let mut suggested: Vec<&'static str> = Vec::new();
        for &(key, value) in &entries {
            let Some(name) = tree.key_text(key) else {
                let found = self.describe(key);
                self.out.push(
                    Diagnostic::new(
                        DiagnosticKind::WrongType,
                        format!("a key must be a name, found {found}"),
                    )
                    .at(self.span(key)),
                );
                continue;
            };
            if let Some((_, property)) = rule.property(name) {
                self.check(value, property, Some(name));
                continue;
            }
            match rule.additional {
                Additional::Refused => {
                    let Some(words) = &rule.unknown else {
                        continue;
                    };
                    let known = known.get_or_insert_with(|| self.known_keys(rule, &entries));
                    if let Some(meant) = self.unknown_key(key, name, words, known)
                        && !suggested.contains(&meant)
                    {
                        suggested.push(meant);
                    }
                }
                Additional::Rule(extra) => self.check(value, extra, Some(name)),
                Additional::Any => {}
            }
        }
        let mut text_present = false;
        match rule.special {
            Special::Variable => self.check_variable_values(&entries),
            Special::Text(owner) => {
                // A misspelt `text` is reported as that, not as missing too.
                if !suggested.contains(&"text") && !suggested.contains(&"textFile") {
                    self.check_text_or_file(map, &entries, owner);
                }
                text_present = true;
            }
            Special::None => {}
        }
        for &field in &rule.required {
            let present = (text_present && field == "text")
                || entries
                    .iter()
                    .any(|(k, _)| tree.key_text(*k) == Some(field));
            if present || suggested.contains(&field) {
                continue;
            }
            let variable = key.filter(|_| matches!(rule.special, Special::Variable));
            let stem = (field == "name" && key.is_none())
                .then(|| self.file_stem())
                .flatten();
            let example = match (field, &stem) {
                ("version", _) => format!("{field}: {FORMAT_VERSION}"),
                ("name", Some(stem)) => format!("{field}: {stem}"),
                _ => format!("{field}: ..."),
            };
            let (message, help) = match (variable, &stem) {
                (Some(variable), _) => (
                    format!("missing required key `{field}` in variable `{variable}`"),
                    format!("add `{example}` under `{variable}:` (say what the variable holds)"),
                ),
                (None, Some(_)) => (
                    format!("missing required key `{field}`"),
                    format!("add `{example}` to this mapping (a preset's name is its file stem)"),
                ),
                (None, None) => (
                    format!("missing required key `{field}`"),
                    format!("add `{example}` to this mapping"),
                ),
            };
            self.out.push(
                Diagnostic::new(DiagnosticKind::MissingField, message)
                    .at(self.mapping_start(map))
                    .help(help),
            );
        }
    }

    /// Which of `rule`'s properties the mapping sets.
    fn known_keys(&self, rule: &rules::Rule, entries: &[(NodeId, NodeId)]) -> Vec<bool> {
        let mut known = vec![false; rule.properties.as_ref().map_or(0, Vec::len)];
        for (key, _) in entries {
            if let Some((index, _)) = self.tree.key_text(*key).and_then(|n| rule.property(n)) {
                known[index] = true;
            }
        }
        known
    }

    /// A section or context gives its text exactly once: `text`, or `textFile`.
    fn check_text_or_file(&mut self, map: NodeId, entries: &[(NodeId, NodeId)], owner: &str) {
        let tree = self.tree;
        let key = |name: &str| tree.entry(entries, name).map(|(k, _)| k);
        match (key("text"), key("textFile")) {
            (None, None) => self.out.push(
                Diagnostic::new(DiagnosticKind::MissingField, "missing required key `text`")
                    .at(self.mapping_start(map))
                    .help(format!(
                        "add `text: ...` to {owner}, or `textFile: <path>` to take its text from a file"
                    )),
            ),
            (Some(_), Some(file)) => self.out.push(
                Diagnostic::new(
                    DiagnosticKind::InvalidValue,
                    format!("{owner} takes `text` or `textFile`, not both"),
                )
                .at(self.span(file))
                .help("keep one of them"),
            ),
            _ => {}
        }
    }

    /// A variable declared with `type: integer|number|boolean`: its `default` and every
    /// `enum` value must be written as a value of that type (`default: 8080`, not
    /// `default: "8080"`). The schema cannot say this (the type is a sibling key).
    fn check_variable_values(&mut self, entries: &[(NodeId, NodeId)]) {
        let tree = self.tree;
        let find = |key: &str| tree.entry(entries, key).map(|(_, v)| v);
        let Some(value_type) = find("type")
            .and_then(|t| self.scalar(t))
            .filter(|s| !s.is_null())
            .and_then(|s| VariableType::ALL.iter().find(|t| t.as_str() == s.text))
            .copied()
        else {
            return;
        };
        if value_type == VariableType::String {
            return;
        }
        if let Some(default) = find("default")
            && self.shape(default) == Shape::Scalar
        {
            self.check_typed_scalar(default, value_type, Some("default"));
        }
        if let Some(choices) = find("enum")
            && let Kind::Seq(items) = &self.tree.nodes[self.tree.deref(choices)].kind
        {
            for &item in items {
                if self.shape(item) == Shape::Scalar {
                    self.check_typed_scalar(item, value_type, None);
                }
            }
        }
    }

    /// Report a scalar that is not a value of `value_type` (its YAML type, so a quoted
    /// `"8080"` is text, not an integer).
    fn check_typed_scalar(&mut self, at: NodeId, value_type: VariableType, key: Option<&str>) {
        let Some(s) = self.scalar(at) else {
            return;
        };
        let fits = match value_type {
            VariableType::String => true,
            VariableType::Integer => s.as_int().is_some_and(|n| i64::try_from(n).is_ok()),
            VariableType::Number => s.as_int().map_or_else(
                || s.as_float().is_some_and(f64::is_finite),
                |n| i64::try_from(n).is_ok(),
            ),
            VariableType::Boolean => s.as_bool().is_some(),
        };
        if fits {
            return;
        }
        let json_type = value_type.as_str();
        let mark = self.out.len();
        self.wrong_type(at, &[Allowed::plain(Ty::of(json_type))], key);
        if let Some(d) = self.out.get_mut(mark)
            && d.help.is_none()
            && !s.is_text()
        {
            d.help = value_type.hint(s.text);
        }
    }

    /// The stem of the file's name, when it is a name a preset can have
    /// (`reviewer` for `.agent-presets/reviewer.yaml`).
    fn file_stem(&self) -> Option<String> {
        let stem = std::path::Path::new(&*self.source.display).file_stem()?;
        let stem = stem.to_str()?;
        super::spec::is_valid_preset_name(stem).then(|| stem.to_owned())
    }

    /// Where a mapping starts: its first key (or its `{`).
    fn mapping_start(&self, map: NodeId) -> Span {
        let map = self.tree.deref(map);
        match &self.tree.nodes[map].kind {
            Kind::Map(entries) if !entries.is_empty() => self.span(entries[0].key),
            _ => self.span(map),
        }
    }

    /// Report an unknown key; returns the key it probably misspells, if any.
    fn unknown_key(
        &mut self,
        key: NodeId,
        name: &str,
        words: &'static UnknownKeyWords,
        known: &[bool],
    ) -> Option<&'static str> {
        let message = match words.owner {
            Some(owner) => format!("unknown key `{name}` in {owner}"),
            None => format!("unknown key `{name}`"),
        };
        let unset = words
            .expected
            .iter()
            .zip(known.iter().chain(std::iter::repeat(&false)))
            .filter(|(_, known)| !**known)
            .map(|(k, _)| *k);
        let meant = did_you_mean(name, unset);
        let home = belongs_under(name, words.owner);
        let help = match (meant, home) {
            (_, Some(home)) => home,
            (Some(m), None) => format!("did you mean `{m}`?"),
            (None, None) => words.allowed.clone(),
        };
        let meant = if belongs_under(name, words.owner).is_some() {
            None
        } else {
            meant
        };
        self.out.push(
            Diagnostic::new(DiagnosticKind::UnknownKey, message)
                .at(self.span(key))
                .help(help),
        );
        meant
    }
}

/// Keys written at the top level of a preset that belong inside one of its mappings
/// (`sections:` is a `persona` key): where they go, as help. `None` for keys that are
/// nobody's, and for keys in other mappings.
fn belongs_under(key: &str, owner: Option<&str>) -> Option<String> {
    if owner != Some("the preset file") {
        return None;
    }
    let home = match key {
        "sections" | "includeRuntimeContext" | "remove" => "persona",
        "allow" | "deny" | "order" => "tools",
        "provider" | "baseUrl" | "apiKeyEnv" | "maxTokens" => "model",
        _ => return None,
    };
    Some(format!(
        "`{key}` belongs under `{home}`: write `{home}:` on a line of its own and indent \
         `{key}:` below it"
    ))
}

/// Can a node of this shape be of JSON Schema type `t`?
fn shape_fits(shape: Shape, t: Ty) -> bool {
    match shape {
        Shape::Null => t == Ty::Null,
        Shape::List => t == Ty::Array,
        Shape::Mapping => t == Ty::Object,
        Shape::Scalar => matches!(t, Ty::String | Ty::Integer | Ty::Number | Ty::Boolean),
    }
}

fn shorten(text: &str) -> String {
    const MAX: usize = 40;
    let first_line = text.lines().next().unwrap_or("");
    if first_line.chars().count() <= MAX && first_line.len() == text.len() {
        text.to_owned()
    } else {
        let cut: String = first_line.chars().take(MAX).collect();
        format!("{cut}…")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_scalars_are_text() {
        let quoted = Scalar {
            text: "5",
            style: Style::Quoted('"'),
            tag: CoreTag::None,
        };
        assert!(quoted.is_text());
        assert_eq!(quoted.as_int(), None);
        let plain = Scalar {
            style: Style::Plain,
            ..quoted
        };
        assert_eq!(plain.as_int(), Some(5));
        let tagged = Scalar {
            tag: CoreTag::Int,
            ..quoted
        };
        assert_eq!(tagged.as_int(), Some(5));
        let as_str = Scalar {
            tag: CoreTag::Str,
            ..plain
        };
        assert!(as_str.is_text() && !as_str.is_null());
        let null = Scalar { text: "~", ..plain };
        assert!(null.is_null());
    }
}
