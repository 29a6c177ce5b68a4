//! The typed pass of a preset file: [`PresetFile`] read from the tree the shape check built
//! (`super::shape`), so the file's YAML is parsed once, not twice.
//!
//! The result is the one serde-saphyr gives for the same text with the options of
//! `super::source`, every [`Spanned`](serde_saphyr::Spanned) location included:
//!
//! - a node's location is its first event's (a scalar, or the start of a list or mapping),
//!   built from the parser's span as serde-saphyr builds it (`Loc`);
//! - `defined` is the node's own location (for an alias: the anchored node's);
//! - `referenced` is where the value is used: inside an alias (at any depth) the `*name`
//!   token of the outermost alias; inside a merged mapping (`<<`) that no alias led to,
//!   the start of the mapping that was merged (for `<<: [a, b]`, of that list entry);
//!   otherwise the node's own location;
//! - a mapping yields its own keys first, then the keys of each merge in order, a merged
//!   key only when no earlier key has it (merges nest the same way);
//! - `Spanned` is read through serde-saphyr's protocol for it: the newtype
//!   `__yaml_spanned`, a map of `__serde_saphyr_private_spanned`, `value`, `referenced`
//!   and `defined`; a `Location` is a map of `line`, `column`, `span` and `source_id`, a
//!   `Span` one of `offset`, `len` and `byte_info`;
//! - scalars are read as serde-saphyr reads them: a plain `~`, `null`, `Null`, `NULL` or
//!   nothing is null (`None`, and no text); any other scalar is text as written (`400`,
//!   `true`); `!!str` and `!` keep a scalar text; booleans are YAML 1.2's; whole numbers
//!   are decimal.
//!
//! Whatever this reader does not reproduce exactly — other tags, integers spelt otherwise,
//! integer-like keys (serde-saphyr compares those by value), an alias used as a merge key,
//! anchors beyond serde-saphyr's copy budget — is an error here, and the caller then runs
//! serde-saphyr itself, whose result (or error) stands. So a difference can cost time,
//! never a different result. A differential test holds the two readers to the same
//! output.

use std::collections::HashSet;
use std::fmt;

use serde::de::value::StrDeserializer;
use serde::de::{self, DeserializeSeed, IntoDeserializer, MapAccess, SeqAccess, Visitor};

use super::source_file::{MAX_RECORDED_ANCHOR_BYTES, MAX_RECORDED_ANCHOR_EVENTS};
use super::spec::PresetFile;
use super::tree::{CoreTag, Entry, Kind, Loc, NodeId, Style, Tree};
use crate::yaml_scalar::{parse_float, parse_int, yaml_trim, yaml12_bool};

/// The key serde-saphyr's `Spanned` looks for first, to know its own representation.
const SPANNED_MARKER: &str = "__serde_saphyr_private_spanned";

/// The newtype name through which `Spanned` asks for its locations.
const SPANNED_NEWTYPE: &str = "__yaml_spanned";

/// Deepest merge nesting followed (a `<<` inside a merged mapping, ...); the tree's own
/// depth limit keeps real files far below it.
const MAX_MERGE_DEPTH: usize = 64;

/// Read the preset file from the shape check's tree. An error means "not handled here":
/// the caller falls back to serde-saphyr.
pub(super) fn preset_file(tree: &Tree) -> Result<PresetFile, Unhandled> {
    document(tree)
}

/// Read any document type from the shape check's tree (a test case file), as
/// [`preset_file`] reads a preset: an error means "not handled here".
pub(crate) fn document<T: de::DeserializeOwned>(tree: &Tree) -> Result<T, Unhandled> {
    if tree.unusual_tags {
        return Err(Unhandled::new("a tag other than `!!str`"));
    }
    // serde-saphyr copies the events of anchored nodes (with what their aliases expand to)
    // under a budget of its own; leave files near it to serde-saphyr, to fail as it fails.
    // Tag spellings are copied too: 64 bytes an event bounds them.
    let events = tree.anchored.events;
    let bytes = tree
        .anchored
        .bytes
        .saturating_add(events.saturating_mul(64));
    if events > (MAX_RECORDED_ANCHOR_EVENTS / 2) as u64
        || bytes > (MAX_RECORDED_ANCHOR_BYTES / 2) as u64
    {
        return Err(Unhandled::new("anchors near serde-saphyr's copy budget"));
    }
    let root = tree.root.ok_or_else(|| Unhandled::new("no document"))?;
    T::deserialize(NodeDe::new(tree, root, Origin::Direct))
}

/// Why the tree reader gave up (for tests; the caller only falls back).
#[derive(Debug)]
pub(crate) struct Unhandled(String);

impl Unhandled {
    fn new(why: &str) -> Self {
        Unhandled(why.to_owned())
    }
}

impl fmt::Display for Unhandled {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Unhandled {}

impl de::Error for Unhandled {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Unhandled(msg.to_string())
    }
}

/// How the node being read was reached, for its `referenced` location.
#[derive(Clone, Copy, Debug)]
enum Origin {
    /// Directly: `referenced` is the node's own location.
    Direct,
    /// Through this alias node (the outermost one).
    Alias(NodeId),
    /// Through a merge (`<<`) of this mapping node, no alias on the way.
    Merge(NodeId),
}

/// One node of the tree as a serde `Deserializer` (an alias already followed).
#[derive(Clone, Copy)]
struct NodeDe<'de> {
    tree: &'de Tree,
    id: NodeId,
    origin: Origin,
}

/// A scalar node's parts.
struct ScalarRef<'de> {
    text: &'de str,
    style: Style,
    tag: CoreTag,
}

impl ScalarRef<'_> {
    /// Null as serde-saphyr resolves it: plain, untagged, and `~`, `null`, `Null`, `NULL`
    /// or nothing (`!!str` keeps the text).
    fn is_null(&self) -> bool {
        self.tag == CoreTag::None
            && self.style == Style::Plain
            && matches!(self.text, "" | "~" | "null" | "Null" | "NULL")
    }
}

