//! `render NAME`: the exact system prompt, tools (wire order) and runtime context a
//! preset sends, with the fingerprint of the cacheable prefix.
//!
//! Values: `cwd`, `os`, `shell` and `date` come from the real environment (`--cwd`
//! overrides the working directory); `model` and `provider` from the preset's `model`
//! block, overridden by `--model` / `--provider`; `--var k=v` sets any variable last, so
//! it wins. `tools` is derived from the visible tools and cannot be set.

use clap::{Args, ValueEnum};
use serde_json::json;

use super::environment;
use super::report::pretty;
use super::workspace::Workspace;
use super::{CliError, Exit, GlobalArgs, Io};
use crate::diagnostic::{Diagnostic, DiagnosticKind};
use crate::preset::spec::Provider;
use crate::prompt::{Assembly, TOOLS_VARIABLE, Values};
use crate::suggest::help_did_you_mean;

/// Arguments of `render`.
#[derive(Debug, Args)]
pub(crate) struct RenderArgs {
    /// The preset to render.
    name: String,
    /// Set a template variable, built-in ones included (repeatable), e.g.
    /// `--var date=2030-01-01` to pin the output.
    #[arg(long = "var", value_name = "KEY=VALUE", value_parser = parse_var)]
    vars: Vec<(String, String)>,
    /// The model name [default: the preset's `model.name`].
    #[arg(long, value_name = "NAME")]
    model: Option<String>,
    /// The provider [default: the preset's `model.provider`].
    #[arg(long, value_name = "PROVIDER")]
    provider: Option<String>,
    /// The working directory the agent is told about [default: the current directory].
    #[arg(long, value_name = "DIR")]
    cwd: Option<String>,
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

fn parse_var(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((key, value)) if !key.is_empty() => Ok((key.to_owned(), value.to_owned())),
        _ => Err(format!("expected KEY=VALUE, found `{text}`")),
    }
}

pub(crate) fn run(
    global: &GlobalArgs,
    args: &RenderArgs,
    io: &mut Io<'_>,
) -> Result<Exit, CliError> {
    let workspace = Workspace::discover(global)?;
    let preset = workspace.valid_preset(&args.name, io)?;

    let assembler = preset.assembler();
    let mut values = Values::new();
    let cwd = match &args.cwd {
        Some(dir) => dir.clone(),
        None => std::env::current_dir()
            .map(|d| d.to_string_lossy().into_owned())
            .map_err(|e| CliError::usage(format!("cannot determine the current directory: {e}")))?,
    };
    values.set("cwd", cwd);
    values.set("os", environment::os());
    values.set("shell", environment::shell());
    values.set("date", environment::today_utc());
    if let Some(model) = preset.model() {
        values.set("model", model.name.value.clone());
        values.set("provider", model.provider.value.as_str());
    }
    if let Some(model) = &args.model {
        values.set("model", model.clone());
    }
    if let Some(provider) = &args.provider {
        check_provider(provider)?;
        values.set("provider", provider.clone());
    }
    let known: Vec<&str> = assembler
        .known_variables()
        .filter(|v| *v != TOOLS_VARIABLE)
        .collect();
    for (key, value) in &args.vars {
        if key == TOOLS_VARIABLE {
            return Err(CliError::usage_with(
                "`tools` cannot be set: it is derived from the preset's visible tools",
                Some("narrow the tools in the preset (`tools: { allow: [...] }`) instead".into()),
            ));
        }
        if !known.contains(&key.as_str()) {
            let help = help_did_you_mean(key, known.iter().copied())
                .or_else(|| Some(format!("known variables: {}", known.join(", "))));
            return Err(CliError::usage_with(
                format!("unknown variable `{key}` in `--var {key}=…`"),
                help,
            ));
        }
        values.set(key.clone(), value.clone());
    }

    let assembly = assembler
        .assemble(&values)
        .map_err(|ds| CliError::Diagnostics {
            list: ds.into_iter().map(explain_missing).collect(),
            exit: Exit::Invalid,
        })?;
    let text = match args.format {
        RenderFormat::Text => text_output(&assembly),
        RenderFormat::Json => json_output(preset.name(), &assembly),
    };
    io.out.write_all(text.as_bytes())?;
    Ok(Exit::Ok)
}

fn check_provider(provider: &str) -> Result<(), CliError> {
    if Provider::ALL.iter().any(|p| p.as_str() == provider) {
        return Ok(());
    }
    let names: Vec<&str> = Provider::ALL.iter().map(|p| p.as_str()).collect();
    let help = help_did_you_mean(provider, names.iter().copied())
        .unwrap_or_else(|| format!("providers: {}", names.join(", ")));
    Err(CliError::usage_with(
        format!("unknown provider `{provider}`"),
        Some(help),
    ))
}

/// A missing `model` or `provider` means the preset has no `model` block: say which flag
/// supplies it.
fn explain_missing(d: Diagnostic) -> Diagnostic {
    if d.kind != DiagnosticKind::MissingValue {
        return d;
    }
    for (var, flag) in [("model", "--model NAME"), ("provider", "--provider NAME")] {
        if d.message.contains(&format!("variable `{var}`")) {
            return d.help(format!(
                "this preset has no `model` block: pass `{flag}` (or `--var {var}=…`)"
            ));
        }
    }
    d
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vars_split_at_the_first_equals_sign() {
        assert_eq!(parse_var("a=b=c"), Ok(("a".into(), "b=c".into())));
        assert_eq!(parse_var("a="), Ok(("a".into(), String::new())));
        assert!(parse_var("=b").is_err());
        assert!(parse_var("ab").is_err());
    }
}
