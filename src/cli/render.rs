//! `render NAME`: the exact system prompt, tools (wire order) and runtime context a
//! preset sends, with the fingerprint of the cacheable prefix.
//! The values come from [`ValueArgs`](super::values::ValueArgs).

use clap::{Args, ValueEnum};
use serde_json::json;

use super::report::pretty;
use super::values::{ValueArgs, explain_missing};
use super::workspace::Workspace;
use super::{CliError, Exit, GlobalArgs, Io};
use crate::prompt::Assembly;

/// Arguments of `render`.
#[derive(Debug, Args)]
pub(crate) struct RenderArgs {
    /// The preset to render.
    name: String,
    #[command(flatten)]
    values: ValueArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = RenderFormat::Text)]
    format: RenderFormat,
}

/// How `render` prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum RenderFormat {
    /// Labelled blocks: system, tools, context, fingerprint.
    Text,
    /// `{"preset", "system", "tools", "context", "fingerprint"}`.
    Json,
}

pub(crate) fn run(
    global: &GlobalArgs,
    args: &RenderArgs,
    io: &mut Io<'_>,
) -> Result<Exit, CliError> {
    let workspace = Workspace::discover(global)?;
    let preset = workspace.valid_preset(&args.name, io)?;
    let cwd = match &args.values.cwd {
        Some(dir) => dir.clone(),
        None => std::env::current_dir()
            .map(|d| d.to_string_lossy().into_owned())
            .map_err(|e| CliError::usage(format!("cannot determine the current directory: {e}")))?,
    };
    let values = args.values.values(&preset, cwd)?;
    let assembly = preset
        .assembler()
        .assemble(&values)
        .map_err(|ds| CliError::Diagnostics {
            list: ds.into_iter().map(explain_missing).collect(),
            exit: Exit::Invalid,
            sources: workspace.presets.source_files(),
        })?;
    let text = match args.format {
        RenderFormat::Text => text_output(&assembly),
        RenderFormat::Json => json_output(preset.name(), &assembly),
    };
    io.out.write_all(text.as_bytes())?;
    Ok(Exit::Ok)
}

fn text_output(assembly: &Assembly) -> String {
    let mut out = String::new();
    out.push_str("=== system ===\n");
    out.push_str(&assembly.system);
    out.push_str("\n\n");
    out.push_str(&format!("=== tools ({}) ===\n", assembly.tools.len()));
    if assembly.tools.is_empty() {
        out.push_str("(none)\n");
    }
    for tool in assembly.tools.iter() {
        out.push_str(&tool.name);
        out.push('\n');
    }
    out.push_str("\n=== context ===\n");
    out.push_str(assembly.context.as_deref().unwrap_or("(none)"));
    out.push_str("\n\n=== fingerprint ===\n");
    out.push_str(&assembly.fingerprint.to_string());
    out.push('\n');
    out
}

fn json_output(preset: &str, assembly: &Assembly) -> String {
    let value = json!({
        "preset": preset,
        "system": assembly.system,
        "tools": &*assembly.tools,
        "context": assembly.context,
        "fingerprint": assembly.fingerprint.to_string(),
    });
    pretty(&value)
}
