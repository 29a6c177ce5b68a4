//! The positioned YAML tree of a preset file: its events (serde-saphyr's
//! `granit_parser`) read once into nodes with positions — mappings with their keys,
//! sequences, scalars with their style — under the same budgets as the rest of parsing:
//! nesting depth, node count, alias uses and what aliases expand to ([`MAX_YAML_DEPTH`],
//! [`MAX_YAML_NODES`], [`MAX_YAML_ALIASES`], [`MAX_ALIAS_REPLAYED_EVENTS`],
//! [`MAX_ALIAS_REPLAYED_BYTES`]). An alias is kept as a reference to its anchor's node and
//! never copied, so an alias bomb costs what its text costs; the expansion it *would*
//! cost is added up as the aliases are read, and the alias that crosses a limit is the one
//! reported. YAML syntax errors are explained here too (`yaml_traps`).
//!
//! The shape check (`super::shape`) walks this tree against the schema, and the typed
//! pass (`super::tree_de`) deserializes from it; the tree knows neither.

use std::collections::HashMap;

use serde_saphyr::granit_parser::{ErrorKind, Event, Parser, ScalarStyle, ScanError, Span as At};

use super::source_file::{
    MAX_ALIAS_REPLAYED_BYTES, MAX_ALIAS_REPLAYED_EVENTS, MAX_YAML_ALIASES, MAX_YAML_DEPTH,
    MAX_YAML_NODES, SourceFile,
};
use crate::diagnostic::{Diagnostic, DiagnosticKind, Span};

mod yaml_traps;

pub(super) type NodeId = usize;

/// Where a node is: 1-based lines, 1-based columns in characters, end exclusive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Pos {
    pub(super) line: u32,
    pub(super) column: u32,
    pub(super) end_line: u32,
    pub(super) end_column: u32,
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
    pub(super) duplicate: bool,
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
    pub(super) pos: Pos,
    /// The same start as serde-saphyr's `Location` of the node.
    pub(super) loc: Loc,
    pub(super) cost: Cost,
    /// The node's end has been read (an alias to an unfinished node is recursive).
    pub(super) done: bool,
}

/// A preset file as a tree of nodes, with the duplicate keys found while reading it.
#[derive(Debug)]
pub(crate) struct Tree {
    pub(super) nodes: Vec<Node>,
    pub(super) root: Option<NodeId>,
    pub(super) duplicates: Vec<Diagnostic>,
    /// A collection has a tag, or a scalar has a tag other than `!!str` / `!`: the typed
    /// pass leaves such a file to serde-saphyr, which has rules of its own for tags.
    pub(super) unusual_tags: bool,
    /// What serde-saphyr copies to keep anchored nodes for replay: the anchored nodes'
    /// costs added up (it has a budget for that; the shape check does not).
    pub(super) anchored: Cost,
}

/// Why reading stopped: a syntax error or an exceeded limit.
pub(super) struct Stop {
    pub(super) problem: Diagnostic,
    pub(super) duplicates: Vec<Diagnostic>,
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
    pub(super) fn read(source: &SourceFile) -> Result<Tree, Stop> {
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
    pub(super) fn key_text(&self, id: NodeId) -> Option<&str> {
        match &self.nodes[self.deref(id)].kind {
            Kind::Scalar { text, .. } => Some(text),
            _ => None,
        }
    }

    /// The `(key, value)` of `entries` whose key is `name`.
    pub(super) fn entry(
        &self,
        entries: &[(NodeId, NodeId)],
        name: &str,
    ) -> Option<(NodeId, NodeId)> {
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
    let rewritten = match yaml_traps::intended_indent(source, line) {
        Some(spaces) if !content.is_empty() => Some(format!("{}{content}", " ".repeat(spaces))),
        _ => None,
    };
    let written = rewritten
        .as_ref()
        .map_or_else(String::new, |r| format!(": write it as `{r}`"));
    let d = Diagnostic::new(
        DiagnosticKind::YamlSyntax,
        "this line is indented with a tab; YAML indents with spaces only",
    )
    .at(Span::new(source.display.clone(), line, to_u32(column) + 1).with_len(1))
    .help(format!("replace the tab with spaces{written} (2 spaces per level is usual; many editors can convert tabs to spaces)"));
    Some(match rewritten {
        Some(r) => d.fix_at(Span::new(source.display.clone(), line, 1), text, &r),
        None => d,
    })
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
pub(super) fn node_span(source: &SourceFile, pos: Pos) -> Span {
    let len = if pos.end_line == pos.line && pos.end_column > pos.column {
        pos.end_column - pos.column
    } else {
        source.token_len(pos.line, pos.column)
    };
    Span::new(source.display.clone(), pos.line, pos.column).with_len(len)
}

pub(super) fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}
