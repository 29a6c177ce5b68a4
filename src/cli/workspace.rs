//! [`Workspace`]: the presets and tools one CLI invocation works with, found from the
//! global options (`--project-dir`, `--preset-dir`, `--no-user`) and the environment;
//! and what a command-line argument names: a preset on offer, a file, or `-` (standard
//! input).

use std::path::{Path, PathBuf};

use super::{CliError, Exit, GlobalArgs};
use crate::bounded::{BoundedReadError, byte_size, read_stream_bounded};
use crate::diagnostic::{Diagnostic, DiagnosticKind, Span};
use crate::preset::catalog::{
    CatalogOptions, PresetCatalog, PresetEntry, STDIN_DISPLAY, TargetId, default_user_preset_dir,
    user_presets_disabled,
};
use crate::preset::source::MAX_PRESET_FILE_BYTES;
use crate::preset::validate::{Validation, validate_in_catalog, validate_target};
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
    /// Standard input has been read (as `-`): it cannot be read twice.
    stdin_read: bool,
}

/// What a command-line argument names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Selected {
    /// A preset on offer, by name.
    Name(String),
    /// A file, or `-`: validated as itself.
    Target(TargetId),
}

/// Does a command-line argument name a file rather than a preset? (Contains a path
/// separator, or ends in `.yaml`/`.yml`.) `-` is standard input.
pub(crate) fn is_path(arg: &str) -> bool {
    arg.contains('/')
        || arg.contains(std::path::MAIN_SEPARATOR)
        || arg.ends_with(".yaml")
        || arg.ends_with(".yml")
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
            include_user: !global.no_user && !user_presets_disabled(),
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
            stdin_read: false,
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

    /// What `arg` names: `-` reads one preset from standard input (once), an argument
    /// that looks like a path is a file, anything else a name on offer. A problem (an
    /// unknown name, a file that cannot be read, a built-in's name taken) is a
    /// diagnostic (exit 2, or 1 for `builtin-shadow`).
    pub(crate) fn select(&mut self, arg: &str) -> Result<Selected, Diagnostic> {
        if arg == "-" {
            if self.stdin_read {
                return Err(Diagnostic::new(
                    DiagnosticKind::Io,
                    "`-` (standard input) is given twice; it can be read once",
                ));
            }
            self.stdin_read = true;
            let bytes = read_stdin()?;
            return self.presets.add_stdin(&bytes).map(Selected::Target);
        }
        if is_path(arg) {
            let id = self.presets.add_file(Path::new(arg))?;
            // The file on offer under its name is that preset, discovery notes included.
            let offered = self.presets.target(id).and_then(|t| {
                let on_offer = self.presets.get(t.name())?;
                (on_offer.display() == t.display()).then(|| t.name().to_owned())
            });
            return Ok(match offered {
                Some(name) => Selected::Name(name),
                None => Selected::Target(id),
            });
        }
        match self.unknown_name(arg) {
            Some(d) => Err(d),
            None => Ok(Selected::Name(arg.to_owned())),
        }
    }

    /// The entry a selection names.
    pub(crate) fn entry(&self, selected: &Selected) -> Option<&PresetEntry> {
        match selected {
            Selected::Name(name) => self.presets.get(name),
            Selected::Target(id) => self.presets.target(*id),
        }
    }

    /// The full build of what `selected` names.
    pub(crate) fn validate_selected(&self, selected: &Selected) -> Validation {
        match selected {
            Selected::Name(name) => self.validate(name),
            Selected::Target(id) => validate_target(&self.presets, *id, &self.tools),
        }
    }

    /// The preset `arg` names (a name, a file, or `-`), fully validated, for `show`,
    /// `render` and `run`: a name nobody offers or a file that cannot be read is a usage
    /// error; an invalid preset, or a discovery error about its name (two files
    /// offering it, a file shadowing a built-in), fails with every diagnostic. Warnings
    /// are written to stderr.
    pub(crate) fn valid_preset(
        &mut self,
        arg: &str,
        io: &mut super::Io<'_>,
    ) -> Result<crate::preset::validate::ValidPreset, CliError> {
        let selected = match self.select(arg) {
            Ok(selected) => selected,
            Err(d) => {
                let exit = if d.kind == DiagnosticKind::Io {
                    Exit::Usage
                } else {
                    Exit::Invalid
                };
                return Err(CliError::Diagnostics {
                    list: vec![d],
                    exit,
                    sources: self.presets.source_files(),
                });
            }
        };
        let (notes, refused) = match &selected {
            Selected::Name(name) => (self.problems_about(name), self.is_ambiguous(name)),
            Selected::Target(_) => (Vec::new(), false),
        };
        let validation = self.validate_selected(&selected);
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
            let renderer = crate::report::HumanRenderer::new(io.err_style, &sources, &all);
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

/// One preset from standard input, at most [`MAX_PRESET_FILE_BYTES`].
fn read_stdin() -> Result<Vec<u8>, Diagnostic> {
    let limit = MAX_PRESET_FILE_BYTES as u64;
    read_stream_bounded(std::io::stdin().lock(), limit).map_err(|e| match e {
        BoundedReadError::TooLarge { .. } => Diagnostic::new(
            DiagnosticKind::LimitExceeded,
            format!(
                "standard input holds more than {}, the most a preset file may hold",
                byte_size(limit)
            ),
        )
        .at(Span::new(STDIN_DISPLAY.into(), 1, 1))
        .help("presets are small declarative files; move large text into a `textFile`"),
        other => Diagnostic::new(
            DiagnosticKind::Io,
            format!("cannot read standard input: {other}"),
        ),
    })
}

/// `path` made absolute against `base` (without touching the file system).
pub(crate) fn absolute(base: &Path, path: &Path) -> PathBuf {
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        base.join(path)
    }
}
