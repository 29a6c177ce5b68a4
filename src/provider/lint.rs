//! Provider lint: what a provider would refuse in the tools a request carries, found at
//! validate time instead of as an HTTP 400 at run time.
//!
//! The lint looks at exactly what `run` sends ([`wire_tools`](super::wire_tools)): the
//! name and the parameter schema of each visible tool, in the endpoint's schema dialect.
//! The built-in tools pass every rule; the rules are there for the tools a host program
//! registers, whose schemas come from its own types.
//!
//! | rule | kind | where |
//! |---|---|---|
//! | the name matches `^[a-zA-Z0-9_-]{1,64}$` (OpenAI dialect) or `{1,128}` (Anthropic) | `tool-name-rejected` | every provider |
//! | the schema's root is `"type": "object"` | `tool-schema-root` | every provider |
//! | no `anyOf`, `oneOf`, `allOf`, `not`, `enum` or `if` at the root | `tool-schema-root` | Anthropic's `input_schema`, strict mode, and when no provider is chosen |
//! | the schema is valid JSON Schema (draft 2020-12 meta-schema), with every `$ref` local and resolvable | `invalid-tool-schema` | every provider |
//! | every object is closed (`"additionalProperties": false`) | `strict-open-object` | strict mode |
//! | every property is listed in `required` | `strict-optional-property` | strict mode |
//! | only the keywords every strict mode supports | `strict-unsupported-keyword` | strict mode |

use std::sync::Mutex;

use serde_json::{Map, Value};

use crate::diagnostic::{Diagnostic, DiagnosticKind};
use crate::endpoint::{Dialect, ModelSettings};
use crate::json_schema::has_type;
use crate::tools::WireTool;

pub use crate::json_schema::STRICT_KEYWORDS;

/// Keywords that make the root of a parameter schema something other than one plain
/// object: Anthropic refuses them in `input_schema`, OpenAI's strict mode at the root.
const ROOT_COMPOSITION: &[&str] = &["allOf", "anyOf", "enum", "if", "not", "oneOf"];

/// The rules one endpoint applies to the tools of a request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolRules {
    /// Who applies them, for messages (`openai`, `anthropic`, "every provider").
    provider: String,
    /// The longest tool name accepted.
    max_name_len: usize,
    /// Composition keywords at the root are refused.
    plain_root: bool,
    /// Strict mode: closed objects, every property required, [`STRICT_KEYWORDS`] only.
    strict: bool,
}

impl ToolRules {
    /// The rules of the endpoint `settings` describes, in the schema dialect it gets.
    pub fn for_settings(settings: &ModelSettings) -> Self {
        let anthropic = settings.dialect() == Dialect::Anthropic;
        let mode = if settings.strict_tools {
            " (strict)"
        } else {
            ""
        };
        ToolRules {
            provider: format!("{}{mode}", settings.provider.as_str()),
            max_name_len: if anthropic { 128 } else { 64 },
            plain_root: anthropic || settings.strict_tools,
            strict: settings.strict_tools,
        }
    }

    /// The rules every provider applies to the portable schemas: for a preset that names
    /// no model, which may be run against any of them.
    pub fn any_provider() -> Self {
        ToolRules {
            provider: "every provider".to_owned(),
            max_name_len: 64,
            plain_root: true,
            strict: false,
        }
    }

    /// Does this endpoint get strict schemas?
    pub fn is_strict(&self) -> bool {
        self.strict
    }
}

