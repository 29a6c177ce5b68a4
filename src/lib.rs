//! agent-presets: declare LLM agents as data.
#![warn(missing_docs, clippy::print_stdout, clippy::print_stderr)]

#[cfg(feature = "cli")]
pub mod cli;
pub mod diagnostic;
pub mod preset;
pub mod prompt;
pub mod request;
pub mod suggest;
pub mod tools;

pub use diagnostic::{Diagnostic, DiagnosticKind, Diagnostics, Severity, Span};
