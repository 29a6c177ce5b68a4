//! Parameter schemas generated from Rust types with `schemars`, in two renderings:
//! *portable* (draft 2020-12 as schemars makes it) and *strict* (the subset every
//! provider's strict function calling accepts: OpenAI, DeepSeek's beta endpoint,
//! Anthropic), and the committed schema files of the built-in tools.

use schemars::transform::{Transform, transform_subschemas};
use schemars::{JsonSchema, Schema};
use serde_json::{Map, Value};
use std::sync::Arc;

use super::ToolCatalog;
use crate::diagnostic::{Diagnostic, DiagnosticKind};
use crate::json_schema::has_type;

/// Both renderings of one tool's parameter schema.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolSchemas {
    /// Draft 2020-12, as schemars generates it (with `$schema`, `title` and the root
    /// `description` removed). Shared: every wire projection of the tool (one per preset
    /// that shows it, when a batch is validated) points at this one value.
    pub portable: Arc<Value>,
    /// Strict-mode rendering: every object closed, every property required (optional ones
    /// nullable), none of the keywords any provider's strict mode rejects.
    pub strict: Arc<Value>,
}

impl ToolSchemas {
    /// Generate both renderings for `T`.
    pub fn for_type<T: JsonSchema>() -> Result<Self, Diagnostic> {
        let portable = portable_schema::<T>();
        let strict = strict_schema::<T>();
        for schema in [&portable, &strict] {
            if !schema.is_object() || schema.get("type") != Some(&Value::from("object")) {
                return Err(Diagnostic::new(
                    DiagnosticKind::WrongType,
                    "a tool's parameter schema must describe a JSON object",
                ));
            }
        }
        Ok(ToolSchemas {
            portable: Arc::new(portable),
            strict: Arc::new(strict),
        })
    }
}

impl ToolSchemas {
    /// Both renderings of a schema given as JSON (a tool defined at run time): `portable`
    /// as given, `strict` derived with [`StrictMode`]. The root must be an object schema.
    pub fn from_portable(portable: Value) -> Result<Self, Diagnostic> {
        if portable.get("type") != Some(&Value::from("object")) {
            return Err(Diagnostic::new(
                DiagnosticKind::WrongType,
                "a tool's parameter schema must describe a JSON object (`\"type\": \"object\"` at the root)",
            ));
        }
        let strict = strict_from_portable(&portable);
        Ok(ToolSchemas {
            portable: Arc::new(portable),
            strict: Arc::new(strict),
        })
    }
}

/// The strict rendering of a schema given as JSON: [`StrictMode`] applied throughout
/// (`$ref`s are kept; strict mode accepts local `$defs` references).
pub fn strict_from_portable(portable: &Value) -> Value {
    match Schema::try_from(portable.clone()) {
        Ok(mut schema) => {
            StrictMode.transform(&mut schema);
            schema.to_value()
        }
        Err(_) => portable.clone(),
    }
}

/// Visit every parameter description of a tool's schema with its path: a property is
/// its name (`command`), a nested one is joined with `.` (`todos.item.content`, `item`
/// for an array's items). `$defs` are visited at the path of their first `$ref`, so the
/// portable and the strict rendering (which inlines them) give the same paths.
pub fn visit_param_descriptions(schema: &mut Value, visit: &mut dyn FnMut(&str, &mut String)) {
    let mut refs: Vec<(String, String)> = Vec::new();
    walk_descriptions(schema, "", &mut refs, visit);
    let mut done: Vec<String> = Vec::new();
    while let Some((name, path)) = refs.iter().find(|(n, _)| !done.contains(n)).cloned() {
        done.push(name.clone());
        if let Some(def) = schema
            .get_mut("$defs")
            .and_then(|d| d.get_mut(name.as_str()))
        {
            walk_descriptions(def, &path, &mut refs, visit);
        }
    }
}

fn walk_descriptions(
    node: &mut Value,
    path: &str,
    refs: &mut Vec<(String, String)>,
    visit: &mut dyn FnMut(&str, &mut String),
) {
    let Some(obj) = node.as_object_mut() else {
        return;
    };
    if !path.is_empty()
        && let Some(Value::String(d)) = obj.get_mut("description")
    {
        visit(path, d);
    }
    if let Some(Value::String(r)) = obj.get("$ref")
        && let Some(name) = r.strip_prefix("#/$defs/")
        && !refs.iter().any(|(n, _)| n == name)
    {
        refs.push((name.to_owned(), path.to_owned()));
    }
    let join = |name: &str| {
        if path.is_empty() {
            name.to_owned()
        } else {
            format!("{path}.{name}")
        }
    };
    if let Some(Value::Object(props)) = obj.get_mut("properties") {
        for (name, p) in props.iter_mut() {
            walk_descriptions(p, &join(name), refs, visit);
        }
    }
    if let Some(items) = obj.get_mut("items") {
        walk_descriptions(items, &join("item"), refs, visit);
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(Value::Array(alts)) = obj.get_mut(key) {
            for alt in alts {
                walk_descriptions(alt, path, refs, visit);
            }
        }
    }
}

