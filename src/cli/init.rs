//! `init NAME`: write a commented starter preset that validates, and refuse to overwrite
//! anything.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Args;

use super::schema::{LOCAL_SCHEMA_FILE, PRESET_SCHEMA_PATH, preset_schema_text};
use super::workspace::{Workspace, absolute};
use super::{CliError, Exit, GlobalArgs, Io};
use crate::confine::write_confined;
use crate::preset::catalog::{PROJECT_PRESET_DIR, PresetSource};
use crate::project::config::CONFIG_FILE;
use crate::project::init::{check_new_name, relative_path, starter};

/// Arguments of `init`.
#[derive(Debug, Args)]
pub(crate) struct InitArgs {
    /// The new preset's name (`a`-`z`, `0`-`9`, `-`); also its file name.
    name: String,
    /// The preset to build on.
    #[arg(long, value_name = "PRESET", default_value = "standard")]
    extends: String,
    /// Where to write the file [default: `<project>/.agent-presets`].
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
}

pub(crate) fn run(global: &GlobalArgs, args: &InitArgs, io: &mut Io<'_>) -> Result<Exit, CliError> {
    let name = args.name.as_str();
    check_new_name(name)?;
    let workspace = Workspace::discover(global)?;
    if args.extends == name {
        return Err(CliError::usage(format!("`{name}` cannot extend itself")));
    }
    workspace.require(&args.extends)?;
    // A project preset may take the name of a user or `--preset-dir` one: it wins over
    // them (and `init` says so). Anything else is the same name twice.
    let mut shadows = None;
    if let Some(existing) = workspace.presets.get(name) {
        let lower = args.dir.is_none()
            && matches!(existing.source(), PresetSource::User | PresetSource::Path);
        if !lower {
            return Err(CliError::usage_with(
                format!(
                    "a preset named `{name}` already exists: `{}`",
                    existing.display()
                ),
                Some("pick another name, or edit that file".into()),
            ));
        }
        shadows = Some(format!("{} ({})", existing.display(), existing.source()));
    }
    let parent = workspace.validate(&args.extends);
    let Some(parent) = parent.preset else {
        return Err(CliError::usage_with(
            format!(
                "the preset `{}` is invalid, so nothing can extend it yet",
                args.extends
            ),
            Some(format!("run `agent-presets validate {}`", args.extends)),
        ));
    };

    let cwd = std::env::current_dir()
        .map_err(|e| CliError::usage(format!("cannot determine the current directory: {e}")))?;
    let dir = match &args.dir {
        Some(dir) => absolute(&cwd, dir),
        None => workspace.project_dir.join(PROJECT_PRESET_DIR),
    };
    fs::create_dir_all(&dir)
        .map_err(|e| CliError::usage(format!("cannot create `{}`: {e}", dir.display())))?;
    let file = dir.join(format!("{name}.yaml"));
    let shown = shown_path(&cwd, &file);

    let project_schema = workspace.project_dir.join(PRESET_SCHEMA_PATH);
    let (schema_ref, write_local_schema) = if project_schema.is_file() {
        (relative_path(&dir, &project_schema), false)
    } else {
        (
            LOCAL_SCHEMA_FILE.to_owned(),
            // A link there (even one leading nowhere) is the project's business.
            fs::symlink_metadata(dir.join(LOCAL_SCHEMA_FILE)).is_err(),
        )
    };

    let text = starter(name, &args.extends, &parent, &schema_ref);
    let mut handle = match OpenOptions::new().write(true).create_new(true).open(&file) {
        Ok(handle) => handle,
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            return Err(CliError::usage_with(
                format!("`{shown}` already exists; not overwriting it"),
                Some("pick another name, or delete the file first".into()),
            ));
        }
        Err(e) => return Err(CliError::usage(format!("cannot create `{shown}`: {e}"))),
    };
    handle
        .write_all(text.as_bytes())
        .map_err(|e| CliError::usage(format!("cannot write `{shown}`: {e}")))?;
    writeln!(io.out, "created {shown} (extends {})", args.extends)?;
    if let Some(hidden) = shadows {
        writeln!(
            io.out,
            "note: it shadows {hidden}, which is no longer used here"
        )?;
    }
    if write_local_schema {
        let schema = dir.join(LOCAL_SCHEMA_FILE);
        write_confined(
            &dir,
            &schema,
            &shown_path(&cwd, &schema),
            preset_schema_text().as_bytes(),
        )?;
        writeln!(
            io.out,
            "created {} (JSON Schema for editor completion)",
            shown_path(&cwd, &schema)
        )?;
    }
    let seen = project_sees(&workspace, global, &dir, &cwd, io)?;
    let mut words = vec!["agent-presets".to_owned()];
    words.extend(global.flag_words());
    if !seen {
        words.push("--preset-dir".into());
        words.push(super::shell_word(&shown_path(&cwd, &dir)));
    }
    let command = words.join(" ");
    writeln!(io.out, "next: edit it, then")?;
    writeln!(io.out, "  {command} validate {name}")?;
    writeln!(io.out, "  {command} render {name}")?;
    Ok(Exit::Ok)
}

