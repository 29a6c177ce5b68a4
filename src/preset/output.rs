//! `output:`: the contract of the final answer — a JSON Schema it must satisfy and how
//! many more answers the model may give when it does not (docs/format.md, "Output
//! contract").
//!
//! What `validate` checks, per file: the schema is an object schema, valid JSON Schema
//! (draft 2020-12 or draft-07, normalised like a command tool's parameters), every
//! `$ref` local, bounded in size and depth ([`invalid-output-schema`]); per dialect the
//! preset can run on (the nearest `model.provider`, or OpenAI and Anthropic when none
//! is named): what its structured-output mode refuses ([`output-schema-refused`]) and
//! the keywords it does not support, which it receives without and which are then
//! checked locally only ([`output-schema-projected`]). DeepSeek's JSON mode enforces no
//! schema at all: the schema goes into the instructions and is checked locally.
//!
//! [`invalid-output-schema`]: crate::codes::P0760
//! [`output-schema-projected`]: crate::codes::P0761
//! [`output-schema-refused`]: crate::codes::P0762

use std::sync::Arc;

use serde_json::Value;

use super::source::ParsedPreset;
use super::spec::Provider;
use crate::diagnostic::{Diagnostic, DiagnosticKind, Span};
use crate::json_schema::STRICT_FORBIDDEN_KEYWORDS;
use crate::tools::external::{check_meta_schema, normalize_schema};

/// How many more answers the model may give after one that fails the schema, when
/// `output.retries` is not set.
pub const DEFAULT_OUTPUT_RETRIES: u32 = 2;

/// OpenAI's structured outputs: the deepest nesting of object schemas accepted.
pub const OPENAI_MAX_OBJECT_NESTING: usize = 10;
/// OpenAI's structured outputs: the most object properties in one schema.
pub const OPENAI_MAX_PROPERTIES: usize = 5000;

/// Keywords that make the root of an output schema something other than one plain
/// object: refused at the root by OpenAI's and Anthropic's structured outputs.
const ROOT_COMPOSITION: &[&str] = &["allOf", "anyOf", "enum", "if", "not", "oneOf"];

/// The output contract in force for a run.
#[derive(Clone, Debug, PartialEq)]
pub struct OutputContract {
    /// The schema, normalised (draft 2020-12): what the answer is validated against.
    pub schema: Arc<Value>,
    /// How many more answers after one that fails it.
    pub retries: u32,
}

impl OutputContract {
    /// The schema in the strict form OpenAI's and Anthropic's structured outputs take
    /// (closed objects, every property required, optional ones nullable, unsupported
    /// keywords dropped).
    pub fn strict_schema(&self) -> Value {
        crate::tools::schema::strict_from_portable(&self.schema)
    }

    /// `answer` without the `null`s a strict-mode model sends for optional properties
    /// whose schema does not accept `null` (what [`strict_schema`](Self::strict_schema)
    /// asked for), ready to validate against [`schema`](Self::schema).
    pub fn drop_optional_nulls(&self, answer: Value) -> Value {
        crate::tools::schema::drop_optional_nulls(&self.schema, answer)
    }
}

/// The contract of the chain: the nearest `output` (a child replaces its parent's
/// whole). `None` when no preset sets one, or when its schema is unusable (which
/// `validate` reports).
pub(crate) fn output_of(chain: &[&ParsedPreset]) -> Option<OutputContract> {
    let spec = chain.iter().rev().find_map(|p| p.file.output.as_ref())?;
    let (schema, _) = normalize_schema(&spec.schema.as_ref()?.value).ok()?;
    Some(OutputContract {
        schema: Arc::new(schema),
        retries: spec
            .retries
            .as_ref()
            .map_or(DEFAULT_OUTPUT_RETRIES, |r| r.value),
    })
}