/// Everything `rules` refuses in `tool`, each diagnostic naming the tool and the JSON
/// pointer into its parameter schema. The diagnostics have no location: the caller
/// knows which preset made the tool visible.
pub fn lint_tool(rules: &ToolRules, tool: &WireTool) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let name = &tool.name;
    let name_ok = (1..=rules.max_name_len).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if !name_ok {
        out.push(
            Diagnostic::new(
                DiagnosticKind::ToolNameRejected,
                format!(
                    "{} refuses the tool name `{}`: names are 1 to {} characters of a-z, A-Z, 0-9, `_` and `-`",
                    rules.provider,
                    name.escape_debug(),
                    rules.max_name_len
                ),
            )
            .help("rename the tool where the host program registers it"),
        );
    }
    let schema = &tool.parameters;
    lint_root(rules, name, schema, &mut out);
    lint_meta_schema(name, schema, &mut out);
    if rules.strict {
        let mut walk = StrictWalk {
            provider: &rules.provider,
            tool: name,
            out: &mut out,
        };
        walk.schema(schema, "");
    }
    out
}

/// Lint results already found, for a run that lints the same tools for many presets
/// (`validate` of a catalog): [`lint_tool`]'s result depends only on the rules and the
/// tool, so each pair is linted once. Holds at most [`LintMemo::CAPACITY`] pairs.
#[derive(Debug, Default)]
pub(crate) struct LintMemo {
    done: Mutex<Vec<(ToolRules, WireTool, Vec<Diagnostic>)>>,
}

impl Clone for LintMemo {
    /// A new, empty memo (what it holds is only ever a saving).
    fn clone(&self) -> Self {
        LintMemo::default()
    }
}

impl LintMemo {
    /// How many (rules, tool) pairs it keeps; past that, tools are linted every time.
    const CAPACITY: usize = 256;

    /// [`lint_tool`], remembered.
    pub(crate) fn lint(&self, rules: &ToolRules, tool: &WireTool) -> Vec<Diagnostic> {
        let known = self.done.lock().ok().and_then(|done| {
            done.iter()
                .find(|(r, t, _)| t == tool && r == rules)
                .map(|(.., problems)| problems.clone())
        });
        if let Some(problems) = known {
            return problems;
        }
        let problems = lint_tool(rules, tool);
        if let Ok(mut done) = self.done.lock()
            && done.len() < Self::CAPACITY
        {
            done.push((rules.clone(), tool.clone(), problems.clone()));
        }
        problems
    }

    /// [`lint_tools`], remembered.
    pub(crate) fn lint_tools(
        &self,
        settings: &ModelSettings,
        tools: &[WireTool],
    ) -> Vec<Diagnostic> {
        let rules = ToolRules::for_settings(settings);
        tools.iter().flat_map(|t| self.lint(&rules, t)).collect()
    }
}

/// The tools one endpoint gets, linted once: what [`wire_tools`](super::wire_tools)
/// gives for `settings` and what the endpoint would refuse in them. Build it before the
/// first request (the project layer does, answering from the catalog's memo what
/// validation already linted) and hand it to `agent::Agent::with_linted_tools`, so the
/// agent neither projects nor lints the tools again.
#[derive(Clone, Debug)]
pub struct LintedTools {
    settings: ModelSettings,
    tools: std::sync::Arc<[WireTool]>,
    diagnostics: Vec<Diagnostic>,
}

impl LintedTools {
    /// Project `registry` for `settings` and lint the result.
    pub fn new(settings: &ModelSettings, registry: &crate::tools::ToolRegistry) -> Self {
        Self::with_memo(settings, registry, &LintMemo::default())
    }

    /// [`LintedTools::new`], answering from `memo` what it already knows.
    pub(crate) fn with_memo(
        settings: &ModelSettings,
        registry: &crate::tools::ToolRegistry,
        memo: &LintMemo,
    ) -> Self {
        let tools = super::wire_tools(settings, registry);
        let diagnostics = memo.lint_tools(settings, &tools);
        LintedTools {
            settings: settings.clone(),
            tools: tools.into(),
            diagnostics,
        }
    }

    /// The endpoint linted for.
    pub fn settings(&self) -> &ModelSettings {
        &self.settings
    }

    /// The tools in wire order, in the endpoint's schema dialect.
    pub fn tools(&self) -> &std::sync::Arc<[WireTool]> {
        &self.tools
    }

