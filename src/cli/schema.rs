//! `schema`: print the preset JSON Schema; `--write` writes the committed schema files
//! (the preset schema and every built-in tool's parameter schemas) under the project;
//! `--check` fails when the committed files differ from the generated ones (CI).

use std::fs;
use std::path::Path;

use clap::Args;

use super::report::pretty;
use super::{CliError, Exit, GlobalArgs, Io};
use crate::bounded::{BoundedReadError, read_bounded};
use crate::preset::spec::preset_json_schema;
use crate::tools::schema::builtin_schema_files;

/// The preset schema's path under the project.
pub(crate) const PRESET_SCHEMA_PATH: &str = "schemas/preset.schema.json";

/// Where the tool schemas live under the project.
const TOOL_SCHEMA_DIR: &str = "schemas/tools";

/// Arguments of `schema`.
#[derive(Debug, Args)]
pub(crate) struct SchemaArgs {
    /// Write `schemas/preset.schema.json` and `schemas/tools/*.json` under the project
    /// directory.
    #[arg(long, conflicts_with = "check")]
    write: bool,
    /// Exit 1 and name the files that differ from the generated ones.
    #[arg(long)]
    check: bool,
}

/// The preset schema as committed: pretty JSON with a final newline.
pub(crate) fn preset_schema_text() -> String {
    pretty(&preset_json_schema())
}

/// Every generated schema file: `(path relative to the project, contents)`, sorted.
fn generated_files() -> Vec<(String, String)> {
    let mut files = builtin_schema_files();
    files.push((PRESET_SCHEMA_PATH.to_owned(), preset_schema_text()));
    files.sort();
    files
}

pub(crate) fn run(
    global: &GlobalArgs,
    args: &SchemaArgs,
    io: &mut Io<'_>,
) -> Result<Exit, CliError> {
    if !args.write && !args.check {
        io.out.write_all(preset_schema_text().as_bytes())?;
        return Ok(Exit::Ok);
    }
    let root = match &global.project_dir {
        Some(dir) => dir.clone(),
        None => std::env::current_dir()
            .map_err(|e| CliError::usage(format!("cannot determine the current directory: {e}")))?,
    };
    if !root.is_dir() {
        return Err(CliError::usage(format!(
            "the project directory `{}` does not exist",
            root.display()
        )));
    }
    let files = generated_files();
    if args.write {
        write(&root, &files, io)
    } else {
        check(&root, &files, io)
    }
}

fn write(root: &Path, files: &[(String, String)], io: &mut Io<'_>) -> Result<Exit, CliError> {
    for (relative, contents) in files {
        let path = root.join(relative);
        match committed(&path, contents) {
            Ok(Committed::Same) => {
                writeln!(io.out, "unchanged {relative}")?;
                continue;
            }
            Ok(Committed::Differs | Committed::Missing) => {}
            // Writing into a FIFO would block; a directory cannot be written.
            Err(e @ (BoundedReadError::NotRegular(_) | BoundedReadError::Directory)) => {
                return Err(CliError::usage(format!(
                    "cannot write `{relative}`: {e}; not replacing it"
                )));
            }
            // Unreadable for another reason: writing says whether it can be replaced.
            Err(_) => {}
        }
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir)
                .map_err(|e| CliError::usage(format!("cannot create `{}`: {e}", dir.display())))?;
        }
        fs::write(&path, contents)
            .map_err(|e| CliError::usage(format!("cannot write `{relative}`: {e}")))?;
        writeln!(io.out, "wrote {relative}")?;
    }
    for stale in stale_tool_schemas(root, files) {
        let path = root.join(&stale);
        fs::remove_file(&path)
            .map_err(|e| CliError::usage(format!("cannot remove `{stale}`: {e}")))?;
        writeln!(io.out, "removed {stale} (no such built-in tool)")?;
    }
    Ok(Exit::Ok)
}

fn check(root: &Path, files: &[(String, String)], io: &mut Io<'_>) -> Result<Exit, CliError> {
    let mut drifted = Vec::new();
    for (relative, contents) in files {
        match committed(&root.join(relative), contents) {
            Ok(Committed::Same) => {}
            Ok(Committed::Differs) => {
                drifted.push(format!("{relative}: differs from the generated schema"));
            }
            Ok(Committed::Missing) => drifted.push(format!("{relative}: missing")),
            Err(e) => {
                return Err(CliError::usage(format!("cannot read `{relative}`: {e}")));
            }
        }
    }
    for stale in stale_tool_schemas(root, files) {
        drifted.push(format!("{stale}: belongs to no built-in tool"));
    }
    if drifted.is_empty() {
        writeln!(io.out, "{} schema files up to date", files.len())?;
        return Ok(Exit::Ok);
    }
    for line in &drifted {
        writeln!(io.err, "drifted: {line}")?;
    }
    writeln!(
        io.err,
        "{} of {} schema files drifted; regenerate them with `agent-presets schema --write` and commit the result",
        drifted.len(),
        files.len()
    )?;
    Ok(Exit::Invalid)
}

/// How a committed schema file compares with the generated one.
enum Committed {
    Same,
    Differs,
    Missing,
}

/// Compare the file at `path` with `generated`, reading it bounded: a file larger than
/// the generated text differs without being read (a committed link to a `/proc` file or
/// a FIFO costs nothing and cannot hang the check).
fn committed(path: &Path, generated: &str) -> Result<Committed, BoundedReadError> {
    let limit = u64::try_from(generated.len()).unwrap_or(u64::MAX);
    match read_bounded(path, limit) {
        Ok(actual) if actual == generated.as_bytes() => Ok(Committed::Same),
        Ok(_) | Err(BoundedReadError::TooLarge { .. }) => Ok(Committed::Differs),
        Err(BoundedReadError::NotFound) => Ok(Committed::Missing),
        Err(e) => Err(e),
    }
}

/// `schemas/tools/*.json` files that no built-in tool generates.
fn stale_tool_schemas(root: &Path, files: &[(String, String)]) -> Vec<String> {
    let Ok(read) = fs::read_dir(root.join(TOOL_SCHEMA_DIR)) else {
        return Vec::new();
    };
    let mut stale: Vec<String> = read
        .filter_map(Result::ok)
        .map(|e| format!("{TOOL_SCHEMA_DIR}/{}", e.file_name().to_string_lossy()))
        .filter(|p| p.ends_with(".json") && !files.iter().any(|(f, _)| f == p))
        .collect();
    stale.sort();
    stale
}
