//! The project layer: from "a directory and a few choices" to "a validated preset ready
//! to render, lock or run". A host embedding the crate gets what the command line does:
//!
//! - [`Project::discover`]: the presets on offer (project, user, extra directories,
//!   built-ins, with their precedence) and the problems discovery found
//!   (`duplicate-preset`, `builtin-shadow`, unreadable entries);
//! - [`Project::select`] / [`Project::choose`]: what an argument names (a preset on offer,
//!   a file, `-` for standard input) and the ambiguity policy: a name two files offer is
//!   refused, with every diagnostic, like the CLI refuses it;
//! - [`batch`]: validation of many presets ([`Project::plan`],
//!   [`Project::validate_batch`], [`Project::judge`]), in family order, in parallel with
//!   the `parallel` feature;
//! - [`lock`]: `presets.lock` ([`lock::LockFile`]), its entries and the drift
//!   diagnostics of `validate --locked`; the pinned listings of MCP servers, which
//!   [`Project::discover`] gives the tool catalog;
//! - [`servers`]: the MCP servers a preset declares, how to reach each, and the
//!   `tool-drift` between a pinned and a live listing;
//! - [`environment`]: the runtime values of the machine (os, shell, date);
//! - [`gate`]: the run gate's policy (transport, what must be trusted);
//! - [`endpoint`]: the endpoint a request goes to, with the provider lint run once;
//! - [`run_setup`]: what `run` settles before it starts (working directory, sandbox,
//!   containment).
//!
//! The library never prints: everything comes back as [`Diagnostic`]s.

pub mod batch;
pub mod config;
#[cfg(feature = "client")]
pub mod connect;
pub mod endpoint;
pub mod environment;
pub mod gate;
pub mod init;
pub mod lock;
mod locking;
pub mod run_setup;
pub mod server_identity;
pub mod servers;
mod targets;
mod usage;
pub mod value_flags;
pub mod values;

pub use locking::LockEntriesError;
pub use usage::UsageError;

use std::path::{Path, PathBuf};

use crate::bounded::{BoundedReadError, byte_size, read_stream_bounded};
use crate::diagnostic::{Diagnostic, DiagnosticKind, Span};
use crate::preset::catalog::{
    CatalogOptions, PresetCatalog, PresetEntry, STDIN_DISPLAY, TargetId, default_user_preset_dir,
    user_presets_disabled,
};
use crate::preset::source::MAX_PRESET_FILE_BYTES;
use crate::preset::validate::{ValidPreset, Validation, validate_in_catalog, validate_target};
use crate::suggest::help_did_you_mean;
use crate::tools::ToolCatalog;

/// Where to look for presets: the "few choices" of a project.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProjectOptions {
    /// The project root (its `.agent-presets/` is searched); default: the current
    /// directory.
    pub project_dir: Option<PathBuf>,
    /// More directories to search, before the project's (`--preset-dir`).
    pub preset_dirs: Vec<PathBuf>,
    /// Leave out the user's presets (`--no-user`; `AGENT_PRESETS_NO_USER` does too).
    pub no_user: bool,
    /// Do not look for the project config (`agent-presets.yaml`, see [`config`]) from
    /// the project directory upward (`--no-project-config`).
    pub no_project_config: bool,
}

/// The project could not be set up at all.
#[derive(Debug, thiserror::Error)]
pub enum ProjectError {
    /// The current directory is unknown (deleted, no permission).
    #[error("cannot determine the current directory: {0}")]
    CurrentDir(std::io::Error),
    /// The project directory given does not exist.
    #[error("the project directory `{}` does not exist", .0.display())]
    NoProjectDir(PathBuf),
    /// The project config (`agent-presets.yaml`) cannot be used: its located problems.
    #[error("the project config `{}` is not valid", .0.display)]
    Config(Box<ConfigProblems>),
}

/// The problems of a project config that cannot be used, with where it is.
#[derive(Debug)]
pub struct ConfigProblems {
    /// The config file as shown (relative to the current directory when inside it).
    pub display: String,
    /// Its problems and its text.
    pub error: config::ConfigError,
}

/// The presets on offer, the problems found while discovering them, and the known tools.
#[derive(Debug)]
pub struct Project {
    /// Every preset on offer.
    pub presets: PresetCatalog,
    /// Problems that kept a file from being offered (`builtin-shadow`,
    /// `duplicate-preset`, unreadable entries).
    pub problems: Vec<Diagnostic>,
    /// The tools presets may name.
    pub tools: ToolCatalog,
    /// The project root.
    pub project_dir: PathBuf,
    /// The project config in use, if one was found (see [`config`]).
    pub config: Option<config::ProjectConfig>,
    /// The lock file: the config's `lock`, else `presets.lock` in the project root.
    pub lock_path: PathBuf,
    /// The preset directories searched, as shown (relative to the current directory
    /// when inside it), highest precedence first: the project's `.agent-presets/`, each
    /// preset directory, the user directory.
    pub searched: Vec<String>,
    /// Standard input has been read (as `-`): it cannot be read twice.
    stdin_read: bool,
}

