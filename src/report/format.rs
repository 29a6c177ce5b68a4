//! The machine formats a command can be asked for, and the report of a command that
//! failed in one of them.

use std::path::Path;

use serde_json::{Value, json};

use super::exit::Exit;
use super::json::{diagnostic_json, pretty};
use super::sarif::SarifRun;
use super::validation::ValidationReport;
use crate::diagnostic::Diagnostic;
use crate::source_files::SourceFiles;

/// An output format a program reads. Whatever goes wrong — a usage or I/O error
/// included — is reported in it on stdout, so a pipeline never receives an empty file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MachineFormat {
    /// `{"diagnostics": [...], ...}`.
    Json,
    /// GitHub workflow commands.
    Github,
    /// SARIF 2.1.0.
    Sarif,
}

impl MachineFormat {
    /// The report of a command that failed with `diagnostics`, in this format: JSON
    /// `{"diagnostics": [...]}`, one `::error` per diagnostic, or a SARIF log whose
    /// invocation did not succeed (exit code 2). `srcroot` is the directory SARIF's
    /// relative paths are relative to (the CLI passes its current directory).
    pub fn error_report(self, diagnostics: Vec<Diagnostic>, srcroot: Option<&Path>) -> String {
        let mut report = ValidationReport::default();
        report.add_diagnostics(diagnostics);
        match self {
            MachineFormat::Json => {
                let list: Vec<Value> = report.diagnostics().iter().map(diagnostic_json).collect();
                pretty(&json!({ "diagnostics": list }))
            }
            MachineFormat::Github => report.github(false),
            MachineFormat::Sarif => {
                let sources = SourceFiles::new();
                report.sarif(&SarifRun {
                    exit: Exit::Usage,
                    deny_warnings: false,
                    srcroot,
                    sources: &sources,
                })
            }
        }
    }
}