/// Every parameter description of a schema, by path (see [`visit_param_descriptions`]),
/// each path once, in the order met.
pub fn param_descriptions(schema: &Value) -> Vec<(String, String)> {
    let mut copy = schema.clone();
    let mut out: Vec<(String, String)> = Vec::new();
    visit_param_descriptions(&mut copy, &mut |path, d| {
        if !out.iter().any(|(p, _)| p == path) {
            out.push((path.to_owned(), d.clone()));
        }
    });
    out
}

fn settings() -> schemars::generate::SchemaSettings {
    schemars::generate::SchemaSettings::draft2020_12()
}

/// Remove what the root schema carries for documents rather than for tool parameters:
/// `$schema`, `title` (the Rust type's name) and `description` (the argument struct's doc
/// comment; the tool's own description already says what the tool does, so the wire
/// would carry it twice).
fn strip_meta(mut value: Value) -> Value {
    if let Some(obj) = value.as_object_mut() {
        obj.remove("$schema");
        obj.remove("title");
        obj.remove("description");
    }
    value
}

/// The portable rendering of `T`'s schema.
pub fn portable_schema<T: JsonSchema>() -> Value {
    let schema = settings().into_generator().into_root_schema_for::<T>();
    strip_meta(schema.to_value())
}

/// The strict rendering of `T`'s schema: subschemas inlined (recursive types keep their
/// `$ref`s), then [`StrictMode`] applied throughout.
pub fn strict_schema<T: JsonSchema>() -> Value {
    let mut settings = settings().with_transform(StrictMode);
    settings.inline_subschemas = true;
    let schema = settings.into_generator().into_root_schema_for::<T>();
    strip_meta(schema.to_value())
}

pub use crate::json_schema::STRICT_FORBIDDEN_KEYWORDS;

/// A schemars [`Transform`] producing the strict-mode dialect every provider accepts:
///
/// - every object schema gets `additionalProperties: false` and lists every property in
///   `required`; a property that was optional becomes nullable (`"type": ["string",
///   "null"]` for primitive types, `anyOf` with `{"type": "null"}` for objects, arrays
///   and anything else — also where schemars itself wrote `"type": ["object", "null"]`),
///   so a strict-mode model sends `null` where a portable caller would leave it out;
/// - `oneOf` becomes `anyOf` and `const` a one-value `enum` (strict mode supports only
///   the latter of each);
/// - every keyword in [`STRICT_FORBIDDEN_KEYWORDS`] goes — bounds (`minimum`,
///   `maxLength`, …), `pattern` and `format` included; `description` stays.
///
/// Dropping a constraint (`maximum`, `allOf`, …) only makes the strict rendering looser
/// than the portable one; the registry validates every call against the portable schema,
/// so the dropped constraint is still enforced.
#[derive(Clone, Copy, Debug, Default)]
pub struct StrictMode;

impl Transform for StrictMode {
    fn transform(&mut self, schema: &mut Schema) {
        if let Some(obj) = schema.as_object_mut() {
            if let Some(one_of) = obj.remove("oneOf") {
                match obj.get_mut("anyOf").and_then(Value::as_array_mut) {
                    // Both present: each must hold, which strict mode cannot say; keep
                    // the alternatives of both (looser, never stricter than intended).
                    Some(any_of) => any_of.extend(one_of.as_array().into_iter().flatten().cloned()),
                    None => {
                        obj.insert("anyOf".to_owned(), one_of);
                    }
                }
            }
            if let Some(value) = obj.remove("const") {
                obj.insert("enum".to_owned(), Value::Array(vec![value]));
            }
        }
        transform_subschemas(self, schema);
        let Some(obj) = schema.as_object_mut() else {
            return;
        };
        for keyword in STRICT_FORBIDDEN_KEYWORDS {
            obj.remove(*keyword);
        }
        if is_object_schema(obj) {
            close_object(obj);
        }
        split_nullable_container(schema);
    }
}

/// `"type": ["object", "null"]` (how schemars makes an inlined `Option<Struct>` or
/// `Option<Vec<_>>` nullable) becomes `anyOf: [{..., "type": "object"}, {"type": "null"}]`:
/// strict mode takes type lists for primitives only.
fn split_nullable_container(schema: &mut Schema) {
    let Some(obj) = schema.as_object_mut() else {
        return;
    };
    let Some(Value::Array(types)) = obj.get("type") else {
        return;
    };
    let container = types.iter().any(|t| t == "object" || t == "array");
    if !container || !types.iter().any(|t| t == "null") {
        return;
    }
    let mut rest: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
    let single = (rest.len() == 1).then(|| rest.remove(0));
    obj.insert("type".to_owned(), single.unwrap_or(Value::Array(rest)));
    let description = obj.remove("description");
    let inner = Value::Object(std::mem::take(obj));
    obj.insert(
        "anyOf".to_owned(),
        Value::Array(vec![inner, serde_json::json!({ "type": "null" })]),
    );
    if let Some(d) = description {
        obj.insert("description".to_owned(), d);
    }
}

