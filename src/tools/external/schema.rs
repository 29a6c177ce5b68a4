//! Normalising a parameter schema written by someone else (an MCP server, a preset's
//! command tool) into the draft 2020-12 form the registry and the provider projections
//! work on.
//!
//! Accepted: draft 2020-12 and draft-07 (what most MCP servers send). Changed, each
//! change reported: `$schema` dropped; `definitions` → `$defs` with `$ref`s rewritten;
//! tuple `items: [..]` → `prefixItems` (and `additionalItems` → `items`); draft-07
//! `dependencies` → `dependentRequired` / `dependentSchemas`; a root with `properties` but
//! no `type` gets `"type": "object"`. Refused: a root that is not an object schema, a
//! `$ref` that leaves the document or points nowhere, a loop of `$ref`s that never reaches
//! a schema, and schemas too large or too deep to be a tool's parameters.

use serde_json::{Map, Value};

/// The largest parameter schema accepted, as compact JSON.
pub const MAX_SCHEMA_BYTES: usize = 256 * 1024;
/// The deepest nesting of JSON values accepted in a parameter schema.
pub const MAX_SCHEMA_DEPTH: usize = 64;

/// Keywords whose value is one subschema.
const ONE_SCHEMA: &[&str] = &[
    "additionalProperties",
    "additionalItems",
    "items",
    "contains",
    "propertyNames",
    "not",
    "if",
    "then",
    "else",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contentSchema",
];
/// Keywords whose value is an array of subschemas.
const SCHEMA_ARRAYS: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems", "items"];
/// Keywords whose value maps names to subschemas.
const SCHEMA_MAPS: &[&str] = &[
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];

/// Normalise `schema` (see the module documentation). Returns the normalised schema and
/// one line per change made (empty when it was already in form), or why it is refused.
pub fn normalize_schema(schema: &Value) -> Result<(Value, Vec<String>), String> {
    let Value::Object(root) = schema else {
        return Err(format!(
            "the parameter schema is {}, not a JSON object",
            kind_of(schema)
        ));
    };
    let size = serde_json::to_string(schema).map_or(usize::MAX, |s| s.len());
    if size > MAX_SCHEMA_BYTES {
        return Err(format!(
            "the parameter schema takes {size} bytes; at most {MAX_SCHEMA_BYTES} are accepted"
        ));
    }
    if depth(schema) > MAX_SCHEMA_DEPTH {
        return Err(format!(
            "the parameter schema nests deeper than {MAX_SCHEMA_DEPTH} levels"
        ));
    }
    let mut root = root.clone();
    let mut changes = Vec::new();
    if let Some(meta) = root.shift_remove("$schema") {
        let draft = meta.as_str().unwrap_or_default();
        if !(draft.contains("draft-07") || draft.contains("2020-12") || draft.contains("2019-09")) {
            return Err(format!(
                "the parameter schema declares `$schema: {meta}`; draft-07 and draft 2020-12 are accepted"
            ));
        }
        changes.push("dropped `$schema`".to_owned());
    }
    match root.get("type") {
        None if root.contains_key("properties") => {
            root.insert("type".into(), "object".into());
            changes.push("added `\"type\": \"object\"` at the root".to_owned());
        }
        Some(Value::String(t)) if t == "object" => {}
        other => {
            return Err(format!(
                "the parameter schema must describe a JSON object (`\"type\": \"object\"` at the root); it has {}",
                match other {
                    None => "no `type`".to_owned(),
                    Some(t) => format!("`\"type\": {t}`"),
                }
            ));
        }
    }
    let mut value = Value::Object(root);
    let mut renamed_definitions = false;
    rewrite(&mut value, &mut changes, &mut renamed_definitions);
    if renamed_definitions {
        rewrite_refs(&mut value);
    }
    check_refs(&value)?;
    changes.dedup();
    Ok((value, changes))
}

