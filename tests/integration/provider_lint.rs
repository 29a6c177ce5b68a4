//! Provider lint through validation: a host registry with deliberately broken tool
//! schemas, and presets on different providers making them visible. Validation checks
//! exactly what `run` would send (the endpoint's schema dialect), names the tool and the
//! JSON pointer, and points at the `allow` entry that made the tool visible.

use agent_presets::preset::{PresetCatalog, validate_in_catalog};
use agent_presets::provider::{ModelSettings, wire_tools};
use agent_presets::{Diagnostic, DiagnosticKind, ToolCatalog};
use serde_json::json;

use crate::support;
use crate::support::host_tool;

/// The built-ins plus one host tool per rule.
fn broken_host() -> ToolCatalog {
    let mut tools = ToolCatalog::builtin();
    host_tool::register(
        &mut tools,
        &format!("lookup_{}", "x".repeat(70)),
        json!({"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}),
    );
    host_tool::register(
        &mut tools,
        "either",
        json!({
            "type": "object",
            "properties": {"id": {"type": "string"}, "email": {"type": "string"}},
            "oneOf": [{"required": ["id"]}, {"required": ["email"]}]
        }),
    );
    host_tool::register(
        &mut tools,
        "typo",
        json!({"type": "object", "properties": {"n": {"type": "integr"}}, "required": ["n"]}),
    );
    host_tool::register(
        &mut tools,
        "headers",
        json!({
            "type": "object",
            "properties": {"map": {"additionalProperties": {"type": "string"}}},
            "required": ["map"]
        }),
    );
    host_tool::register(
        &mut tools,
        "openapi",
        json!({
            "type": "object",
            "properties": {"who": {"type": "string", "nullable": true}},
            "required": ["who"]
        }),
    );
    host_tool::register(
        &mut tools,
        "dangling",
        json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/Gone"}}, "required": ["a"]}),
    );
    tools
}

/// Validate `yaml` (a preset named `p`) against the broken host.
fn validate(yaml: &str) -> Vec<Diagnostic> {
    let tools = broken_host();
    let mut presets = PresetCatalog::builtin();
    presets.add_text("p", "p.yaml", yaml).unwrap();
    validate_in_catalog(&presets, "p", &tools).diagnostics
}

fn summary(diagnostics: &[Diagnostic]) -> Vec<(DiagnosticKind, String)> {
    diagnostics
        .iter()
        .map(|d| {
            let at = d.span.as_ref().map(|s| s.to_string()).unwrap_or_default();
            (d.kind, at)
        })
        .collect()
}

#[test]
fn each_rule_through_validation_with_the_allow_entry_as_location() {
    let long = format!("lookup_{}", "x".repeat(70));
    let preset = format!(
        "version: 1\nname: p\nextends: standard\nmodel:\n  provider: openai\n  name: gpt-5-mini\ntools:\n  allow:\n    - {long}\n    - either\n    - typo\n    - headers\n    - openapi\n    - dangling\n    - read_file\n"
    );
    let found = validate(&preset);
    assert_eq!(
        summary(&found),
        [
            (DiagnosticKind::InvalidToolSchema, "p.yaml:14:7".to_owned()),
            (DiagnosticKind::ToolSchemaRoot, "p.yaml:10:7".to_owned()),
            (DiagnosticKind::StrictOpenObject, "p.yaml:12:7".to_owned()),
            (DiagnosticKind::ToolNameRejected, "p.yaml:9:7".to_owned()),
            (
                DiagnosticKind::StrictUnsupportedKeyword,
                "p.yaml:13:7".to_owned()
            ),
            (DiagnosticKind::InvalidToolSchema, "p.yaml:11:7".to_owned()),
        ],
        "{found:#?}"
    );
    let messages: Vec<&str> = found.iter().map(|d| d.message.as_str()).collect();
    assert!(
        messages[0].starts_with("tool `dangling`: `/properties/a/$ref` refers to `#/$defs/Gone`"),
        "{messages:#?}"
    );
    assert!(
        messages[1].starts_with("tool `either`: `/anyOf` at the root"),
        "{messages:#?}"
    );
    assert!(
        messages[2].starts_with("tool `headers`: the object at `/properties/map` is open"),
        "{messages:#?}"
    );
    assert!(
        messages[3].starts_with("openai (strict) refuses the tool name `lookup_xxx"),
        "{messages:#?}"
    );
    assert!(messages[4].starts_with("tool `openapi`: openai (strict) does not support `nullable` (at `/properties/who/nullable`)"), "{messages:#?}");
    assert!(
        messages[5].starts_with(
            "tool `typo`: the parameter schema is not valid JSON Schema at `/properties/n/type`"
        ),
        "{messages:#?}"
    );
    assert!(found.iter().all(|d| d.help.is_some()));
}

#[test]
fn the_provider_decides_which_rules_apply() {
    let preset = |provider: &str, extra: &str| {
        format!(
            "version: 1\nname: p\nextends: standard\nmodel:\n  provider: {provider}\n  name: m\n{extra}tools:\n  allow: [either, headers, openapi]\n"
        )
    };
    let kinds =
        |yaml: &str| -> Vec<DiagnosticKind> { validate(yaml).iter().map(|d| d.kind).collect() };
    // DeepSeek (portable schemas, no strict mode): all three are fine.
    assert_eq!(kinds(&preset("deepseek", "")), []);
    // Anthropic: the root's `oneOf` (became `anyOf` only in the strict projection).
    assert_eq!(
        kinds(&preset("anthropic", "")),
        [DiagnosticKind::ToolSchemaRoot]
    );
    // DeepSeek's beta root is strict: the map and `nullable` are refused.
    let beta = "  baseUrl: https://api.deepseek.com/beta\n";
    assert_eq!(
        kinds(&preset("deepseek", beta)),
        [
            DiagnosticKind::ToolSchemaRoot,
            DiagnosticKind::StrictOpenObject,
            DiagnosticKind::StrictUnsupportedKeyword
        ]
    );
    // Strict mode turned off for OpenAI: the portable rules only.
    assert_eq!(kinds(&preset("openai", "  strictTools: false\n")), []);
}

#[test]
fn what_is_linted_is_what_run_sends() {
    let tools = broken_host();
    let mut presets = PresetCatalog::builtin();
    presets
        .add_text(
            "p",
            "p.yaml",
            "version: 1\nname: p\nextends: standard\nmodel:\n  provider: openai\n  name: gpt-5-mini\ntools:\n  allow: [headers]\n",
        )
        .unwrap();
    let validation = validate_in_catalog(&presets, "p", &tools);
    assert!(!validation.is_valid());
    // The same preset on DeepSeek validates; what its endpoint gets passes the lint.
    let settings = ModelSettings::new(agent_presets::preset::Provider::Openai, "gpt-5-mini");
    let mut presets = PresetCatalog::builtin();
    presets
        .add_text(
            "q",
            "q.yaml",
            "version: 1\nname: q\nextends: standard\ntools:\n  allow: [headers]\n",
        )
        .unwrap();
    let valid = validate_in_catalog(&presets, "q", &tools).preset.unwrap();
    let sent = wire_tools(&settings, valid.assembler().registry());
    let headers = sent.iter().find(|t| t.name == "headers").unwrap();
    // The strict projection kept the open map: exactly what the lint refused for `p`.
    assert_eq!(
        headers.parameters["properties"]["map"],
        json!({"additionalProperties": {"type": "string"}})
    );
}

#[test]
fn without_a_model_the_rules_of_every_provider_apply_at_the_parent() {
    // `minimal` names a model (DeepSeek); a root preset without one is checked against
    // every provider's rules, and the problem points at the tool's `allow` entry.
    let found = validate("version: 1\nname: p\ntools:\n  allow: [either]\n");
    assert_eq!(
        summary(&found),
        [(DiagnosticKind::ToolSchemaRoot, "p.yaml:4:11".to_owned())]
    );
    assert!(
        found[0]
            .message
            .contains("every provider requires one plain object there"),
        "{found:#?}"
    );
    // Inherited visibility (no `allow` in the preset): the problem points at the
    // provider that refuses it.
    let found = validate(
        "version: 1\nname: p\nextends: standard\nmodel:\n  provider: anthropic\n  name: claude\ntools:\n  deny: [typo, headers, openapi, dangling, lookup_*]\n",
    );
    assert_eq!(
        summary(&found),
        [(DiagnosticKind::ToolSchemaRoot, "p.yaml:5:13".to_owned())],
        "{found:#?}"
    );
}

/// A preset validated against Anthropic (names up to 128 characters) run through a
/// client for an OpenAI-dialect provider (at most 64): the agent lints the tools for the
/// endpoint it actually talks to and refuses before the first request.
#[test]
fn an_agent_refuses_tools_its_endpoint_would_refuse_before_sending() {
    use agent_presets::agent::{Agent, AgentError, ApproveAll};
    use agent_presets::client::{ApiKey, ClientOptions, ModelClient};
    use agent_presets::preset::spec::Provider;
    use agent_presets::prompt::{ContextSnapshot, Values};
    use agent_presets::tools::ToolContext;
    use support::mock_provider::{self as mock, MockProvider, Reply};

    let long = format!("lookup_{}", "x".repeat(70));
    let mut tools = ToolCatalog::builtin();
    host_tool::register(
        &mut tools,
        &long,
        json!({"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}),
    );
    let mut presets = PresetCatalog::builtin();
    let yaml = format!(
        "version: 1\nname: p\nmodel: {{provider: anthropic, name: m}}\npersona:\n  sections:\n    - {{name: persona, order: 0, text: Hi.}}\ntools:\n  allow: [{long}]\n"
    );
    presets.add_text("p", "p.yaml", &yaml).unwrap();
    let v = validate_in_catalog(&presets, "p", &tools);
    let preset = v.preset.unwrap_or_else(|| panic!("{:?}", v.diagnostics));

    let server = MockProvider::start(vec![Reply::json(mock::openai_text("hi"))]);
    for provider in [Provider::Openai, Provider::Deepseek] {
        let settings = ModelSettings::new(provider, "m").with_base_url(server.url(""));
        let client =
            ModelClient::new(settings, Some(ApiKey::new("k")), ClientOptions::default()).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let mut agent = Agent::new(
            preset.assembler(),
            &client,
            ToolContext::new(dir.path()).unwrap(),
        );
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let mut history = Vec::new();
        let result = runtime.block_on(agent.run(
            "hi",
            &mut history,
            &mut ContextSnapshot::new(),
            &mut |_| Values::new().with("model", "m"),
            &mut ApproveAll,
            &mut |_| {},
        ));
        match result {
            Err(AgentError::ToolsRefused(ds)) => {
                let kinds: Vec<_> = ds.iter().map(|d| d.kind).collect();
                assert_eq!(kinds, [DiagnosticKind::ToolNameRejected], "{ds:?}");
                assert!(
                    ds.as_slice()[0].message.contains(provider.as_str()),
                    "{ds:?}"
                );
            }
            other => panic!("{provider:?}: expected ToolsRefused, got {other:?}"),
        }
        assert!(history.is_empty(), "{history:?}");
    }
    assert!(server.requests().is_empty(), "nothing may be sent");
}