fn is_object_schema(obj: &Map<String, Value>) -> bool {
    obj.contains_key("properties") || has_type(obj, "object")
}

/// `additionalProperties: false`, every property required, the optional ones nullable.
fn close_object(obj: &mut Map<String, Value>) {
    let required: Vec<String> = obj
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect();
    let properties = obj
        .entry("properties")
        .or_insert_with(|| Value::Object(Map::new()));
    let mut names = Vec::new();
    if let Some(properties) = properties.as_object_mut() {
        for (name, property) in properties.iter_mut() {
            if !required.contains(name) {
                make_nullable(property);
            }
            names.push(Value::String(name.clone()));
        }
    }
    obj.insert("required".to_owned(), Value::Array(names));
    obj.insert("additionalProperties".to_owned(), Value::Bool(false));
}

/// `args` without the `null`s a strict-mode model sends for optional properties
/// (properties not in `required`) whose schema does not accept `null` — at every level
/// the portable `schema` describes (`properties`, `items`, local `$ref`s).
pub(crate) fn drop_optional_nulls(schema: &Value, mut args: Value) -> Value {
    drop_nulls_at(schema, schema, &mut args, 0);
    args
}

fn drop_nulls_at(root: &Value, schema: &Value, value: &mut Value, depth: usize) {
    if depth > 64 {
        return;
    }
    let mut schema = schema;
    for _ in 0..8 {
        match schema.get("$ref").and_then(Value::as_str) {
            Some(r) => match r.strip_prefix('#').and_then(|p| root.pointer(p)) {
                Some(target) => schema = target,
                None => return,
            },
            None => break,
        }
    }
    match value {
        Value::Object(map) => {
            let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
                return;
            };
            let required: Vec<&str> = schema
                .get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            map.retain(|k, v| {
                !(v.is_null()
                    && !required.contains(&k.as_str())
                    && properties.get(k).is_some_and(|p| !accepts_null(p)))
            });
            for (k, v) in map.iter_mut() {
                if let Some(p) = properties.get(k) {
                    drop_nulls_at(root, p, v, depth + 1);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item) = schema.get("items").filter(|i| i.is_object()) {
                for v in items {
                    drop_nulls_at(root, item, v, depth + 1);
                }
            }
        }
        _ => {}
    }
}

/// Does the schema already accept `null`?
fn accepts_null(schema: &Value) -> bool {
    let Some(obj) = schema.as_object() else {
        return schema == &Value::Bool(true);
    };
    let type_null = match obj.get("type") {
        Some(Value::String(t)) => t == "null",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "null"),
        _ => false,
    };
    type_null
        || obj
            .get("enum")
            .and_then(Value::as_array)
            .is_some_and(|e| e.contains(&Value::Null))
        || obj
            .get("anyOf")
            .and_then(Value::as_array)
            .is_some_and(|branches| branches.iter().any(accepts_null))
}

/// Let `schema` also accept `null`: a primitive type gains `"null"` (and a `null` enum
/// value); anything else is wrapped as `anyOf: [schema, {"type": "null"}]`, keeping its
/// description outside.
fn make_nullable(schema: &mut Value) {
    if accepts_null(schema) {
        return;
    }
    let Some(obj) = schema.as_object_mut() else {
        return;
    };
    let primitive = |t: &Value| {
        matches!(
            t.as_str(),
            Some("string" | "number" | "integer" | "boolean")
        )
    };
    let has_primitive_type = match obj.get("type") {
        Some(t @ Value::String(_)) => primitive(t),
        Some(Value::Array(ts)) => !ts.is_empty() && ts.iter().all(primitive),
        _ => false,
    };
    if has_primitive_type {
        let types = match obj.remove("type") {
            Some(Value::Array(mut ts)) => {
                ts.push(Value::from("null"));
                ts
            }
            Some(t) => vec![t, Value::from("null")],
            None => vec![Value::from("null")],
        };
        obj.insert("type".to_owned(), Value::Array(types));
        if let Some(values) = obj.get_mut("enum").and_then(Value::as_array_mut) {
            values.push(Value::Null);
        }
        return;
    }
    let description = obj.remove("description");
    let inner = Value::Object(std::mem::take(obj));
    obj.insert(
        "anyOf".to_owned(),
        Value::Array(vec![inner, serde_json::json!({ "type": "null" })]),
    );
    if let Some(d) = description {
        obj.insert("description".to_owned(), d);
    }
}