impl<'de> NodeDe<'de> {
    /// The node `id` reached with `origin`; an alias stands for its anchored node, and
    /// becomes the origin unless an alias already is.
    fn new(tree: &'de Tree, id: NodeId, origin: Origin) -> Self {
        match tree.nodes[id].kind {
            Kind::Alias(target) => NodeDe {
                tree,
                id: target,
                origin: match origin {
                    Origin::Alias(_) => origin,
                    Origin::Direct | Origin::Merge(_) => Origin::Alias(id),
                },
            },
            _ => NodeDe { tree, id, origin },
        }
    }

    fn loc(&self, id: NodeId) -> Loc {
        self.tree.nodes[id].loc
    }

    /// Where the value is used.
    fn referenced(&self) -> Loc {
        match self.origin {
            Origin::Direct => self.loc(self.id),
            Origin::Alias(at) | Origin::Merge(at) => self.loc(at),
        }
    }

    fn scalar(&self) -> Result<ScalarRef<'de>, Unhandled> {
        match &self.tree.nodes[self.id].kind {
            Kind::Scalar { text, style, tag } if matches!(tag, CoreTag::None | CoreTag::Str) => {
                Ok(ScalarRef {
                    text,
                    style: *style,
                    tag: *tag,
                })
            }
            Kind::Scalar { .. } => Err(Unhandled::new("a tagged scalar")),
            _ => Err(Unhandled::new("expected a scalar")),
        }
    }

    /// An untagged scalar: what numbers, booleans and enum values are read from.
    fn untagged_text(&self) -> Result<&'de str, Unhandled> {
        let s = self.scalar()?;
        if s.tag != CoreTag::None {
            return Err(Unhandled::new("a tagged number, boolean or name"));
        }
        Ok(s.text)
    }

    /// The scalar as text; null is no text.
    fn text(&self) -> Result<&'de str, Unhandled> {
        let s = self.scalar()?;
        if s.is_null() {
            return Err(Unhandled::new("null where text is expected"));
        }
        Ok(s.text)
    }

    fn unsigned(&self) -> Result<u64, Unhandled> {
        parse_decimal(self.untagged_text()?).ok_or_else(|| Unhandled::new("not a decimal number"))
    }

    /// The entries of this mapping as serde-saphyr yields them: its own keys, then the
    /// keys merged in that no earlier key has.
    fn entries(&self) -> Result<Entries<'de>, Unhandled> {
        let Kind::Map(entries) = &self.tree.nodes[self.id].kind else {
            return Err(Unhandled::new("expected a mapping"));
        };
        let tree = self.tree;
        if !entries.iter().any(|e| tree.is_merge_key(e.key)) {
            for e in entries {
                key_identity(tree, e.key)?;
            }
            return Ok(Entries::Own(entries.iter(), self.origin));
        }
        let mut all = Vec::with_capacity(entries.len());
        collect_entries(tree, self.id, self.origin, &mut all, 0)?;
        let mut seen: HashSet<(bool, &str)> = HashSet::with_capacity(all.len());
        let mut kept = Vec::with_capacity(all.len());
        for pending in all {
            if seen.insert(key_identity(tree, pending.key)?) {
                kept.push(pending);
            }
        }
        Ok(Entries::Merged(kept.into_iter()))
    }
}

/// A mapping key's identity for duplicates, as serde-saphyr compares keys: null or text,
/// and the text. Keys it compares otherwise are not handled here: collections (not names),
/// integer-like plain keys (`1` and `01` are one key to it) and an alias of `<<` (a merge
/// to it).
fn key_identity(tree: &Tree, key: NodeId) -> Result<(bool, &str), Unhandled> {
    let target = tree.deref(key);
    let Kind::Scalar { text, style, tag } = &tree.nodes[target].kind else {
        return Err(Unhandled::new("a key that is not a scalar"));
    };
    let s = ScalarRef {
        text,
        style: *style,
        tag: *tag,
    };
    if s.tag == CoreTag::None && s.style == Style::Plain {
        let trimmed = yaml_trim(s.text);
        if trimmed.starts_with(|c: char| c.is_ascii_digit() || c == '+' || c == '-') {
            return Err(Unhandled::new("an integer-like key"));
        }
        if s.text == "<<" && target != key {
            return Err(Unhandled::new("an alias of `<<` as a key"));
        }
    }
    Ok((s.is_null(), s.text))
}

/// A key and value of a mapping, with how they were reached.
struct Pending {
    key: NodeId,
    value: NodeId,
    origin: Origin,
}

/// The entries of `map` (reached with `origin`), merges expanded, in serde-saphyr's order.
fn collect_entries(
    tree: &Tree,
    map: NodeId,
    origin: Origin,
    out: &mut Vec<Pending>,
    depth: usize,
) -> Result<(), Unhandled> {
    if depth > MAX_MERGE_DEPTH {
        return Err(Unhandled::new("merges nest too deep"));
    }
    let Kind::Map(entries) = &tree.nodes[map].kind else {
        return Err(Unhandled::new("a merge of something else than a mapping"));
    };
    let mut merges = Vec::new();
    for e in entries {
        if tree.is_merge_key(e.key) {
            merges.push(e.value);
        } else {
            out.push(Pending {
                key: e.key,
                value: e.value,
                origin,
            });
        }
    }
    for value in merges {
        let merged = NodeDe::new(tree, value, origin);
        match &tree.nodes[merged.id].kind {
            Kind::Map(_) => {
                collect_entries(tree, merged.id, merge_origin(merged), out, depth + 1)?;
            }
            Kind::Seq(items) => {
                for &item in items {
                    let item = NodeDe::new(tree, item, merged.origin);
                    collect_entries(tree, item.id, merge_origin(item), out, depth + 1)?;
                }
            }
            _ => return Err(Unhandled::new("a merge of something else than a mapping")),
        }
    }
    Ok(())
}

