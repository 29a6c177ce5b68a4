//! The committed `schemas/preset.schema.json` is exactly what the code generates.
//! Run with `UPDATE_SCHEMAS=1` to rewrite it after changing the preset types.

use std::path::Path;

#[test]
fn preset_schema_is_up_to_date() {
    let generated = agent_presets::preset::preset_json_schema();
    let mut text = serde_json::to_string_pretty(&generated).expect("schema serializes");
    text.push('\n');
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas/preset.schema.json");
    if std::env::var_os("UPDATE_SCHEMAS").is_some_and(|v| !v.is_empty() && v != "0") {
        std::fs::write(&path, &text).expect("write schemas/preset.schema.json");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == text,
        "schemas/preset.schema.json is out of date with the preset types in src/preset/spec.rs.\n\
         Regenerate it with:\n\n    UPDATE_SCHEMAS=1 cargo test --test integration preset_schema_drift\n\n\
         and commit the result."
    );
}

/// The committed schema is a valid draft 2020-12 schema that accepts the built-in presets
/// and rejects an unknown key.
#[test]
fn preset_schema_accepts_builtins_and_rejects_unknown_keys() {
    let schema = agent_presets::preset::preset_json_schema();
    let validator = jsonschema::validator_for(&schema).expect("valid JSON Schema");
    for (name, text) in agent_presets::preset::catalog::BUILTIN_PRESETS {
        let value: serde_json::Value = serde_saphyr::from_str(text).expect("built-in is YAML");
        let errors: Vec<String> = validator
            .iter_errors(&value)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{name}: {errors:?}");
    }
    let bad = serde_json::json!({
        "version": 1,
        "name": "x",
        "persona": { "includeRuntimeContex": true }
    });
    assert!(!validator.is_valid(&bad));
    let bad_name = serde_json::json!({ "version": 1, "name": "Bad_Name" });
    assert!(!validator.is_valid(&bad_name));
    let bad_version = serde_json::json!({ "version": 2, "name": "x" });
    assert!(!validator.is_valid(&bad_version));
    let bad_var = serde_json::json!({
        "version": 1, "name": "x", "variables": { "Project": { "description": "p" } }
    });
    assert!(!validator.is_valid(&bad_var));
}

/// The committed `schemas/test-case.schema.json` is what the test case types generate
/// (`UPDATE_SCHEMAS=1` rewrites it), and it accepts the example of docs/testing.md.
#[test]
fn test_case_schema_is_up_to_date() {
    let generated = agent_presets::testing::case_json_schema();
    let mut text = serde_json::to_string_pretty(&generated).expect("schema serializes");
    text.push('\n');
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas/test-case.schema.json");
    if std::env::var_os("UPDATE_SCHEMAS").is_some_and(|v| !v.is_empty() && v != "0") {
        std::fs::write(&path, &text).expect("write schemas/test-case.schema.json");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == text,
        "schemas/test-case.schema.json is out of date with src/testing/case.rs: run \
         `agent-presets schema --write` (or UPDATE_SCHEMAS=1) and commit the result"
    );
    let validator = jsonschema::validator_for(&generated).expect("valid JSON Schema");
    let example = serde_json::json!({
        "preset": "reviewer",
        "prompt": "Review src/lib.rs for typos.",
        "vars": {"focus": "security"},
        "workspace": "fixtures/repo",
        "cassette": "review-typos.jsonl",
        "expect": {
            "tools": {
                "used": ["read_file"],
                "notUsed": ["bash", "write_file"],
                "sequence": {"inOrder": ["read_file", "grep"]},
                "args": [{"tool": "read_file", "match": {"path": "src/lib.rs"}}]
            },
            "maxSteps": 4,
            "outcome": "answered",
            "answer": {"contains": ["typo"], "matches": "line \\d+"},
            "output": {"match": {"verdict": "changes"}, "schema": {"type": "object"}}
        }
    });
    let errors: Vec<String> = validator
        .iter_errors(&example)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
    assert!(!validator.is_valid(&serde_json::json!({
        "preset": "r", "prompt": "p", "expect": {"tools": {"usd": []}}
    })));
}
