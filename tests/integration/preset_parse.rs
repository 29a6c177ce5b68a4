//! Parsing one preset file: every failure has the right kind, line and column.

use agent_presets::preset::{MAX_PRESET_FILE_BYTES, ParsedPreset, parse_preset};
use agent_presets::{Diagnostic, DiagnosticKind, Diagnostics};

fn parse(text: &str) -> Result<ParsedPreset, Diagnostics> {
    parse_bytes(text.as_bytes())
}

fn parse_bytes(bytes: &[u8]) -> Result<ParsedPreset, Diagnostics> {
    parse_preset("p.yaml".into(), bytes)
}

/// The single diagnostic a bad file produces.
fn error(text: &str) -> Diagnostic {
    error_bytes(text.as_bytes())
}

fn error_bytes(bytes: &[u8]) -> Diagnostic {
    let diagnostics = errors_bytes(bytes);
    assert_eq!(diagnostics.len(), 1, "{diagnostics:?}");
    diagnostics.into_iter().next().unwrap()
}

/// Every diagnostic a bad file produces (each with a span in the file).
fn errors(text: &str) -> Vec<Diagnostic> {
    errors_bytes(text.as_bytes())
}

fn errors_bytes(bytes: &[u8]) -> Vec<Diagnostic> {
    let diagnostics = match parse_bytes(bytes) {
        Ok(p) => panic!("expected an error, parsed {:?}", p.file),
        Err(d) => d.into_vec(),
    };
    for d in &diagnostics {
        let span = d.span.as_ref().expect("every parse error has a span");
        assert_eq!(&*span.file, "p.yaml");
        assert!(span.line >= 1 && span.column >= 1 && span.len >= 1);
    }
    diagnostics
}

/// `(kind, line, column)` of a diagnostic.
fn at(d: &Diagnostic) -> (DiagnosticKind, u32, u32) {
    let span = d.span.as_ref().unwrap();
    (d.kind, span.line, span.column)
}

const GOOD: &str = "\
# yaml-language-server: $schema=../schemas/preset.schema.json
version: 1
name: reviewer
description: Read-only code reviewer.
extends: standard
model:
  provider: deepseek
  name: deepseek-v4-flash
  baseUrl: https://api.deepseek.com
  apiKeyEnv: DEEPSEEK_API_KEY
  maxTokens: 4096
persona:
  includeRuntimeContext: true
  sections:
    - name: persona
      order: 0
      text: |
        You are a coding agent powered by the {{ model }} model.
        Your working directory is {{ cwd }}.
    - name: review-rules
      order: 150
      when: \"'grep' in tools\"
      text: Cite file and line for every finding.
      complete: false
      template: true
  remove: [tool:glob]
contexts:
  - name: workspace
    order: 0
    text: \"Working directory: {{ cwd }}\"
variables:
  project: { description: Project name, default: demo }
  team:
    description: Team
    required: true
    volatile: false
tools:
  allow: [read_file, grep, glob, list_dir]
  deny: [write_*]
  order: [read_file, <rest>, grep]
";