/// The origin of the entries of a merged mapping: the alias that led to it, else the
/// merge that led to it first, else the mapping itself.
fn merge_origin(mapping: NodeDe<'_>) -> Origin {
    match mapping.origin {
        Origin::Direct => Origin::Merge(mapping.id),
        other => other,
    }
}

/// The entries a mapping yields.
enum Entries<'de> {
    /// No merge: the mapping's own entries (the shape check refused duplicates).
    Own(std::slice::Iter<'de, Entry>, Origin),
    /// With merges expanded.
    Merged(std::vec::IntoIter<Pending>),
}

impl Iterator for Entries<'_> {
    type Item = (NodeId, NodeId, Origin);

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            Entries::Own(iter, origin) => iter.next().map(|e| (e.key, e.value, *origin)),
            Entries::Merged(iter) => iter.next().map(|p| (p.key, p.value, p.origin)),
        }
    }
}

/// A whole number as serde-saphyr reads an unsigned one, where it is spelt in decimal
/// (surrounding blanks and a `+` allowed, no leading zero); other spellings are left to
/// serde-saphyr.
fn parse_decimal(text: &str) -> Option<u64> {
    let t = yaml_trim(text);
    let t = t.strip_prefix('+').unwrap_or(t);
    if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) || (t.len() > 1 && t.starts_with('0'))
    {
        return None;
    }
    t.parse().ok()
}

impl<'de> de::Deserializer<'de> for NodeDe<'de> {
    type Error = Unhandled;

    /// A value of no particular type (a command tool's `parameters`, read as JSON): a
    /// list, a mapping, or a scalar typed as YAML 1.2's core schema types it — text when
    /// quoted or `!!str`, null, a boolean, a decimal whole number, else text. Other
    /// numbers (negative, fractions, `.inf`, other spellings) are left to serde-saphyr.
    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Unhandled> {
        match &self.tree.nodes[self.id].kind {
            Kind::Seq(_) => self.deserialize_seq(visitor),
            Kind::Map(_) => self.deserialize_map(visitor),
            _ => {
                let s = self.scalar()?;
                if s.tag == CoreTag::Str || s.style != Style::Plain {
                    return visitor.visit_borrowed_str(s.text);
                }
                if s.is_null() {
                    return visitor.visit_unit();
                }
                if let Some(b) = yaml12_bool(s.text) {
                    return visitor.visit_bool(b);
                }
                if let Some(n) = parse_decimal(s.text) {
                    return visitor.visit_u64(n);
                }
                let t = yaml_trim(s.text).as_bytes();
                let numberish = match t {
                    [first, ..] => first.is_ascii_digit() || matches!(first, b'+' | b'-' | b'.'),
                    [] => false,
                };
                if numberish || t.len() != s.text.len() {
                    return Err(Unhandled::new(
                        "a number (or blanks) in a value of no particular type",
                    ));
                }
                visitor.visit_borrowed_str(s.text)
            }
        }
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Unhandled> {
        let b =
            yaml12_bool(self.untagged_text()?).ok_or_else(|| Unhandled::new("not a boolean"))?;
        visitor.visit_bool(b)
    }

    fn deserialize_u32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Unhandled> {
        let n = u32::try_from(self.unsigned()?).map_err(|_| Unhandled::new("too large"))?;
        visitor.visit_u32(n)
    }

    fn deserialize_u64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Unhandled> {
        visitor.visit_u64(self.unsigned()?)
    }

    fn deserialize_i64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Unhandled> {
        let t = self.untagged_text()?;
        let n = parse_int(t)
            .and_then(|n| i64::try_from(n).ok())
            .ok_or_else(|| Unhandled::new("not a whole number"))?;
        visitor.visit_i64(n)
    }

    fn deserialize_f64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Unhandled> {
        let t = self.untagged_text()?;
        let n = parse_float(t).ok_or_else(|| Unhandled::new("not a number"))?;
        visitor.visit_f64(n)
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Unhandled> {
        visitor.visit_borrowed_str(self.text()?)
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Unhandled> {
        self.deserialize_str(visitor)
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Unhandled> {
        self.deserialize_str(visitor)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Unhandled> {
        if matches!(self.tree.nodes[self.id].kind, Kind::Scalar { .. }) && self.scalar()?.is_null()
        {
            visitor.visit_none()
        } else {
            visitor.visit_some(self)
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Unhandled> {
        if name == SPANNED_NEWTYPE {
            visitor.visit_newtype_struct(FixedMap::new(SpannedFields(self)))
        } else {
            visitor.visit_newtype_struct(self)
        }
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Unhandled> {
        let Kind::Seq(items) = &self.tree.nodes[self.id].kind else {
            return Err(Unhandled::new("expected a list"));
        };
        visitor.visit_seq(Items {
            tree: self.tree,
            items: items.iter(),
            origin: self.origin,
        })
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Unhandled> {
        visitor.visit_map(Fields {
            tree: self.tree,
            entries: self.entries()?,
            value: None,
        })
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Unhandled> {
        self.deserialize_map(visitor)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Unhandled> {
        let name: StrDeserializer<'_, Unhandled> = self.untagged_text()?.into_deserializer();
        visitor.visit_enum(name)
    }

    serde::forward_to_deserialize_any! {
        i8 i16 i32 i128 u8 u16 u128 f32 char bytes byte_buf unit unit_struct
        tuple tuple_struct ignored_any
    }
}

/// The items of a list.
struct Items<'de> {
    tree: &'de Tree,
    items: std::slice::Iter<'de, NodeId>,
    origin: Origin,
}

impl<'de> SeqAccess<'de> for Items<'de> {
    type Error = Unhandled;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Unhandled> {
        match self.items.next() {
            Some(&item) => seed
                .deserialize(NodeDe::new(self.tree, item, self.origin))
                .map(Some),
            None => Ok(None),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.items.len())
    }
}

/// The keys and values of a mapping.
struct Fields<'de> {
    tree: &'de Tree,
    entries: Entries<'de>,
    value: Option<(NodeId, Origin)>,
}

impl<'de> MapAccess<'de> for Fields<'de> {
    type Error = Unhandled;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Unhandled> {
        let Some((key, value, origin)) = self.entries.next() else {
            return Ok(None);
        };
        self.value = Some((value, origin));
        seed.deserialize(NodeDe::new(self.tree, key, origin))
            .map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Unhandled> {
        let (value, origin) = self
            .value
            .take()
            .ok_or_else(|| Unhandled::new("a value asked for before its key"))?;
        seed.deserialize(NodeDe::new(self.tree, value, origin))
    }
}

/// A value serde-saphyr presents as a map with fixed keys, given in order: how it shows
/// `Spanned`, `Location` and `Span` to their `Deserialize` impls.
trait FixedFields<'de> {
    /// The keys, in the order they are given.
    const KEYS: &'static [&'static str];
    /// What the map is, for the error when values come out of order.
    const WHAT: &'static str;
    /// The value of key `index`.
    fn value<V: DeserializeSeed<'de>>(&self, index: usize, seed: V) -> Result<V::Value, Unhandled>;
}

/// [`FixedFields`] as a deserializer (a map) and its map access.
struct FixedMap<T> {
    fields: T,
    /// How many keys have been given.
    given: usize,
}

impl<T> FixedMap<T> {
    fn new(fields: T) -> Self {
        FixedMap { fields, given: 0 }
    }
}

impl<'de, T: FixedFields<'de>> de::Deserializer<'de> for FixedMap<T> {
    type Error = Unhandled;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Unhandled> {
        visitor.visit_map(self)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
        byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map struct
        enum identifier ignored_any
    }
}

impl<'de, T: FixedFields<'de>> MapAccess<'de> for FixedMap<T> {
    type Error = Unhandled;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Unhandled> {
        let Some(key) = T::KEYS.get(self.given) else {
            return Ok(None);
        };
        self.given += 1;
        seed.deserialize((*key).into_deserializer()).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Unhandled> {
        match self.given.checked_sub(1) {
            Some(index) if index < T::KEYS.len() => self.fields.value(index, seed),
            _ => Err(Unhandled::new(T::WHAT)),
        }
    }
}

/// A node as serde-saphyr shows it to `Spanned`: the marker, `value`, `referenced` and
/// `defined`.
struct SpannedFields<'de>(NodeDe<'de>);

impl<'de> FixedFields<'de> for SpannedFields<'de> {
    const KEYS: &'static [&'static str] = &[SPANNED_MARKER, "value", "referenced", "defined"];
    const WHAT: &'static str = "a Spanned field out of order";

    fn value<V: DeserializeSeed<'de>>(&self, index: usize, seed: V) -> Result<V::Value, Unhandled> {
        let node = self.0;
        match index {
            0 => seed.deserialize(true.into_deserializer()),
            1 => seed.deserialize(node),
            2 => seed.deserialize(FixedMap::new(LocationFields(node.referenced()))),
            _ => seed.deserialize(FixedMap::new(LocationFields(node.loc(node.id)))),
        }
    }
}