/// What an argument names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Selected {
    /// A preset on offer, by name.
    Name(String),
    /// A file, or `-`: validated as itself.
    Target(TargetId),
}

/// `path` as shown to users: relative to `cwd` when inside it.
pub(crate) fn shown(cwd: &Path, path: &Path) -> String {
    path.strip_prefix(cwd).unwrap_or(path).display().to_string()
}

/// Does an argument name a file rather than a preset? (Contains a path separator, or
/// ends in `.yaml`/`.yml`.) `-` is standard input.
pub fn is_path(arg: &str) -> bool {
    arg.contains('/')
        || arg.contains(std::path::MAIN_SEPARATOR)
        || arg.ends_with(".yaml")
        || arg.ends_with(".yml")
}

/// A preset chosen and fully validated, with the warnings to show about it.
#[derive(Debug)]
pub struct Chosen {
    /// The valid preset.
    pub preset: ValidPreset,
    /// Its warnings, discovery notes about its name first.
    pub warnings: Vec<Diagnostic>,
}

/// Why [`Project::choose`] gives no preset.
#[derive(Debug)]
pub enum Refusal {
    /// The argument names nothing that can be read (an unknown name, an unreadable file,
    /// standard input twice): a usage problem.
    Unusable(Diagnostic),
    /// What it names is not a valid preset (or a built-in's name is taken): every
    /// diagnostic.
    Invalid(Vec<Diagnostic>),
}

impl Project {
    /// Discover presets as `options` say, relative to the current directory. Directories
    /// that could not be read come back beside the project (`io` diagnostics without a
    /// span) for the caller to refuse or report.
    pub fn discover(options: &ProjectOptions) -> Result<(Project, Vec<Diagnostic>), ProjectError> {
        let cwd = std::env::current_dir().map_err(ProjectError::CurrentDir)?;
        if let Some(dir) = &options.project_dir
            && !dir.is_dir()
        {
            return Err(ProjectError::NoProjectDir(dir.clone()));
        }
        let start = options
            .project_dir
            .as_ref()
            .map_or_else(|| cwd.clone(), |dir| absolute(&cwd, dir));
        let config = match options.no_project_config {
            true => None,
            false => config::find(&start)
                .map(|path| {
                    let display = shown(&cwd, &path);
                    config::ProjectConfig::load(&path, &display).map_err(|error| {
                        ProjectError::Config(Box::new(ConfigProblems { display, error }))
                    })
                })
                .transpose()?,
        };
        let project_dir = match (&options.project_dir, &config) {
            (Some(_), _) => start,
            (None, Some(config)) => config.root.clone(),
            (None, None) => cwd.clone(),
        };
        // `--preset-dir` replaces the config's directories: explicit flags win.
        let extra_dirs = match &config {
            Some(config) if options.preset_dirs.is_empty() => {
                config.preset_dirs.clone().unwrap_or_default()
            }
            _ => options.preset_dirs.clone(),
        };
        let lock_path = config
            .as_ref()
            .map_or_else(|| project_dir.join(lock::LOCK_FILE), |c| c.lock.clone());
        let mut searched = vec![project_dir.join(crate::preset::catalog::PROJECT_PRESET_DIR)];
        searched.extend(extra_dirs.iter().map(|d| absolute(&cwd, d)));
        let include_user = !options.no_user && !user_presets_disabled();
        let user_dir = default_user_preset_dir();
        if include_user && let Some(dir) = &user_dir {
            searched.push(dir.clone());
        }
        let searched = searched.iter().map(|d| shown(&cwd, d)).collect();
        let catalog = CatalogOptions {
            project_dir: Some(project_dir.clone()),
            user_dir,
            include_user,
            extra_dirs,
            paths: Vec::new(),
            display_base: Some(cwd),
        };
        let (mut presets, problems) = PresetCatalog::discover(&catalog);
        if let Some(locale) = config.as_ref().and_then(|c| c.locale.clone()) {
            presets.set_locale(Some(locale));
        }
        let (unreadable, problems): (Vec<_>, Vec<_>) = problems
            .into_iter()
            .partition(|d| d.kind == DiagnosticKind::Io && d.span.is_none());
        let project = Project {
            presets,
            problems,
            // The tools of the MCP servers presets declare, as the lock pins them.
            tools: lock::with_lock_listings(ToolCatalog::builtin(), &lock_path),
            project_dir,
            config,
            lock_path,
            searched,
            stdin_read: false,
        };
        Ok((project, unreadable))
    }