/// What one file's `output` gets wrong on its own.
pub(crate) fn check_file(preset: &ParsedPreset, out: &mut Vec<Diagnostic>) {
    let Some(spec) = &preset.file.output else {
        return;
    };
    let Some(schema) = &spec.schema else {
        out.push(
            Diagnostic::new(
                DiagnosticKind::InvalidOutputSchema,
                "`output` gives neither `schema` nor `schemaFile`",
            )
            .at(preset.span_of(&preset.file.name))
            .help("add `schema: {type: object, properties: {…}, required: […]}` under `output`, or `schemaFile: answer.schema.json`"),
        );
        return;
    };
    let span = preset.span_of(schema);
    let normalised = match normalize_schema(&schema.value) {
        Ok((s, _)) => s,
        Err(e) => {
            out.push(
                Diagnostic::new(
                    DiagnosticKind::InvalidOutputSchema,
                    format!(
                        "`output.schema`: {}",
                        e.replacen("the parameter schema", "the output schema", 1)
                    ),
                )
                .at(span)
                .help("write an object schema: `{type: object, properties: {verdict: {enum: [pass, fail]}}, required: [verdict]}`"),
            );
            return;
        }
    };
    if let Err(e) = check_meta_schema(&normalised) {
        out.push(
            Diagnostic::new(
                DiagnosticKind::InvalidOutputSchema,
                format!("`output.schema` is {e}"),
            )
            .at(span)
            .help("fix the schema (JSON Schema draft 2020-12 or draft-07)"),
        );
    }
}

/// The chain's contract against each dialect it can run on: what a provider's
/// structured outputs refuse (errors) or receive without (warnings). Call after
/// [`check_file`] found nothing wrong with the schema.
pub(crate) fn check_dialects(chain: &[&ParsedPreset], out: &mut Vec<Diagnostic>) {
    let Some((preset, spec)) = chain
        .iter()
        .rev()
        .find_map(|p| p.file.output.as_ref().map(|o| (*p, o)))
    else {
        return;
    };
    let (Some(written), Some(contract)) = (&spec.schema, output_of(chain)) else {
        return;
    };
    let span = preset.span_of(written);
    let model = chain.iter().rev().find_map(|p| p.file.model.as_ref());
    let providers: Vec<&str> = match model.map(|m| m.provider.value) {
        Some(Provider::Deepseek) => Vec::new(),
        Some(Provider::Anthropic) => vec!["anthropic"],
        Some(Provider::Openai) => vec!["openai"],
        // An OpenAI-compatible server gets OpenAI's form; what it enforces is its own.
        Some(_) => vec!["openai-compatible"],
        None => vec!["openai", "anthropic"],
    };
    for provider in providers {
        check_one(provider, &contract, &span, out);
    }
}

fn check_one(provider: &str, contract: &OutputContract, span: &Span, out: &mut Vec<Diagnostic>) {
    let schema = &contract.schema;
    let root: Vec<&str> = ROOT_COMPOSITION
        .iter()
        .copied()
        .filter(|k| schema.get(*k).is_some())
        .collect();
    if !root.is_empty() {
        out.push(
            Diagnostic::new(
                DiagnosticKind::OutputSchemaRefused,
                format!(
                    "{provider}'s structured outputs refuse `{}` at the root of the output schema",
                    root.join("`, `")
                ),
            )
            .at(span.clone())
            .help("make the root one plain object and move the alternatives into a property: `{type: object, properties: {result: {anyOf: […]}}, required: [result]}`"),
        );
    }
    if provider != "anthropic" {
        let nesting = object_nesting(schema);
        if nesting > OPENAI_MAX_OBJECT_NESTING {
            out.push(
                Diagnostic::new(
                    DiagnosticKind::OutputSchemaRefused,
                    format!(
                        "{provider}'s structured outputs take objects nested at most {OPENAI_MAX_OBJECT_NESTING} deep; the output schema nests {nesting}"
                    ),
                )
                .at(span.clone())
                .help("flatten the answer: fewer objects inside objects"),
            );
        }
        let properties = property_count(schema);
        if properties > OPENAI_MAX_PROPERTIES {
            out.push(
                Diagnostic::new(
                    DiagnosticKind::OutputSchemaRefused,
                    format!(
                        "{provider}'s structured outputs take at most {OPENAI_MAX_PROPERTIES} properties; the output schema has {properties}"
                    ),
                )
                .at(span.clone())
                .help("ask for a smaller answer"),
            );
        }
    }
    let mut dropped = Vec::new();
    forbidden_keywords(schema, &mut dropped);
    dropped.sort_unstable();
    dropped.dedup();
    if !dropped.is_empty() {
        out.push(
            Diagnostic::new(
                DiagnosticKind::OutputSchemaProjected,
                format!(
                    "{provider}'s structured outputs do not support `{}`: the provider receives the output schema without, and the answer is checked against them locally only (a failing answer is retried)",
                    dropped.join("`, `")
                ),
            )
            .at(span.clone())
            .help("use `enum` and `type` where you can (the provider enforces them); keep the others if a local check and a retry are enough"),
        );
    }
}

