//! `schema`: print the preset JSON Schema; `--write` writes the schema files of the
//! project, `--check` fails when they differ from the generated ones (CI). The test case
//! schema (`schemas/test-case.schema.json`, or `.agent-presets/tests/test-case.schema.json`
//! beside the cases) is one of them.
//!
//! Which files a project has: the `preset.schema.json` that `init` writes next to the
//! presets (`.agent-presets/preset.schema.json`, and the same file in each
//! `--preset-dir` that has one), a committed `schemas/preset.schema.json`, and — in a
//! repository that keeps the tool schemas too, like this crate's own — every
//! `schemas/tools/*.json`. A project with none of them gets
//! `.agent-presets/preset.schema.json` from `--write`.

use std::fs;
use std::path::{Path, PathBuf};

use clap::Args;

use super::{CliError, Exit, GlobalArgs, Io};
use crate::bounded::{BoundedReadError, read_bounded};
use crate::confine::{remove_confined, write_confined};
use crate::preset::catalog::PROJECT_PRESET_DIR;
use crate::preset::spec::preset_json_schema;
use crate::report::pretty;
use crate::testing::case::{CASE_DIR, case_json_schema};
use crate::tools::schema::builtin_schema_files;

/// The preset schema's path under the project, where a repository commits it.
pub(crate) const PRESET_SCHEMA_PATH: &str = "schemas/preset.schema.json";

/// The preset schema's file name next to the presets (written by `init`).
pub(crate) const LOCAL_SCHEMA_FILE: &str = "preset.schema.json";

/// The test case schema's path under the project, where a repository commits it.
pub(crate) const CASE_SCHEMA_PATH: &str = "schemas/test-case.schema.json";

/// The test case schema's file name beside the cases (`.agent-presets/tests/`).
pub(crate) const CASE_SCHEMA_FILE: &str = "test-case.schema.json";

/// Where the tool schemas live under the project.
const TOOL_SCHEMA_DIR: &str = "schemas/tools";

/// Arguments of `schema`.
#[derive(Debug, Args)]
pub(crate) struct SchemaArgs {
    /// Write the project's schema files: `.agent-presets/preset.schema.json` (and the
    /// one in each `--preset-dir` that has it), `schemas/preset.schema.json` when the
    /// project commits it, and `schemas/tools/*.json` when it keeps tool schemas.
    #[arg(long, conflicts_with = "check")]
    write: bool,
    /// Exit 1 and name the project's schema files that differ from the generated ones.
    #[arg(long)]
    check: bool,
}

/// The preset schema as committed: pretty JSON with a final newline.
pub(crate) fn preset_schema_text() -> String {
    pretty(&preset_json_schema())
}

/// One schema file of the project.
struct SchemaFile {
    /// As shown (relative to the project, or as the `--preset-dir` was given).
    shown: String,
    path: PathBuf,
    /// The directory the file must stay inside when written: the project, or the
    /// `--preset-dir` it belongs to.
    root: PathBuf,
    contents: String,
}

/// The schema files the project has (see the module docs), sorted; whether it keeps
/// the tool schemas (so files no tool generates are stale). `write` adds
/// `.agent-presets/preset.schema.json` to a project that has none of them.
fn project_files(root: &Path, preset_dirs: &[PathBuf], write: bool) -> (Vec<SchemaFile>, bool) {
    let preset = preset_schema_text();
    let mut files = Vec::new();
    let keeps_tools = root.join(TOOL_SCHEMA_DIR).is_dir();
    if keeps_tools {
        for (relative, contents) in builtin_schema_files() {
            files.push(SchemaFile {
                path: root.join(&relative),
                shown: relative,
                root: root.to_owned(),
                contents,
            });
        }
    }
    if keeps_tools || exists(&root.join(PRESET_SCHEMA_PATH)) {
        files.push(SchemaFile {
            shown: PRESET_SCHEMA_PATH.to_owned(),
            path: root.join(PRESET_SCHEMA_PATH),
            root: root.to_owned(),
            contents: preset.clone(),
        });
    }
    let local = root.join(PROJECT_PRESET_DIR).join(LOCAL_SCHEMA_FILE);
    if exists(&local) || (write && files.is_empty()) {
        files.push(SchemaFile {
            shown: format!("{PROJECT_PRESET_DIR}/{LOCAL_SCHEMA_FILE}"),
            path: local,
            root: root.to_owned(),
            contents: preset.clone(),
        });
    }
    // The test case schema: committed beside the preset schema in a repository that
    // keeps it, and beside the cases when a project has one there (or writes schemas
    // and has cases).
    let case = || pretty(&case_json_schema());
    if keeps_tools || exists(&root.join(CASE_SCHEMA_PATH)) {
        files.push(SchemaFile {
            shown: CASE_SCHEMA_PATH.to_owned(),
            path: root.join(CASE_SCHEMA_PATH),
            root: root.to_owned(),
            contents: case(),
        });
    }
    let beside_cases = root.join(CASE_DIR).join(CASE_SCHEMA_FILE);
    if exists(&beside_cases) || (write && root.join(CASE_DIR).is_dir()) {
        files.push(SchemaFile {
            shown: format!("{CASE_DIR}/{CASE_SCHEMA_FILE}"),
            path: beside_cases,
            root: root.to_owned(),
            contents: case(),
        });
    }
    for dir in preset_dirs {
        let path = dir.join(LOCAL_SCHEMA_FILE);
        if exists(&path) && !files.iter().any(|f| same_file(&f.path, &path)) {
            files.push(SchemaFile {
                shown: path.display().to_string(),
                path,
                root: dir.clone(),
                contents: preset.clone(),
            });
        }
    }
    files.sort_by(|a, b| a.shown.cmp(&b.shown));
    (files, keeps_tools)
}

