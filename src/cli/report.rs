//! The outcome of `validate` and its four renderings: human (rustc-style), JSON, GitHub
//! workflow commands and SARIF 2.1.0.

use serde::Serialize;
use serde_json::{Value, json};

use super::kinds::kind_meaning;
use super::secrets::mask;
use super::snippet::HumanRenderer;
use super::style::Style;
use crate::diagnostic::{Diagnostic, DiagnosticKind, Severity};
use crate::source_files::SourceFiles;

/// One validated preset.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct PresetOutcome {
    /// Its name.
    pub name: String,
    /// Its file as shown to users.
    pub file: String,
    /// No errors (and, with `--deny-warnings`, no warnings)?
    pub valid: bool,
}

/// Every diagnostic (each printed once) and every preset's verdict.
#[derive(Debug, Default)]
pub(crate) struct ValidationReport {
    diagnostics: Vec<Diagnostic>,
    presets: Vec<PresetOutcome>,
}

impl ValidationReport {
    /// Add diagnostics; one identical to an earlier one (a parent's error found again
    /// while validating a child) is kept once.
    pub(crate) fn add_diagnostics(&mut self, list: impl IntoIterator<Item = Diagnostic>) {
        for d in list {
            if !self.diagnostics.contains(&d) {
                self.diagnostics.push(d);
            }
        }
    }

    /// Record a preset's verdict.
    pub(crate) fn add_preset(&mut self, outcome: PresetOutcome) {
        self.presets.push(outcome);
    }

    /// The diagnostics, deduplicated, in the order found.
    pub(crate) fn diagnostics(&self) -> &[Diagnostic] {
        &self.diagnostics
    }

    /// The verdicts.
    pub(crate) fn presets(&self) -> &[PresetOutcome] {
        &self.presets
    }

    fn count(&self, severity: Severity) -> usize {
        self.diagnostics
            .iter()
            .filter(|d| d.severity == severity)
            .count()
    }

    /// `2 presets valid, 1 invalid (3 errors, 1 warning)`.
    pub(crate) fn summary(&self) -> String {
        let valid = self.presets.iter().filter(|p| p.valid).count();
        let invalid = self.presets.len() - valid;
        format!(
            "{} valid, {invalid} invalid ({}, {})",
            plural(valid, "preset"),
            plural(self.count(Severity::Error), "error"),
            plural(self.count(Severity::Warning), "warning"),
        )
    }

    /// rustc-style diagnostics (with snippets from `sources`), then the summary line.
    pub(crate) fn human(&self, style: Style, sources: &SourceFiles) -> String {
        let renderer = HumanRenderer::new(style, sources, &self.diagnostics);
        let mut out = renderer.render_all(&self.diagnostics);
        out.push_str(&self.summary());
        out.push('\n');
        out
    }

    /// `{"diagnostics": [...], "presets": [...]}`, pretty-printed, with a final newline.
    pub(crate) fn json(&self) -> String {
        let diagnostics: Vec<Value> = self.diagnostics.iter().map(diagnostic_json).collect();
        let value = json!({ "diagnostics": diagnostics, "presets": self.presets });
        pretty(&value)
    }

    /// One `::error`/`::warning` workflow command per diagnostic, then the summary.
    pub(crate) fn github(&self) -> String {
        let mut out = String::new();
        for d in &self.diagnostics {
            let level = match d.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
            };
            let mut properties = Vec::new();
            if let Some(span) = &d.span {
                properties.push(format!("file={}", escape_property(&span.file)));
                properties.push(format!("line={}", span.line));
                properties.push(format!("col={}", span.column));
            }
            properties.push(format!(
                "title={}",
                escape_property(&format!("{} {}", d.code(), d.kind.name()))
            ));
            let message = match &d.help {
                Some(help) => format!("{} ({help})", d.message),
                None => d.message.clone(),
            };
            let message = mask(&message);
            out.push_str(&format!(
                "::{level} {}::{}\n",
                properties.join(","),
                escape_data(&message)
            ));
        }
        out.push_str(&self.summary());
        out.push('\n');
        out
    }

    /// A minimal, valid SARIF 2.1.0 log: one run, a rule per diagnostic kind.
    pub(crate) fn sarif(&self) -> String {
        let rules: Vec<Value> = DiagnosticKind::ALL
            .iter()
            .map(|k| {
                json!({
                    "id": k.code(),
                    "name": k.name(),
                    "shortDescription": { "text": kind_meaning(*k) },
                    "defaultConfiguration": { "level": level(k.severity()) },
                })
            })
            .collect();
        let results: Vec<Value> = self
            .diagnostics
            .iter()
            .map(|d| {
                let index = DiagnosticKind::ALL.iter().position(|k| *k == d.kind);
                let text = match &d.help {
                    Some(help) => format!("{} (help: {help})", d.message),
                    None => d.message.clone(),
                };
                let text = mask(&text);
                let mut result = json!({
                    "ruleId": d.code(),
                    "ruleIndex": index,
                    "level": level(d.severity),
                    "message": { "text": text },
                });
                if let Some(span) = &d.span {
                    result["locations"] = json!([{
                        "physicalLocation": {
                            "artifactLocation": { "uri": uri(&span.file) },
                            "region": {
                                "startLine": span.line,
                                "startColumn": span.column,
                                "endColumn": span.column.saturating_add(span.len),
                            }
                        }
                    }]);
                }
                result
            })
            .collect();
        let log = json!({
            "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
            "version": "2.1.0",
            "runs": [{
                "tool": {
                    "driver": {
                        "name": "agent-presets",
                        "version": env!("CARGO_PKG_VERSION"),
                        "rules": rules,
                    }
                },
                "columnKind": "unicodeCodePoints",
                "results": results,
            }]
        });
        pretty(&log)
    }
}