/// Every keyword of [`STRICT_FORBIDDEN_KEYWORDS`] used somewhere in `schema` as a
/// keyword (not as a property name).
fn forbidden_keywords(schema: &Value, found: &mut Vec<&'static str>) {
    let mut stack = vec![schema];
    while let Some(value) = stack.pop() {
        match value {
            Value::Object(map) => {
                for (key, child) in map {
                    if let Some(k) = STRICT_FORBIDDEN_KEYWORDS.iter().find(|k| **k == key) {
                        found.push(k);
                    }
                    match key.as_str() {
                        // Maps of names to subschemas: the names are not keywords.
                        "properties" | "$defs" | "definitions" | "patternProperties"
                        | "dependentSchemas" => {
                            stack.extend(child.as_object().into_iter().flat_map(|m| m.values()));
                        }
                        // Values, not schemas.
                        "enum" | "const" | "required" | "examples" | "default" => {}
                        _ => stack.push(child),
                    }
                }
            }
            Value::Array(items) => stack.extend(items),
            _ => {}
        }
    }
}

/// How deep object schemas nest (`properties` inside `properties`, through `items`).
fn object_nesting(schema: &Value) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(schema, 0usize)];
    while let Some((value, depth)) = stack.pop() {
        let Value::Object(map) = value else {
            if let Value::Array(items) = value {
                stack.extend(items.iter().map(|v| (v, depth)));
            }
            continue;
        };
        let here = if map.contains_key("properties") {
            depth + 1
        } else {
            depth
        };
        deepest = deepest.max(here);
        for (key, child) in map {
            match key.as_str() {
                "properties" | "$defs" | "definitions" => stack.extend(
                    child
                        .as_object()
                        .into_iter()
                        .flat_map(|m| m.values())
                        .map(|v| (v, here)),
                ),
                "enum" | "const" | "required" | "examples" | "default" => {}
                _ => stack.push((child, here)),
            }
        }
    }
    deepest
}

/// How many properties the schema's objects declare in all.
fn property_count(schema: &Value) -> usize {
    let mut count = 0;
    let mut stack = vec![schema];
    while let Some(value) = stack.pop() {
        match value {
            Value::Object(map) => {
                for (key, child) in map {
                    match key.as_str() {
                        "properties" => {
                            let props = child.as_object();
                            count += props.map_or(0, |m| m.len());
                            stack.extend(props.into_iter().flat_map(|m| m.values()));
                        }
                        "enum" | "const" | "required" | "examples" | "default" => {}
                        _ => stack.push(child),
                    }
                }
            }
            Value::Array(items) => stack.extend(items),
            _ => {}
        }
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn contract(schema: Value) -> OutputContract {
        OutputContract {
            schema: Arc::new(schema),
            retries: DEFAULT_OUTPUT_RETRIES,
        }
    }

    fn kinds(provider: &str, schema: Value) -> Vec<DiagnosticKind> {
        let mut out = Vec::new();
        check_one(
            provider,
            &contract(schema),
            &Span::new("p".into(), 1, 1),
            &mut out,
        );
        out.iter().map(|d| d.kind).collect()
    }

    #[test]
    fn plain_object_schemas_pass() {
        let schema = json!({"type": "object", "properties": {"verdict": {"enum": ["pass", "fail"]}, "minimum": {"type": "integer"}}, "required": ["verdict"]});
        assert_eq!(kinds("openai", schema.clone()), []);
        assert_eq!(kinds("anthropic", schema), []);
    }

    #[test]
    fn unsupported_keywords_are_projected() {
        let schema =
            json!({"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}});
        assert_eq!(
            kinds("openai", schema),
            [DiagnosticKind::OutputSchemaProjected]
        );
    }

    #[test]
    fn root_composition_and_nesting_are_refused() {
        let schema =
            json!({"type": "object", "anyOf": [{"properties": {"a": {"type": "string"}}}]});
        assert_eq!(
            kinds("anthropic", schema),
            [DiagnosticKind::OutputSchemaRefused]
        );
        let mut deep = json!({"type": "object", "properties": {}});
        for _ in 0..OPENAI_MAX_OBJECT_NESTING {
            deep = json!({"type": "object", "properties": {"x": deep}});
        }
        assert_eq!(
            kinds("openai", deep.clone()),
            [DiagnosticKind::OutputSchemaRefused]
        );
        assert_eq!(kinds("anthropic", deep), []);
    }
}
