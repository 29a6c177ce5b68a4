//! `import FILE [-o OUT.yaml] [--name NAME]`: another tool's agent config as a preset
//! (`crate::import`), validated as `validate` validates a file before it is written.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use serde_json::json;

use super::workspace::Workspace;
use super::{CliError, Exit, GlobalArgs, Io};
use crate::bounded::read_bounded;
use crate::diagnostic::{Diagnostic, DiagnosticKind, Severity};
use crate::import::{Imported, import};
use crate::preset::spec::is_valid_preset_name;
use crate::preset::validate::validate_target;
use crate::report::{HumanRenderer, MachineFormat, ValidationReport, diagnostic_json, pretty};
use crate::source_files::{SourceFiles, SourceText};

/// The largest input read.
const MAX_INPUT_BYTES: u64 = 1024 * 1024;

/// Arguments of `import`.
#[derive(Debug, Args)]
pub(crate) struct ImportArgs {
    /// The file to import: a Claude Code subagent (`.claude/agents/NAME.md`), a Copilot
    /// custom agent (`.github/agents/NAME.agent.md`), a goose recipe (`.yaml`) or an
    /// `.mcp.json`.
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// Write the preset to this file (named `NAME.yaml`) instead of standard output.
    #[arg(short = 'o', long = "output", value_name = "OUT.yaml")]
    output: Option<PathBuf>,
    /// The preset's name [default: with `-o`, the output's stem; else the input's
    /// `name`, else its file stem, made valid].
    #[arg(long, value_name = "NAME")]
    name: Option<String>,
    /// Overwrite the `-o` file when it exists.
    #[arg(long, requires = "output")]
    force: bool,
    /// Output format of the report.
    #[arg(long, value_enum, default_value_t = ImportFormat::Human)]
    format: ImportFormat,
}

/// How `import` reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum ImportFormat {
    /// The preset on stdout (unless `-o`), the warnings rustc-style on stderr.
    Human,
    /// `{"diagnostics": [...], "kind", "name", "valid", "output", "preset"}` on stdout.
    Json,
}

impl ImportArgs {
    /// `--format json`.
    pub(crate) fn machine_format(&self) -> Option<MachineFormat> {
        (self.format == ImportFormat::Json).then_some(MachineFormat::Json)
    }
}

pub(crate) fn run(
    global: &GlobalArgs,
    args: &ImportArgs,
    io: &mut Io<'_>,
) -> Result<Exit, CliError> {
    let display = args.file.to_string_lossy().into_owned();
    let bytes = read_bounded(&args.file, MAX_INPUT_BYTES)
        .map_err(|e| CliError::usage(format!("cannot read `{display}`: {e}")))?;
    let text = String::from_utf8(bytes)
        .map_err(|_| CliError::usage(format!("cannot read `{display}`: it is not UTF-8 text")))?;
    let text = text.replace("\r\n", "\n");
    let mut sources = SourceFiles::new();
    sources.insert(display.as_str(), SourceText::new(text.as_str()));

    // With `-o`, the file's stem is the name unless `--name` says otherwise.
    let out_stem = args.output.as_deref().and_then(yaml_stem);
    let name = args
        .name
        .clone()
        .or_else(|| out_stem.clone().filter(|s| is_valid_preset_name(s)));
    let imported =
        import(&display, &text, name.as_deref()).map_err(|list| CliError::Diagnostics {
            list,
            exit: Exit::Usage,
            sources: sources.clone(),
        })?;
    if let Some(out) = &args.output {
        check_output(out, &imported, out_stem.as_deref(), args.force)?;
    }

    // The real validation, as `validate FILE` does it: the text as the file it will be.
    let mut workspace = Workspace::discover(global)?;
    let cwd = std::env::current_dir()
        .map_err(|e| CliError::usage(format!("cannot determine the current directory: {e}")))?;
    let path = match &args.output {
        Some(out) => cwd.join(out),
        None => cwd.join(format!("{}.yaml", imported.name)),
    };
    let mut diagnostics: Vec<Diagnostic> = imported.warnings.clone();
    match workspace
        .presets
        .add_file_text(&path, imported.yaml.as_bytes())
    {
        Ok(id) => {
            let validation = validate_target(&workspace.presets, id, &workspace.tools);
            diagnostics.extend(validation.diagnostics.into_iter().map(|mut d| {
                // A server's tools are pinned by `lock --connect`, which starts it: never
                // on the word of a file being imported. What is left to do, not a fault.
                if d.kind == DiagnosticKind::McpNotLocked {
                    d.severity = Severity::Warning;
                    d.help = Some(format!(
                        "once you trust the server, run `agent-presets lock --connect {}` to pin its tools",
                        imported.name
                    ));
                }
                d
            }));
        }
        Err(d) => diagnostics.push(d),
    }
    let valid = !diagnostics.iter().any(Diagnostic::is_error);
    sources.extend(workspace.presets.source_files());

    let written = match (&args.output, valid) {
        (Some(out), true) => {
            write_output(out, &imported.yaml, args.force)?;
            Some(out.to_string_lossy().into_owned())
        }
        _ => None,
    };
    match args.format {
        ImportFormat::Json => {
            let mut report = ValidationReport::default();
            report.add_diagnostics(diagnostics);
            report.sort_in_file_order();
            let list: Vec<_> = report.diagnostics().iter().map(diagnostic_json).collect();
            let preset = (valid && args.output.is_none()).then_some(imported.yaml.as_str());
            let value = json!({
                "diagnostics": list,
                "kind": imported.kind.as_str(),
                "name": imported.name,
                "valid": valid,
                "output": written,
                "preset": preset,
            });
            io.out.write_all(pretty(&value).as_bytes())?;
        }
        ImportFormat::Human => {
            if valid && args.output.is_none() {
                io.out.write_all(imported.yaml.as_bytes())?;
            }
            let renderer = HumanRenderer::new(io.err_style, &sources, &diagnostics);
            io.err
                .write_all(renderer.render_all(&diagnostics).as_bytes())?;
            let count = imported.warnings.len();
            let fields = if count == 1 { "field" } else { "fields" };
            let summary = match (&written, valid) {
                (_, false) => {
                    format!("the preset imported from {display} does not validate: nothing written")
                }
                (Some(out), true) => format!(
                    "imported {display} ({}) as `{}` into {out}; {count} {fields} not carried",
                    imported.kind.describe(),
                    imported.name
                ),
                (None, true) => format!(
                    "imported {display} ({}) as `{}`; {count} {fields} not carried",
                    imported.kind.describe(),
                    imported.name
                ),
            };
            writeln!(io.err, "{summary}")?;
        }
    }
    Ok(if valid { Exit::Ok } else { Exit::Invalid })
}

