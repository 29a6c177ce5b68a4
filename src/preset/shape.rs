//! The shape check: every structural problem of a preset file, found in one pass and
//! reported together, each at its own line and column.
//!
//! It walks the file's positioned tree (`super::tree`, read once under the parsing
//! limits) against the preset's JSON Schema ([`preset_json_schema`](super::spec::preset_json_schema), one
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
//! The typed deserialization into [`PresetFile`](super::spec::PresetFile) runs when this
//! check finds nothing, and accepts what it accepts. It reads the same tree
//! (`super::tree_de`): each node keeps the position serde-saphyr gives it as well. When
//! it finds only local problems, the tree of the refused file (`Refused`) is pruned of
//! them by `super::salvage` and read by the typed pass as well, for more diagnostics.

use std::collections::HashSet;
use std::sync::OnceLock;

use super::source_file::{MAX_YAML_DEPTH, SourceFile};
use super::spec::FORMAT_VERSION;
use super::tree::{CoreTag, Kind, NodeId, Style, Tree, node_span, to_u32};
use crate::diagnostic::{Diagnostic, DiagnosticKind, Span};
use crate::prompt::VariableType;
use crate::suggest::{did_you_mean, help_did_you_mean, list_names};
use crate::tools::foreign;
use crate::yaml_scalar::{is_yaml11_bool, parse_float, parse_int, yaml_trim, yaml12_bool};

use rules::{Additional, Allowed, Const, RuleId, Rules, Special, Ty, UnknownKeyWords};

mod rules;

/// Every shape problem of `source`, sorted by position (never empty); or, when the file
/// has the shape of a preset, its tree, for the typed pass. A YAML syntax error or an
/// exceeded limit stops the reading: it is then the only problem reported (with any
/// duplicate keys found before it). A file of another format `version` gets only
/// `unsupported-version` (and duplicate keys): its other keys may be right for its version.
#[cfg(test)]
pub(crate) fn check(source: &SourceFile) -> Result<Tree, Vec<Diagnostic>> {
    check_with(source, rules::rules(), None).map_err(|failed| failed.problems)
}

/// A file the shape check refused: its problems (sorted by position, never empty), and
/// its tree when the YAML could be read at all (not after a syntax error or an exceeded
/// limit), for `super::salvage` to look for more problems in what is left.
pub(crate) struct Refused {
    pub(crate) problems: Vec<Diagnostic>,
    pub(crate) tree: Option<Tree>,
}

/// [`check`], keeping the tree of a refused file.
pub(crate) fn check_preset(source: &SourceFile) -> Result<Tree, Refused> {
    check_with(source, rules::rules(), None)
}

/// Another kind of YAML document checked by the same walk against its own JSON Schema
/// (generated from its serde types, like the preset's): a test case file. Built once, in a
/// `static`; its schema is generated and compiled the first time a file is checked.
pub(crate) struct DocumentShape {
    make: fn() -> serde_json::Value,
    schema: OnceLock<serde_json::Value>,
    rules: OnceLock<Rules>,
    /// What the file is, for messages: "a test case file".
    what: &'static str,
    /// How such a file starts, as help for an empty file or one that is not a mapping.
    start: &'static str,
}

impl DocumentShape {
    /// The shape of documents whose schema `make` generates.
    pub(crate) const fn new(
        make: fn() -> serde_json::Value,
        what: &'static str,
        start: &'static str,
    ) -> DocumentShape {
        DocumentShape {
            make,
            schema: OnceLock::new(),
            rules: OnceLock::new(),
            what,
            start,
        }
    }