#[test]
fn the_design_example_parses_with_spans() {
    let p = parse(GOOD).unwrap();
    let f = &p.file;
    assert_eq!(f.version.value, 1);
    assert_eq!(p.name(), "reviewer");
    assert_eq!(f.description.as_deref(), Some("Read-only code reviewer."));
    let span = |s: agent_presets::Span| (s.line, s.column, s.len);
    assert_eq!(span(p.span_of(&f.name)), (3, 7, 8));
    assert_eq!(span(p.span_of(f.extends.as_ref().unwrap())), (5, 10, 8));

    let model = f.model.as_ref().unwrap();
    assert_eq!(model.provider.value.as_str(), "deepseek");
    assert_eq!(span(p.span_of(&model.provider)), (7, 13, 8));
    assert_eq!(
        span(p.span_of(model.api_key_env.as_ref().unwrap())),
        (10, 14, 16)
    );
    assert_eq!(model.max_tokens.as_ref().map(|m| m.value), Some(4096));

    let persona = f.persona.as_ref().unwrap();
    let flag = persona.include_runtime_context.as_ref().unwrap();
    assert!(flag.value);
    assert_eq!(span(p.span_of(flag)), (13, 26, 4));
    let sections = persona.sections.as_ref().unwrap();
    assert_eq!(sections.len(), 2);
    assert_eq!(span(p.span_of(&sections[0].name)), (15, 13, 7));
    assert_eq!(span(p.span_of(&sections[1].order)), (21, 14, 3));
    assert_eq!(sections[1].order.value, 150.0);
    assert_eq!(sections[1].when.as_ref().unwrap().value, "'grep' in tools");
    assert_eq!(sections[1].complete, Some(false));
    let remove = persona.remove.as_ref().unwrap();
    assert_eq!(remove[0].value, "tool:glob");
    assert_eq!(span(p.span_of(&remove[0])), (26, 12, 9));

    // A template reference on the second line of a `|` block maps to its own line.
    let text = &sections[0].text;
    let offset = text.value.find("cwd").unwrap();
    let s = p.text_origin(text).span_at(&text.value, offset);
    assert_eq!((s.line, s.column), (19, 38));

    let contexts = f.contexts.as_ref().unwrap();
    assert_eq!(contexts[0].text.value, "Working directory: {{ cwd }}");

    let vars = f.variables.as_ref().unwrap();
    let names: Vec<&str> = vars.iter().map(|v| v.name.value.as_str()).collect();
    assert_eq!(names, ["project", "team"], "file order is kept");
    assert_eq!(span(p.span_of(&vars.get("team").unwrap().name)), (33, 3, 4));
    assert_eq!(
        vars.get("project")
            .unwrap()
            .spec
            .default
            .as_ref()
            .map(|d| d.value.as_str()),
        Some("demo")
    );
    assert_eq!(vars.get("team").unwrap().spec.required, Some(true));

    let tools = f.tools.as_ref().unwrap();
    assert_eq!(span(p.span_of(tools)).0, 38);
    let allow = tools.value.allow.as_ref().unwrap();
    assert_eq!(span(p.span_of(&allow[1])), (38, 22, 4));
    let order = tools.value.order.as_ref().unwrap();
    assert_eq!(order[1].value, "<rest>");
    assert_eq!(span(p.span_of(&order[1])), (40, 22, 6));
}

#[test]
fn round_trips_through_serialize() {
    let p = parse(GOOD).unwrap();
    let json = serde_json::to_value(&p.file).unwrap();
    assert_eq!(json["name"], "reviewer");
    assert_eq!(json["model"]["apiKeyEnv"], "DEEPSEEK_API_KEY");
    assert_eq!(json["persona"]["includeRuntimeContext"], true);
    assert_eq!(json["variables"]["project"]["default"], "demo");
    assert_eq!(json["tools"]["order"][1], "<rest>");
    assert!(json.get("extends").is_some());
    // The serialized form validates against the committed schema.
    let schema = agent_presets::preset::preset_json_schema();
    assert!(jsonschema::validator_for(&schema).unwrap().is_valid(&json));
}

#[test]
fn non_finite_orders_parse_for_the_validator() {
    let p = parse(
        "version: 1\nname: x\npersona:\n  sections:\n    - name: a\n      order: .nan\n      text: a\n    - name: b\n      order: -.inf\n      text: b\ncontexts:\n  - name: c\n    order: .inf\n    text: c\n",
    )
    .unwrap();
    let sections = p.file.persona.as_ref().unwrap().sections.as_ref().unwrap();
    assert!(sections[0].order.value.is_nan());
    assert_eq!(sections[1].order.value, f64::NEG_INFINITY);
    let span = p.span_of(&sections[0].order);
    assert_eq!((span.line, span.column), (6, 14));
    let contexts = p.file.contexts.as_ref().unwrap();
    assert_eq!(contexts[0].order.value, f64::INFINITY);
}

#[test]
fn empty_tools_mapping_parses_with_a_span() {
    let p = parse("version: 1\nname: x\ntools: {}\n").unwrap();
    let tools = p.file.tools.as_ref().unwrap();
    assert!(tools.value.is_empty());
    let span = p.span_of(tools);
    assert_eq!((span.line, span.column), (3, 8));
}