    /// What the endpoint would refuse (errors) or warn about, tool by tool.
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.diagnostics
    }

    /// Would the endpoint refuse a request with these tools?
    pub fn refused(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }
}

/// Everything the endpoint `settings` describes would refuse in `tools` (what
/// [`wire_tools`](super::wire_tools) gives for it), tool by tool in wire order. Run it
/// whenever the endpoint is not the one the preset was validated against (a provider,
/// base URL or strict mode chosen at run time): `agent::Agent` does,
/// before its first request.
pub fn lint_tools(settings: &ModelSettings, tools: &[WireTool]) -> Vec<Diagnostic> {
    let rules = ToolRules::for_settings(settings);
    tools.iter().flat_map(|t| lint_tool(&rules, t)).collect()
}

/// The root must be one plain object schema.
fn lint_root(rules: &ToolRules, tool: &str, schema: &Value, out: &mut Vec<Diagnostic>) {
    let root_type = schema.get("type");
    if root_type != Some(&Value::from("object")) {
        let found = match root_type {
            Some(t) => format!("`\"type\": {t}`"),
            None => "no `type`".to_owned(),
        };
        out.push(
            Diagnostic::new(
                DiagnosticKind::ToolSchemaRoot,
                format!(
                    "tool `{tool}`: the root of the parameter schema has {found}; {} requires `\"type\": \"object\"`",
                    rules.provider
                ),
            )
            .help("make the tool's argument type a struct: its schema is an object whose properties are the arguments"),
        );
    }
    if rules.plain_root
        && let Some(map) = schema.as_object()
    {
        for keyword in ROOT_COMPOSITION.iter().filter(|k| map.contains_key(**k)) {
            out.push(
                Diagnostic::new(
                    DiagnosticKind::ToolSchemaRoot,
                    format!(
                        "tool `{tool}`: `/{keyword}` at the root of the parameter schema; {} requires one plain object there",
                        rules.provider
                    ),
                )
                .help("move the alternatives into a property (e.g. an enum-valued `mode`), or split the tool in two"),
            );
        }
    }
}

/// Valid draft 2020-12, with every `$ref` local and resolvable.
fn lint_meta_schema(tool: &str, schema: &Value, out: &mut Vec<Diagnostic>) {
    // Most schemas (the built-in tools' among them) use a handful of keywords whose
    // validity is checked here directly; only the others need the meta-schema validator,
    // whose one-time compilation was a third of `validate`'s work on the built-ins.
    let errors = if certainly_valid(schema) {
        Vec::new()
    } else {
        let meta = jsonschema::draft202012::meta::validator();
        meta.iter_errors(schema)
            .map(|e| (e.instance_path().to_string(), e.to_string()))
            .collect()
    };
    for (pointer, error) in errors {
        out.push(
            Diagnostic::new(
                DiagnosticKind::InvalidToolSchema,
                format!(
                    "tool `{tool}`: the parameter schema is not valid JSON Schema at `{}`: {error}",
                    display_pointer(&pointer)
                ),
            )
            .help("fix the tool's argument type (or its hand-written `JsonSchema` impl) so that it produces draft 2020-12 JSON Schema"),
        );
    }
    let mut refs = Vec::new();
    collect_refs(schema, &mut String::new(), &mut refs);
    for (pointer, target) in refs {
        let resolved = target
            .strip_prefix('#')
            .filter(|p| p.is_empty() || p.starts_with('/'))
            .and_then(|p| schema.pointer(&decode_fragment(p)));
        if resolved.is_none() {
            out.push(
                Diagnostic::new(
                    DiagnosticKind::InvalidToolSchema,
                    format!(
                        "tool `{tool}`: `{}` refers to `{target}`, which is not in the schema",
                        display_pointer(&pointer)
                    ),
                )
                .help("a tool's parameter schema must be self-contained: put every definition under `$defs` and refer to it as `#/$defs/NAME`"),
            );
        }
    }
}