/// The committed schema files of the built-in tools: for each tool,
/// `schemas/tools/<name>.json` (portable) and `schemas/tools/<name>.strict.json`
/// (strict), as `(path relative to the crate root, contents)`, pretty-printed with a
/// trailing newline, in byte order of the paths.
///
/// `tests/integration/schema_drift.rs` checks the committed files against this; the CLI's
/// `schema --write` writes it.
pub fn builtin_schema_files() -> Vec<(String, String)> {
    let catalog = ToolCatalog::builtin();
    let mut files = Vec::with_capacity(catalog.len() * 2);
    for tool in catalog.iter() {
        let schemas = tool.schemas();
        for (suffix, schema) in [
            ("json", &schemas.portable),
            ("strict.json", &schemas.strict),
        ] {
            files.push((
                format!("schemas/tools/{}.{suffix}", tool.name()),
                pretty(schema),
            ));
        }
    }
    files.sort();
    files
}

/// Pretty JSON (two-space indent) with a trailing newline.
fn pretty(value: &Value) -> String {
    let mut text = serde_json::to_string_pretty(value).unwrap_or_else(|e| {
        // A `Value` always serializes; keep the file valid JSON regardless.
        serde_json::json!({ "error": e.to_string() }).to_string()
    });
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[derive(JsonSchema)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Inner {
        /// A name.
        name: String,
    }

    #[derive(JsonSchema)]
    #[allow(dead_code)]
    enum Mode {
        /// Fast.
        Fast,
        /// Slow.
        Slow,
    }

    #[derive(JsonSchema)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Args {
        /// Required, nested.
        inner: Inner,
        /// Optional, nested.
        maybe: Option<Inner>,
        /// Optional list.
        list: Option<Vec<String>>,
        /// A small number.
        small: u8,
        /// Bounded by hand.
        #[schemars(range(min = 1, max = 9))]
        bounded: u64,
        /// With a default.
        #[serde(default)]
        flag: bool,
        /// Documented variants.
        mode: Mode,
        /// Bounded length.
        #[schemars(length(min = 1, max = 3))]
        short: String,
    }

    #[test]
    fn strict_rendering_of_a_rich_type() {
        let strict = strict_schema::<Args>();
        assert_eq!(
            strict,
            json!({
                "type": "object",
                "properties": {
                    "inner": {
                        "description": "Required, nested.",
                        "type": "object",
                        "properties": {"name": {"description": "A name.", "type": "string"}},
                        "additionalProperties": false,
                        "required": ["name"]
                    },
                    "maybe": {
                        "anyOf": [
                            {
                                "type": "object",
                                "properties": {"name": {"description": "A name.", "type": "string"}},
                                "additionalProperties": false,
                                "required": ["name"]
                            },
                            {"type": "null"}
                        ],
                        "description": "Optional, nested."
                    },
                    "list": {
                        "anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}],
                        "description": "Optional list."
                    },
                    "small": {"description": "A small number.", "type": "integer"},
                    "bounded": {"description": "Bounded by hand.", "type": "integer"},
                    "flag": {"description": "With a default.", "type": ["boolean", "null"]},
                    "mode": {
                        "description": "Documented variants.",
                        "anyOf": [
                            {"type": "string", "enum": ["Fast"], "description": "Fast."},
                            {"type": "string", "enum": ["Slow"], "description": "Slow."}
                        ]
                    },
                    "short": {"description": "Bounded length.", "type": "string"}
                },
                "required": ["inner", "maybe", "list", "small", "bounded", "flag", "mode", "short"],
                "additionalProperties": false
            })
        );
    }

    #[test]
    fn portable_rendering_is_left_as_schemars_makes_it() {
        let portable = portable_schema::<Args>();
        assert!(portable.get("$schema").is_none());
        assert!(portable.get("title").is_none());
        assert_eq!(portable["properties"]["small"]["format"], "uint8");
        assert_eq!(portable["properties"]["flag"]["default"], false);
        assert!(portable["$defs"]["Inner"].is_object());
    }

    #[test]
    fn make_nullable_handles_every_shape() {
        let mut s = json!({"type": "string", "enum": ["a"]});
        make_nullable(&mut s);
        assert_eq!(s, json!({"type": ["string", "null"], "enum": ["a", null]}));
        let mut s = json!({"type": ["string", "null"]});
        make_nullable(&mut s);
        assert_eq!(s, json!({"type": ["string", "null"]}));
        let mut s = json!({"$ref": "#/$defs/X", "description": "d"});
        make_nullable(&mut s);
        assert_eq!(
            s,
            json!({"anyOf": [{"$ref": "#/$defs/X"}, {"type": "null"}], "description": "d"})
        );
    }
}
