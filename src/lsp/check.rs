//! The project under the editor: which buffers are presets, and what `validate`
//! reports for each.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Value, json};

use super::text::{self, Encoding};
use crate::codes::CodePage;
use crate::diagnostic::{Diagnostic, Fix, Severity};
use crate::preset::catalog::PresetEntry;
use crate::project::lock::{self, LockFile};
use crate::project::{Project, ProjectOptions, Selected};
use crate::report::commands::displayed;
use crate::report::{MAX_SHOWN_PER_FILE, ValidationReport};

/// The project under an editor and the buffers read in place of its files: what the
/// server validates with (public for hosts and the benchmark, `benches/lsp.rs`).
pub struct Checker {
    options: ProjectOptions,
    pub(crate) project: Project,
    /// The text each open buffer was last overlaid with.
    overlaid: HashMap<PathBuf, Arc<[u8]>>,
    cwd: PathBuf,
}

/// One diagnostic as published, with the fix it carries.
pub(crate) struct Published {
    pub(crate) lsp: Value,
    pub(crate) fix: Option<Box<Fix>>,
    pub(crate) kind: crate::DiagnosticKind,
    pub(crate) line: u32,
}

/// A project for `options`; one whose directory is gone falls back to the current
/// directory.
fn discover(options: &ProjectOptions) -> Result<Project, String> {
    match Project::discover(options) {
        Ok((project, _)) => Ok(project),
        Err(_) => {
            let fallback = ProjectOptions {
                project_dir: None,
                ..options.clone()
            };
            Project::discover(&fallback)
                .map(|(project, _)| project)
                .map_err(|e| e.to_string())
        }
    }
}

impl Checker {
    /// The project `options` point at (its directory gone: the current directory's).
    pub fn new(options: ProjectOptions) -> Result<Checker, String> {
        let cwd = std::env::current_dir().unwrap_or_default();
        let options = ProjectOptions {
            preset_dirs: options
                .preset_dirs
                .iter()
                .map(|d| crate::project::absolute(&cwd, d))
                .collect(),
            ..options
        };
        Ok(Checker {
            project: discover(&options)?,
            options,
            overlaid: HashMap::new(),
            cwd,
        })
    }

    /// The directories presets are found in.
    fn preset_dirs(&self) -> Vec<PathBuf> {
        let mut dirs = vec![
            self.project
                .project_dir
                .join(crate::preset::catalog::PROJECT_PRESET_DIR),
        ];
        dirs.extend(self.options.preset_dirs.iter().cloned());
        if let Some(user) = crate::preset::catalog::default_user_preset_dir()
            && !self.options.no_user
        {
            dirs.push(user);
        }
        dirs
    }

    /// Is the buffer at `path` a preset? A file of a preset directory (`.yaml`/`.yml`),
    /// or any YAML file whose first lines name the preset schema (the modeline
    /// `agent-presets init` writes). Anything else is left alone.
    pub(crate) fn is_preset(&self, path: &Path, text: &str) -> bool {
        self.in_preset_dir(path) || has_modeline(text)
    }

    fn in_preset_dir(&self, path: &Path) -> bool {
        let yaml = matches!(
            path.extension().and_then(|e| e.to_str()),
            Some("yaml" | "yml")
        );
        yaml && path
            .parent()
            .is_some_and(|p| self.preset_dirs().iter().any(|d| d == p))
    }

    /// The entry on offer that is the file at `path`.
    pub(crate) fn entry_at(&self, path: &Path) -> Option<&PresetEntry> {
        self.project
            .presets
            .entries()
            .find(|e| e.path() == Some(path))
    }

    /// The project.
    pub fn project(&self) -> &Project {
        &self.project
    }

    /// What the server publishes for the buffer at `path` holding `text`: the
    /// diagnostics (see [`Checker::diagnostics`]) as the protocol's JSON, columns in
    /// `encoding`. `None`: not a preset.
    pub fn check(&mut self, path: &Path, text: &str, encoding: Encoding) -> Option<Vec<Value>> {
        let list = self.diagnostics(path, text)?;
        Some(
            self.published(text, list, encoding)
                .into_iter()
                .map(|p| p.lsp)
                .collect(),
        )
    }

    /// Read `path` from `text` from now on.
    pub fn overlay(&mut self, path: &Path, text: &str) {
        if self
            .overlaid
            .get(path)
            .is_some_and(|t| **t == *text.as_bytes())
        {
            return;
        }
        let bytes: Arc<[u8]> = Arc::from(text.as_bytes());
        self.project.presets.overlay(path, Some(Arc::clone(&bytes)));
        self.overlaid.insert(path.to_path_buf(), bytes);
    }