/// The type names of JSON Schema.
const TYPE_NAMES: [&str; 7] = [
    "array", "boolean", "integer", "null", "number", "object", "string",
];

/// Whether `schema` is valid against the draft 2020-12 meta-schema, decided without it:
/// true only for schemas made of the common keywords below, each with a value of the
/// type the meta-schema requires. `false` means "not decided here": the caller asks the
/// meta-schema validator. (Formats are annotations in 2020-12, so `$ref` and `format`
/// need only be strings; `$ref` targets are checked separately.)
fn certainly_valid(schema: &Value) -> bool {
    let map = match schema {
        Value::Bool(_) => return true,
        Value::Object(map) => map,
        _ => return false,
    };
    let is_type_name = |v: &Value| v.as_str().is_some_and(|t| TYPE_NAMES.contains(&t));
    let unique = |items: &[Value]| {
        items
            .iter()
            .enumerate()
            .all(|(i, a)| items[..i].iter().all(|b| a != b))
    };
    map.iter().all(|(key, value)| match key.as_str() {
        "type" => match value {
            Value::Array(items) => {
                !items.is_empty() && items.iter().all(is_type_name) && unique(items)
            }
            other => is_type_name(other),
        },
        "title" | "description" | "format" | "$ref" | "$comment" => value.is_string(),
        "default" | "const" => true,
        "enum" | "examples" => value.is_array(),
        "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" => value.is_number(),
        "minLength" | "maxLength" | "minItems" | "maxItems" | "minProperties" | "maxProperties" => {
            value.is_u64()
        }
        "uniqueItems" | "deprecated" | "readOnly" | "writeOnly" => value.is_boolean(),
        "required" => value
            .as_array()
            .is_some_and(|items| items.iter().all(Value::is_string) && unique(items)),
        "properties" | "$defs" => value
            .as_object()
            .is_some_and(|m| m.values().all(certainly_valid)),
        "items" | "additionalProperties" | "not" => certainly_valid(value),
        "anyOf" | "oneOf" | "allOf" => value
            .as_array()
            .is_some_and(|items| !items.is_empty() && items.iter().all(certainly_valid)),
        _ => false,
    })
}

/// Every `$ref` string in `value`, with its pointer. `pointer` is the pointer of
/// `value`; it is extended in place while walking and left as it was found.
fn collect_refs(value: &Value, pointer: &mut String, out: &mut Vec<(String, String)>) {
    use std::fmt::Write as _;
    let len = pointer.len();
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                pointer.push('/');
                // `escape_token`, without a string per key.
                for c in key.chars() {
                    match c {
                        '~' => pointer.push_str("~0"),
                        '/' => pointer.push_str("~1"),
                        c => pointer.push(c),
                    }
                }
                match (key.as_str(), child) {
                    ("$ref", Value::String(target)) => out.push((pointer.clone(), target.clone())),
                    // `enum`, `const`, `default` and `examples` hold data, not schemas.
                    ("enum" | "const" | "default" | "examples", _) => {}
                    _ => collect_refs(child, pointer, out),
                }
                pointer.truncate(len);
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                let _ = write!(pointer, "/{i}");
                collect_refs(child, pointer, out);
                pointer.truncate(len);
            }
        }
        _ => {}
    }
}

/// The strict-mode rules, applied to every subschema reachable through the keywords
/// strict mode knows (what other keywords hold is reported as unsupported, not walked).
struct StrictWalk<'a> {
    provider: &'a str,
    tool: &'a str,
    out: &'a mut Vec<Diagnostic>,
}

