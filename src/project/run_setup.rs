//! What `run` settles before anything is sent or started, from its flags and the
//! environment: the working directory, the sandbox commands run in, and how they are
//! contained. Each refusal is a [`UsageError`] (a mistake in the invocation).

use std::path::{Path, PathBuf};

use super::UsageError;
use crate::diagnostic::{Diagnostic, DiagnosticKind, Severity};
use crate::preset::ValidPreset;
use crate::process::{SandboxMode, SandboxProfile};
use crate::tools::ToolContext;

/// The sandbox commands run in: the preset's mode (`sandbox`, default `workspace-write`)
/// or `--sandbox MODE` when that is stricter, or `--sandbox full-access` (an explicit
/// choice to run unconfined); the preset's `allowRead`, relative paths resolved against
/// the working directory `cwd`.
pub fn sandbox_profile(
    preset: &ValidPreset,
    flag: Option<&str>,
    cwd: &Path,
) -> Result<SandboxProfile, UsageError> {
    let own = preset.sandbox_mode();
    let mode = match flag {
        None => own,
        Some(text) => {
            let asked: SandboxMode = text.parse().map_err(|e: String| {
                UsageError::with(
                    format!("--sandbox: {e}"),
                    Some("e.g. `--sandbox read-only`".into()),
                )
            })?;
            if asked != SandboxMode::FullAccess && !asked.at_least_as_strict_as(own) {
                return Err(UsageError::with(
                    format!(
                        "--sandbox {asked} is weaker than the preset's `{own}` sandbox; --sandbox can only make it stricter"
                    ),
                    Some(format!(
                        "choose `{own}` or stricter, or run commands without a sandbox explicitly with `--sandbox full-access`"
                    )),
                ));
            }
            asked
        }
    };
    Ok(preset.sandbox_profile(mode, cwd))
}

/// `AGENT_PRESETS_CONTAINMENT=cgroup|subreaper|process-group` chooses how commands are
/// contained instead of the best the host allows (for tests and debugging; a
/// containment the host cannot provide falls back to the next weaker one).
pub fn with_containment_from_env(tools: ToolContext) -> Result<ToolContext, UsageError> {
    match std::env::var("AGENT_PRESETS_CONTAINMENT") {
        Ok(name) => {
            let containment = name.parse().map_err(|e: String| {
                UsageError::with(
                    format!("AGENT_PRESETS_CONTAINMENT: {e}"),
                    Some("unset it to use the best containment the host allows".into()),
                )
            })?;
            Ok(tools.with_containment(containment))
        }
        Err(std::env::VarError::NotPresent) => Ok(tools),
        Err(std::env::VarError::NotUnicode(_)) => Err(UsageError::new(
            "AGENT_PRESETS_CONTAINMENT is not valid UTF-8; expected `cgroup`, `subreaper` or `process-group`",
        )),
    }
}

/// `--cwd` or the current directory, which must exist, made absolute (symlinks
/// resolved) before anything is rendered.
pub fn working_directory(dir: Option<&str>) -> Result<PathBuf, UsageError> {
    let given = match dir {
        Some(d) => PathBuf::from(d),
        None => std::env::current_dir()
            .map_err(|e| UsageError::new(format!("cannot determine the current directory: {e}")))?,
    };
    let absolute = given.canonicalize().map_err(|e| {
        UsageError::with(
            format!(
                "the working directory `{}` cannot be used: {e}",
                given.display()
            ),
            Some("pass an existing directory with `--cwd DIR`".into()),
        )
    })?;
    if !absolute.is_dir() {
        return Err(UsageError::new(format!(
            "the working directory `{}` is not a directory",
            given.display()
        )));
    }
    Ok(absolute)
}

/// What `run` refuses before any request: a prompt that names a tool the model cannot
/// see (`mentions-hidden-tool`, a warning at `validate`) would send the model after a
/// tool it does not have. Each such warning (of the preset's validation) comes back as an error with the fix, unless
/// the user asked to run anyway (`allow`: `run --allow-hidden-tool-mentions`).
pub fn refuse_hidden_tool_mentions(warnings: &[Diagnostic], allow: bool) -> Vec<Diagnostic> {
    if allow {
        return Vec::new();
    }
    warnings
        .iter()
        .filter(|d| d.kind == DiagnosticKind::MentionsHiddenTool)
        .map(|d| {
            let mut d = d.clone();
            d.severity = Severity::Error;
            let help = d.help.take().unwrap_or_default();
            d.help = Some(format!(
                "{help}{}`run` refuses a prompt that names a hidden tool; to send it all the same, pass `--allow-hidden-tool-mentions`",
                if help.is_empty() { "" } else { "; " }
            ));
            d
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn preset(yaml: &str) -> ValidPreset {
        let mut presets = crate::preset::PresetCatalog::builtin();
        presets.add_text("p", "p.yaml", yaml).unwrap();
        let tools = crate::tools::ToolCatalog::builtin();
        let v = crate::preset::validate_in_catalog(&presets, "p", &tools);
        v.preset.unwrap_or_else(|| panic!("{:?}", v.diagnostics))
    }

    #[test]
    fn the_sandbox_flag_only_tightens_unless_it_asks_for_full_access() {
        let p = preset(
            "version: 1\nname: p\nextends: minimal\nsandbox: workspace-write\nallowRead: [docs]\n",
        );
        let cwd = Path::new("/w");
        let own = sandbox_profile(&p, None, cwd).unwrap();
        assert_eq!(own.mode(), SandboxMode::WorkspaceWrite);
        let stricter = sandbox_profile(&p, Some("read-only"), cwd).unwrap();
        assert_eq!(stricter.mode(), SandboxMode::ReadOnly);
        let full = sandbox_profile(&p, Some("full-access"), cwd).unwrap();
        assert_eq!(full.mode(), SandboxMode::FullAccess);
        let e = sandbox_profile(&p, Some("nonsense"), cwd).unwrap_err();
        assert!(e.message.starts_with("--sandbox: "), "{e:?}");
        let p = preset("version: 1\nname: p\nextends: minimal\nsandbox: read-only\n");
        let e = sandbox_profile(&p, Some("workspace-write"), cwd).unwrap_err();
        assert!(
            e.message.contains("weaker than the preset's `read-only`"),
            "{e:?}"
        );
        assert!(e.help.unwrap().contains("--sandbox full-access"));
    }

    #[test]
    fn the_working_directory_is_made_absolute_and_must_be_a_directory() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, "").unwrap();
        let canonical = dir.path().canonicalize().unwrap();
        assert_eq!(working_directory(dir.path().to_str()).unwrap(), canonical);
        let e = working_directory(file.to_str()).unwrap_err();
        assert!(e.message.ends_with("is not a directory"), "{e:?}");
        let e = working_directory(dir.path().join("missing").to_str()).unwrap_err();
        assert!(e.message.contains("cannot be used"), "{e:?}");
        assert_eq!(
            e.help.as_deref(),
            Some("pass an existing directory with `--cwd DIR`")
        );
    }
}