/// A location as serde-saphyr shows it: `line`, `column`, `span`, `source_id`.
struct LocationFields(Loc);

impl<'de> FixedFields<'de> for LocationFields {
    const KEYS: &'static [&'static str] = &["line", "column", "span", "source_id"];
    const WHAT: &'static str = "a Location field out of order";

    fn value<V: DeserializeSeed<'de>>(&self, index: usize, seed: V) -> Result<V::Value, Unhandled> {
        match index {
            0 => seed.deserialize(self.0.line.into_deserializer()),
            1 => seed.deserialize(self.0.column.into_deserializer()),
            2 => seed.deserialize(FixedMap::new(SpanFields(self.0.span))),
            // One source: the file itself.
            _ => seed.deserialize(0u32.into_deserializer()),
        }
    }
}

/// serde-saphyr's stored value for byte offsets it does not know.
const NO_BYTE_INFO: u64 = u32::MAX as u64;

/// A span as serde-saphyr shows it: `offset`, `len` and `byte_info`.
struct SpanFields(serde_saphyr::Span);

impl<'de> FixedFields<'de> for SpanFields {
    const KEYS: &'static [&'static str] = &["offset", "len", "byte_info"];
    const WHAT: &'static str = "a Span field out of order";

    fn value<V: DeserializeSeed<'de>>(&self, index: usize, seed: V) -> Result<V::Value, Unhandled> {
        let span = self.0;
        match index {
            0 => seed.deserialize(span.offset().into_deserializer()),
            1 => seed.deserialize(span.len().into_deserializer()),
            _ => {
                let info = span
                    .byte_offset()
                    .zip(span.byte_len())
                    .unwrap_or((NO_BYTE_INFO, NO_BYTE_INFO));
                seed.deserialize(PairDe(info))
            }
        }
    }
}

/// `(byte_offset, byte_len)` as a two-element sequence.
struct PairDe((u64, u64));

impl<'de> de::Deserializer<'de> for PairDe {
    type Error = Unhandled;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Unhandled> {
        let (a, b) = self.0;
        visitor.visit_seq(de::value::SeqDeserializer::new([a, b].into_iter()))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
        byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map struct
        enum identifier ignored_any
    }
}

#[cfg(test)]
mod tests {
    //! The tree reader against serde-saphyr itself: for every file that passes the shape
    //! check, both give the same `PresetFile` (compared through `Debug`, which shows every
    //! `Spanned` location: line, column, character offset and length, byte offset and
    //! length), or the tree reader leaves the file to serde-saphyr.

    use std::path::{Path, PathBuf};

    use proptest::prelude::*;

    use super::*;
    use crate::preset::shape;
    use crate::preset::source::{SourceFile, options};

    /// What happened to one file.
    #[derive(Debug, PartialEq, Eq)]
    enum Outcome {
        /// Not a valid preset (decoding or the shape check refused it).
        Refused,
        /// The tree reader read it, exactly as serde-saphyr does.
        Same,
        /// The tree reader left it to serde-saphyr (why).
        FellBack(String),
    }

