//! The JSON rendering: `{"diagnostics": [...], "presets": [...]}` (the shape of one
//! diagnostic is stable and documented in docs/diagnostics.md), and the JSON helpers every
//! command's `--format json` shares.

use std::borrow::Cow;
use std::io::{self, BufWriter, Write};

use serde::Serialize;
use serde_json::Value;

use super::commands::displayed;
use super::shown::{Shown, cap_per_file};
use super::validation::ValidationReport;
use crate::diagnostic::Diagnostic;

impl ValidationReport {
    /// `{"diagnostics": [...], "presets": [...]}`, pretty-printed, with a final newline.
    /// When a file has more diagnostics than are shown, a third key follows:
    /// `"omitted": [{"file": F or null, "count": N}]`.
    ///
    /// Written straight from the diagnostics, without a [`Value`] tree in between: a
    /// thousand presets can report thousands of warnings, and building the tree (a hashed
    /// map per diagnostic) cost more than writing the text.
    pub fn json(&self) -> String {
        pretty(&self.json_shape())
    }

    /// [`Self::json`]'s text written to `out` as it is made (buffered), so a large report
    /// is never held whole in memory.
    pub fn write_json(&self, out: &mut dyn Write) -> io::Result<()> {
        let mut out = BufWriter::with_capacity(64 * 1024, out);
        serde_json::to_writer_pretty(&mut out, &self.json_shape())?;
        out.write_all(b"\n")?;
        out.flush()
    }

    fn json_shape(&self) -> ReportJson<'_> {
        let mut diagnostics = Vec::new();
        let mut omitted = Vec::new();
        for item in cap_per_file(self.diagnostics()) {
            match item {
                Shown::Diagnostic(d) => diagnostics.push(DiagnosticJson::of(d)),
                Shown::More { file, count } => omitted.push(Omitted { file, count }),
            }
        }
        ReportJson {
            diagnostics,
            presets: self.presets(),
            omitted,
        }
    }
}

/// [`ValidationReport::json`]'s shape; the same bytes as the [`Value`] it once built.
#[derive(Serialize)]
struct ReportJson<'a> {
    diagnostics: Vec<DiagnosticJson<'a>>,
    presets: &'a [super::validation::PresetOutcome],
    #[serde(skip_serializing_if = "Vec::is_empty")]
    omitted: Vec<Omitted<'a>>,
}

#[derive(Serialize)]
struct Omitted<'a> {
    file: Option<&'a str>,
    count: usize,
}

/// The JSON shape of one diagnostic (stable; documented in `docs/diagnostics.md`), as a
/// type: [`diagnostic_json`] and the report write it alike.
#[derive(Serialize)]
struct DiagnosticJson<'a> {
    code: &'a str,
    kind: &'a str,
    severity: &'a str,
    message: Cow<'a, str>,
    file: Option<&'a str>,
    line: Option<u32>,
    column: Option<u32>,
    help: Option<Cow<'a, str>>,
}

impl<'a> DiagnosticJson<'a> {
    fn of(d: &'a Diagnostic) -> DiagnosticJson<'a> {
        DiagnosticJson {
            code: d.code(),
            kind: d.kind.name(),
            severity: d.severity.as_str(),
            message: displayed(&d.message),
            file: d.span.as_ref().map(|s| &*s.file),
            line: d.span.as_ref().map(|s| s.line),
            column: d.span.as_ref().map(|s| s.column),
            help: d.help.as_deref().map(displayed),
        }
    }
}

/// The JSON shape of one diagnostic (stable; documented in `docs/diagnostics.md`).
pub fn diagnostic_json(d: &Diagnostic) -> Value {
    // Serialising these fields into a `Value` cannot fail.
    serde_json::to_value(DiagnosticJson::of(d)).unwrap_or(Value::Null)
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
pub fn pretty(value: &(impl Serialize + ?Sized)) -> String {
    // Serialising a `Value` (or the report types above: strings, numbers, options and
    // sequences) cannot fail.
    let mut text = serde_json::to_string_pretty(value).unwrap_or_default();
    text.push('\n');
    text
}