    /// `None` when a preset named `name` is on offer, else the usage problem (kind
    /// `io`) with "did you mean".
    pub fn unknown_name(&self, name: &str) -> Option<Diagnostic> {
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

    /// The full build of the preset named `name` (which must be on offer). It does not
    /// apply the ambiguity policy: see [`Project::choose`] or [`Project::is_ambiguous`].
    pub fn validate(&self, name: &str) -> Validation {
        validate_in_catalog(&self.presets, name, &self.tools)
    }

    /// What `arg` names: `-` reads one preset from standard input (once), an argument
    /// that looks like a path is a file, anything else a name on offer. A problem (an
    /// unknown name, a file that cannot be read, a built-in's name taken) is a
    /// diagnostic (kind `io` for a usage problem).
    pub fn select(&mut self, arg: &str) -> Result<Selected, Diagnostic> {
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
    pub fn entry(&self, selected: &Selected) -> Option<&PresetEntry> {
        match selected {
            Selected::Name(name) => self.presets.get(name),
            Selected::Target(id) => self.presets.target(*id),
        }
    }

    /// The full build of what `selected` names.
    pub fn validate_selected(&self, selected: &Selected) -> Validation {
        match selected {
            Selected::Name(name) => self.validate(name),
            Selected::Target(id) => validate_target(&self.presets, *id, &self.tools),
        }
    }

    /// The preset `arg` names (a name, a file, or `-`), fully validated, with the
    /// ambiguity policy applied: a name nobody offers or a file that cannot be read is
    /// [`Refusal::Unusable`]; an invalid preset, or a discovery error about its name (two
    /// files offering it, a file shadowing a built-in), is [`Refusal::Invalid`] with
    /// every diagnostic.
    pub fn choose(&mut self, arg: &str) -> Result<Chosen, Refusal> {
        let selected = match self.select(arg) {
            Ok(selected) => selected,
            Err(d) if d.kind == DiagnosticKind::Io => return Err(Refusal::Unusable(d)),
            Err(d) => return Err(Refusal::Invalid(vec![d])),
        };
        let (notes, refused) = match &selected {
            Selected::Name(name) => (self.problems_about(name), self.is_ambiguous(name)),
            Selected::Target(_) => (Vec::new(), false),
        };
        let validation = self.validate_selected(&selected);
        let all: Vec<Diagnostic> = notes.into_iter().chain(validation.diagnostics).collect();
        match validation.preset {
            Some(preset) if !refused => Ok(Chosen {
                preset,
                warnings: all,
            }),
            _ => Err(Refusal::Invalid(all)),
        }
    }

    /// Do two files offer `name` (a `duplicate-preset`)? Then the name is ambiguous and
    /// no preset of that name is valid. (A file that takes a built-in's name is refused
    /// on its own; the built-in stays valid.)
    pub fn is_ambiguous(&self, name: &str) -> bool {
        self.problems_about(name)
            .iter()
            .any(|d| d.kind == DiagnosticKind::DuplicatePreset)
    }

    /// Discovery problems about `name`'s file, or about files trying to take `name`.
    pub fn problems_about(&self, name: &str) -> Vec<Diagnostic> {
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
pub fn absolute(base: &Path, path: &Path) -> PathBuf {
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        base.join(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project_with(files: &[(&str, &str, &str)]) -> (tempfile::TempDir, Project) {
        let root = tempfile::tempdir().unwrap();
        let mut dirs = Vec::new();
        for (dir, name, yaml) in files {
            let dir = root.path().join(dir);
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join(name), yaml).unwrap();
            if !dirs.contains(&dir) {
                dirs.push(dir);
            }
        }
        let options = ProjectOptions {
            project_dir: Some(root.path().to_path_buf()),
            preset_dirs: dirs,
            no_user: true,
            no_project_config: true,
        };
        let (project, unreadable) = Project::discover(&options).unwrap();
        assert!(unreadable.is_empty(), "{unreadable:?}");
        (root, project)
    }

    const P: &str = "version: 1\nname: p\nextends: minimal\n";

    /// Two files of one directory offering one name: the library refuses the name like the CLI does,
    /// though each file alone is a valid preset.
    #[test]
    fn a_name_two_files_offer_is_refused() {
        let (_root, mut project) = project_with(&[("a", "p.yaml", P), ("a", "p.yml", P)]);
        assert!(project.is_ambiguous("p"));
        match project.choose("p") {
            Err(Refusal::Invalid(list)) => assert!(
                list.iter()
                    .any(|d| d.kind == DiagnosticKind::DuplicatePreset),
                "{list:?}"
            ),
            other => panic!("expected a refusal, got {other:?}"),
        }
        let (_root, mut one) = project_with(&[("a", "p.yaml", P)]);
        let chosen = one.choose("p").unwrap();
        assert_eq!(chosen.preset.name(), "p");
        assert!(matches!(
            one.choose("q"),
            Err(Refusal::Unusable(d)) if d.message == "no preset named `q`"
        ));
    }
}