/// Will every command of the project see the presets in `dir`? Its `.agent-presets/`
/// and the project config's directories are; `--preset-dir`s of this command are not
/// (the next command may not repeat them). A directory outside them becomes the
/// project config's first directory when there is no config yet (`agent-presets.yaml`
/// is created at the project root, and `init` says so); with a config, `init` prints
/// the `presetDirs` line that adds it and leaves the file to the user.
fn project_sees(
    workspace: &Workspace,
    global: &GlobalArgs,
    dir: &Path,
    cwd: &Path,
    io: &mut Io<'_>,
) -> Result<bool, CliError> {
    let same = |a: &Path, b: &Path| match (fs::canonicalize(a), fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    };
    if same(dir, &workspace.project_dir.join(PROJECT_PRESET_DIR)) {
        return Ok(true);
    }
    if global.no_project_config {
        return Ok(false);
    }
    let root = workspace
        .config
        .as_ref()
        .map_or_else(|| workspace.project_dir.clone(), |c| c.root.clone());
    let relative = relative_path(&root, dir);
    let relative = relative.strip_prefix("./").unwrap_or(&relative).to_owned();
    let Some(config) = &workspace.config else {
        if relative.starts_with("..") {
            // Outside the project: only `--preset-dir` reaches it.
            return Ok(false);
        }
        let path = root.join(CONFIG_FILE);
        let text = format!(
            "# The project's preset directories, lock and defaults: every agent-presets\n# command run in this project reads this file (docs/cli.md#the-project-config).\npresetDirs: [{}]\n",
            yaml_word(&relative)
        );
        let shown = shown_path(cwd, &path);
        write_confined(&root, &path, &shown, text.as_bytes())?;
        writeln!(
            io.out,
            "created {shown} (presetDirs: [{}]): every command in the project now sees the presets in {relative}",
            yaml_word(&relative)
        )?;
        return Ok(true);
    };
    let dirs = config.preset_dirs.clone().unwrap_or_default();
    if dirs.iter().any(|d| same(d, dir)) {
        return Ok(true);
    }
    let mut listed: Vec<String> = dirs
        .iter()
        .map(|d| yaml_word(&relative_path(&root, d)))
        .collect();
    listed.push(yaml_word(&relative));
    writeln!(
        io.out,
        "note: {relative} is not one of the preset directories of {}, so commands without `--preset-dir` do not see it; add it there: `presetDirs: [{}]`",
        shown_path(cwd, &config.path),
        listed.join(", ")
    )?;
    Ok(false)
}

/// A path as a plain YAML flow scalar, quoted when it needs to be.
fn yaml_word(path: &str) -> String {
    let plain = !path.is_empty()
        && path
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./*".contains(c))
        && !path.starts_with('*');
    if plain {
        path.to_owned()
    } else {
        format!("'{}'", path.replace('\'', "''"))
    }
}

/// `path` relative to `cwd` when it is below it, else as is.
fn shown_path(cwd: &Path, path: &Path) -> String {
    path.strip_prefix(cwd)
        .unwrap_or(path)
        .to_string_lossy()
        .into_owned()
}
