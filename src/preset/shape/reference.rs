//! The shape check's schema walk as it was before the schema was compiled into rules
//! ([`super::rules`]): it looks every keyword up in the schema's `serde_json::Value` at
//! every node. Kept for tests only, as the oracle of the differential test in
//! `super::tests`: the rule walk must give exactly the diagnostics this walk gives.

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::{CoreTag, Kind, NodeId, Scalar, Style, Tree, finish, node_span, schema, to_u32};
use crate::diagnostic::{Diagnostic, DiagnosticKind, Span};
use crate::preset::source::list_names;
use crate::preset::source::{MAX_YAML_DEPTH, SourceFile};
use crate::preset::spec::{FORMAT_VERSION, key_set_owner};
use crate::prompt::VariableType;
use crate::suggest::{did_you_mean, help_did_you_mean};
use crate::yaml_scalar::{is_yaml11_bool, yaml_trim};

/// [`super::check`] with the old walk.
pub(super) fn check(source: &SourceFile) -> Vec<Diagnostic> {
    let tree = match Tree::read(source) {
        Ok(tree) => tree,
        Err(stop) => {
            let mut out = stop.duplicates;
            out.push(stop.problem);
            return finish(out);
        }
    };
    let mut checker = Checker {
        tree: &tree,
        source,
        defs: schema().get("$defs").and_then(Value::as_object),
        out: Vec::new(),
    };
    checker.check_root();
    let mut out = tree.duplicates.clone();
    out.append(&mut checker.out);
    finish(out)
}