    /// The buffer of `path` is closed: read the file again.
    pub(crate) fn close(&mut self, path: &Path) {
        if self.overlaid.remove(path).is_some() {
            self.project.presets.overlay(path, None);
        }
    }

    /// A file of a preset directory the catalog does not have (created since): find the
    /// presets again, the open buffers still read in place of their files.
    pub(crate) fn rediscover_if_new(&mut self, path: &Path) {
        if !self.in_preset_dir(path) || self.entry_at(path).is_some() {
            return;
        }
        let problem = self.project.problems.iter().any(|d| {
            d.span
                .as_ref()
                .is_some_and(|s| *s.file == *self.display(path))
        });
        if problem {
            return;
        }
        let Ok(project) = discover(&self.options) else {
            return;
        };
        self.project = project;
        for (path, bytes) in &self.overlaid {
            self.project.presets.overlay(path, Some(Arc::clone(bytes)));
        }
    }

    /// How diagnostics show `path` (relative to the current directory, as the CLI does).
    fn display(&self, path: &Path) -> String {
        path.strip_prefix(&self.cwd)
            .ok()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(path)
            .to_string_lossy()
            .into_owned()
    }

    /// The names of the presets whose `extends` chain reaches `name` (not `name` itself).
    pub fn descendants(&self, name: &str) -> Vec<String> {
        let catalog = &self.project.presets;
        catalog
            .entries()
            .filter(|e| {
                let mut next = parent_of(e);
                let mut steps = 0;
                while let Some(parent) = next {
                    if parent == name {
                        return true;
                    }
                    steps += 1;
                    if steps > crate::preset::resolve::MAX_EXTENDS_DEPTH {
                        return false;
                    }
                    next = catalog.get(&parent).and_then(parent_of);
                }
                false
            })
            .map(|e| e.name().to_owned())
            .filter(|n| n != name)
            .collect()
    }

