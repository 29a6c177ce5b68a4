//! Validation reports and their output formats, one file each, so a host (an editor
//! plugin, a bot) renders diagnostics exactly as the CLI does:
//!
//! - [`validation`]: [`ValidationReport`] (every diagnostic once, every preset's
//!   [`PresetOutcome`], the summary line);
//! - [`human`]: rustc-style text with source snippets ([`HumanRenderer`],
//!   [`ValidationReport::human`]), coloured as a [`Style`] says;
//! - [`json`]: `{"diagnostics": [...], "presets": [...]}` ([`ValidationReport::json`]);
//! - [`github`]: GitHub workflow commands ([`ValidationReport::github`]);
//! - [`sarif`]: SARIF 2.1.0 for code scanning ([`ValidationReport::sarif`]).
//!
//! Every format shows at most [`MAX_SHOWN_PER_FILE`] diagnostics per file and says how
//! many more there are ([`shown`]); counts and exit codes cover all. Everything shown
//! from a preset file goes through [`mask`] (secrets and terminal control characters);
//! the commands messages suggest repeat the CLI's global flags ([`commands`]).
//! Renderers return `String`s: the library never prints and never asks whether a stream
//! is a terminal.
//!
//! ```
//! use agent_presets::report::{PresetOutcome, Style, ValidationReport};
//! use agent_presets::{PresetCatalog, ToolCatalog, validate_in_catalog};
//!
//! let mut presets = PresetCatalog::builtin();
//! presets
//!     .add_text("x", "x.yaml", "version: 1\nname: x\ntools:\n  allow: [read_fiel]\n")
//!     .expect("a new name");
//! let validation = validate_in_catalog(&presets, "x", &ToolCatalog::builtin());
//! let mut report = ValidationReport::default();
//! let valid = validation.preset.is_some();
//! report.add_preset(PresetOutcome::judged(
//!     "x".into(),
//!     "x.yaml".into(),
//!     valid,
//!     &validation.diagnostics,
//!     Vec::new,
//! ));
//! report.add_diagnostics(validation.diagnostics);
//! let text = report.human(Style::plain(), &presets.source_files());
//! assert!(text.contains("error[P0103]: unknown tool `read_fiel`"), "{text}");
//! assert!(report.github(false).starts_with("::error file=x.yaml,line=4"));
//! ```

pub mod commands;
mod exit;
pub mod explain;
mod format;
pub mod github;
pub mod human;
pub mod json;
mod mask;
pub mod render;
pub mod sarif;
pub mod show;
pub mod shown;
mod streams;
mod style;
pub mod validation;
mod verdict;
mod yaml;

#[cfg(test)]
mod tests;

pub use exit::Exit;
pub use format::MachineFormat;
pub use human::HumanRenderer;
pub use json::{diagnostic_json, order_json, pretty};
pub use mask::mask;
pub use sarif::SarifRun;
pub use shown::{MAX_SHOWN_PER_FILE, Shown, cap_per_file, more_text};
pub use streams::Streams;
pub use style::Style;
pub use validation::{PresetOutcome, ValidationReport, message_with_help};
pub use verdict::exit_code;
