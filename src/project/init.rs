//! What `init` writes: the name a new preset may take ([`check_new_name`]) and a
//! commented starter file that validates ([`starter`]).

use std::path::{Component, Path};

use super::UsageError;
use crate::preset::catalog::BUILTIN_PRESETS;
use crate::preset::spec::is_valid_preset_name;
use crate::preset::validate::ValidPreset;

/// A name a new custom preset may take: a valid preset name that is not a built-in's.
pub fn check_new_name(name: &str) -> Result<(), UsageError> {
    if !is_valid_preset_name(name) {
        return Err(UsageError::with(
            format!("`{name}` is not a valid preset name"),
            Some(
                "preset names use `a`-`z`, `0`-`9` and `-`, and start with a letter or digit"
                    .into(),
            ),
        ));
    }
    if BUILTIN_PRESETS.iter().any(|(builtin, _)| *builtin == name) {
        return Err(UsageError::with(
            format!("`{name}` is a built-in preset; a custom preset cannot take its name"),
            Some(format!(
                "pick another name and build on it: `agent-presets init my-{name} --extends {name}`"
            )),
        ));
    }
    Ok(())
}

/// The starter file of `name`, extending `parent_name` (valid as `parent`), with
/// `schema` as its `$schema` reference. When the parent's system prompt is one `complete` section, the
/// starter replaces that section (anything else would never be sent).
pub fn starter(name: &str, parent_name: &str, parent: &ValidPreset, schema: &str) -> String {
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
    # a section with the same name replaces it (`override: true` says that is meant).
    - name: {section}
      order: {order}
      override: true
      complete: true
      text: |
        You are a software engineering assistant for the {{{{ project }}}} project. Follow its conventions.
"
        ),
        None => "    # A section named like an inherited one replaces it (mark that `override: true`).
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

/// The relative path from directory `from` to file `to` (both absolute).
pub fn relative_path(from: &Path, to: &Path) -> String {
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
    fn a_new_preset_takes_a_valid_name_no_builtin_has() {
        assert!(check_new_name("reviewer-2").is_ok());
        let e = check_new_name("Bad Name").unwrap_err();
        assert_eq!(e.message, "`Bad Name` is not a valid preset name");
        let e = check_new_name("minimal").unwrap_err();
        assert!(e.message.contains("is a built-in preset"), "{e:?}");
        assert!(e.help.unwrap().contains("--extends minimal"));
    }

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