/// The stem of `NAME.yaml` / `NAME.yml`.
fn yaml_stem(path: &Path) -> Option<String> {
    let file = path.file_name()?.to_str()?;
    let stem = file
        .strip_suffix(".yaml")
        .or_else(|| file.strip_suffix(".yml"))?;
    Some(stem.to_owned())
}

/// The `-o` file: `NAME.yaml`, not there yet (unless `--force`).
fn check_output(
    out: &Path,
    imported: &Imported,
    stem: Option<&str>,
    force: bool,
) -> Result<(), CliError> {
    let shown = out.to_string_lossy();
    match stem {
        None => {
            return Err(CliError::usage_with(
                format!("`-o {shown}`: a preset file is named `NAME.yaml`"),
                Some(format!("write `-o {}.yaml`", imported.name)),
            ));
        }
        Some(stem) if stem != imported.name => {
            return Err(CliError::usage_with(
                format!(
                    "`-o {shown}`: the preset is named `{}`, and its file must be `{}.yaml`",
                    imported.name, imported.name
                ),
                Some(format!(
                    "name the file `{}.yaml`, or give `--name {stem}`",
                    imported.name
                )),
            ));
        }
        Some(_) => {}
    }
    if !force && fs::symlink_metadata(out).is_ok() {
        return Err(CliError::usage_with(
            format!("`{shown}` already exists; not overwriting it"),
            Some("give `--force` to replace it, or another `-o`".into()),
        ));
    }
    Ok(())
}

/// Write the preset to `out` (its directory created), never over a file without
/// `--force`.
fn write_output(out: &Path, yaml: &str, force: bool) -> Result<(), CliError> {
    let shown = out.to_string_lossy();
    if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
        fs::create_dir_all(dir)
            .map_err(|e| CliError::usage(format!("cannot create `{}`: {e}", dir.display())))?;
    }
    let mut options = OpenOptions::new();
    options.write(true);
    if force {
        options.create(true).truncate(true);
    } else {
        options.create_new(true);
    }
    let mut file = options.open(out).map_err(|e| {
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            CliError::usage_with(
                format!("`{shown}` already exists; not overwriting it"),
                Some("give `--force` to replace it, or another `-o`".into()),
            )
        } else {
            CliError::usage(format!("cannot write `{shown}`: {e}"))
        }
    })?;
    file.write_all(yaml.as_bytes())
        .map_err(|e| CliError::usage(format!("cannot write `{shown}`: {e}")))?;
    Ok(())
}
