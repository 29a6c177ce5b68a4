//! What the crate's three JSON-Schema walkers share: the preset shape check's rule
//! compiler (`preset::shape::rules`, on every `validate`'s hot path), the tool-schema lint
//! (`provider::lint`) and the strict-mode rendering of tool schemas (`tools::schema`).
//!
//! They walk differently (the first compiles the schema once into rules and follows
//! `$ref`s as it goes, the second reads and reports with JSON pointers, the third rewrites
//! schemars' output in place), so what is shared is what they must agree on: the
//! keyword tables of strict mode, where a local `$ref` points, and what makes a schema
//! an object's. Plain functions and constants, no traversal framework: the rule compiler
//! stays a direct walk with no dynamic dispatch.

use serde_json::{Map, Value};

/// The prefix of a `$ref` to a definition of the same document (`#/$defs/NAME`).
pub(crate) const DEFS_REF_PREFIX: &str = "#/$defs/";

/// The definition a local `$ref` names (`#/$defs/NAME` → `NAME`).
#[inline]
pub(crate) fn local_def_name(reference: &str) -> Option<&str> {
    reference.strip_prefix(DEFS_REF_PREFIX)
}

/// Does the schema's `type` (a name or a list of names) include `name`?
pub(crate) fn has_type(schema: &Map<String, Value>, name: &str) -> bool {
    match schema.get("type") {
        Some(Value::String(t)) => t == name,
        Some(Value::Array(ts)) => ts.iter().any(|t| t == name),
        _ => false,
    }
}

/// The keywords a schema may use in strict mode: what OpenAI's, DeepSeek's (beta) and
/// Anthropic's strict tool use all support. Anything else is refused by one of them (or
/// silently ignored, which is worse: the model is never told about the constraint).
pub const STRICT_KEYWORDS: &[&str] = &[
    "$defs",
    "$ref",
    "additionalProperties",
    "anyOf",
    "definitions",
    "description",
    "enum",
    "items",
    "properties",
    "required",
    "type",
];

/// Keywords some provider's strict function calling rejects (or silently misapplies);
/// [`StrictMode`](crate::tools::schema::StrictMode) removes them. DeepSeek's strict mode is documented as supporting none
/// of `minimum`, `maximum`, `pattern`, `format`, `minLength`, `maxLength`, `multipleOf`,
/// `minItems` and `maxItems`; Anthropic's none of the numeric and length bounds; OpenAI's
/// none of the composition keywords. What is left is accepted by all of them.
pub const STRICT_FORBIDDEN_KEYWORDS: &[&str] = &[
    "$comment",
    "allOf",
    "const",
    "contains",
    "contentEncoding",
    "contentMediaType",
    "contentSchema",
    "default",
    "dependentRequired",
    "dependentSchemas",
    "deprecated",
    "else",
    "examples",
    "exclusiveMaximum",
    "exclusiveMinimum",
    "format",
    "if",
    "maxContains",
    "maxItems",
    "maxLength",
    "maxProperties",
    "maximum",
    "minContains",
    "minItems",
    "minLength",
    "minProperties",
    "minimum",
    "multipleOf",
    "not",
    "oneOf",
    "pattern",
    "patternProperties",
    "prefixItems",
    "propertyNames",
    "readOnly",
    "then",
    "title",
    "unevaluatedItems",
    "unevaluatedProperties",
    "uniqueItems",
    "writeOnly",
];

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// The strict rendering never removes a keyword strict mode accepts, and the lint
    /// accepts nothing the rendering removes: the two tables never overlap.
    #[test]
    fn the_strict_tables_are_disjoint() {
        for keyword in STRICT_KEYWORDS {
            assert!(!STRICT_FORBIDDEN_KEYWORDS.contains(keyword), "{keyword}");
        }
    }

    #[test]
    fn local_refs_and_types() {
        assert_eq!(local_def_name("#/$defs/Inner"), Some("Inner"));
        assert_eq!(local_def_name("#/definitions/Inner"), None);
        assert_eq!(local_def_name("https://example.com/s.json"), None);
        let map = |v: Value| v.as_object().cloned().unwrap_or_default();
        assert!(has_type(&map(json!({"type": "object"})), "object"));
        assert!(has_type(
            &map(json!({"type": ["null", "object"]})),
            "object"
        ));
        assert!(!has_type(&map(json!({"type": "array"})), "object"));
        assert!(!has_type(&map(json!({"properties": {}})), "object"));
    }
}
