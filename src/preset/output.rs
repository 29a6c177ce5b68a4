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
use crate::texts::Texts;
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

/// The longest excerpt of a value quoted in an [`OutputProblem`].
const MAX_FOUND_CHARS: usize = 80;
/// The most problems one check reports (the rest are counted in the last).
pub const MAX_OUTPUT_PROBLEMS: usize = 20;

/// One way an answer breaks the output contract, located in the answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutputProblem {
    /// Where in the answer: a JSON pointer (`/reasons/0`; empty for the whole answer).
    pub pointer: String,
    /// What the schema wants there.
    pub expected: String,
    /// What the answer has there (a short excerpt).
    pub found: String,
    /// The problem as the model reads it, in the preset's language (`tools.argument.*`
    /// texts, located at the pointer).
    pub message: String,
}

impl std::fmt::Display for OutputProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let at = if self.pointer.is_empty() {
            "the answer"
        } else {
            &self.pointer
        };
        write!(
            f,
            "at `{at}`: expected {}, found {}",
            self.expected, self.found
        )
    }
}

impl OutputContract {
    /// Check a final answer: its text parsed as JSON (one surrounding Markdown code fence
    /// is allowed), the `null`s of optional properties dropped, then validated against
    /// the schema as written. The object, or every problem (at most
    /// [`MAX_OUTPUT_PROBLEMS`]).
    pub fn check(&self, answer: &str) -> Result<Value, Vec<OutputProblem>> {
        self.check_in(answer, &Texts::english())
    }

    /// [`check`](Self::check), with each problem's [`message`](OutputProblem::message)
    /// in `texts` (the preset's language), as the model reads it when it must try again.
    pub fn check_in(&self, answer: &str, texts: &Texts) -> Result<Value, Vec<OutputProblem>> {
        let text = unfenced(answer);
        let value: Value = serde_json::from_str(text).map_err(|e| {
            let found = format!("text that is not JSON ({e}): {}", excerpt(text));
            vec![OutputProblem {
                pointer: String::new(),
                expected: "one JSON object".to_owned(),
                message: texts.render(
                    &crate::texts::AGENT_OUTPUT_NOT_JSON,
                    &[("error", &e.to_string()), ("start", &excerpt(text))],
                ),
                found,
            }]
        })?;
        let value = self.drop_optional_nulls(value);
        let validator = jsonschema::options()
            .with_draft(jsonschema::Draft::Draft202012)
            .build(&self.schema)
            .map_err(|e| {
                let expected =
                    format!("an answer to a usable schema (the schema does not compile: {e})");
                vec![OutputProblem {
                    pointer: String::new(),
                    message: expected.clone(),
                    expected,
                    found: excerpt(text),
                }]
            })?;
        let mut problems: Vec<OutputProblem> = validator
            .iter_errors(&value)
            .map(|e| OutputProblem {
                pointer: e.instance_path().to_string(),
                expected: expected_of(&e),
                found: excerpt(&e.instance().to_string()),
                message: crate::tools::describe_problem(&e, texts),
            })
            .collect();
        if problems.is_empty() {
            return Ok(value);
        }
        if problems.len() > MAX_OUTPUT_PROBLEMS {
            let more = problems.len() - MAX_OUTPUT_PROBLEMS + 1;
            problems.truncate(MAX_OUTPUT_PROBLEMS - 1);
            problems.push(OutputProblem {
                pointer: String::new(),
                expected: "an answer that satisfies the schema".to_owned(),
                found: format!("{more} more problems"),
                message: texts.render(
                    &crate::texts::TOOLS_INVALID_ARGUMENTS_MORE,
                    &[("count", &more.to_string())],
                ),
            });
        }
        Err(problems)
    }
}

/// `text` without one Markdown code fence around it (```` ```json … ``` ````).
fn unfenced(text: &str) -> &str {
    let trimmed = text.trim();
    let Some(rest) = trimmed.strip_prefix("```") else {
        return trimmed;
    };
    let Some(body) = rest.strip_suffix("```") else {
        return trimmed;
    };
    // The info string (`json`) runs to the end of the first line.
    body.split_once('\n').map_or(body, |(_, b)| b).trim()
}

