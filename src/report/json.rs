//! The JSON rendering: `{"diagnostics": [...], "presets": [...]}` (the shape of one
//! diagnostic is stable and documented in docs/diagnostics.md), and the JSON helpers every
//! command's `--format json` shares.

use serde_json::{Value, json};

use super::mask::mask;
use super::shown::{Shown, cap_per_file};
use super::validation::ValidationReport;
use crate::diagnostic::Diagnostic;

impl ValidationReport {
    /// `{"diagnostics": [...], "presets": [...]}`, pretty-printed, with a final newline.
    /// When a file has more diagnostics than are shown, a third key follows:
    /// `"omitted": [{"file": F or null, "count": N}]`.
    pub fn json(&self) -> String {
        let mut diagnostics = Vec::new();
        let mut omitted = Vec::new();
        for item in cap_per_file(self.diagnostics()) {
            match item {
                Shown::Diagnostic(d) => diagnostics.push(diagnostic_json(d)),
                Shown::More { file, count } => {
                    omitted.push(json!({ "file": file, "count": count }));
                }
            }
        }
        let mut value = json!({ "diagnostics": diagnostics, "presets": self.presets() });
        if !omitted.is_empty() {
            value["omitted"] = Value::Array(omitted);
        }
        pretty(&value)
    }
}

/// The JSON shape of one diagnostic (stable; documented in `docs/diagnostics.md`).
pub fn diagnostic_json(d: &Diagnostic) -> Value {
    json!({
        "code": d.code(),
        "kind": d.kind.name(),
        "severity": d.severity.as_str(),
        "message": mask(&d.message),
        "file": d.span.as_ref().map(|s| s.file.to_string()),
        "line": d.span.as_ref().map(|s| s.line),
        "column": d.span.as_ref().map(|s| s.column),
        "help": d.help.as_deref().map(mask),
    })
}

/// An order as JSON: an integer when it is one (`150`, not `150.0`).
pub fn order_json(order: f64) -> Value {
    if order.fract() == 0.0 && order.abs() < 9.0e15 {
        Value::from(order as i64)
    } else {
        Value::from(order)
    }
}

/// Pretty JSON with a final newline.
pub fn pretty(value: &Value) -> String {
    // Serialising a `Value` cannot fail.
    let mut text = serde_json::to_string_pretty(value).unwrap_or_default();
    text.push('\n');
    text
}