    fn compare(display: &str, bytes: &[u8]) -> Outcome {
        let Ok(source) = SourceFile::decode(display.into(), bytes) else {
            return Outcome::Refused;
        };
        let Ok(tree) = shape::check(&source) else {
            return Outcome::Refused;
        };
        let ours = preset_file(&tree);
        let theirs = serde_saphyr::from_str_with_options::<PresetFile>(&source.text, options());
        match ours {
            Ok(file) => {
                let theirs = theirs.unwrap_or_else(|e| {
                    panic!("{display}: the tree reader accepts what serde-saphyr refuses: {e}")
                });
                assert_eq!(
                    format!("{file:#?}"),
                    format!("{theirs:#?}"),
                    "{display}: the tree reader and serde-saphyr differ\n{}",
                    source.text
                );
                Outcome::Same
            }
            Err(why) => Outcome::FellBack(why.0),
        }
    }

    fn same(name: &str, text: &str) {
        assert_eq!(
            compare(name, text.as_bytes()),
            Outcome::Same,
            "{name}:\n{text}"
        );
    }

    #[test]
    fn values_of_no_particular_type_read_the_same() {
        same(
            "params.yaml",
            "version: 1\nname: p\ncommands:\n  t:\n    description: d\n    run: [x]\n    parameters:\n      type: object\n      $schema: 'http://json-schema.org/draft-07/schema#'\n      properties:\n        n: {type: integer, minimum: 0, maximum: 10, default: ~}\n        flag: {type: boolean, default: true}\n        tags: {type: array, items: {enum: [a, \"b\", !!str 3]}}\n      required: [n]\n",
        );
        // Numbers other than plain whole ones are left to serde-saphyr.
        let text = "version: 1\nname: p\ncommands:\n  t:\n    description: d\n    run: [x]\n    parameters: {type: object, properties: {n: {type: number, minimum: -1.5}}}\n";
        assert!(matches!(
            compare("neg.yaml", text.as_bytes()),
            Outcome::FellBack(_)
        ));
    }