/// At most [`MAX_FOUND_CHARS`] characters of `text`, and how long it was.
fn excerpt(text: &str) -> String {
    match text.char_indices().nth(MAX_FOUND_CHARS) {
        None => format!("`{text}`"),
        Some((end, _)) => format!("`{}…` ({} characters)", &text[..end], text.chars().count()),
    }
}

/// What the schema wants where `e` failed, in the schema's words: `one of "pass",
/// "fail"`, `type "integer"`, `property "reasons"`, `at least 1 item`.
fn expected_of(e: &jsonschema::ValidationError<'_>) -> String {
    use jsonschema::error::{TypeKind, ValidationErrorKind as K};
    let json_list = |v: &Value| match v.as_array() {
        Some(items) => items
            .iter()
            .map(Value::to_string)
            .collect::<Vec<_>>()
            .join(", "),
        None => v.to_string(),
    };
    match e.kind() {
        K::Type { kind } => match kind {
            TypeKind::Single(t) => format!("type \"{t}\""),
            TypeKind::Multiple(set) => format!(
                "type {}",
                set.iter()
                    .map(|t| format!("\"{t}\""))
                    .collect::<Vec<_>>()
                    .join(" or ")
            ),
        },
        K::Required { property } => format!("property {property}"),
        K::Enum { options } => format!("one of {}", json_list(options)),
        K::Constant { expected_value } => format!("the value {expected_value}"),
        K::AdditionalProperties { unexpected } | K::UnevaluatedProperties { unexpected } => {
            format!("no property {}", unexpected.join(", "))
        }
        K::Minimum { limit } => format!("at least {limit}"),
        K::Maximum { limit } => format!("at most {limit}"),
        K::ExclusiveMinimum { limit } => format!("more than {limit}"),
        K::ExclusiveMaximum { limit } => format!("less than {limit}"),
        K::MinLength { limit } => format!("at least {limit} characters"),
        K::MaxLength { limit } => format!("at most {limit} characters"),
        K::MinItems { limit } => format!("at least {limit} items"),
        K::MaxItems { limit } => format!("at most {limit} items"),
        K::Pattern { pattern } => format!("a string matching /{pattern}/"),
        _ => {
            // The validator's own words, without the value it starts with.
            let message = e.to_string();
            let instance = e.instance().to_string();
            let rest = message.strip_prefix(&instance).unwrap_or(&message).trim();
            rest.strip_prefix("is ").unwrap_or(rest).to_owned()
        }
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

    fn verdict() -> OutputContract {
        contract(
            json!({"type": "object", "properties": {"verdict": {"enum": ["pass", "fail"]}, "reasons": {"type": "array", "items": {"type": "string"}}, "note": {"type": "string"}}, "required": ["verdict", "reasons"]}),
        )
    }

    #[test]
    fn a_valid_answer_is_the_object() {
        let c = verdict();
        let ok = json!({"verdict": "pass", "reasons": []});
        assert_eq!(
            c.check(r#"{"verdict": "pass", "reasons": []}"#),
            Ok(ok.clone())
        );
        // A fence around it, and the null a strict model sends for the optional `note`.
        assert_eq!(
            c.check("```json\n{\"verdict\": \"pass\", \"reasons\": [], \"note\": null}\n```"),
            Ok(ok)
        );
    }

    #[test]
    fn problems_are_located_in_the_answer() {
        let c = verdict();
        let not_json = c.check("The build is fine.").unwrap_err();
        assert_eq!(not_json.len(), 1);
        assert_eq!(not_json[0].pointer, "");
        assert_eq!(not_json[0].expected, "one JSON object");
        let wrong = c
            .check(r#"{"verdict": "maybe", "reasons": [3]}"#)
            .unwrap_err();
        let pointers: Vec<&str> = wrong.iter().map(|p| p.pointer.as_str()).collect();
        assert_eq!(pointers, ["/verdict", "/reasons/0"], "{wrong:?}");
        assert_eq!(wrong[0].found, "`\"maybe\"`");
        assert!(wrong[1].expected.contains("string"), "{wrong:?}");
        assert!(
            wrong[0].to_string().starts_with("at `/verdict`: expected "),
            "{}",
            wrong[0]
        );
        let missing = c.check(r#"{"verdict": "fail"}"#).unwrap_err();
        assert!(missing[0].expected.contains("reasons"), "{missing:?}");
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