#[test]
fn yaml_syntax_errors() {
    let d = error("version: 1\nname: foo\ntools:\n  allow: [read_file, grep\n");
    assert_eq!(at(&d), (DiagnosticKind::YamlSyntax, 4, 10));
    assert_eq!(d.message, "unclosed bracket '['");

    // A key indented further than the keys above it: at the key, lined up in the help.
    let d = error("version: 1\nname: foo\n  bad: [\n");
    assert_eq!(at(&d), (DiagnosticKind::YamlSyntax, 3, 3));
    assert_eq!(
        d.message,
        "`bad` is indented more than `name` on line 2, so YAML reads it as more of the value of `name`"
    );
    assert_eq!(
        d.help.as_deref(),
        Some("line it up with the keys of its mapping: write it as `bad: [`")
    );

    let d = error("version: 1\nname: \"foo\n");
    assert_eq!(at(&d), (DiagnosticKind::YamlSyntax, 2, 7));

    // A tab in the indentation is said plainly, at the tab.
    let d = error("version: 1\nname: foo\npersona:\n\tsections: []\n");
    assert_eq!(at(&d), (DiagnosticKind::YamlSyntax, 4, 1));
    assert!(d.message.contains("indented with a tab"), "{d}");

    let d = error("version: 1\nname: *nope\n");
    assert_eq!(at(&d), (DiagnosticKind::YamlSyntax, 2, 7));

    let d = error("version: 1\nname: foo\n---\nversion: 1\n");
    assert_eq!(at(&d), (DiagnosticKind::YamlSyntax, 4, 1));
}

#[test]
fn duplicate_keys_at_the_second_occurrence() {
    let d = error("version: 1\nname: foo\ndescription: a\nname: bar\n");
    assert_eq!(at(&d), (DiagnosticKind::DuplicateKey, 4, 1));
    assert_eq!(d.message, "duplicate key `name`");
    assert_eq!(
        d.help.as_deref(),
        Some("`name` is already set on line 2; keep one of the two")
    );
    assert_eq!(d.span.as_ref().unwrap().len, 4);

    let d =
        error("version: 1\nname: foo\nmodel:\n  provider: openai\n  name: x\n  provider: openai\n");
    assert_eq!(at(&d), (DiagnosticKind::DuplicateKey, 6, 3));

    let d = error(
        "version: 1\nname: foo\npersona:\n  sections:\n    - name: a\n      order: 0\n      text: x\n      order: 1\n",
    );
    assert_eq!(at(&d), (DiagnosticKind::DuplicateKey, 8, 7));
    assert_eq!(
        d.help.as_deref(),
        Some("`order` is already set on line 6; keep one of the two")
    );

    let d =
        error("version: 1\nname: foo\nvariables:\n  a: {description: x}\n  a: {description: y}\n");
    assert_eq!(at(&d), (DiagnosticKind::DuplicateKey, 5, 3));

    // Duplicates under an unknown key are found too, along with the unknown key.
    let ds = errors("version: 1\nname: foo\nzzz: {a: 1, a: 2}\n");
    let found: Vec<_> = ds.iter().map(at).collect();
    assert_eq!(
        found,
        [
            (DiagnosticKind::UnknownKey, 3, 1),
            (DiagnosticKind::DuplicateKey, 3, 13)
        ]
    );

    // Every duplicate is reported, each at its second occurrence.
    let ds = errors(
        "version: 1\nname: foo\nname: bar\ntools:\n  allow: [grep]\n  allow: [glob]\n  deny: []\n  deny: []\n",
    );
    let found: Vec<_> = ds.iter().map(at).collect();
    assert_eq!(
        found,
        [
            (DiagnosticKind::DuplicateKey, 3, 1),
            (DiagnosticKind::DuplicateKey, 6, 3),
            (DiagnosticKind::DuplicateKey, 8, 3)
        ]
    );
    assert_eq!(
        ds[2].help.as_deref(),
        Some(
            "`deny` is already set on line 7; merge the two: move the items of this `deny:` \
             into the list on line 7 and delete this key"
        )
    );
    // A quoted key is the same key.
    let d = error("version: 1\nname: foo\n\"name\": bar\n");
    assert_eq!(at(&d), (DiagnosticKind::DuplicateKey, 3, 1));
}