/// The JSON shape of one diagnostic (stable; documented in the README).
pub(crate) fn diagnostic_json(d: &Diagnostic) -> Value {
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

fn level(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
    }
}

/// Pretty JSON with a final newline.
pub(crate) fn pretty(value: &Value) -> String {
    // Serialising a `Value` cannot fail.
    let mut text = serde_json::to_string_pretty(value).unwrap_or_default();
    text.push('\n');
    text
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("{n} {word}")
    } else {
        format!("{n} {word}s")
    }
}

/// Workflow command data: `%`, CR and LF escaped.
fn escape_data(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Workflow command property values: also `:` and `,`.
fn escape_property(text: &str) -> String {
    escape_data(text).replace(':', "%3A").replace(',', "%2C")
}

/// A relative URI reference for a displayed file path (percent-encoding what a URI may
/// not hold, e.g. the `<` `>` of `<builtin>/standard.yaml`).
fn uri(file: &str) -> String {
    let mut out = String::with_capacity(file.len());
    for b in file.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                out.push(char::from(b));
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::Span;

    fn report() -> ValidationReport {
        let mut r = ValidationReport::default();
        let d = Diagnostic::new(DiagnosticKind::UnknownTool, "unknown tool `read_fiel`")
            .at(Span::new("a, b.yaml".into(), 3, 5).with_len(9))
            .help("did you mean `read_file`?");
        r.add_diagnostics([d.clone(), d]);
        r.add_diagnostics([Diagnostic::new(
            DiagnosticKind::VolatileInPrefix,
            "50% of\nit",
        )]);
        r.add_preset(PresetOutcome {
            name: "a".into(),
            file: "a.yaml".into(),
            valid: false,
        });
        r
    }

    #[test]
    fn identical_diagnostics_are_kept_once() {
        assert_eq!(report().diagnostics().len(), 2);
        assert_eq!(
            report().summary(),
            "0 presets valid, 1 invalid (1 error, 1 warning)"
        );
    }

    #[test]
    fn github_escapes() {
        let text = report().github();
        assert!(text.starts_with(
            "::error file=a%2C b.yaml,line=3,col=5,title=P0103 unknown-tool::unknown tool `read_fiel` (did you mean `read_file`?)\n"
        ), "{text}");
        assert!(text.contains("::warning title=P0044 volatile-in-prefix::50%25 of%0Ait\n"));
    }

    #[test]
    fn json_has_nulls_for_unknown_locations() {
        let v: Value = serde_json::from_str(&report().json()).unwrap();
        assert_eq!(v["diagnostics"][1]["file"], Value::Null);
        assert_eq!(v["diagnostics"][1]["help"], Value::Null);
        assert_eq!(v["diagnostics"][0]["column"], 5);
        assert_eq!(v["presets"][0]["valid"], false);
    }

    #[test]
    fn sarif_uris_are_encoded() {
        assert_eq!(
            uri("<builtin>/standard.yaml"),
            "%3Cbuiltin%3E/standard.yaml"
        );
        let v: Value = serde_json::from_str(&report().sarif()).unwrap();
        assert_eq!(v["version"], "2.1.0");
        let result = &v["runs"][0]["results"][0];
        assert_eq!(result["ruleId"], "P0103");
        let index = result["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(
            v["runs"][0]["tool"]["driver"]["rules"][index]["id"],
            "P0103"
        );
    }
}
