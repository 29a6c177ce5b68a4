//! [`Workspace`]: the presets and tools one CLI invocation works with, found from the
//! global options (`--project-dir`, `--preset-dir`) and the environment.

use std::path::{Path, PathBuf};

use super::{CliError, Exit, GlobalArgs};
use crate::diagnostic::{Diagnostic, DiagnosticKind};
use crate::preset::catalog::{CatalogOptions, PresetCatalog, default_user_preset_dir};
use crate::preset::validate::{Validation, validate_in_catalog};
use crate::source_files::SourceFiles;
use crate::suggest::help_did_you_mean;
use crate::tools::ToolCatalog;

/// The presets on offer, the problems found while discovering them, and the known tools.
#[derive(Debug)]
pub(crate) struct Workspace {
    /// Every preset on offer.
    pub presets: PresetCatalog,
    /// Problems that kept a file from being offered (`builtin-shadow`,
    /// `duplicate-preset`, unreadable entries).
    pub problems: Vec<Diagnostic>,
    /// The tools presets may name.
    pub tools: ToolCatalog,
    /// The project root.
    pub project_dir: PathBuf,
}

impl Workspace {
    /// Discover presets as the global options say. A `--preset-dir` that cannot be read
    /// is a usage error (exit 2).
    pub(crate) fn discover(global: &GlobalArgs) -> Result<Workspace, CliError> {
        let (workspace, unreadable) = Workspace::discover_partly(global)?;
        if !unreadable.is_empty() {
            return Err(CliError::Diagnostics {
                list: unreadable,
                exit: Exit::Usage,
                sources: SourceFiles::new(),
            });
        }
        Ok(workspace)
    }

    /// Discover what can be found, returning the directories that could not be read
    /// (`io` diagnostics) beside it, for `validate` to report and go on.
    pub(crate) fn discover_partly(
        global: &GlobalArgs,
    ) -> Result<(Workspace, Vec<Diagnostic>), CliError> {
        let cwd = std::env::current_dir()
            .map_err(|e| CliError::usage(format!("cannot determine the current directory: {e}")))?;
        let project_dir = match &global.project_dir {
            Some(dir) if !dir.is_dir() => {
                return Err(CliError::usage(format!(
                    "the project directory `{}` does not exist",
                    dir.display()
                )));
            }
            Some(dir) => absolute(&cwd, dir),
            None => cwd.clone(),
        };
        let options = CatalogOptions {
            project_dir: Some(project_dir.clone()),
            user_dir: default_user_preset_dir(),
            include_user: true,
            extra_dirs: global.preset_dirs.clone(),
            paths: Vec::new(),
            display_base: Some(cwd),
        };
        let (presets, problems) = PresetCatalog::discover(&options);
        let (unreadable, problems): (Vec<_>, Vec<_>) = problems
            .into_iter()
            .partition(|d| d.kind == DiagnosticKind::Io && d.span.is_none());
        let workspace = Workspace {
            presets,
            problems,
            tools: ToolCatalog::builtin(),
            project_dir,
        };
        Ok((workspace, unreadable))
    }

    /// Is a preset named `name` on offer? If not, a usage error with "did you mean".
    pub(crate) fn require(&self, name: &str) -> Result<(), CliError> {
        match self.unknown_name(name) {
            None => Ok(()),
            Some(d) => Err(CliError::usage_with(d.message, d.help)),
        }
    }

    /// `None` when a preset named `name` is on offer, else the usage problem (kind
    /// `io`, exit 2) with "did you mean".
    pub(crate) fn unknown_name(&self, name: &str) -> Option<Diagnostic> {
        if self.presets.contains(name) {
            return None;
        }
        let help = help_did_you_mean(name, self.presets.names()).unwrap_or_else(|| {
            format!(
                "available presets: {} (see `agent-presets list`)",
                self.presets.names().collect::<Vec<_>>().join(", ")
            )
        });
        Some(Diagnostic::new(DiagnosticKind::Io, format!("no preset named `{name}`")).help(help))
    }

    /// The full build of the preset named `name` (which must be on offer).
    pub(crate) fn validate(&self, name: &str) -> Validation {
        validate_in_catalog(&self.presets, name, &self.tools)
    }

    /// The preset named `name`, fully validated, for `show` and `render`: a name nobody
    /// offers is a usage error; an invalid preset, or a discovery error about its name
    /// (two files offering it, a file shadowing a built-in), fails with every
    /// diagnostic. Warnings are written to stderr.
    pub(crate) fn valid_preset(
        &self,
        name: &str,
        io: &mut super::Io<'_>,
    ) -> Result<crate::preset::validate::ValidPreset, CliError> {
        self.require(name)?;
        let notes = self.problems_about(name);
        let validation = self.validate(name);
        let refused = self.is_ambiguous(name);
        let all: Vec<Diagnostic> = notes.into_iter().chain(validation.diagnostics).collect();
        let preset = match validation.preset {
            Some(p) if !refused => p,
            _ => {
                return Err(CliError::Diagnostics {
                    list: all,
                    exit: Exit::Invalid,
                    sources: self.presets.source_files(),
                });
            }
        };
        if !all.is_empty() {
            let sources = self.presets.source_files();
            let renderer = super::snippet::HumanRenderer::new(io.err_style, &sources, &all);
            io.err.write_all(renderer.render_all(&all).as_bytes())?;
        }
        Ok(preset)
    }

    /// Do two files offer `name` (a `duplicate-preset`)? Then the name is ambiguous and
    /// no preset of that name is valid. (A file that takes a built-in's name is refused
    /// on its own; the built-in stays valid.)
    pub(crate) fn is_ambiguous(&self, name: &str) -> bool {
        self.problems_about(name)
            .iter()
            .any(|d| d.kind == DiagnosticKind::DuplicatePreset)
    }

    /// Discovery problems about `name`'s file, or about files trying to take `name`
    /// (to show alongside `show`/`render` of that preset).
    pub(crate) fn problems_about(&self, name: &str) -> Vec<Diagnostic> {
        self.problems
            .iter()
            .filter(|d| {
                d.span.as_ref().is_some_and(|s| {
                    Path::new(&*s.file).file_stem().and_then(|f| f.to_str()) == Some(name)
                })
            })
            .cloned()
            .collect()
    }
}

/// `path` made absolute against `base` (without touching the file system).
pub(crate) fn absolute(base: &Path, path: &Path) -> PathBuf {
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        base.join(path)
    }
}