#[test]
fn unknown_keys_at_every_depth_with_did_you_mean() {
    let cases = [
        (
            "version: 1\nname: foo\ndescripton: x\n",
            (3, 1),
            "unknown key `descripton` in the preset file",
            "did you mean `description`?",
        ),
        (
            "version: 1\nname: foo\npersona:\n  includeRuntimeContex: true\n",
            (4, 3),
            "unknown key `includeRuntimeContex` in `persona`",
            "did you mean `includeRuntimeContext`?",
        ),
        (
            "version: 1\nname: foo\npersona:\n  sections:\n    - name: a\n      order: 0\n      txt: hi\n",
            (7, 7),
            "unknown key `txt` in a section",
            "did you mean `text`?",
        ),
        (
            "version: 1\nname: foo\ntools:\n  alow: [grep]\n",
            (4, 3),
            "unknown key `alow` in `tools`",
            "did you mean `allow`?",
        ),
        (
            "version: 1\nname: foo\nmodel:\n  provider: openai\n  name: gpt\n  apiKey: sk-123\n",
            (6, 3),
            "unknown key `apiKey` in `model`",
            "did you mean `apiKeyEnv`?",
        ),
        (
            "version: 1\nname: foo\nvariables:\n  project: { description: p, defualt: x }\n",
            (4, 30),
            "unknown key `defualt` in a variable",
            "did you mean `default`?",
        ),
        (
            "version: 1\nname: foo\ncontexts:\n  - name: a\n    order: 0\n    text: x\n    when: y\n",
            (7, 5),
            "unknown key `when` in a context",
            "allowed keys here: `name`, `order`, `text`, `textFile`, `template`, `override`",
        ),
        (
            "version: 1\nname: foo\nzzzqqq: x\n",
            (3, 1),
            "unknown key `zzzqqq` in the preset file",
            "allowed keys here: `version`, `name`, `description`, `extends`, `model`, `persona`, `contexts`, `variables`, `tools`, `budget`, `passEnv`, `sandbox`, `allowRead`, `mcpServers`, `commands`, `permissions`, `hooks`, `limits`, `output`, `checks`, `locale`, `texts`",
        ),
        (
            // snake_case is not the spelling: camelCase throughout.
            "version: 1\nname: foo\npersona:\n  include_runtime_context: false\n",
            (4, 3),
            "unknown key `include_runtime_context` in `persona`",
            "did you mean `includeRuntimeContext`?",
        ),
    ];
    for (text, (line, column), message, help) in cases {
        let d = error(text);
        assert_eq!(at(&d), (DiagnosticKind::UnknownKey, line, column), "{text}");
        assert_eq!(d.message, message);
        assert_eq!(d.help.as_deref(), Some(help));
        let key = message.split('`').nth(1).unwrap();
        assert_eq!(d.span.as_ref().unwrap().len as usize, key.len());
    }
}

#[test]
fn wrong_types() {
    let cases = [
        (
            "version: 1\nname: foo\npersona:\n  sections: {}\n",
            (4, 13),
            "expected a list, found a mapping",
        ),
        (
            "version: 1\nname: [foo]\n",
            (2, 7),
            "expected a single value, found a list",
        ),
        (
            "version: 1\nname: foo\ntools:\n  allow: grep\n",
            (4, 10),
            "expected a list, found `grep`",
        ),
        (
            "version: 1\nname: foo\nmodel:\n  provider: openai\n  name: x\n  maxTokens: lots\n",
            (6, 14),
            "expected a whole number (0 or more), found `lots`",
        ),
        (
            "version: 1\nname: foo\nmodel:\n  provider: openai\n  name: x\n  maxTokens: -5\n",
            (6, 14),
            "expected a whole number (0 or more), found `-5`",
        ),
        (
            "version: 1\nname: foo\npersona:\n  sections:\n    - name: a\n      order: high\n      text: x\n",
            (6, 14),
            "expected a number, found `high`",
        ),
        (
            "version: 1\nname: foo\npersona:\n  includeRuntimeContext: yes\n",
            (4, 26),
            "expected `true` or `false`, found `yes`",
        ),
        (
            "version: 1\nname:\n",
            (2, 5),
            "expected text, found nothing (null)",
        ),
        (
            "version: 1\nname: foo\nvariables:\n  project: 5\n",
            (4, 12),
            "expected a mapping (`key: value` entries), found `5`",
        ),
    ];
    for (text, (line, column), message) in cases {
        let d = error(text);
        assert_eq!(at(&d), (DiagnosticKind::WrongType, line, column), "{text}");
        assert_eq!(d.message, message);
    }
}

