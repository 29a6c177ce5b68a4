//! agent-presets: declare LLM agents as data.
//!
//! A *preset* (YAML) declares persona sections, runtime contexts, a tool allowlist,
//! variables, model defaults and `extends`. This crate finds presets ([`PresetCatalog`]),
//! validates them by doing the full build ([`validate_in_catalog`] → [`ValidPreset`]),
//! and turns a valid preset into the exact bytes an agent sends each step
//! ([`PromptAssembler::assemble`] → [`Assembly`]): a byte-stable system prompt and tool
//! list (the cacheable prefix) plus a runtime-context snapshot that goes after the
//! history. The library never prints; every problem is a [`Diagnostic`] with a stable
//! code, a location and help.
//!
//! ```
//! use agent_presets::{PresetCatalog, ToolCatalog, validate_in_catalog};
//!
//! let tools = ToolCatalog::builtin();
//! let mut presets = PresetCatalog::builtin();
//! presets
//!     .add_text(
//!         "reviewer",
//!         "reviewer.yaml",
//!         "version: 1\nname: reviewer\nextends: standard\ntools:\n  allow: [read_file, grep]\n",
//!     )
//!     .expect("a new name");
//! let validation = validate_in_catalog(&presets, "reviewer", &tools);
//! let preset = validation.preset.expect("reviewer is valid");
//!
//! // `model` and `provider` come from the preset's `model` block; add the runtime facts.
//! let values = preset
//!     .default_values()
//!     .with("cwd", "/workspace/demo")
//!     .with("os", "linux")
//!     .with("shell", "bash")
//!     .with("date", "2030-01-01");
//! let step = preset.assembler().assemble(&values).expect("renders");
//! assert!(step.system.contains("powered by the deepseek-v4-flash model"));
//! let names: Vec<&str> = step.tools.iter().map(|t| t.name.as_str()).collect();
//! assert_eq!(names, ["grep", "read_file"]);
//! assert!(step.context.as_deref().is_some_and(|c| c.contains("2030-01-01")));
//! ```
//!
//! A host that works with a project directory rather than a catalog it builds itself
//! uses [`project`]: discovery and source precedence, selection with the refusal of a
//! name two files offer ([`project::Project::choose`]), batch validation, the lock and
//! its drift diagnostics, runtime values, the endpoint (linted once) and the run gate —
//! what the CLI does, without printing (`examples/host.rs` goes from discovery to a run
//! with these calls). Which provider, model and API root a request goes to lives in
//! [`endpoint`], a leaf below both [`preset`] and [`provider`].
#![warn(missing_docs, clippy::print_stdout, clippy::print_stderr)]

#[cfg(feature = "client")]
pub mod agent;
pub mod bounded;
pub mod checks;
#[cfg(feature = "cli")]
pub mod cli;
#[cfg(feature = "client")]
pub mod client;
pub mod codes;
pub mod confine;
pub mod diagnostic;
pub mod endpoint;
pub mod hooks;
pub mod import;
mod json_schema;
#[cfg(feature = "lsp")]
pub mod lsp;
pub mod policy;
pub mod preset;
pub mod process;
pub mod project;
pub mod prompt;
pub mod provider;
pub mod redact;
pub mod report;
pub mod request;
#[cfg(feature = "client")]
pub mod run;
pub mod secrets;
pub mod source_files;
pub mod suggest;
pub mod testing;
pub mod texts;
pub mod tokens;
pub mod tools;
#[cfg(feature = "client")]
pub mod transcript;
pub mod trust;
mod yaml_scalar;

// The MCP client lives with the other tool sources (`tools::mcp`: it spawns servers
// through the tools' one spawn path, and the tool registry builds on its listings); it
// is also the crate's `mcp` module.
pub use diagnostic::{Diagnostic, DiagnosticKind, Diagnostics, Severity, Span};
pub use preset::{PresetCatalog, ValidPreset, Validation, validate_in_catalog};
pub use prompt::{AssemblerBuilder, Assembly, ContextSnapshot, Layer, PromptAssembler, Values};
pub use request::{Fingerprint, RequestEnvelope};
pub use source_files::{SourceFiles, SourceText};
pub use tools::mcp;
pub use tools::{Tool, ToolCatalog, ToolRegistry};