impl StrictWalk<'_> {
    fn schema(&mut self, schema: &Value, pointer: &str) {
        let Some(map) = schema.as_object() else {
            // `true`/`false` schemas: strict mode wants every value described.
            if schema.is_boolean() {
                self.push(
                    DiagnosticKind::StrictUnsupportedKeyword,
                    format!(
                        "tool `{}`: `{}` is a boolean schema, which {} does not support",
                        self.tool,
                        display_pointer(pointer),
                        self.provider
                    ),
                    "describe the value with a `type`",
                );
            }
            return;
        };
        for keyword in map.keys() {
            if !STRICT_KEYWORDS.contains(&keyword.as_str()) {
                self.push(
                    DiagnosticKind::StrictUnsupportedKeyword,
                    format!(
                        "tool `{}`: {} does not support `{keyword}` (at `{pointer}/{}`)",
                        self.tool,
                        self.provider,
                        escape_token(keyword)
                    ),
                    "drop the keyword from the strict schema (the registry still checks every call against the full portable schema)",
                );
            }
        }
        if is_object_schema(map) {
            self.object(map, pointer);
        }
        if let Some(properties) = map.get("properties").and_then(Value::as_object) {
            for (name, property) in properties {
                self.schema(
                    property,
                    &format!("{pointer}/properties/{}", escape_token(name)),
                );
            }
        }
        if let Some(items) = map.get("items") {
            self.schema(items, &format!("{pointer}/items"));
        }
        if let Some(Value::Array(branches)) = map.get("anyOf") {
            for (i, branch) in branches.iter().enumerate() {
                self.schema(branch, &format!("{pointer}/anyOf/{i}"));
            }
        }
        for defs in ["$defs", "definitions"] {
            if let Some(definitions) = map.get(defs).and_then(Value::as_object) {
                for (name, definition) in definitions {
                    self.schema(
                        definition,
                        &format!("{pointer}/{defs}/{}", escape_token(name)),
                    );
                }
            }
        }
        if let Some(extra @ Value::Object(_)) = map.get("additionalProperties") {
            self.schema(extra, &format!("{pointer}/additionalProperties"));
        }
    }

    /// Closed, and every property required.
    fn object(&mut self, map: &Map<String, Value>, pointer: &str) {
        if map.get("additionalProperties") != Some(&Value::Bool(false)) {
            self.push(
                DiagnosticKind::StrictOpenObject,
                format!(
                    "tool `{}`: the object at `{}` is open (no `\"additionalProperties\": false`), which {} refuses",
                    self.tool,
                    display_pointer(pointer),
                    self.provider
                ),
                "close the object: `additionalProperties: false` (serde's `deny_unknown_fields`); a map with free-form keys cannot be sent in strict mode",
            );
        }
        let required: Vec<&str> = map
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        if let Some(properties) = map.get("properties").and_then(Value::as_object) {
            for name in properties
                .keys()
                .filter(|n| !required.contains(&n.as_str()))
            {
                self.push(
                    DiagnosticKind::StrictOptionalProperty,
                    format!(
                        "tool `{}`: property `{pointer}/properties/{}` is not listed in `required`, which {} refuses",
                        self.tool,
                        escape_token(name),
                        self.provider
                    ),
                    "list every property in `required`; make an optional one nullable (`\"type\": [\"string\", \"null\"]`) instead",
                );
            }
        }
    }

    fn push(&mut self, kind: DiagnosticKind, message: String, help: &str) {
        self.out.push(Diagnostic::new(kind, message).help(help));
    }
}

/// An object schema: typed as one, or describing properties (a map given only by
/// `additionalProperties` is one too, and one strict mode cannot take).
fn is_object_schema(map: &Map<String, Value>) -> bool {
    map.contains_key("properties")
        || map.contains_key("additionalProperties")
        || has_type(map, "object")
}