#[test]
fn invalid_provider_is_an_invalid_value_with_suggestion() {
    let d = error("version: 1\nname: foo\nmodel:\n  provider: deepsek\n  name: x\n");
    assert_eq!(at(&d), (DiagnosticKind::InvalidValue, 4, 13));
    assert_eq!(d.message, "unknown provider `deepsek`");
    assert_eq!(d.help.as_deref(), Some("did you mean `deepseek`?"));
    let d = error("version: 1\nname: foo\nmodel:\n  provider: mistral\n  name: x\n");
    assert_eq!(
        d.help.as_deref(),
        Some("expected one of `deepseek`, `openai`, `anthropic`, `openai-compatible`")
    );
}

#[test]
fn missing_fields_point_at_their_mapping() {
    // A section without `text`: at the section's first key.
    let d = error("version: 1\nname: foo\npersona:\n  sections:\n    - name: a\n      order: 0\n");
    assert_eq!(at(&d), (DiagnosticKind::MissingField, 5, 7));
    assert_eq!(d.message, "missing required key `text`");
    assert_eq!(
        d.help.as_deref(),
        Some("add `text: ...` to a section, or `textFile: <path>` to take its text from a file")
    );

    let d = error("version: 1\ndescription: x\n");
    assert_eq!(at(&d), (DiagnosticKind::MissingField, 1, 1));
    assert_eq!(d.message, "missing required key `name`");

    let d = error("# a comment\nname: x\ndescription: y\n");
    assert_eq!(at(&d), (DiagnosticKind::MissingField, 2, 1));
    assert_eq!(d.message, "missing required key `version`");
    assert_eq!(d.help.as_deref(), Some("add `version: 1` to this mapping"));

    let d = error("version: 1\nname: x\nmodel:\n  provider: openai\n");
    assert_eq!(at(&d), (DiagnosticKind::MissingField, 4, 3));
    assert_eq!(d.message, "missing required key `name`");

    let d = error("version: 1\nname: x\nvariables:\n  a: {default: x}\n");
    assert_eq!(d.kind, DiagnosticKind::MissingField);
    assert_eq!(
        d.message,
        "missing required key `description` in variable `a`"
    );
    assert_eq!(
        d.help.as_deref(),
        Some("add `description: ...` under `a:` (say what the variable holds)")
    );
}

#[test]
fn unsupported_version_wins_over_unknown_keys() {
    let d = error("version: 2\nname: foo\nnewThing: true\npersona:\n  fancy: yes\n");
    assert_eq!(at(&d), (DiagnosticKind::UnsupportedVersion, 1, 10));
    assert_eq!(
        d.message,
        "unsupported preset format version 2; this build reads version 1"
    );
    assert!(d.help.as_deref().unwrap().contains("version: 1"));

    let d = error("name: foo\nversion: 1.5\n");
    assert_eq!(at(&d), (DiagnosticKind::UnsupportedVersion, 2, 10));
    let d = error("version: [1]\nname: foo\n");
    assert_eq!(at(&d), (DiagnosticKind::UnsupportedVersion, 1, 10));
    assert!(d.message.contains("a list"));
    let d = error("version: 0\nname: foo\n");
    assert_eq!(at(&d), (DiagnosticKind::UnsupportedVersion, 1, 10));
    // A v1 file's own errors are reported as usual.
    let d = error("version: 1\nname: foo\nnewThing: true\n");
    assert_eq!(d.kind, DiagnosticKind::UnknownKey);
}

#[test]
fn invalid_utf8_is_an_encoding_error_at_the_bad_byte() {
    let d = error_bytes(b"version: 1\nname: f\xC3\x28o\n");
    assert_eq!(at(&d), (DiagnosticKind::Encoding, 2, 8));
    assert!(d.message.contains("not valid UTF-8"), "{}", d.message);
    // Columns count characters, not bytes.
    let mut bytes = "version: 1\n# ééé".as_bytes().to_vec();
    bytes.push(0xFF);
    let d = error_bytes(&bytes);
    assert_eq!(at(&d), (DiagnosticKind::Encoding, 2, 6));
    // UTF-16 (with its BOM) is not UTF-8.
    let d = error_bytes(b"\xFF\xFEv\x00e\x00");
    assert_eq!(at(&d), (DiagnosticKind::Encoding, 1, 1));
}

