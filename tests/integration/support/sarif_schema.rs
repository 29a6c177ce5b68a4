//! The official SARIF 2.1.0 JSON Schema (`tests/fixtures/sarif-schema-2.1.0.json`, see the
//! README there), compiled with format checks on. Include with
//! `#[path = "support/sarif_schema.rs"] mod sarif_schema;`.
#![allow(dead_code)]

use std::path::Path;

/// A validator for SARIF 2.1.0 logs.
pub fn validator() -> jsonschema::Validator {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sarif-schema-2.1.0.json");
    let text = std::fs::read_to_string(path).unwrap();
    let schema: serde_json::Value = serde_json::from_str(&text).unwrap();
    jsonschema::options()
        .should_validate_formats(true)
        .build(&schema)
        .expect("the SARIF schema compiles")
}

/// Every way `log` breaks the schema, with the JSON pointer of the offending value.
pub fn errors(validator: &jsonschema::Validator, log: &serde_json::Value) -> Vec<String> {
    validator
        .iter_errors(log)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect()
}