    fn yaml_files(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                yaml_files(&path, out);
            } else if path.extension().is_some_and(|e| e == "yaml" || e == "yml") {
                out.push(path);
            }
        }
    }

    /// Every `.yaml`/`.yml` under `tests/` and `presets/` (and under the directories
    /// listed in `AGENT_PRESETS_TREE_DE_DIRS`, `:`-separated, for a larger local run such
    /// as the 1,000 generated presets of the speed workload).
    #[test]
    fn the_repository_s_yaml_files_read_the_same() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut dirs = vec![root.join("tests"), root.join("presets")];
        if let Ok(extra) = std::env::var("AGENT_PRESETS_TREE_DE_DIRS") {
            dirs.extend(
                extra
                    .split(':')
                    .filter(|d| !d.is_empty())
                    .map(PathBuf::from),
            );
        }
        let mut files = Vec::new();
        for dir in &dirs {
            yaml_files(dir, &mut files);
        }
        files.sort();
        let (mut same, mut fell_back) = (0, Vec::new());
        for path in &files {
            let bytes = std::fs::read(path).unwrap();
            match compare(&path.display().to_string(), &bytes) {
                Outcome::Same => same += 1,
                Outcome::FellBack(why) => fell_back.push(format!("{}: {why}", path.display())),
                Outcome::Refused => {}
            }
        }
        // The fixtures use no tags or integer keys: the tree reader reads them all.
        assert!(fell_back.is_empty(), "left to serde-saphyr: {fell_back:#?}");
        assert!(
            same >= 150,
            "only {same} of {} files compared as presets",
            files.len()
        );
    }

    /// A sample of the generated presets of the speed workload (`gen_presets.py`).
    #[test]
    fn generated_presets_read_the_same() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/parse-once");
        let mut files = Vec::new();
        yaml_files(&dir, &mut files);
        assert!(
            files.len() >= 20,
            "{} files in {}",
            files.len(),
            dir.display()
        );
        for path in files {
            let bytes = std::fs::read(&path).unwrap();
            assert_eq!(
                compare(&path.display().to_string(), &bytes),
                Outcome::Same,
                "{}",
                path.display()
            );
        }
    }

    const HEAD: &str = "version: 1\nname: t\n";

    #[test]
    fn scalar_styles_read_the_same() {
        for value in [
            "plain text",
            "'single ''quoted'''",
            "\"double \\\"quoted\\\" \\u00e9 \\t tab\"",
            "|\n    literal\n    block\n",
            "|-\n    strip\n",
            "|+\n    keep\n\n",
            ">\n    folded\n    block\n\n    para\n",
            ">-\n    folded strip\n",
            "!!str 5",
            "!!str ~",
            "!!str",
            "\"\"",
            "''",
            "multi\n    line plain\n    scalar",
            "text # with a comment",
            "déjà vu 🙂 — ünïcödé",
        ] {
            same(
                value,
                &format!("{HEAD}description: {value}\nextends: {value}\n"),
            );
        }
    }

    #[test]
    fn null_and_empty_values_read_the_same() {
        for value in ["", "~", "null", "Null", "NULL", "\"\"", "'~'", "!!str null"] {
            let quoted = value.contains(['"', '\'', '!']);
            let list = if quoted { "[]" } else { value };
            let text = format!(
                "{HEAD}description: {value}\nextends: {value}\nmodel:\n  provider: openai\n  name: m\n  baseUrl: {value}\n  maxTokens: {}\n\
                 variables:\n  v:\n    description: d\n    default: {value}\n    enum: {list}\ncontexts: {list}\npassEnv: {list}\n",
                if quoted { "1" } else { value },
            );
            same(value, &text);
        }
    }

    #[test]
    fn numbers_and_booleans_read_the_same() {
        for (order, number, flag) in [
            ("1.5", "400", "true"),
            ("-3", "+7", "false"),
            (".inf", "3", "True"),
            ("-.inf", "4294967295", "FALSE"),
            (".nan", " 12", "TRUE"),
            ("1e3", "1", "False"),
            ("+2.5e-3", "99", "true"),
            ("-0.0", "5", "true"),
        ] {
            let text = format!(
                "{HEAD}model:\n  provider: \"anthropic\"\n  name: m\n  maxTokens: {number}\n  strictTools: {flag}\n  temperature: {order}\n  topP: {number}\n  seed: {number}\n\
                 persona:\n  includeRuntimeContext: {flag}\n  sections:\n    - name: s\n      order: {order}\n      text: x\n      complete: {flag}\n      template: {flag}\n\
                 budget:\n  maxSystemTokens: {number}\n  maxToolTokens: {number}\n\
                 variables:\n  port:\n    description: p\n    type: integer\n    default: {number}\n    enum: [{number}, 8080]\n    required: {flag}\n    volatile: {flag}\n  on:\n    description: b\n    type: boolean\n    default: {flag}\n  ratio:\n    description: r\n    default: {order}\n"
            );
            let outcome = compare(order, text.as_bytes());
            assert!(outcome == Outcome::Same, "{order}: {outcome:?}");
        }
        for seed in ["-3", "0", "+7", "-9223372036854775808", "0x1f", "1_000"] {
            same(
                seed,
                &format!("{HEAD}model:\n  provider: openai\n  name: m\n  seed: {seed}\n"),
            );
        }
        same(
            "default 400",
            &format!("{HEAD}variables:\n  v:\n    description: d\n    default: 400\n"),
        );
        same(
            "order 1.5",
            &format!("{HEAD}persona:\n  sections:\n    - {{name: s, order: 1.5, text: x}}\n"),
        );
    }

    #[test]
    fn anchors_and_aliases_read_the_same() {
        same(
            "value aliases",
            &format!(
                "{HEAD}description: &d shared text\nextends: *d\n\
                 persona:\n  sections:\n    - name: &n first\n      order: &o 10\n      text: &t |\n        body\n    - name: second\n      order: *o\n      text: *t\n      when: *d\n  remove: [*n, *d]\n"
            ),
        );
        same(
            "collection aliases",
            &format!(
                "{HEAD}tools: &tools\n  allow: &list [a, b]\n  deny: *list\n\
                 persona:\n  sections: &secs\n    - name: s\n      order: 1\n      text: x\n  remove: *list\n\
                 contexts: *secs\nvariables:\n  v: &var\n    description: d\n    enum: *list\n  w: *var\n"
            ),
        );
        same(
            "aliases as keys",
            &format!(
                "{HEAD}x: &k\nvariables: &vars\n  *k : &spec\n    description: d\n  other:\n    *k : y\n"
            )
            .replace(&format!("{HEAD}x: &k\n"), &format!("{HEAD}description: &k description\n")),
        );
        same(
            "nested aliases",
            &format!(
                "{HEAD}description: &inner text\nmodel: &m\n  provider: openai\n  name: *inner\n\
                 persona:\n  sections:\n    - &s\n      name: a\n      order: 1\n      text: *inner\n    - *s\n"
            ),
        );
    }

    #[test]
    fn merges_read_the_same() {
        same(
            "merge a mapping",
            &format!(
                "{HEAD}persona:\n  sections:\n    - &base\n      name: base\n      order: 1\n      text: base text\n      when: w\n\
                 \x20   - <<: *base\n      name: child\n      order: 2\n"
            ),
        );
        same(
            "merge a sequence of mappings",
            &format!(
                "{HEAD}model: &m1\n  provider: openai\n  name: one\n\
                 persona:\n  sections:\n    - &a {{name: a, order: 1, text: ta}}\n    - &b {{name: b, order: 2, text: tb, when: wb}}\n\
                 \x20   - <<: [*a, *b]\n      order: 3\n    - <<: [*b, *a]\n      name: c\n"
            ),
        );
        same(
            "merge inline mappings",
            &format!(
                "{HEAD}persona:\n  sections:\n    - <<: {{name: a, order: 1, text: t}}\n      when: w\n\
                 \x20   - <<: [{{name: b, order: 2}}, {{text: tb, when: wb, order: 9}}]\n    - <<:\n        name: c\n        order: 3\n      text: tc\n"
            ),
        );
        same(
            "nested merges",
            &format!(
                "{HEAD}persona:\n  sections:\n    - &a {{name: a, order: 1, text: t}}\n    - &b\n      <<: *a\n      when: wb\n\
                 \x20   - <<: *b\n      name: c\n    - <<: {{<<: *a, name: d}}\n    - <<: {{<<: {{name: e, order: 5}}, text: te}}\n"
            ),
        );
        same(
            "merge into variables",
            &format!(
                "{HEAD}variables:\n  base: &v {{description: d, default: 1}}\n  more:\n    <<: *v\n    default: 2\n\
                 tools: &t {{allow: [a]}}\nbudget:\n  <<: {{maxSystemTokens: 10}}\n"
            ),
        );
        same(
            "two merge keys",
            &format!(
                "{HEAD}persona:\n  sections:\n    - &a {{name: a, order: 1, text: t}}\n    - &b {{name: b, order: 2, text: u}}\n\
                 \x20   - <<: *a\n      <<: *b\n      when: w\n"
            ),
        );
        same(
            "merge at the top level",
            "<<: {version: 1, name: t, description: d}\n<<:\n  extends: e\n  name: shadowed\ndescription: own\n",
        );
        same(
            "a spanned struct through an alias",
            &format!("{HEAD}budget: &b {{}}\ntools: *b\n"),
        );
        same(
            "a spanned struct from a merge",
            &format!("{HEAD}tools: {{<<: {{allow: [a]}}, deny: []}}\n"),
        );
        same(
            "merge of variables map",
            &format!(
                "{HEAD}variables:\n  <<: {{a: {{description: x}}}}\n  b: {{description: y}}\n  <<: [{{c: {{description: z}}}}, {{a: {{description: shadowed}}}}]\n"
            ),
        );
    }

    #[test]
    fn layout_reads_the_same() {
        same(
            "flow",
            "{version: 1, name: t, persona: {sections: [{name: a, order: 1, text: \"x\"}]}, tools: {allow: [a, 'b'], deny: []}}\n",
        );
        same(
            "comments",
            "# head\nversion: 1 # one\n# between\nname: t\n\npersona: # p\n  sections:\n  # s\n  - name: a # n\n    order: 1\n    text: |  # t\n      body\n",
        );
        same(
            "document markers",
            "%YAML 1.2\n---\nversion: 1\nname: t\n...\n",
        );
        same("explicit keys", "? version\n: 1\n? name\n: t\n");
        let crlf = "version: 1\r\nname: t\r\ndescription: |\r\n  two\r\n  lines\r\n";
        assert_eq!(compare("crlf", crlf.as_bytes()), Outcome::Same);
        let bom = "\u{feff}version: 1\nname: t\ndescription: é\n";
        assert_eq!(compare("bom", bom.as_bytes()), Outcome::Same);
        same(
            "multi-byte before values",
            "version: 1\nname: t\ndescription: \"日本語 🙂 text\"\nextends: über\npersona:\n  sections:\n    - {name: \"ä\", order: 1, text: \"🙂🙂\"}\n    - name: b\n      order: 2\n      text: >\n        ünï\n        cödé 🙂\n",
        );
    }

    /// What the tree reader leaves to serde-saphyr, on purpose.
    #[test]
    fn unusual_files_fall_back() {
        let mut fell_back = 0;
        for text in [
            format!("{HEAD}description: !!binary aGk=\n"),
            format!("{HEAD}tools: !!map {{allow: [a]}}\n"),
            format!("{HEAD}description: !custom x\n"),
            format!("{HEAD}model: {{provider: openai, name: m, maxTokens: !!int 5}}\n"),
            "version: 0x1\nname: t\n".to_owned(),
            format!("{HEAD}variables:\n  1: {{description: a}}\n  01: {{description: b}}\n"),
            format!("{HEAD}model: {{provider: !!str openai, name: m}}\n"),
            format!("{HEAD}description: ! bang\n"),
            format!("{HEAD}model: {{provider: openai, name: m, maxTokens: 0x10}}\n"),
            format!("{HEAD}budget: {{maxSystemTokens: 1_000}}\n"),
        ] {
            let outcome = compare(&text, text.as_bytes());
            assert!(
                matches!(outcome, Outcome::FellBack(_) | Outcome::Refused),
                "{text}: {outcome:?}"
            );
            if outcome == Outcome::Refused {
                continue;
            }
            fell_back += 1;
            // The file is read all the same: by serde-saphyr.
            let Ok(source) = SourceFile::decode("t.yaml".into(), text.as_bytes()) else {
                panic!("{text}: not decoded");
            };
            let theirs = serde_saphyr::from_str_with_options::<PresetFile>(&source.text, options());
            let parsed = crate::preset::source::parse_source(source);
            match (parsed, theirs) {
                (Ok(p), Ok(theirs)) => assert_eq!(format!("{:?}", p.file), format!("{theirs:?}")),
                (Err(_), Err(_)) => {}
                (p, t) => panic!("{text}: {:?} vs {:?}", p.is_ok(), t.is_ok()),
            }
        }
        assert_eq!(fell_back, 10);
    }

    /// A small deterministic generator of valid presets with random layout: scalar styles,
    /// flow or block collections, anchors, aliases and merges, comments.
    struct Gen {
        state: u64,
        out: String,
        anchors: Vec<(String, Kind2)>,
        next_anchor: usize,
    }

    /// What an anchor holds, so an alias is used where that fits.
    #[derive(Clone, Copy, PartialEq, Eq)]
    enum Kind2 {
        Text,
        Section,
        Names,
    }

    impl Gen {
        fn new(seed: u64) -> Self {
            Gen {
                state: seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1,
                out: String::new(),
                anchors: Vec::new(),
                next_anchor: 0,
            }
        }

        fn next(&mut self) -> u64 {
            self.state ^= self.state << 13;
            self.state ^= self.state >> 7;
            self.state ^= self.state << 17;
            self.state
        }

        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }

        fn chance(&mut self, percent: u64) -> bool {
            self.below(100) < percent
        }

        fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
            items[self.below(items.len() as u64) as usize]
        }

        /// `&aN ` (remembered for later aliases) or nothing.
        fn anchor(&mut self, kind: Kind2) -> String {
            if self.chance(20) {
                self.next_anchor += 1;
                let name = format!("a{}", self.next_anchor);
                self.anchors.push((name.clone(), kind));
                format!("&{name} ")
            } else {
                String::new()
            }
        }

        fn alias(&mut self, kind: Kind2) -> Option<String> {
            let fitting: Vec<String> = self
                .anchors
                .iter()
                .filter(|(_, k)| *k == kind)
                .map(|(n, _)| n.clone())
                .collect();
            if fitting.is_empty() || !self.chance(25) {
                return None;
            }
            let i = self.below(fitting.len() as u64) as usize;
            Some(format!("*{}", fitting[i]))
        }

        /// A text value written in some style, at `indent` (for blocks).
        fn text(&mut self, words: &str, indent: usize) -> String {
            if let Some(alias) = self.alias(Kind2::Text) {
                return alias;
            }
            let anchor = self.anchor(Kind2::Text);
            let pad = " ".repeat(indent + 2);
            let body = match self.below(9) {
                0 => words.to_owned(),
                1 => format!("'{}'", words.replace('\'', "''")),
                2 => format!("\"{}\"", words.replace('\\', "\\\\").replace('"', "\\\"")),
                3 => format!("|\n{pad}{words}\n{pad}second line é\n"),
                4 => format!(">-\n{pad}{words}\n{pad}folded 🙂\n"),
                5 => format!("|+\n{pad}{words}\n\n"),
                6 => format!("!!str {words}"),
                7 => format!("{words} # comment"),
                _ => format!("\"{words} \\u00e9\\n\""),
            };
            format!("{anchor}{body}")
        }

        fn name(&mut self, base: &str) -> String {
            match self.below(4) {
                0 => format!("'{base}'"),
                1 => format!("\"{base}\""),
                _ => base.to_owned(),
            }
        }

        fn names_list(&mut self, indent: usize) -> String {
            if let Some(alias) = self.alias(Kind2::Names) {
                return alias;
            }
            let anchor = self.anchor(Kind2::Names);
            let n = self.below(4);
            let items: Vec<String> = (0..n)
                .map(|i| {
                    let base = ["read_file", "grep", "bash", "*_file"][i as usize];
                    self.name(base)
                })
                .collect();
            if self.chance(50) {
                format!("{anchor}[{}]", items.join(", "))
            } else if items.is_empty() {
                format!("{anchor}[]")
            } else {
                let pad = " ".repeat(indent);
                let lines: Vec<String> = items.iter().map(|i| format!("{pad}- {i}")).collect();
                format!("{anchor}\n{}", lines.join("\n"))
            }
        }

        fn section(&mut self, i: u64, with_when: bool) -> String {
            // Items at 4 spaces, keys at 6.
            if let Some(alias) = self.alias(Kind2::Section) {
                if self.chance(50) {
                    return format!("    - {alias}\n");
                }
                return format!(
                    "    - <<: {alias}\n      name: merged{i}\n      order: {}\n",
                    self.below(50)
                );
            }
            let anchor = self.anchor(Kind2::Section);
            let order = self.pick(&["1", "-5", "2.5", "1e2", "100", ".inf", "0"]);
            let name = self.name(&format!("s{i}"));
            let text = self.text(&format!("section {i} text {{{{ cwd }}}}"), 6);
            let mut out = format!(
                "    - {anchor}\n      name: {name}\n      order: {order}\n      text: {text}\n"
            );
            if with_when && self.chance(30) {
                let when = self.text("'grep' in tools", 6);
                out.push_str(&format!("      when: {when}\n"));
            }
            if self.chance(20) {
                let b = self.pick(&["true", "false", "True"]);
                out.push_str(&format!("      template: {b}\n"));
            }
            if !out.ends_with('\n') {
                out.push('\n');
            }
            out
        }

        fn preset(mut self) -> String {
            let mut o = String::new();
            if self.chance(30) {
                o.push_str("# a comment\n");
            }
            o.push_str("version: 1\nname: g\n");
            if self.chance(60) {
                let d = self.text("A generated preset, ümlaut 🙂.", 0);
                o.push_str(&format!("description: {d}\n"));
            }
            if self.chance(50) {
                let e = self.name("standard");
                o.push_str(&format!("extends: {e}\n"));
            }
            if self.chance(40) {
                let p = self.pick(&["openai", "'anthropic'", "deepseek", "\"openai-compatible\""]);
                let t = self.pick(&["400", "8192", "1"]);
                let s = self.pick(&["true", "false", "~"]);
                o.push_str(&format!(
                    "model:\n  provider: {p}\n  name: m-1\n  maxTokens: {t}\n  strictTools: {s}\n"
                ));
            }
            o.push_str("persona:\n");
            if self.chance(30) {
                o.push_str("  includeRuntimeContext: false\n");
            }
            o.push_str("  sections:\n");
            let n = 1 + self.below(5);
            for i in 0..n {
                let s = self.section(i, true);
                o.push_str(&s);
            }
            if self.chance(40) {
                let l = self.names_list(4);
                o.push_str(&format!("  remove: {l}\n"));
            }
            if self.chance(40) {
                o.push_str("contexts:\n");
                for i in 0..1 + self.below(3) {
                    let text = self.text(&format!("context {i}"), 6);
                    o.push_str(&format!(
                        "    - name: c{i}\n      order: {i}\n      text: {text}\n"
                    ));
                }
            }
            if self.chance(50) {
                o.push_str("variables:\n");
                for i in 0..1 + self.below(3) {
                    let (t, default, choices) = match self.below(5) {
                        0 => ("integer", "8080", "[80, 8080]"),
                        1 => ("boolean", "true", "[true, false]"),
                        2 => ("number", "1.5", "[1.5, 2]"),
                        3 => ("string", "\"text\"", "[a, 'b', \"c\"]"),
                        _ => ("string", "~", "~"),
                    };
                    let d = self.text("what it is", 4);
                    o.push_str(&format!(
                        "  v{i}:\n    description: {d}\n    type: {t}\n    default: {default}\n    enum: {choices}\n"
                    ));
                }
            }
            if self.chance(60) {
                o.push_str("tools:\n");
                for key in ["allow", "deny", "order"] {
                    if self.chance(50) {
                        let l = self.names_list(4);
                        o.push_str(&format!("  {key}: {l}\n"));
                    }
                }
                if o.ends_with("tools:\n") {
                    o.push_str("  allow: []\n");
                }
            }
            if self.chance(20) {
                o.push_str("budget: {maxSystemTokens: 1000, maxToolTokens: 20}\n");
            }
            if self.chance(20) {
                o.push_str("passEnv: [CI, 'GITHUB_ACTIONS']\n");
            }
            self.out = o;
            self.out
        }
    }

    /// A few hundred generated presets: every one that passes the shape check reads the
    /// same, and most are read by the tree reader.
    #[test]
    fn generated_variants_read_the_same() {
        let (mut same, mut refused) = (0, 0);
        for seed in 0..400 {
            let text = Gen::new(seed).preset();
            match compare(&format!("seed {seed}"), text.as_bytes()) {
                Outcome::Same => same += 1,
                Outcome::Refused => refused += 1,
                Outcome::FellBack(why) => {
                    panic!("seed {seed}: left to serde-saphyr: {why}\n{text}")
                }
            }
        }
        assert!(same >= 300, "{same} read the same, {refused} refused");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn random_presets_read_the_same(seed in any::<u64>()) {
            let text = Gen::new(seed).preset();
            let outcome = compare("random", text.as_bytes());
            prop_assert!(!matches!(outcome, Outcome::FellBack(_)), "{outcome:?}\n{text}");
        }
    }
}