struct Checker<'a> {
    tree: &'a Tree,
    source: &'a SourceFile,
    defs: Option<&'a Map<String, Value>>,
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

    /// Follow `$ref`s to the schema they name.
    fn resolve(&self, mut schema: &'a Value) -> &'a Value {
        for _ in 0..16 {
            let Some(name) = schema
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|r| r.strip_prefix("#/$defs/"))
            else {
                break;
            };
            match self.defs.and_then(|d| d.get(name)) {
                Some(target) => schema = target,
                None => break,
            }
        }
        schema
    }

    /// The types a schema allows, each with the schema that allows it (for `minimum` and
    /// `format`); empty when it allows anything.
    fn types(&self, schema: &'a Value) -> Vec<(&'a str, &'a Value)> {
        let schema = self.resolve(schema);
        let mut out = Vec::new();
        match schema.get("type") {
            Some(Value::String(t)) => out.push((t.as_str(), schema)),
            Some(Value::Array(ts)) => {
                out.extend(ts.iter().filter_map(Value::as_str).map(|t| (t, schema)))
            }
            _ => {}
        }
        if out.is_empty() {
            if self.string_enum(schema).is_some() {
                out.push(("string", schema));
            }
            for branch in union(schema).into_iter().flatten() {
                out.extend(self.types(branch));
            }
        }
        out
    }

    /// The allowed values of a schema that is an enumeration of strings (`enum`, or
    /// `oneOf`/`anyOf` of `const`s).
    fn string_enum(&self, schema: &'a Value) -> Option<Vec<&'a str>> {
        if let Some(values) = schema.get("enum").and_then(Value::as_array) {
            return values.iter().map(Value::as_str).collect();
        }
        let branches = union(schema)?;
        if branches.is_empty() {
            return None;
        }
        branches
            .iter()
            .map(|b| self.resolve(b).get("const").and_then(Value::as_str))
            .collect()
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
        self.check(root, schema(), None);
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
    /// is reported where the alias is) against `schema`. `key` is the mapping key the node
    /// is the value of, for messages.
    fn check(&mut self, at: NodeId, schema: &'a Value, key: Option<&str>) {
        let schema = self.resolve(schema);
        if let Some(allowed) = self.string_enum(schema) {
            self.check_enum(at, &allowed, key);
            return;
        }
        if let Some(branches) = union(schema) {
            self.check_union(at, branches, key);
            return;
        }
        let types = self.types(schema);
        if !types.is_empty() && !self.check_type(at, &types, key) {
            return;
        }
        let node = self.tree.deref(at);
        match &self.tree.nodes[node].kind {
            Kind::Map(_) => self.check_object(node, schema),
            Kind::Seq(items) => {
                if let Some(item) = schema.get("items") {
                    for &i in items {
                        self.check(i, item, None);
                    }
                }
            }
            Kind::Scalar { .. } => self.check_scalar_value(at, schema, key),
            Kind::Alias(_) => {}
        }
    }

    fn check_union(&mut self, at: NodeId, branches: &'a [Value], key: Option<&str>) {
        let shape = self.shape(at);
        let candidates: Vec<&Value> = branches
            .iter()
            .filter(|b| {
                let types = self.types(b);
                types.is_empty() || types.iter().any(|(t, _)| shape_fits(shape, t))
            })
            .collect();
        match candidates.as_slice() {
            [] => {
                let types: Vec<(&str, &Value)> =
                    branches.iter().flat_map(|b| self.types(b)).collect();
                self.check_type(at, &types, key);
            }
            [only] => self.check(at, only, key),
            [first, ..] => {
                for c in &candidates {
                    let mark = self.out.len();
                    self.check(at, c, key);
                    if self.out.len() == mark {
                        return;
                    }
                    self.out.truncate(mark);
                }
                self.check(at, first, key);
            }
        }
    }

    fn check_enum(&mut self, at: NodeId, allowed: &[&str], key: Option<&str>) {
        let value = match self.shape(at) {
            Shape::Scalar => self.scalar(at).map(|s| s.text),
            _ => None,
        };
        let Some(value) = value else {
            let types = [("string", &Value::Null)];
            self.check_type(at, &types, key);
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
    fn check_type(&mut self, at: NodeId, types: &[(&str, &Value)], key: Option<&str>) -> bool {
        let has = |t: &str| types.iter().any(|(name, _)| *name == t);
        let shape = self.shape(at);
        let fits = match shape {
            Shape::Null => return has("null") || self.wrong_type(at, types, key),
            Shape::List => has("array"),
            Shape::Mapping => has("object"),
            Shape::Scalar => match self.scalar(at) {
                Some(s) => {
                    has("string")
                        || (has("integer") && s.as_int().is_some())
                        || (has("number") && s.as_float().is_some())
                        || (has("boolean") && s.as_bool().is_some())
                }
                None => false,
            },
        };
        fits || self.wrong_type(at, types, key)
    }

    /// Report a `wrong-type`; always `false`.
    fn wrong_type(&mut self, at: NodeId, types: &[(&str, &Value)], key: Option<&str>) -> bool {
        let shape = self.shape(at);
        let mut expected: Vec<String> = Vec::new();
        for (t, schema) in types {
            let text = match *t {
                "string" if shape == Shape::Null => "text".to_owned(),
                "string" => "a single value".to_owned(),
                "integer" if minimum(schema).is_some_and(|m| m >= 0.0) => {
                    "a whole number (0 or more)".to_owned()
                }
                "integer" => "a whole number".to_owned(),
                "number" => "a number".to_owned(),
                "boolean" => "`true` or `false`".to_owned(),
                "array" => "a list".to_owned(),
                "object" => "a mapping (`key: value` entries)".to_owned(),
                _ => continue,
            };
            if !expected.contains(&text) {
                expected.push(text);
            }
        }
        // "a single value" already covers numbers and booleans.
        if expected.iter().any(|e| e == "a single value") {
            expected.retain(|e| {
                !matches!(
                    e.as_str(),
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
        let non_null: Vec<&str> = types
            .iter()
            .map(|(t, _)| *t)
            .filter(|t| *t != "null")
            .collect();
        let help = match shape {
            Shape::Null if key.is_some() => {
                Some("write a value after the colon, or remove the key".to_owned())
            }
            Shape::Null => Some("write a value here, or remove this entry".to_owned()),
            _ if non_null.iter().all(|t| *t == "array") => {
                Some("write a list as `[a, b]` or as lines starting with `- `".to_owned())
            }
            Shape::Scalar => self.scalar(at).and_then(|s| {
                let fits_unquoted = |s: Scalar<'_>| {
                    let plain = Scalar {
                        style: Style::Plain,
                        tag: CoreTag::None,
                        ..s
                    };
                    (non_null.contains(&"integer") && plain.as_int().is_some())
                        || (non_null.contains(&"number") && plain.as_float().is_some())
                        || (non_null.contains(&"boolean") && plain.as_bool().is_some())
                };
                if s.is_text() && fits_unquoted(s) {
                    let value = yaml_trim(s.text);
                    Some(match key {
                        Some(k) => format!("write `{k}: {value}` without quotes"),
                        None => format!("write `{value}` without quotes"),
                    })
                } else if non_null.contains(&"boolean") && is_yaml11_bool(s.text) {
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
    fn check_scalar_value(&mut self, at: NodeId, schema: &'a Value, key: Option<&str>) {
        let Some(s) = self.scalar(at) else {
            return;
        };
        let types = self.types(schema);
        let is_integer = types.iter().any(|(t, _)| *t == "integer");
        if is_integer && !types.iter().any(|(t, _)| *t == "string") {
            let Some(n) = s.as_int() else {
                return;
            };
            let min = minimum(schema);
            let unsigned = min.is_some_and(|m| m >= 0.0)
                || schema
                    .get("format")
                    .and_then(Value::as_str)
                    .is_some_and(|f| f.starts_with("uint"));
            if unsigned && yaml_trim(s.text).starts_with('-') {
                self.wrong_type(at, &types, key);
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
            let max = match schema.get("format").and_then(Value::as_str) {
                Some("uint32") => Some(i128::from(u32::MAX)),
                Some("int32") => Some(i128::from(i32::MAX)),
                Some("uint64") => Some(i128::from(u64::MAX)),
                Some("int64") => Some(i128::from(i64::MAX)),
                _ => None,
            };
            if let Some(max) = max
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
        if let Some(expected) = schema.get("const") {
            let matches = match expected {
                Value::Number(n) => n
                    .as_i64()
                    .map(i128::from)
                    .zip(s.as_int())
                    .is_some_and(|(a, b)| a == b),
                Value::String(t) => s.text == t,
                Value::Bool(b) => s.as_bool() == Some(*b),
                _ => true,
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

    fn check_object(&mut self, map: NodeId, schema: &'a Value) {
        let properties = schema.get("properties").and_then(Value::as_object);
        let additional = schema.get("additionalProperties");
        let tree = self.tree;
        let entries = self.entries(map);
        // Keys set right: an unknown key is not suggested to be one of them.
        let known: HashSet<&str> = entries
            .iter()
            .filter_map(|(k, _)| tree.key_text(*k))
            .filter(|name| properties.is_some_and(|p| p.contains_key(*name)))
            .collect();
        let mut present: HashSet<&str> = HashSet::new();
        // Keys an unknown key is probably a misspelling of: not reported missing as well.
        let mut suggested: HashSet<&str> = HashSet::new();
        // What the unknown keys of this mapping share, worded once (there may be 100k).
        let mut unknown_words: Option<UnknownKeyWords<'a>> = None;
        for (key, value) in entries {
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
            present.insert(name);
            if let Some(property) = properties.and_then(|p| p.get(name)) {
                self.check(value, property, Some(name));
                continue;
            }
            match additional {
                Some(Value::Bool(false)) => {
                    let words =
                        unknown_words.get_or_insert_with(|| UnknownKeyWords::new(properties));
                    if let Some(meant) = self.unknown_key(key, name, words, &known) {
                        suggested.insert(meant);
                    }
                }
                Some(extra @ Value::Object(_)) => self.check(value, extra, Some(name)),
                _ => {}
            }
        }
        let defs = self.defs;
        let is_def = |name: &str| {
            defs.and_then(|d| d.get(name))
                .is_some_and(|v| std::ptr::eq(v, schema))
        };
        if is_def("VariableSpec") {
            self.check_variable_values(map);
        }
        let text_owner = if is_def("SectionSpec") {
            Some("a section")
        } else if is_def("ContextSpec") {
            Some("a context")
        } else {
            None
        };
        if let Some(owner) = text_owner {
            // A misspelt `text` is reported as that, not as missing too.
            if !suggested.contains("text") && !suggested.contains("textFile") {
                self.check_text_or_file(map, owner);
            }
            present.insert("text");
        }
        let required = schema.get("required").and_then(Value::as_array);
        for field in required.into_iter().flatten().filter_map(Value::as_str) {
            if present.contains(field) || suggested.contains(field) {
                continue;
            }
            let example = if field == "version" {
                format!("{field}: {FORMAT_VERSION}")
            } else {
                format!("{field}: ...")
            };
            self.out.push(
                Diagnostic::new(
                    DiagnosticKind::MissingField,
                    format!("missing required key `{field}`"),
                )
                .at(self.mapping_start(map))
                .help(format!("add `{example}` to this mapping")),
            );
        }
    }

    /// A section or context gives its text exactly once: `text`, or `textFile`.
    fn check_text_or_file(&mut self, map: NodeId, owner: &str) {
        let entries = self.entries(map);
        let tree = self.tree;
        let key = |name: &str| tree.entry(&entries, name).map(|(k, _)| k);
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
    fn check_variable_values(&mut self, map: NodeId) {
        let entries = self.entries(map);
        let tree = self.tree;
        let find = |key: &str| tree.entry(&entries, key).map(|(_, v)| v);
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
        self.wrong_type(at, &[(json_type, &Value::Null)], key);
        if let Some(d) = self.out.get_mut(mark)
            && d.help.is_none()
            && !s.is_text()
        {
            d.help = value_type.hint(s.text);
        }
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
        words: &UnknownKeyWords<'a>,
        known: &HashSet<&str>,
    ) -> Option<&'a str> {
        let message = match words.owner {
            Some(owner) => format!("unknown key `{name}` in {owner}"),
            None => format!("unknown key `{name}`"),
        };
        let unset = words
            .expected
            .iter()
            .copied()
            .filter(|k| !known.contains(k));
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

/// The words every unknown-key diagnostic of one mapping shares.
struct UnknownKeyWords<'a> {
    /// The keys the mapping takes.
    expected: Vec<&'a str>,
    /// What the mapping is ("the preset file", "a section"), when known.
    owner: Option<&'static str>,
    /// The help when no key is close: the allowed keys.
    allowed: String,
}

impl<'a> UnknownKeyWords<'a> {
    fn new(properties: Option<&'a Map<String, Value>>) -> Self {
        let expected: Vec<&'a str> = properties
            .map(|p| p.keys().map(String::as_str).collect())
            .unwrap_or_default();
        let allowed = if expected.is_empty() {
            "this mapping takes no keys".to_owned()
        } else {
            format!(
                "allowed keys here: {}",
                list_names(expected.iter().copied())
            )
        };
        UnknownKeyWords {
            owner: key_set_owner(&expected),
            expected,
            allowed,
        }
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

/// The branches of an `anyOf` or `oneOf`.
fn union(schema: &Value) -> Option<&[Value]> {
    schema
        .get("anyOf")
        .or_else(|| schema.get("oneOf"))
        .and_then(Value::as_array)
        .map(Vec::as_slice)
}

fn minimum(schema: &Value) -> Option<f64> {
    schema.get("minimum").and_then(Value::as_f64)
}

/// Can a node of this shape be of JSON Schema type `t`?
fn shape_fits(shape: Shape, t: &str) -> bool {
    match shape {
        Shape::Null => t == "null",
        Shape::List => t == "array",
        Shape::Mapping => t == "object",
        Shape::Scalar => matches!(t, "string" | "integer" | "number" | "boolean"),
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

/// The differential test: the rule walk ([`super::check`]) and this walk give the same
/// diagnostics (message, help, position, order) for every preset-like YAML file of the
/// repository and for mutated variants of each. By default a fixed sample of the
/// mutations (a few thousand documents); `SHAPE_DIFF_ALL=1` tries every mutation at
/// every line, and more variants with several (about 125,000 documents: use `--release`).
#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};
    use std::sync::Arc;

    use crate::preset::source::SourceFile;

    /// Documents the repository's files do not show: merge keys, aliases, tags, keys that
    /// are not names, other versions.
    const SEEDS: &[&str] = &[
        "version: 1\nname: x\npersona:\n  sections:\n    - &s {name: a, order: 1, text: t}\n    - <<: *s\n      name: b\n    - <<: [{name: c, order: 2}, {text: t, zzz: 1}]\n      textFile: f\n",
        "version: 1\nname: x\nmodel:\n  <<: 5\n  provider: openai\n  name: m\n",
        "version: 1\nname: x\nmodel: &m\n  provider: openai\n  name: m\n  maxTokens: -1\nbudget: *m\n",
        "base: &b {allow: [a], deny: 5}\nversion: 1\nname: x\ntools:\n  <<: *b\n  <<: {order: x}\n",
        "version: 2\nname: x\nbogus: 1\n",
        "version: \"1\"\nname: x\n",
        "version: 1.0\nname: x\n",
        "version: [1]\nname: x\n",
        "version: ~\nname: x\n",
        "version: true\nname: x\n",
        "version: !!str 1\nname: !!int 5\n",
        "version: 1\nname: x\n? [a, b]\n: 1\n? {k: v}\n: 2\n",
        "version: 1\nname: x\nextends: [a, b]\n",
        "version: 1\nname: x\nextends: []\n",
        "version: 1\nname: x\nextends:\n  - a\n",
        "version: 1\nname: x\nsections: []\nallow: [a]\nprovider: x\nmaxTokens: 5\n",
        "version: 1\nname: x\nvariables:\n  port: {type: integer, default: \"8080\", enum: [\"1\", 2, yes], description: d}\n  n: {type: number, default: .inf, enum: [1.5, x]}\n  b: {type: boolean, default: on, description: d}\n  s: {type: string, default: 5, description: d}\n  t: {type: int, description: d}\n  u: {type: [a], description: d}\n  v: 5\n  w: ~\n",
        "version: 1\nname: x\nmodel: {provider: openai-compat, name: m, maxTokens: 99999999999, strictTools: yes}\n",
        "version: 1\nname: x\nmodel: {provider: [openai], name: {a: 1}}\n",
        "version: 1\nname: x\nbudget: {maxSystemTokens: 0, maxToolTokens: -3}\n",
        "version: 1\nname: x\npersona:\n  sections:\n    - {name: a, order: \"5\", txt: t}\n    - {name: b, order: 1, text: t, textFile: f}\n    - {name: c, order: 1, textfile: f}\n    - name: d\n  includeRuntimeContext: \"true\"\n  remove: a\n",
        "version: 1\nname: x\ncontexts:\n  - {name: a, order: .nan, txt: t}\n  - {ordr: 1}\n  - 5\n  - ~\npassEnv: [1, [a], ~]\n",
        "- version: 1\n",
        "5\n",
        "~\n",
        "",
        "# only a comment\n",
        "version: 1\nname: x\n---\nversion: 1\n",
        "version: 1\nname: x\nname: y\nmodel: {name: a, name: b}\n",
        "version: 1\nname: x\n<<: [5, {tools: 5}]\n",
        "version: 1\nname: x\ntools: &t\n  allow: [a, *t]\n",
        "version: 1\nname: x\ntools: !custom {allow: [a]}\npersona: !!map {sections: !!seq []}\n",
        "version: 1\nname: x\nvariables:\n  A-b: {description: d}\n  ok: {description: d, required: 1, volatile: \"no\"}\n",
        "version: 1\nname: x\n\tbad: 1\n",
        "version: 1\nname: x\ndescripton: x\nmodel:\n  provider: deepsek\n  name: m\n  maxTokens: \"4096\"\n",
    ];

    /// What a value is replaced with.
    const VALUES: &[&str] = &[
        "",
        "~",
        "null",
        "[a, b]",
        "[]",
        "{a: 1}",
        "{}",
        "-5",
        "0",
        "1",
        "99999999999",
        "\"5\"",
        "'text'",
        "yes",
        "3.5",
        "true",
        ".inf",
        "!!str 5",
        "!!int x",
        "|\n  block",
        "openai",
        "string",
        "integer",
        "boolean",
        "*nope",
    ];

    fn yaml_files(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(read) = std::fs::read_dir(dir) else {
            return;
        };
        let mut entries: Vec<PathBuf> = read.filter_map(|e| e.ok().map(|e| e.path())).collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                yaml_files(&path, out);
            } else if path.extension().is_some_and(|e| e == "yaml" || e == "yml") {
                out.push(path);
            }
        }
    }

    /// `(indent with any "- ", key, value)` of a `key: value` line.
    fn split_line(line: &str) -> Option<(&str, &str, &str)> {
        let body = line.trim_start_matches([' ', '-']);
        let indent = &line[..line.len() - body.len()];
        if body.starts_with('#') || body.is_empty() {
            return None;
        }
        let colon = body.find(':')?;
        let (key, rest) = body.split_at(colon);
        if key.is_empty() || key.contains(['{', '[', '"', '\'']) {
            return None;
        }
        Some((indent, key, rest[1..].trim_start()))
    }

    /// The variants of `text` with line `at` changed.
    fn mutations(text: &str, at: usize) -> Vec<String> {
        let lines: Vec<&str> = text.lines().collect();
        let with = |replacement: Option<String>, keep: bool| {
            let mut out = String::new();
            for (i, line) in lines.iter().enumerate() {
                if i == at {
                    if keep {
                        out.push_str(line);
                        out.push('\n');
                    }
                    if let Some(r) = &replacement {
                        out.push_str(r);
                        out.push('\n');
                    }
                } else {
                    out.push_str(line);
                    out.push('\n');
                }
            }
            out
        };
        let mut out = vec![with(None, false), with(Some(lines[at].to_owned()), true)];
        let Some((indent, key, _)) = split_line(lines[at]) else {
            return out;
        };
        let mut keys = vec![
            format!("{key}x"),
            key[..key.len() - 1].to_owned(),
            "zzz".to_owned(),
            key.to_uppercase(),
            format!("\"{key}\""),
            "sections".to_owned(),
            "text".to_owned(),
            "order".to_owned(),
            "<<".to_owned(),
        ];
        let chars: Vec<char> = key.chars().collect();
        if chars.len() > 2 {
            let mut swapped = chars.clone();
            swapped.swap(1, 2);
            keys.push(swapped.into_iter().collect());
        }
        let value = &lines[at][indent.len() + key.len() + 1..];
        for k in keys {
            out.push(with(Some(format!("{indent}{k}:{value}")), false));
        }
        for v in VALUES {
            out.push(with(Some(format!("{indent}{key}: {v}")), false));
        }
        out
    }

    /// A small deterministic generator (xorshift), for the multi-mutation variants.
    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n.max(1) as u64) as usize
        }
    }

    fn compare(name: &str, text: &str, checked: &mut usize) {
        let source = match SourceFile::decode(Arc::from(name), text.as_bytes()) {
            Ok(source) => source,
            Err(_) => return,
        };
        let old = super::check(&source);
        let new = super::super::check(&source).err().unwrap_or_default();
        *checked += 1;
        assert!(
            old == new,
            "the rule walk differs from the schema walk on {name}:\n--- text\n{text}\n--- old\n{old:#?}\n--- new\n{new:#?}"
        );
    }

    #[test]
    fn rule_walk_gives_the_schema_walks_diagnostics() {
        let all = std::env::var_os("SHAPE_DIFF_ALL").is_some();
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut files = Vec::new();
        yaml_files(&root.join("tests"), &mut files);
        yaml_files(&root.join("presets"), &mut files);
        let mut docs: Vec<(String, String)> = SEEDS
            .iter()
            .enumerate()
            .map(|(i, s)| (format!("seed-{i}"), (*s).to_owned()))
            .collect();
        for path in files {
            if let Ok(text) = std::fs::read_to_string(&path) {
                docs.push((path.display().to_string(), text));
            }
        }
        assert!(docs.len() > 100, "found only {} documents", docs.len());
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let mut checked = 0;
        let mut differing = 0;
        for (name, text) in &docs {
            compare(name, text, &mut checked);
            let lines = text.lines().count();
            for at in 0..lines {
                let variants = mutations(text, at);
                // The sample: one mutation of every line of the seeds, and of one line in
                // six of the files.
                let sample = if all {
                    0..variants.len()
                } else if name.starts_with("seed-") || rng.below(6) == 0 {
                    let i = rng.below(variants.len());
                    i..i + 1
                } else {
                    0..0
                };
                for i in sample {
                    let variant = &variants[i];
                    differing += usize::from(variant != text);
                    compare(
                        &format!("{name} (line {at}, mutation {i})"),
                        variant,
                        &mut checked,
                    );
                }
            }
            // Variants with several changes at once.
            let rounds = if all { 40 } else { 1 };
            for round in 0..rounds {
                let mut variant = text.clone();
                for _ in 0..3 {
                    let lines = variant.lines().count();
                    if lines == 0 {
                        break;
                    }
                    let options = mutations(&variant, rng.below(lines));
                    variant = options[rng.below(options.len())].clone();
                }
                compare(&format!("{name} (round {round})"), &variant, &mut checked);
            }
        }
        assert!(differing > 500, "only {differing} mutated variants");
        assert!(checked > differing, "{checked} documents checked");
    }
}