    fn rules(&'static self) -> &'static Rules {
        self.rules.get_or_init(|| {
            let schema: &'static serde_json::Value = self.schema.get_or_init(self.make);
            rules::compile_document(schema)
        })
    }
}

/// Every shape problem of a document of `shape`, sorted by position; or its tree (see
/// [`check`], without the preset's `version` rule).
pub(crate) fn check_document(
    source: &SourceFile,
    shape: &'static DocumentShape,
) -> Result<Tree, Vec<Diagnostic>> {
    check_with(source, shape.rules(), Some(shape)).map_err(|failed| failed.problems)
}

fn check_with(
    source: &SourceFile,
    rules: &'static Rules,
    document: Option<&'static DocumentShape>,
) -> Result<Tree, Refused> {
    let tree = match Tree::read(source) {
        Ok(tree) => tree,
        Err(stop) => {
            let mut out = stop.duplicates;
            out.push(stop.problem);
            return Err(Refused {
                problems: finish(out),
                tree: None,
            });
        }
    };
    let mut checker = Checker {
        tree: &tree,
        source,
        rules,
        document,
        out: Vec::new(),
    };
    checker.check_root();
    if tree.duplicates.is_empty() && checker.out.is_empty() {
        return Ok(tree);
    }
    let mut out = tree.duplicates.clone();
    out.append(&mut checker.out);
    Err(Refused {
        problems: finish(out),
        tree: Some(tree),
    })
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
    /// Another kind of document than a preset (no `version` rule, its own words).
    document: Option<&'static DocumentShape>,
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
        let (what, start) = match self.document {
            Some(d) => (d.what, d.start),
            None => (
                "a preset file",
                "a preset starts with `version: 1` and `name: <file stem>`",
            ),
        };
        let Some(root) = self.tree.root else {
            self.out.push(
                Diagnostic::new(
                    DiagnosticKind::MissingField,
                    "the file is empty: it holds no YAML document",
                )
                .at(self.source.start())
                .help(start),
            );
            return;
        };
        if self.shape(root) != Shape::Mapping {
            let found = self.describe(root);
            self.out.push(
                Diagnostic::new(
                    DiagnosticKind::WrongType,
                    format!("the top level of {what} must be a mapping, found {found}"),
                )
                .at(self.span(root))
                .help(start),
            );
            return;
        }
        let root = self.tree.deref(root);
        if self.document.is_some() {
            self.check(root, self.rules.root(), None);
            return;
        }
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
            .help(help)
            .maybe_fix(value, did_you_mean(value, allowed.iter().copied())),
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
            // `command: uvx mcp-server-time`, `run: "wc -w"`: an argv, never a shell string.
            Shape::Scalar
                if matches!(key, Some("command" | "run"))
                    && non_null.iter().all(|t| *t == Ty::Array) =>
            {
                let words: Vec<&str> = self
                    .scalar(at)
                    .map(|s| s.text.split_whitespace().collect())
                    .unwrap_or_default();
                Some(format!(
                    "write it as a list: `[{}]` (the program, then each argument; it runs without a shell)",
                    words.join(", ")
                ))
            }
            _ if non_null.iter().all(|t| *t == Ty::Array) => {
                Some("write a list as `[a, b]` or as lines starting with `- `".to_owned())
            }
            // What other agents write (`tools: Read, Grep`, `tools: [read, search]`,
            // `model: sonnet`, `Authorization: "Bearer ${TOKEN}"`): the fix in our terms.
            Shape::List | Shape::Scalar
                if key == Some("tools") && non_null.as_slice() == [Ty::Object] =>
            {
                let words = self.words(at);
                let names: Vec<&str> = if shape == Shape::Scalar {
                    words.iter().flat_map(|w| foreign::split_tool_list(w)).collect()
                } else {
                    words
                };
                Some(foreign::tools_list_help(&names))
            }
            Shape::Scalar if key == Some("model") && non_null.as_slice() == [Ty::Object] => self
                .scalar(at)
                .map(|s| foreign::model_string_help(s.text)),
            Shape::Scalar
                if non_null.as_slice() == [Ty::Object]
                    && self
                        .scalar(at)
                        .is_some_and(|s| foreign::split_env_reference(s.text).is_some()) =>
            {
                self.scalar(at)
                    .and_then(|s| foreign::env_reference_help(s.text))
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
        let mut command: Option<Vec<&'a str>> = None;
        // Keys an unknown key is probably a misspelling of: not reported missing as well.
        let mut suggested: Vec<&'static str> = Vec::new();
        let mark = self.out.len();
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
                    // Looked up once per mapping, not once per unknown key: a file of
                    // 90,000 unknown keys stays linear.
                    let command = command.get_or_insert_with(|| {
                        tree.entry(&entries, "command")
                            .map(|(_, v)| self.words(v))
                            .unwrap_or_default()
                    });
                    if let Some(meant) = self.unknown_key(key, value, command, name, words, known)
                        && !suggested.contains(&meant)
                    {
                        suggested.push(meant);
                    }
                }
                Additional::Rule(extra) => self.check(value, extra, Some(name)),
                Additional::Any => {}
            }
        }
        self.merge_args_into_command(mark, &entries);
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

    /// `.mcp.json`'s `command: uvx` + `args: [...]`: the `wrong-type` help of `command`
    /// (reported since `mark`) writes the whole argv, arguments kept.
    fn merge_args_into_command(&mut self, mark: usize, entries: &[(NodeId, NodeId)]) {
        let tree = self.tree;
        let (Some((_, command)), Some((_, args))) =
            (tree.entry(entries, "command"), tree.entry(entries, "args"))
        else {
            return;
        };
        if self.shape(command) != Shape::Scalar {
            return;
        }
        let mut argv: Vec<&str> = self
            .words(command)
            .iter()
            .flat_map(|w| w.split_whitespace())
            .collect();
        argv.extend(self.words(args));
        let span = self.span(command);
        let help = format!(
            "write it as one list, the program then its arguments: `command: [{}]`, and remove `args` \
             (it runs without a shell)",
            argv.join(", ")
        );
        for d in &mut self.out[mark..] {
            if d.kind == DiagnosticKind::WrongType && d.span.as_ref() == Some(&span) {
                d.help = Some(help.clone());
            }
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

    /// A scalar's text (one word), or a list's scalar items: what a foreign key's help
    /// rewrites.
    fn words(&self, at: NodeId) -> Vec<&'a str> {
        match &self.tree.nodes[self.tree.deref(at)].kind {
            Kind::Seq(items) => items
                .iter()
                .filter_map(|&item| self.scalar(item).map(|s| s.text))
                .collect(),
            _ => self.scalar(at).map(|s| vec![s.text]).unwrap_or_default(),
        }
    }

    /// Report an unknown key; returns the key it probably misspells, if any.
    fn unknown_key(
        &mut self,
        key: NodeId,
        value: NodeId,
        command: &[&'a str],
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
        // Another tool's key (`allowed-tools`, `args`): its translation, never a near name.
        let seen = foreign::Seen {
            value: self.words(value),
            scalar: self.shape(value) == Shape::Scalar,
            command: command.to_vec(),
        };
        let foreign = foreign::key_help(words.owner, name, &seen);
        let meant = if foreign.is_some() {
            None
        } else {
            did_you_mean(name, unset)
        };
        let home = belongs_under(name, words.owner);
        let help = match (meant, home, foreign) {
            (_, _, Some(foreign)) => foreign,
            (_, Some(home), None) => home,
            (Some(m), None, None) => format!("did you mean `{m}`?"),
            (None, None, None) => words.allowed.clone(),
        };
        let meant = if belongs_under(name, words.owner).is_some() {
            None
        } else {
            meant
        };
        self.out.push(
            Diagnostic::new(DiagnosticKind::UnknownKey, message)
                .at(self.span(key))
                .help(help)
                .maybe_fix(name, meant),
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
    fn foreign_keys_are_not_ours() {
        for (owner, key) in foreign::foreign_keys() {
            let ours = super::super::spec::KEY_SETS
                .iter()
                .find(|(o, _)| *o == owner)
                .map(|(_, keys)| *keys);
            assert!(ours.is_some(), "owner {owner} of `{key}` is not a key set");
            assert!(
                !ours.unwrap_or_default().contains(&key),
                "`{key}` is a key of {owner}"
            );
        }
    }

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
