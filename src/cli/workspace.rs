//! [`Workspace`]: the [`Project`] one CLI invocation works with, found from the global
//! options (`--project-dir`, `--preset-dir`, `--no-user`), with the project layer's
//! refusals turned into exit codes and its warnings printed.

use std::ops::{Deref, DerefMut};

use super::{CliError, Exit, GlobalArgs};
use crate::diagnostic::Diagnostic;
use crate::preset::validate::ValidPreset;
use crate::project::{Project, ProjectError, ProjectOptions, Refusal};
pub(crate) use crate::project::{Selected, absolute};
use crate::source_files::SourceFiles;

/// The project of one invocation (see [`Project`], which it derefs to).
#[derive(Debug)]
pub(crate) struct Workspace(Project);

impl Deref for Workspace {
    type Target = Project;
    fn deref(&self) -> &Project {
        &self.0
    }
}

impl DerefMut for Workspace {
    fn deref_mut(&mut self) -> &mut Project {
        &mut self.0
    }
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
        let options = ProjectOptions {
            project_dir: global.project_dir.clone(),
            preset_dirs: global.preset_dirs.clone(),
            no_user: global.no_user,
            no_project_config: global.no_project_config,
        };
        let (project, unreadable) = Project::discover(&options).map_err(|e| match e {
            ProjectError::CurrentDir(_) | ProjectError::NoProjectDir(_) => {
                CliError::usage(e.to_string())
            }
            ProjectError::Config(problems) => CliError::Diagnostics {
                list: problems.error.problems.into_iter().collect(),
                exit: Exit::Usage,
                sources: problems.error.sources,
            },
        })?;
        Ok((Workspace(project), unreadable))
    }

    /// Is a preset named `name` on offer? If not, a usage error with "did you mean".
    pub(crate) fn require(&self, name: &str) -> Result<(), CliError> {
        match self.unknown_name(name) {
            None => Ok(()),
            Some(d) => Err(CliError::usage_with(d.message, d.help)),
        }
    }

    /// The preset `arg` names, chosen by [`Project::choose`], for `show`, `render` and
    /// `run`: an unusable argument is a usage error (exit 2), a refused or invalid
    /// preset exit 1 with every diagnostic. Warnings are written to stderr.
    pub(crate) fn valid_preset(
        &mut self,
        arg: &str,
        io: &mut super::Io<'_>,
    ) -> Result<ValidPreset, CliError> {
        self.valid_preset_and_warnings(arg, io).map(|(p, _)| p)
    }

    /// [`valid_preset`](Self::valid_preset), with the warnings it printed.
    pub(crate) fn valid_preset_and_warnings(
        &mut self,
        arg: &str,
        io: &mut super::Io<'_>,
    ) -> Result<(ValidPreset, Vec<crate::Diagnostic>), CliError> {
        let chosen = self.choose(arg).map_err(|refusal| {
            let (list, exit) = match refusal {
                Refusal::Unusable(d) => (vec![d], Exit::Usage),
                Refusal::Invalid(list) => (list, Exit::Invalid),
            };
            CliError::Diagnostics {
                list,
                exit,
                sources: self.presets.source_files(),
            }
        })?;
        if !chosen.warnings.is_empty() {
            let sources = self.presets.source_files();
            let renderer =
                crate::report::HumanRenderer::new(io.err_style, &sources, &chosen.warnings);
            io.err
                .write_all(renderer.render_all(&chosen.warnings).as_bytes())?;
        }
        Ok((chosen.preset, chosen.warnings))
    }
}