#[test]
fn nul_byte_is_an_encoding_error_at_its_position() {
    let d = error_bytes(b"version: 1\nname: foo\ndescription: a\x00b\n");
    assert_eq!(at(&d), (DiagnosticKind::Encoding, 3, 15));
    assert!(d.message.contains("NUL"));
    // A NUL before invalid UTF-8 is reported first.
    let d = error_bytes(b"a\x00\xFF");
    assert_eq!(at(&d), (DiagnosticKind::Encoding, 1, 2));
    assert!(d.message.contains("NUL"));
}

#[test]
fn bom_is_ignored_and_columns_do_not_count_it() {
    let p = parse_bytes(b"\xEF\xBB\xBFversion: 1\nname: foo\n").unwrap();
    let span = p.span_of(&p.file.version);
    assert_eq!((span.line, span.column), (1, 10));
    assert!(!p.source.text.starts_with('\u{feff}'));
    let d = error_bytes(b"\xEF\xBB\xBFversion: 1\nname: foo\nbogus: 1\n");
    assert_eq!(at(&d), (DiagnosticKind::UnknownKey, 3, 1));
    let d = error_bytes(b"\xEF\xBB\xBFversio: 1\nname: foo\n");
    assert_eq!(at(&d), (DiagnosticKind::UnknownKey, 1, 1));
}

#[test]
fn crlf_reads_as_lf_with_right_lines() {
    let text = "version: 1\r\nname: foo\r\npersona:\r\n  sections:\r\n    - name: a\r\n      order: 0\r\n      text: |\r\n        one\r\n        two {{ x }}\r\n";
    let p = parse(text).unwrap();
    assert!(!p.source.text.contains('\r'));
    let section = &p.file.persona.as_ref().unwrap().sections.as_ref().unwrap()[0];
    assert_eq!(section.text.value, "one\ntwo {{ x }}\n");
    let offset = section.text.value.find('x').unwrap();
    let s = p
        .text_origin(&section.text)
        .span_at(&section.text.value, offset);
    assert_eq!((s.line, s.column), (9, 16));

    let ds = errors("version: 1\r\nname: foo\r\ntext: \"x\"\r\nbogus: 1\r\n");
    let found: Vec<_> = ds.iter().map(at).collect();
    assert_eq!(
        found,
        [
            (DiagnosticKind::UnknownKey, 3, 1),
            (DiagnosticKind::UnknownKey, 4, 1)
        ]
    );
    let d = error("version: 1\r\nname: foo\r\nname: bar\r\n");
    assert_eq!(at(&d), (DiagnosticKind::DuplicateKey, 3, 1));
    // A lone CR is a line break too.
    let d = error("version: 1\rname: foo\rbogus: 1\r");
    assert_eq!(at(&d), (DiagnosticKind::UnknownKey, 3, 1));
}

#[test]
fn oversize_file_is_a_limit() {
    let mut text = String::from("version: 1\nname: big\n");
    while text.len() <= MAX_PRESET_FILE_BYTES {
        text.push_str("# padding padding padding padding padding padding padding padding\n");
    }
    let d = error(&text);
    assert_eq!(at(&d), (DiagnosticKind::LimitExceeded, 1, 1));
    assert!(d.message.contains(&text.len().to_string()), "{}", d.message);
    assert!(d.message.contains(&MAX_PRESET_FILE_BYTES.to_string()));
    // Exactly at the limit is fine (as far as size goes).
    let mut text = String::from("version: 1\nname: big\n");
    let pad = MAX_PRESET_FILE_BYTES - text.len();
    text.push_str(&"#".repeat(pad - 1));
    text.push('\n');
    assert_eq!(text.len(), MAX_PRESET_FILE_BYTES);
    assert!(parse(&text).is_ok());
}

#[test]
fn alias_bomb_is_a_limit_not_a_hang() {
    // Ten levels of ten aliases each: 10^10 nodes if expanded.
    let mut text = String::from("version: 1\nname: bomb\nzz:\n  - &a0 [lol, lol, lol]\n");
    for i in 1..10 {
        let refs = vec![format!("*a{}", i - 1); 10].join(", ");
        text.push_str(&format!("  - &a{i} [{refs}]\n"));
    }
    let started = std::time::Instant::now();
    let d = error(&text);
    assert_eq!(d.kind, DiagnosticKind::LimitExceeded, "{d}");
    assert!(d.message.contains("alias"), "{}", d.message);
    assert!(d.span.as_ref().unwrap().line >= 4);
    // Not a benchmark: just proof that it did not expand 10^10 nodes.
    assert!(started.elapsed().as_secs() < 30);

    // The same bomb where the strict parse would look first (a typed field).
    let mut text = String::from("version: 1\nname: bomb\ndescription: &a0 lol\ntools:\n  allow: [");
    text.push_str(&vec!["*a0"; 2000].join(", "));
    text.push_str("]\n");
    let d = error(&text);
    assert_eq!(d.kind, DiagnosticKind::LimitExceeded, "{d}");
}