/// Check `schema` (normalised) against the draft 2020-12 meta-schema: the first problem,
/// if any, with its location in the schema.
pub fn check_meta_schema(schema: &Value) -> Result<(), String> {
    match jsonschema::draft202012::meta::validate(schema) {
        Ok(()) => Ok(()),
        Err(e) => {
            let path = e.instance_path().to_string();
            Err(if path.is_empty() {
                format!("not a valid JSON Schema: {e}")
            } else {
                format!("not a valid JSON Schema at `{path}`: {e}")
            })
        }
    }
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

fn depth(value: &Value) -> usize {
    // Iterative, so a hostile schema cannot overflow the stack here.
    let mut deepest = 0;
    let mut stack = vec![(value, 1usize)];
    while let Some((v, d)) = stack.pop() {
        deepest = deepest.max(d);
        if d > MAX_SCHEMA_DEPTH {
            break;
        }
        match v {
            Value::Array(items) => stack.extend(items.iter().map(|i| (i, d + 1))),
            Value::Object(map) => stack.extend(map.values().map(|i| (i, d + 1))),
            _ => {}
        }
    }
    deepest
}

/// Rewrite one schema object and its subschemas.
fn rewrite(schema: &mut Value, changes: &mut Vec<String>, renamed: &mut bool) {
    let Value::Object(obj) = schema else {
        return;
    };
    if obj.contains_key("definitions") {
        *renamed = true;
        changes.push("renamed `definitions` to `$defs` (and rewrote their `$ref`s)".to_owned());
        match obj.shift_remove("$defs") {
            // Both: one `$defs` where `definitions` was, `$defs` entries first.
            Some(Value::Object(mut defs)) => {
                if let Some(Value::Object(more)) = obj.get("definitions") {
                    for (k, v) in more {
                        defs.entry(k.clone()).or_insert_with(|| v.clone());
                    }
                }
                obj.insert("definitions".into(), Value::Object(defs));
            }
            Some(other) => {
                obj.insert("$defs".into(), other);
            }
            None => {}
        }
        rename_key(obj, "definitions", "$defs");
    }
    if matches!(obj.get("items"), Some(Value::Array(_))) {
        rename_key(obj, "items", "prefixItems");
        rename_key(obj, "additionalItems", "items");
        changes.push("turned tuple `items` into `prefixItems`".to_owned());
    }
    if let Some(Value::Object(dependencies)) = obj.get("dependencies") {
        let mut required = Map::new();
        let mut schemas = Map::new();
        for (k, v) in dependencies {
            if v.is_array() {
                required.insert(k.clone(), v.clone());
            } else {
                schemas.insert(k.clone(), v.clone());
            }
        }
        let mut rebuilt = Map::new();
        for (k, v) in std::mem::take(obj) {
            if k != "dependencies" {
                rebuilt.insert(k, v);
                continue;
            }
            if !required.is_empty() {
                rebuilt.insert(
                    "dependentRequired".into(),
                    Value::Object(std::mem::take(&mut required)),
                );
            }
            if !schemas.is_empty() {
                rebuilt.insert(
                    "dependentSchemas".into(),
                    Value::Object(std::mem::take(&mut schemas)),
                );
            }
        }
        *obj = rebuilt;
        changes.push(
            "split draft-07 `dependencies` into `dependentRequired`/`dependentSchemas`".to_owned(),
        );
    }
    for (key, child) in obj.iter_mut() {
        let key = key.as_str();
        if SCHEMA_MAPS.contains(&key) {
            if let Value::Object(map) = child {
                for sub in map.values_mut() {
                    rewrite(sub, changes, renamed);
                }
            }
        } else if SCHEMA_ARRAYS.contains(&key) && child.is_array() {
            if let Value::Array(items) = child {
                for sub in items {
                    rewrite(sub, changes, renamed);
                }
            }
        } else if ONE_SCHEMA.contains(&key) {
            rewrite(child, changes, renamed);
        }
    }
}

/// Rename key `from` to `to`, keeping its place (an existing `to` is replaced).
fn rename_key(obj: &mut Map<String, Value>, from: &str, to: &str) {
    if !obj.contains_key(from) {
        return;
    }
    let mut rebuilt = Map::new();
    for (k, v) in std::mem::take(obj) {
        if k == from {
            rebuilt.insert(to.to_owned(), v);
        } else if k != to {
            rebuilt.insert(k, v);
        }
    }
    *obj = rebuilt;
}

/// `#/definitions/...` → `#/$defs/...` everywhere.
fn rewrite_refs(value: &mut Value) {
    match value {
        Value::Object(obj) => {
            for (key, child) in obj.iter_mut() {
                if key == "$ref"
                    && let Value::String(r) = child
                    && let Some(rest) = r.strip_prefix("#/definitions/")
                {
                    *r = format!("#/$defs/{rest}");
                } else {
                    rewrite_refs(child);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(rewrite_refs),
        _ => {}
    }
}

/// Every `$ref` must be local and resolve, and following `$ref`s alone must reach a
/// schema that is more than a `$ref` (`a → b → a` describes nothing).
fn check_refs(root: &Value) -> Result<(), String> {
    let mut refs = Vec::new();
    collect_refs(root, &mut refs);
    for start in refs {
        let mut seen: Vec<&str> = Vec::new();
        let mut current = start;
        loop {
            if seen.contains(&current) {
                seen.push(current);
                return Err(format!(
                    "the parameter schema has a `$ref` loop: {}",
                    seen.join(" → ")
                ));
            }
            seen.push(current);
            let target = resolve(root, current)?;
            match target.get("$ref").and_then(Value::as_str) {
                Some(next) => current = next,
                None => break,
            }
        }
    }
    Ok(())
}

fn collect_refs<'a>(value: &'a Value, out: &mut Vec<&'a str>) {
    match value {
        Value::Object(obj) => {
            for (key, child) in obj {
                match (key.as_str(), child) {
                    ("$ref", Value::String(r)) => out.push(r),
                    // Values of `const`, `enum`, `default` and `examples` are data.
                    ("const" | "enum" | "default" | "examples", _) => {}
                    _ => collect_refs(child, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|i| collect_refs(i, out)),
        _ => {}
    }
}

/// The schema a local `$ref` (`#`, `#/$defs/x`) names.
fn resolve<'a>(root: &'a Value, reference: &str) -> Result<&'a Value, String> {
    let Some(pointer) = reference.strip_prefix('#') else {
        return Err(format!(
            "the parameter schema refers to `{reference}`, outside itself; only local references (`#/$defs/...`) are accepted"
        ));
    };
    let decoded = percent_decode(pointer);
    root.pointer(&decoded).ok_or_else(|| {
        format!("the parameter schema refers to `{reference}`, which it does not contain")
    })
}

/// `%25` and friends in a JSON pointer written in a URI fragment.
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(hex) = bytes.get(i + 1..i + 3)
            && let Ok(hex) = std::str::from_utf8(hex)
            && let Ok(b) = u8::from_str_radix(hex, 16)
        {
            out.push(b);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn draft_07_is_brought_to_2020_12() {
        let schema = json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {
                "point": {"type": "array", "items": [{"type": "number"}, {"type": "number"}], "additionalItems": false},
                "tag": {"$ref": "#/definitions/tag"}
            },
            "definitions": {"tag": {"type": "string"}},
            "dependencies": {"a": ["b"]}
        });
        let (out, changes) = normalize_schema(&schema).unwrap();
        assert_eq!(
            out,
            json!({
                "type": "object",
                "properties": {
                    "point": {"type": "array", "prefixItems": [{"type": "number"}, {"type": "number"}], "items": false},
                    "tag": {"$ref": "#/$defs/tag"}
                },
                "$defs": {"tag": {"type": "string"}},
                "dependentRequired": {"a": ["b"]}
            })
        );
        assert_eq!(changes.len(), 4, "{changes:?}");
        // The author's key order is kept (renamed keys stay where they were).
        let keys: Vec<&String> = out.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["type", "properties", "$defs", "dependentRequired"]);
        assert!(check_meta_schema(&out).is_ok());
        // Already normal: unchanged, nothing reported.
        let (again, changes) = normalize_schema(&out).unwrap();
        assert_eq!(again, out);
        assert!(changes.is_empty());
    }

    #[test]
    fn refused_schemas_say_why() {
        assert!(
            normalize_schema(&json!("x"))
                .unwrap_err()
                .contains("a string")
        );
        assert!(
            normalize_schema(&json!({"type": "string"}))
                .unwrap_err()
                .contains("JSON object")
        );
        assert!(
            normalize_schema(&json!({}))
                .unwrap_err()
                .contains("no `type`")
        );
        let remote =
            json!({"type": "object", "properties": {"a": {"$ref": "https://x.example/s.json"}}});
        assert!(
            normalize_schema(&remote)
                .unwrap_err()
                .contains("outside itself")
        );
        let dangling = json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/nope"}}});
        assert!(
            normalize_schema(&dangling)
                .unwrap_err()
                .contains("does not contain")
        );
        let looped = json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/x"}},
            "$defs": {"x": {"$ref": "#/$defs/y"}, "y": {"$ref": "#/$defs/x"}}});
        assert!(normalize_schema(&looped).unwrap_err().contains("loop"));
        let mut deep = json!({"type": "string"});
        for _ in 0..70 {
            deep = json!({"type": "array", "items": deep});
        }
        let deep = json!({"type": "object", "properties": {"a": deep}});
        assert!(normalize_schema(&deep).unwrap_err().contains("deeper"));
        let big = json!({"type": "object", "description": "x".repeat(MAX_SCHEMA_BYTES)});
        assert!(normalize_schema(&big).unwrap_err().contains("bytes"));
        assert!(
            normalize_schema(
                &json!({"$schema": "http://json-schema.org/draft-04/schema#", "type": "object"})
            )
            .unwrap_err()
            .contains("draft-07")
        );
    }

    #[test]
    fn recursion_through_a_schema_is_fine() {
        let tree = json!({"type": "object", "properties": {"root": {"$ref": "#/$defs/node"}},
            "$defs": {"node": {"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}}}}});
        assert!(normalize_schema(&tree).is_ok());
    }

    #[test]
    fn meta_schema_problems_are_located() {
        let bad = json!({"type": "object", "properties": {"a": {"type": "strnig"}}});
        let e = check_meta_schema(&bad).unwrap_err();
        assert!(e.contains("/properties/a/type"), "{e}");
    }
}