    /// The open buffers (among `open`) whose presets extend the one at `path`.
    pub(crate) fn open_children<'a>(
        &self,
        path: &Path,
        open: impl Iterator<Item = &'a Path>,
    ) -> Vec<PathBuf> {
        let Some(entry) = self.entry_at(path) else {
            return Vec::new();
        };
        let family = self.descendants(entry.name());
        open.filter(|p| {
            self.entry_at(p)
                .is_some_and(|e| family.iter().any(|n| n == e.name()))
        })
        .map(Path::to_path_buf)
        .collect()
    }

    /// What `validate --format json` reports for the file at `path` (its text is
    /// `text`): the diagnostics of the preset and of every preset that extends it that
    /// point into the file, deduplicated, in file order, at most
    /// [`MAX_SHOWN_PER_FILE`]. `None`: not a preset, say nothing.
    pub fn diagnostics(&mut self, path: &Path, text: &str) -> Option<Vec<Diagnostic>> {
        if !self.is_preset(path, text) {
            return None;
        }
        self.overlay(path, text);
        self.rediscover_if_new(path);
        let mut report = ValidationReport::default();
        let display = match self.entry_at(path) {
            Some(entry) => {
                let name = entry.name().to_owned();
                let display = entry.display().to_string();
                report.add_diagnostics(self.problems_in(&display));
                for name in std::iter::once(name.clone()).chain(self.descendants(&name)) {
                    report.add_diagnostics(self.project.validate(&name).diagnostics);
                }
                display
            }
            None => {
                let display = self.display(path);
                report.add_diagnostics(self.problems_in(&display));
                if !report.diagnostics().is_empty() {
                    // A file discovery refused (a built-in's name, a duplicate): that is
                    // all `validate` says of it.
                } else {
                    self.project.presets.clear_targets();
                    match self.project.presets.add_file_text(path, text.as_bytes()) {
                        Ok(id) => {
                            let v = self.project.validate_selected(&Selected::Target(id));
                            report.add_diagnostics(v.diagnostics);
                        }
                        Err(d) => report.add_diagnostics([d]),
                    }
                }
                display
            }
        };
        report.sort_in_file_order();
        Some(
            report
                .diagnostics()
                .iter()
                .filter(|d| d.span.as_ref().is_some_and(|s| *s.file == *display))
                .take(MAX_SHOWN_PER_FILE)
                .cloned()
                .collect(),
        )
    }

    fn problems_in(&self, display: &str) -> Vec<Diagnostic> {
        self.project
            .problems
            .iter()
            .filter(|d| d.span.as_ref().is_some_and(|s| *s.file == *display))
            .cloned()
            .collect()
    }

    /// What `validate --locked` adds for the preset at `path` (on save): its prefix
    /// against `presets.lock`; nothing when there is no lock or the preset is invalid.
    pub(crate) fn drift(&mut self, path: &Path, text: &str) -> Vec<Diagnostic> {
        self.overlay(path, text);
        let Some(name) = self.entry_at(path).map(|e| e.name().to_owned()) else {
            return Vec::new();
        };
        let Ok(Some(lock)) = LockFile::load(&LockFile::path(&self.project)) else {
            return Vec::new();
        };
        let Some(preset) = self.project.validate(&name).preset else {
            return Vec::new();
        };
        let drift = match lock.get(&name) {
            Some(locked) => {
                match lock::entry_with_listings(&preset, self.project.tools.listings()) {
                    Ok(now) => lock::drift(&preset, locked, &now),
                    Err(_) => None,
                }
            }
            None => Some(lock::not_locked(&preset)),
        };
        drift.map(|d| vec![d.diagnostic]).unwrap_or_default()
    }

    /// The diagnostics of a buffer as the protocol carries them, positions counted in
    /// `encoding`, each with a link to its code's page and the `extends` chain.
    pub(crate) fn published(
        &self,
        text: &str,
        list: Vec<Diagnostic>,
        encoding: Encoding,
    ) -> Vec<Published> {
        let related: Vec<Value> = list
            .first()
            .and_then(|d| d.span.as_ref())
            .and_then(|s| {
                self.project
                    .presets
                    .entries()
                    .find(|e| **e.display() == *s.file)
            })
            .map(|entry| {
                let mut child = entry.name().to_owned();
                self.project
                    .ancestors(&Selected::Name(entry.name().to_owned()))
                    .into_iter()
                    .filter_map(|(name, _)| {
                        let parent = self.project.presets.get(&name)?;
                        let message = format!("`{child}` extends `{name}`");
                        child.clone_from(&name);
                        let path = parent.path()?;
                        Some(json!({
                            "location": {
                                "uri": super::uri_of_path(path),
                                "range": range(0, 0, 0, 0),
                            },
                            "message": message,
                        }))
                    })
                    .collect()
            })
            .unwrap_or_default();
        list.into_iter()
            .filter_map(|d| {
                let span = d.span.as_ref()?;
                let line = span.line.saturating_sub(1);
                let line_text = text::line_of(text, line).unwrap_or_default();
                let start = span.column.saturating_sub(1);
                let from = text::column_of_char(line_text, start, encoding);
                let to = text::column_of_char(line_text, start + span.len, encoding);
                // As `validate` shows them: suggested commands repeat the server's flags.
                let mut message = displayed(&d.message).into_owned();
                if let Some(help) = &d.help {
                    message.push_str("\nhelp: ");
                    message.push_str(&displayed(help));
                }
                let mut lsp = json!({
                    "range": range(line, from, line, to.max(from)),
                    "severity": if d.severity == Severity::Error { 1 } else { 2 },
                    "code": d.code(),
                    "source": "agent-presets",
                    "message": message,
                });
                if let Some(page) = CodePage::of(d.kind) {
                    lsp["codeDescription"] = json!({"href": page.url()});
                }
                if !related.is_empty() {
                    lsp["relatedInformation"] = Value::Array(related.clone());
                }
                Some(Published {
                    lsp,
                    fix: d.fix.clone(),
                    kind: d.kind,
                    line,
                })
            })
            .collect()
    }
}

fn parent_of(entry: &PresetEntry) -> Option<String> {
    entry
        .parsed()
        .ok()?
        .file
        .extends
        .as_ref()
        .map(|e| e.value.clone())
}

/// Does the file name the preset schema in its first lines
/// (`# yaml-language-server: $schema=…preset.schema.json`)?
pub(crate) fn has_modeline(text: &str) -> bool {
    text.lines().take(5).any(|l| {
        l.trim_start().starts_with('#')
            && l.contains("yaml-language-server")
            && l.contains("preset.schema.json")
    })
}

pub(crate) fn range(l1: u32, c1: u32, l2: u32, c2: u32) -> Value {
    json!({
        "start": {"line": l1, "character": c1},
        "end": {"line": l2, "character": c2},
    })
}