#[test]
fn deep_nesting_is_a_limit() {
    let text = format!(
        "version: 1\nname: foo\ntools:\n  allow: {}{}\n",
        "[".repeat(100),
        "]".repeat(100)
    );
    let d = error(&text);
    assert_eq!(d.kind, DiagnosticKind::LimitExceeded);
    assert_eq!(d.span.as_ref().unwrap().line, 4);
}

#[test]
fn empty_and_non_mapping_files() {
    for text in ["", "\n\n", "# only a comment\n", "---\n"] {
        let d = error(text);
        assert_eq!(at(&d), (DiagnosticKind::MissingField, 1, 1), "{text:?}");
        assert_eq!(d.message, "the file is empty: it holds no YAML document");
    }
    let d = error("- a\n- b\n");
    assert_eq!(at(&d), (DiagnosticKind::WrongType, 1, 1));
    assert_eq!(
        d.message,
        "the top level of a preset file must be a mapping, found a list"
    );
    let d = error("hello\n");
    assert_eq!(at(&d), (DiagnosticKind::WrongType, 1, 1));
    assert_eq!(
        d.message,
        "the top level of a preset file must be a mapping, found `hello`"
    );
}

#[test]
fn messages_are_plain_and_stable() {
    let cases = [
        "version: 1\nname: foo\npersona:\n  includeRuntimeContex: true\n",
        "version: 1\nname: foo\nname: bar\n",
        "version: 3\nname: foo\n",
        "version: 1\nname: foo\ntools:\n  allow: grep\n",
        "version: 1\nname: foo\n  bad: [\n",
    ];
    let rendered: Vec<String> = cases.iter().map(|c| error(c).to_string()).collect();
    insta::assert_snapshot!(rendered.join("\n"), @r"
    error[P0003 unknown-key]: unknown key `includeRuntimeContex` in `persona` at p.yaml:4:3 (help: did you mean `includeRuntimeContext`?)
    error[P0002 duplicate-key]: duplicate key `name` at p.yaml:3:1 (help: `name` is already set on line 2; keep one of the two)
    error[P0006 unsupported-version]: unsupported preset format version 3; this build reads version 1 at p.yaml:1:10 (help: write `version: 1` (a file written for a newer format needs a newer agent-presets))
    error[P0004 wrong-type]: expected a list, found `grep` at p.yaml:4:10 (help: write a list as `[a, b]` or as lines starting with `- `)
    error[P0001 yaml-syntax]: `bad` is indented more than `name` on line 2, so YAML reads it as more of the value of `name` at p.yaml:3:3 (help: line it up with the keys of its mapping: write it as `bad: [`)
    ");
}

#[test]
fn garbage_never_panics() {
    let inputs: [&[u8]; 12] = [
        b"{",
        b"]",
        b"version: 1\nname: x\npersona: [",
        b"&a [*a]",
        b"version: !!binary AAAA\nname: x\n",
        b"? [a]\n: b\n",
        b"version: 1\nname: x\n<<: {extends: y}\n",
        b"version: 1\nname: x\nvariables: {1: {description: x}}\n",
        b"version: 1\nname: x\nmodel: {provider: openai, name: [x]}\n",
        b"%YAML 1.2\n---\nversion: 1\nname: x\n",
        b"version: 1\nname: x\ntools: {allow: [~]}\n",
        b"\xEF\xBB\xBF",
    ];
    for input in inputs {
        match parse_bytes(input) {
            Ok(_) => {}
            Err(ds) => {
                for d in ds.iter() {
                    let span = d.span.as_ref().expect("span");
                    assert!(span.line >= 1 && span.column >= 1, "{d}");
                    assert!(!d.message.is_empty());
                }
            }
        }
    }
}