/// A JSON pointer token: `~` and `/` escaped (RFC 6901).
fn escape_token(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// A `$ref` fragment as a JSON pointer (percent-decoding what URI fragments encode).
fn decode_fragment(fragment: &str) -> String {
    let bytes = fragment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| char::from(b).to_digit(16);
        match (
            bytes[i],
            bytes.get(i + 1).copied().and_then(hex),
            bytes.get(i + 2).copied().and_then(hex),
        ) {
            (b'%', Some(high), Some(low)) => {
                out.push((high * 16 + low) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The root's pointer is empty; show it as `/`.
fn display_pointer(pointer: &str) -> &str {
    if pointer.is_empty() { "/" } else { pointer }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::json;

    use super::*;
    use crate::endpoint::Provider;
    use crate::tools::{SchemaDialect, ToolCatalog, ToolRegistry};

    fn tool(name: &str, parameters: Value) -> WireTool {
        WireTool {
            name: name.to_owned(),
            description: "A tool.".to_owned(),
            parameters: parameters.into(),
        }
    }

    #[test]
    fn the_memo_answers_what_the_lint_answers() {
        let memo = LintMemo::default();
        let rules = ToolRules::any_provider();
        let bad = tool("bad name!", json!({"type": "object"}));
        let good = tool("fine", json!({"type": "object", "properties": {}}));
        // The same name with another schema is another tool.
        let other = tool("fine", json!({"type": "string"}));
        for _ in 0..2 {
            for t in [&bad, &good, &other] {
                assert_eq!(memo.lint(&rules, t), lint_tool(&rules, t), "{}", t.name);
            }
        }
        assert!(!memo.lint(&rules, &bad).is_empty());
        assert_eq!(memo.done.lock().unwrap().len(), 3);
    }

    fn kinds(rules: &ToolRules, tool: &WireTool) -> Vec<(DiagnosticKind, String)> {
        lint_tool(rules, tool)
            .into_iter()
            .map(|d| (d.kind, d.message))
            .collect()
    }

    fn strict() -> ToolRules {
        ToolRules::for_settings(&ModelSettings::new(Provider::Openai, "gpt-5"))
    }

    fn anthropic() -> ToolRules {
        ToolRules::for_settings(&ModelSettings::new(Provider::Anthropic, "claude"))
    }

    fn deepseek() -> ToolRules {
        ToolRules::for_settings(&ModelSettings::new(Provider::Deepseek, "deepseek-v4-flash"))
    }

    fn object() -> Value {
        json!({"type": "object", "properties": {}, "required": [], "additionalProperties": false})
    }

    #[test]
    fn every_builtin_tool_passes_every_endpoint() {
        let registry = ToolRegistry::unrestricted(&ToolCatalog::builtin());
        for (rules, dialect) in [
            (strict(), SchemaDialect::Strict),
            (anthropic(), SchemaDialect::Portable),
            (deepseek(), SchemaDialect::Portable),
            (ToolRules::any_provider(), SchemaDialect::Portable),
        ] {
            for tool in registry.schemas_for(dialect) {
                assert_eq!(lint_tool(&rules, &tool), [], "{}: {rules:?}", tool.name);
            }
        }
    }

    #[test]
    fn names_per_dialect() {
        let long = "a".repeat(100);
        let found = kinds(&deepseek(), &tool(&long, object()));
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].0, DiagnosticKind::ToolNameRejected);
        assert!(
            found[0]
                .1
                .starts_with("deepseek refuses the tool name `aaaa"),
            "{found:?}"
        );
        assert!(
            found[0]
                .1
                .ends_with("1 to 64 characters of a-z, A-Z, 0-9, `_` and `-`")
        );
        assert_eq!(kinds(&anthropic(), &tool(&long, object())), []);
        let longer = "a".repeat(129);
        assert_eq!(kinds(&anthropic(), &tool(&longer, object())).len(), 1);
        for bad in ["read.file", "read file", "", "naïve"] {
            assert_eq!(
                kinds(&anthropic(), &tool(bad, object()))[0].0,
                DiagnosticKind::ToolNameRejected,
                "{bad:?}"
            );
        }
    }

    #[test]
    fn root_must_be_a_plain_object() {
        let found = kinds(
            &deepseek(),
            &tool("t", json!({"type": "array", "items": {}})),
        );
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].0, DiagnosticKind::ToolSchemaRoot);
        assert!(
            found[0].1.contains("has `\"type\": \"array\"`"),
            "{found:?}"
        );
        let composed =
            json!({"type": "object", "anyOf": [{"required": ["a"]}, {"required": ["b"]}]});
        // OpenAI-compatible endpoints without strict mode take it; Anthropic does not.
        assert_eq!(kinds(&deepseek(), &tool("t", composed.clone())), []);
        let found = kinds(&anthropic(), &tool("t", composed.clone()));
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].1.contains("`/anyOf` at the root"), "{found:?}");
        assert_eq!(
            kinds(&ToolRules::any_provider(), &tool("t", composed)).len(),
            1
        );
        let found = kinds(&anthropic(), &tool("t", json!({"properties": {}})));
        assert!(found[0].1.contains("has no `type`"), "{found:?}");
    }

    #[test]
    fn the_built_in_tools_never_need_the_meta_schema_validator() {
        let registry = ToolRegistry::unrestricted(&ToolCatalog::builtin());
        let meta = jsonschema::draft202012::meta::validator();
        for dialect in [SchemaDialect::Strict, SchemaDialect::Portable] {
            for tool in registry.schemas_for(dialect) {
                let schema = &tool.parameters;
                assert!(certainly_valid(schema), "{}: {schema}", tool.name);
                assert!(meta.is_valid(schema), "{}", tool.name);
            }
        }
    }

    /// Keywords and values, valid and not, for the shortcut's property test.
    fn keyword() -> impl Strategy<Value = (String, Value)> {
        let key = prop::sample::select(vec![
            "type",
            "title",
            "description",
            "format",
            "$ref",
            "default",
            "enum",
            "minimum",
            "maxLength",
            "minItems",
            "uniqueItems",
            "required",
            "properties",
            "$defs",
            "items",
            "additionalProperties",
            "not",
            "anyOf",
            "multipleOf",
            "pattern",
            "nullable",
        ]);
        let leaf = prop_oneof![
            Just(json!(null)),
            any::<bool>().prop_map(Value::from),
            (-3i64..4).prop_map(Value::from),
            Just(json!(1.5)),
            Just(json!(-0.5)),
            prop::sample::select(vec!["string", "strin", "object", "integer", "x", ""])
                .prop_map(Value::from),
        ];
        let value = leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
                prop::collection::btree_map(
                    prop::sample::select(vec!["a", "b", "type", "items"]).prop_map(String::from),
                    inner,
                    0..3
                )
                .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        });
        (key.prop_map(String::from), value)
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 512, ..Default::default() })]
        /// The shortcut never calls valid what the meta-schema refuses.
        #[test]
        fn the_shortcut_agrees_with_the_meta_schema(
            entries in prop::collection::vec(keyword(), 0..5),
            nested in prop::collection::vec(keyword(), 0..4),
        ) {
            let inner: Map<String, Value> = nested.into_iter().collect();
            let mut outer: Map<String, Value> = entries.into_iter().collect();
            outer.insert("properties".into(), json!({"p": Value::Object(inner)}));
            let schema = Value::Object(outer);
            let meta = jsonschema::draft202012::meta::validator();
            if certainly_valid(&schema) {
                proptest::prop_assert!(meta.is_valid(&schema), "{}", schema);
            }
        }
    }

    #[test]
    fn meta_schema_and_refs() {
        let bad = json!({"type": "object", "properties": {"a": {"type": "strin"}, "b": {"minLength": -1}}});
        let found = kinds(&deepseek(), &tool("t", bad));
        let pointers: Vec<&str> = found
            .iter()
            .filter(|(k, _)| *k == DiagnosticKind::InvalidToolSchema)
            .map(|(_, m)| m.as_str())
            .collect();
        assert_eq!(pointers.len(), 2, "{found:?}");
        assert!(
            pointers[0].contains("at `/properties/a/type`"),
            "{pointers:?}"
        );
        assert!(
            pointers[1].contains("at `/properties/b/minLength`"),
            "{pointers:?}"
        );
        let refs = json!({
            "type": "object",
            "properties": {
                "a": {"$ref": "#/$defs/A"},
                "b": {"$ref": "#/$defs/Missing"},
                "c": {"$ref": "https://example.com/schema.json"},
                "d": {"enum": [{"$ref": "data, not a schema"}]}
            },
            "$defs": {"A": {"type": "string"}}
        });
        let found = kinds(&deepseek(), &tool("t", refs));
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(
            found[0]
                .1
                .contains("`/properties/b/$ref` refers to `#/$defs/Missing`"),
            "{found:?}"
        );
        assert!(found[1].1.contains("`/properties/c/$ref`"), "{found:?}");
    }

    #[test]
    fn strict_rules() {
        let schema = json!({
            "type": "object",
            "properties": {
                "url": {"type": "string", "pattern": "^https://"},
                "headers": {"type": "object", "additionalProperties": {"type": "string"}},
                "tags": {"type": "array", "items": {"type": "object", "properties": {"k": {"type": "string"}}, "required": ["k"]}},
                "mode": {"anyOf": [{"type": "string", "enum": ["a"]}, {"type": "null"}]}
            },
            "required": ["url", "headers", "mode"],
            "additionalProperties": false
        });
        let found = kinds(&strict(), &tool("fetch", schema.clone()));
        let summary: Vec<(DiagnosticKind, &str)> = found
            .iter()
            .map(|(k, m)| (*k, m.split(" (at").next().unwrap_or(m)))
            .collect();
        assert_eq!(
            summary,
            [
                (
                    DiagnosticKind::StrictOptionalProperty,
                    "tool `fetch`: property `/properties/tags` is not listed in `required`, which openai (strict) refuses"
                ),
                (
                    DiagnosticKind::StrictUnsupportedKeyword,
                    "tool `fetch`: openai (strict) does not support `pattern`"
                ),
                (
                    DiagnosticKind::StrictOpenObject,
                    "tool `fetch`: the object at `/properties/headers` is open (no `\"additionalProperties\": false`), which openai (strict) refuses"
                ),
                (
                    DiagnosticKind::StrictOpenObject,
                    "tool `fetch`: the object at `/properties/tags/items` is open (no `\"additionalProperties\": false`), which openai (strict) refuses"
                ),
            ]
        );
        assert!(
            found[1].1.ends_with("(at `/properties/url/pattern`)"),
            "{found:?}"
        );
        // The same schema sent without strict mode is fine.
        assert_eq!(kinds(&deepseek(), &tool("fetch", schema)), []);
    }

    #[test]
    fn strict_walks_definitions_and_reports_boolean_schemas() {
        let schema = json!({
            "type": "object",
            "properties": {"node": {"$ref": "#/$defs/Node"}, "any": true},
            "required": ["node", "any"],
            "additionalProperties": false,
            "$defs": {"Node": {"type": "object", "properties": {"x~/y": {"type": "integer", "minimum": 0}}}}
        });
        let found = kinds(&strict(), &tool("t", schema));
        let messages: Vec<&str> = found.iter().map(|(_, m)| m.as_str()).collect();
        assert_eq!(found.len(), 4, "{messages:#?}");
        assert!(messages[0].contains("`/properties/any` is a boolean schema"));
        assert!(messages[1].contains("the object at `/$defs/Node` is open"));
        assert!(messages[2].contains("property `/$defs/Node/properties/x~0~1y` is not listed"));
        assert!(messages[3].contains("(at `/$defs/Node/properties/x~0~1y/minimum`)"));
    }

    #[test]
    fn fragments_decode() {
        assert_eq!(decode_fragment("/$defs/A%20B"), "/$defs/A B");
        assert_eq!(decode_fragment("/a%2"), "/a%2");
    }
}