/// Is there anything at `path` (a broken link counts: it is a file that drifted)?
fn exists(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok()
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
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
    // The project config's root and directories, as every command finds them.
    let workspace = super::workspace::Workspace::discover(global)?;
    let root = workspace.project_dir.clone();
    let dirs = match (&workspace.config, global.preset_dirs.is_empty()) {
        (Some(config), true) => config.preset_dirs.clone().unwrap_or_default(),
        _ => global.preset_dirs.clone(),
    };
    let (files, keeps_tools) = project_files(&root, &dirs, args.write);
    if files.is_empty() {
        return Err(CliError::usage_with(
            format!(
                "`{}` has no schema files to check: no `{PROJECT_PRESET_DIR}/{LOCAL_SCHEMA_FILE}`, no `{PRESET_SCHEMA_PATH}`",
                root.display()
            ),
            Some(format!(
                "run `agent-presets schema --write` to write `{PROJECT_PRESET_DIR}/{LOCAL_SCHEMA_FILE}` (as `init` does), and commit it"
            )),
        ));
    }
    let stale = if keeps_tools {
        stale_tool_schemas(&root, &files)
    } else {
        Vec::new()
    };
    if args.write {
        write(&root, &files, &stale, io)
    } else {
        check(&files, &stale, io)
    }
}

fn write(
    root: &Path,
    files: &[SchemaFile],
    stale: &[String],
    io: &mut Io<'_>,
) -> Result<Exit, CliError> {
    for file in files {
        let (relative, path, contents) = (&file.shown, &file.path, &file.contents);
        match committed(path, contents) {
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
        // Never through a link out of the project (a cloned repository may commit one).
        write_confined(&file.root, path, relative, contents.as_bytes())?;
        writeln!(io.out, "wrote {relative}")?;
    }
    for stale in stale {
        remove_confined(root, &root.join(stale), stale)?;
        writeln!(io.out, "removed {stale} (no such built-in tool)")?;
    }
    Ok(Exit::Ok)
}

fn check(files: &[SchemaFile], stale: &[String], io: &mut Io<'_>) -> Result<Exit, CliError> {
    let mut drifted = Vec::new();
    for file in files {
        let relative = &file.shown;
        match committed(&file.path, &file.contents) {
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
    for stale in stale {
        drifted.push(format!("{stale}: belongs to no built-in tool"));
    }
    if drifted.is_empty() {
        let what = if files.len() == 1 {
            format!("{} is", files[0].shown)
        } else {
            format!("{} schema files are", files.len())
        };
        writeln!(io.out, "{what} up to date")?;
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
fn stale_tool_schemas(root: &Path, files: &[SchemaFile]) -> Vec<String> {
    let Ok(read) = fs::read_dir(root.join(TOOL_SCHEMA_DIR)) else {
        return Vec::new();
    };
    let mut stale: Vec<String> = read
        .filter_map(Result::ok)
        .map(|e| format!("{TOOL_SCHEMA_DIR}/{}", e.file_name().to_string_lossy()))
        .filter(|p| p.ends_with(".json") && !files.iter().any(|f| &f.shown == p))
        .collect();
    stale.sort();
    stale
}
