//! The exit code a validation report means.

use super::{Exit, ValidationReport};
use crate::diagnostic::{Diagnostic, DiagnosticKind};

/// What `validate` exits with for `report`: 2 when something could not be read
/// (`io`), 1 when a preset is invalid, an error was found, or (with `deny_warnings`)
/// anything was, else 0.
pub fn exit_code(report: &ValidationReport, deny_warnings: bool) -> Exit {
    let diagnostics: &[Diagnostic] = report.diagnostics();
    if diagnostics.iter().any(|d| d.kind == DiagnosticKind::Io) {
        Exit::Usage
    } else if report.presets().iter().any(|p| !p.valid)
        || diagnostics.iter().any(Diagnostic::is_error)
        || (deny_warnings && !diagnostics.is_empty())
    {
        Exit::Invalid
    } else {
        Exit::Ok
    }
}
