//! `init NAME`: write a commented starter preset that validates, and refuse to overwrite
//! anything.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Component, Path, PathBuf};

use clap::Args;

use super::schema::{LOCAL_SCHEMA_FILE, PRESET_SCHEMA_PATH, preset_schema_text};
use super::workspace::{Workspace, absolute};
use super::{CliError, Exit, GlobalArgs, Io};
use crate::confine::write_confined;
use crate::preset::catalog::{BUILTIN_PRESETS, PROJECT_PRESET_DIR, PresetSource};
use crate::preset::spec::is_valid_preset_name;
use crate::preset::validate::ValidPreset;

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
    if !is_valid_preset_name(name) {
        return Err(CliError::usage_with(
            format!("`{name}` is not a valid preset name"),
            Some(
                "preset names use `a`-`z`, `0`-`9` and `-`, and start with a letter or digit"
                    .into(),
            ),
        ));
    }
    if BUILTIN_PRESETS.iter().any(|(builtin, _)| *builtin == name) {
        return Err(CliError::usage_with(
            format!("`{name}` is a built-in preset; a custom preset cannot take its name"),
            Some(format!(
                "pick another name and build on it: `agent-presets init my-{name} --extends {name}`"
            )),
        ));
    }
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
    let in_catalog = args.dir.is_none();
    let dir_flag = if in_catalog {
        String::new()
    } else {
        format!("--preset-dir {} ", shown_path(&cwd, &dir))
    };
    writeln!(io.out, "next: edit it, then")?;
    writeln!(io.out, "  agent-presets {dir_flag}validate {name}")?;
    writeln!(io.out, "  agent-presets {dir_flag}render {name}")?;
    Ok(Exit::Ok)
}

/// The starter file. When the parent's system prompt is one `complete` section, the
/// starter replaces that section (anything else would never be sent).
fn starter(name: &str, parent_name: &str, parent: &ValidPreset, schema: &str) -> String {
    let complete = parent.chain().iter().rev().find_map(|p| {
        p.file
            .persona
            .as_ref()?
            .sections
            .as_ref()?
            .iter()
            .find(|s| s.complete == Some(true) && s.when.is_none())
            .map(|s| (s.name.value.clone(), s.order.value))
    });
    let section = match &complete {
        Some((section, order)) => format!(
            "    # `{parent_name}`'s system prompt is its `complete` section `{section}`, alone:
    # a section with the same name replaces it.
    - name: {section}
      order: {order}
      complete: true
      text: |
        You are a software engineering assistant for the {{{{ project }}}} project. Follow its conventions.
"
        ),
        None => "    # A section named like an inherited one replaces it.
    - name: project-rules
      order: 600
      text: |
        This is the {{ project }} project. Follow its conventions, and keep changes small and focused.
"
        .to_owned(),
    };
    format!(
        "# yaml-language-server: $schema={schema}
#
# `{name}`: a custom agent preset built on `{parent_name}`.
# Check it:        agent-presets validate {name}
# See the prompt:  agent-presets render {name}
# See what it inherits, line by line:  agent-presets show {name}
version: 1
name: {name}
description: Say in one line what this agent is for.
extends: {parent_name}

persona:
  sections:
    # Sections are sorted by (order, name) and joined with blank lines. Order bands:
    # negative = identity, 0 = persona, 100-999 = rules, 1000-1999 = tool guidance
    # (from the tools themselves), 9000+ = closing instructions.
{section}  # Drop an inherited section, or a tool's guidance:
  # remove: [tool:todo_write]

# Runtime context is sent after the conversation, so the system prompt stays cacheable:
# put facts that change (dates, ticket numbers) here, not in sections.
# contexts:
#   - name: ticket
#     order: 50
#     text: \"Ticket: {{{{ ticket }}}}\"

variables:
  project:
    description: The project's name.
    default: my-project

# Tools: a child can only narrow what its parent allows (names or globs).
# tools:
#   allow: [read_file, grep, glob, list_dir]
#   deny: [write_*]
"
    )
}

/// `path` relative to `cwd` when it is below it, else as is.
fn shown_path(cwd: &Path, path: &Path) -> String {
    path.strip_prefix(cwd)
        .unwrap_or(path)
        .to_string_lossy()
        .into_owned()
}

/// The relative path from directory `from` to file `to` (both absolute).
fn relative_path(from: &Path, to: &Path) -> String {
    let from: Vec<Component> = normalized(from);
    let to: Vec<Component> = normalized(to);
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let mut parts: Vec<String> = vec!["..".to_owned(); from.len() - common];
    parts.extend(
        to[common..]
            .iter()
            .map(|c| c.as_os_str().to_string_lossy().into_owned()),
    );
    parts.join("/")
}

fn normalized(path: &Path) -> Vec<Component<'_>> {
    let mut out: Vec<Component> = Vec::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir if matches!(out.last(), Some(Component::Normal(_))) => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths() {
        assert_eq!(
            relative_path(
                Path::new("/p/.agent-presets"),
                Path::new("/p/schemas/preset.schema.json")
            ),
            "../schemas/preset.schema.json"
        );
        assert_eq!(
            relative_path(Path::new("/p/a/./b"), Path::new("/p/a/x.json")),
            "../x.json"
        );
        assert_eq!(
            relative_path(
                Path::new("/p/presets/examples"),
                Path::new("/p/schemas/s.json")
            ),
            "../../schemas/s.json"
        );
    }
}
