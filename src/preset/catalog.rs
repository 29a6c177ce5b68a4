//! [`PresetCatalog`]: which presets exist and where they come from.
//!
//! Sources, in the order they are searched: the built-ins (`standard`, `minimal`, embedded
//! in the binary), the project (`<project>/.agent-presets/*.yaml|*.yml`), extra
//! directories (`--preset-dir`), the user's directory (`<config dir>/agent-presets/presets/`,
//! or `$AGENT_PRESETS_CONFIG_DIR/presets/`), and explicit file paths. A file's stem is its
//! preset name. A custom preset may not take a built-in's name (`builtin-shadow`), and two
//! files may not offer one name (`duplicate-preset`); in both cases the first one found
//! keeps the name.
//!
//! Discovery only lists directories. Each file is read and parsed lazily, at most once,
//! the first time its content is asked for ([`PresetEntry::parsed`]); parse errors stay
//! with the entry, so one broken preset does not hide the others.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use super::source::{
    MAX_PRESET_FILE_BYTES, ParsedPreset, SourceFile, file_too_large, parse_source,
};
use super::spec::is_valid_preset_name;
use crate::bounded::{BoundedReadError, read_bounded};
use crate::diagnostic::{Diagnostic, DiagnosticKind, Diagnostics, Span};
use crate::source_files::{SourceFiles, SourceText};

/// The environment variable that overrides the user configuration directory: user
/// presets are then read from `$AGENT_PRESETS_CONFIG_DIR/presets/`. Set it to the empty
/// string to turn user presets off (tests and CI do).
pub const CONFIG_DIR_ENV: &str = "AGENT_PRESETS_CONFIG_DIR";

/// The directory, under a project root, that holds project presets.
pub const PROJECT_PRESET_DIR: &str = ".agent-presets";

/// The built-in presets: `(name, file text)`.
pub const BUILTIN_PRESETS: &[(&str, &str)] = &[
    ("minimal", include_str!("../../presets/minimal.yaml")),
    ("standard", include_str!("../../presets/standard.yaml")),
];

/// Where a preset comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PresetSource {
    /// Embedded in the binary.
    Builtin,
    /// `<project>/.agent-presets/`.
    Project,
    /// The user's configuration directory.
    User,
    /// A file given explicitly, or found in an extra directory (`--preset-dir`).
    Path,
    /// Text handed to the catalog by the embedding program ([`PresetCatalog::add_text`]).
    Inline,
}

impl PresetSource {
    /// `"builtin"`, `"project"`, `"user"`, `"path"` or `"inline"`.
    pub fn as_str(self) -> &'static str {
        match self {
            PresetSource::Builtin => "builtin",
            PresetSource::Project => "project",
            PresetSource::User => "user",
            PresetSource::Path => "path",
            PresetSource::Inline => "inline",
        }
    }
}

impl std::fmt::Display for PresetSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where to look for presets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CatalogOptions {
    /// The project root; its presets are in `<project_dir>/.agent-presets/`. A missing
    /// directory is fine.
    pub project_dir: Option<PathBuf>,
    /// The directory holding user presets (the `presets` directory itself). A missing
    /// directory is fine.
    pub user_dir: Option<PathBuf>,
    /// Read `user_dir` at all?
    pub include_user: bool,
    /// Extra directories (`--preset-dir`); each must exist.
    pub extra_dirs: Vec<PathBuf>,
    /// Explicit preset files; each must exist.
    pub paths: Vec<PathBuf>,
    /// Paths under this directory are shown relative to it (normally the current
    /// directory), so diagnostics read `.agent-presets/reviewer.yaml`.
    pub display_base: Option<PathBuf>,
}

impl CatalogOptions {
    /// The usual places: the current directory as the project, the user's directory
    /// ([`default_user_preset_dir`]), paths shown relative to the current directory.
    pub fn from_environment() -> Self {
        let cwd = std::env::current_dir().ok();
        CatalogOptions {
            project_dir: cwd.clone(),
            user_dir: default_user_preset_dir(),
            include_user: true,
            extra_dirs: Vec::new(),
            paths: Vec::new(),
            display_base: cwd,
        }
    }

    /// Only `project_dir` (and what is added later): no user directory, no environment.
    /// Paths are shown relative to `project_dir`.
    pub fn isolated(project_dir: impl Into<PathBuf>) -> Self {
        let project_dir = project_dir.into();
        CatalogOptions {
            project_dir: Some(project_dir.clone()),
            user_dir: None,
            include_user: false,
            extra_dirs: Vec::new(),
            paths: Vec::new(),
            display_base: Some(project_dir),
        }
    }

    /// Built-ins only.
    pub fn builtin_only() -> Self {
        CatalogOptions {
            project_dir: None,
            user_dir: None,
            include_user: false,
            extra_dirs: Vec::new(),
            paths: Vec::new(),
            display_base: None,
        }
    }
}

impl Default for CatalogOptions {
    /// Same as [`CatalogOptions::from_environment`].
    fn default() -> Self {
        CatalogOptions::from_environment()
    }
}

/// The user preset directory: `$AGENT_PRESETS_CONFIG_DIR/presets` when that variable is
/// set (none when it is empty), else `<platform config dir>/agent-presets/presets`
/// (`~/.config/agent-presets/presets` on Linux).
pub fn default_user_preset_dir() -> Option<PathBuf> {
    match std::env::var_os(CONFIG_DIR_ENV) {
        Some(dir) if dir.is_empty() => None,
        Some(dir) => Some(PathBuf::from(dir).join("presets")),
        None => dirs::config_dir().map(|d| d.join("agent-presets").join("presets")),
    }
}

#[derive(Clone, Debug)]
enum Content {
    Embedded(&'static str),
    Inline(Arc<[u8]>),
    File(PathBuf),
}

/// One preset on offer: its name, where it comes from, and (once asked) its parse.
#[derive(Clone, Debug)]
pub struct PresetEntry {
    name: String,
    source: PresetSource,
    display: Arc<str>,
    content: Content,
    loaded: OnceLock<Loaded>,
}

/// What reading and parsing an entry gave.
#[derive(Clone, Debug)]
struct Loaded {
    /// The text as read (lossily decoded if it is not valid UTF-8); `None` when nothing
    /// could be read.
    source: Option<SourceText>,
    parsed: Result<ParsedPreset, Diagnostics>,
}

impl Loaded {
    fn failed(d: Diagnostic) -> Loaded {
        Loaded {
            source: None,
            parsed: Err(d.into()),
        }
    }
}

impl PresetEntry {
    fn new(name: String, source: PresetSource, display: Arc<str>, content: Content) -> Self {
        PresetEntry {
            name,
            source,
            display,
            content,
            loaded: OnceLock::new(),
        }
    }

    /// The preset's name (its file stem).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Where it comes from.
    pub fn source(&self) -> PresetSource {
        self.source
    }

    /// The file as shown to users (`<builtin>/standard.yaml`, `.agent-presets/x.yaml`).
    pub fn display(&self) -> &Arc<str> {
        &self.display
    }

    /// The file on disk, for presets that have one.
    pub fn path(&self) -> Option<&Path> {
        match &self.content {
            Content::File(p) => Some(p),
            _ => None,
        }
    }

    /// The parsed file, read and parsed on first use and cached. Errors include read
    /// failures (`io`), every parse error, and a `name` that is invalid (`invalid-name`)
    /// or differs from the file stem (`name-mismatch`).
    pub fn parsed(&self) -> Result<&ParsedPreset, &Diagnostics> {
        self.loaded.get_or_init(|| self.load()).parsed.as_ref()
    }

    /// The file's text as it was read, once it has been (by [`PresetEntry::parsed`]):
    /// what its diagnostics point into, also when it failed to parse (not valid UTF-8:
    /// decoded lossily). `None` before the first read, or when nothing could be read.
    pub fn source_text(&self) -> Option<&SourceText> {
        self.loaded.get()?.source.as_ref()
    }

    /// The preset's `description`, if it parses and has one.
    pub fn description(&self) -> Option<&str> {
        self.parsed().ok()?.file.description.as_deref()
    }

    fn load(&self) -> Loaded {
        match &self.content {
            Content::Embedded(text) => self.parse(text.as_bytes()),
            Content::Inline(bytes) => self.parse(bytes),
            Content::File(path) => match read_file(path, &self.display) {
                Ok(bytes) => self.parse(&bytes),
                Err(d) => Loaded::failed(d),
            },
        }
    }

    /// Decode and parse what was read, check the name, and keep the text.
    fn parse(&self, bytes: &[u8]) -> Loaded {
        let source = match SourceFile::decode(self.display.clone(), bytes) {
            Ok(source) => source,
            Err(d) => {
                return Loaded {
                    source: Some(SourceFile::lossy_text(bytes)),
                    parsed: Err(d.into()),
                };
            }
        };
        let text = source.source_text();
        let parsed = parse_source(source).and_then(|parsed| {
            let problems = check_preset_name(&parsed, &self.name);
            if problems.is_empty() {
                Ok(parsed)
            } else {
                Err(Diagnostics::from_vec(problems))
            }
        });
        Loaded {
            source: Some(text),
            parsed,
        }
    }
}

/// Read a preset file, bounded (see [`read_bounded`]): a file over the size limit is a
/// `limit-exceeded`; anything else that stops the read (missing, a directory, a FIFO or
/// device, permissions) is an `io` error saying what the path is. Both at the file.
fn read_file(path: &Path, display: &Arc<str>) -> Result<Vec<u8>, Diagnostic> {
    read_preset_bytes(path, display).map_err(|d| d.at(Span::new(display.clone(), 1, 1)))
}

/// [`read_file`] without a location on `io` errors (for paths given explicitly, where
/// there may be no file to point at).
fn read_preset_bytes(path: &Path, display: &Arc<str>) -> Result<Vec<u8>, Diagnostic> {
    read_bounded(path, MAX_PRESET_FILE_BYTES as u64).map_err(|e| match e {
        BoundedReadError::TooLarge { size, .. } => file_too_large(display.clone(), size),
        BoundedReadError::Directory => Diagnostic::new(
            DiagnosticKind::Io,
            format!("`{display}` is a directory, not a preset file"),
        )
        .help("pass a directory of presets with `--preset-dir`"),
        other => Diagnostic::new(
            DiagnosticKind::Io,
            format!("cannot read preset file `{display}`: {other}"),
        ),
    })
}

/// Check a parsed preset's identity against the name it is offered under (its file
/// stem): both must match the preset name pattern (`invalid-name`) and be equal
/// (`name-mismatch`, at the `name` value).
pub fn check_preset_name(parsed: &ParsedPreset, stem: &str) -> Vec<Diagnostic> {
    const PATTERN_HELP: &str =
        "preset names use `a`-`z`, `0`-`9` and `-`, and start with a letter or digit";
    let mut out = Vec::new();
    let name = parsed.name();
    let name_span = parsed.span_of(&parsed.file.name);
    let stem_ok = is_valid_preset_name(stem);
    let name_ok = is_valid_preset_name(name);
    if !stem_ok {
        out.push(
            Diagnostic::new(
                DiagnosticKind::InvalidName,
                format!("the file name `{stem}` is not a valid preset name"),
            )
            .at(parsed.source.start())
            .help(format!("{PATTERN_HELP}; rename the file")),
        );
    }
    if !name_ok {
        out.push(
            Diagnostic::new(
                DiagnosticKind::InvalidName,
                format!("`{name}` is not a valid preset name"),
            )
            .at(name_span.clone())
            .help(PATTERN_HELP),
        );
    }
    if name != stem {
        let help = match (stem_ok, name_ok) {
            (true, true) => format!("rename the file to `{name}.yaml`, or write `name: {stem}`"),
            (true, false) => format!("write `name: {stem}`"),
            (false, true) => format!("rename the file to `{name}.yaml`"),
            (false, false) => "a preset's `name` must equal its file name".to_owned(),
        };
        out.push(
            Diagnostic::new(
                DiagnosticKind::NameMismatch,
                format!("the preset is named `{name}` but its file name says `{stem}`"),
            )
            .at(name_span)
            .help(help),
        );
    }
    out
}

/// Every preset on offer, by name.
#[derive(Clone, Debug)]
pub struct PresetCatalog {
    entries: BTreeMap<String, PresetEntry>,
    display_base: Option<PathBuf>,
    /// Texts of files that were read but not offered (a built-in's name taken): their
    /// diagnostics point into them.
    refused: SourceFiles,
}

impl Default for PresetCatalog {
    fn default() -> Self {
        PresetCatalog::builtin()
    }
}

impl PresetCatalog {
    /// A catalog holding only the built-in presets.
    pub fn builtin() -> Self {
        let entries = BUILTIN_PRESETS
            .iter()
            .map(|(name, text)| {
                let entry = PresetEntry::new(
                    (*name).to_owned(),
                    PresetSource::Builtin,
                    format!("<builtin>/{name}.yaml").into(),
                    Content::Embedded(text),
                );
                ((*name).to_owned(), entry)
            })
            .collect();
        PresetCatalog {
            entries,
            display_base: None,
            refused: SourceFiles::new(),
        }
    }

    /// Find every preset `options` points at. Problems that stop a file from being
    /// offered (unreadable directories, `builtin-shadow`, `duplicate-preset`) are
    /// returned; problems inside a file wait for [`PresetEntry::parsed`].
    pub fn discover(options: &CatalogOptions) -> (PresetCatalog, Vec<Diagnostic>) {
        let mut catalog = PresetCatalog::builtin();
        catalog.display_base = options.display_base.clone();
        let mut problems = Vec::new();
        if let Some(project) = &options.project_dir {
            let dir = project.join(PROJECT_PRESET_DIR);
            catalog.scan_dir(&dir, PresetSource::Project, false, &mut problems);
        }
        for dir in &options.extra_dirs {
            catalog.scan_dir(dir, PresetSource::Path, true, &mut problems);
        }
        if options.include_user
            && let Some(dir) = &options.user_dir
        {
            catalog.scan_dir(dir, PresetSource::User, false, &mut problems);
        }
        for path in &options.paths {
            if let Err(d) = catalog.add_path(path) {
                problems.push(d);
            }
        }
        (catalog, problems)
    }

    /// Offer the preset file at `path` (for `validate PATH`); its stem is its name.
    /// Adding a file that is already in the catalog is a no-op. Returns the name.
    pub fn add_path(&mut self, path: &Path) -> Result<String, Diagnostic> {
        let display = self.display_path(path);
        // The same file offered again (discovered in a directory, or another spelling
        // of its path) is not read a second time.
        if let Ok(name) = stem_of(path, &display)
            && let Some(existing) = self.entries.get(&name).and_then(PresetEntry::path)
            && same_file(existing, path)
        {
            return Ok(name);
        }
        // Read now, on one descriptor: what the path is (a FIFO, a directory, a giant)
        // is decided by the open, not by an earlier look-up another process can race.
        // A file that is merely too large is offered, invalid, like any other.
        let bytes = match read_preset_bytes(path, &display) {
            Err(d) if d.kind != DiagnosticKind::LimitExceeded => return Err(d),
            read => read,
        };
        let name = stem_of(path, &display)?;
        let entry = PresetEntry::new(
            name.clone(),
            PresetSource::Path,
            display,
            Content::File(path.to_path_buf()),
        );
        let loaded = match bytes {
            Ok(bytes) => entry.parse(&bytes),
            Err(d) => Loaded::failed(d),
        };
        let _ = entry.loaded.set(loaded);
        self.insert(entry)?;
        Ok(name)
    }

    /// Offer a preset from text (for hosts and tests). `display` is how its file is
    /// shown in diagnostics.
    pub fn add_text(
        &mut self,
        name: &str,
        display: impl Into<Arc<str>>,
        text: impl Into<String>,
    ) -> Result<(), Diagnostic> {
        let text: String = text.into();
        self.insert(PresetEntry::new(
            name.to_owned(),
            PresetSource::Inline,
            display.into(),
            Content::Inline(text.into_bytes().into()),
        ))
    }

    /// Every entry, sorted by name.
    pub fn entries(&self) -> impl Iterator<Item = &PresetEntry> {
        self.entries.values()
    }

    /// Every name, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.keys().map(String::as_str)
    }

    /// The entry named `name`.
    pub fn get(&self, name: &str) -> Option<&PresetEntry> {
        self.entries.get(name)
    }

    /// Is a preset named `name` on offer?
    pub fn contains(&self, name: &str) -> bool {
        self.entries.contains_key(name)
    }

    /// The parse of the preset named `name` (see [`PresetEntry::parsed`]); `None` when no
    /// preset has that name. Each file is parsed at most once.
    pub fn parsed(&self, name: &str) -> Option<Result<&ParsedPreset, &Diagnostics>> {
        self.entries.get(name).map(PresetEntry::parsed)
    }

    /// How many presets.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// No presets at all? (Never true for a catalog with the built-ins.)
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The text of every file read so far, by its displayed name: what the diagnostics
    /// of this catalog's presets point into, for printing snippets without reading any
    /// file again. Files not read yet (never asked for) are not in it.
    pub fn source_files(&self) -> SourceFiles {
        let mut files = self.refused.clone();
        for entry in self.entries.values() {
            if let Some(text) = entry.source_text() {
                files.insert(entry.display.clone(), text.clone());
            }
        }
        files
    }

    fn insert(&mut self, entry: PresetEntry) -> Result<(), Diagnostic> {
        let Some(existing) = self.entries.get(&entry.name) else {
            self.entries.insert(entry.name.clone(), entry);
            return Ok(());
        };
        if existing.source == PresetSource::Builtin {
            let refusal = builtin_shadow(&entry);
            return Err(self.refuse(&entry, refusal));
        }
        if let (Some(a), Some(b)) = (existing.path(), entry.path())
            && same_file(a, b)
        {
            return Ok(());
        }
        let (first, second) = (existing.display.clone(), entry.display.clone());
        let refusal = Diagnostic::new(
            DiagnosticKind::DuplicatePreset,
            format!(
                "two files offer the preset `{}`: `{first}` and `{second}`",
                entry.name
            ),
        )
        .at(Span::new(second.clone(), 1, 1))
        .help(format!(
            "preset names must be unique across preset directories; rename or remove one \
             (`{first}` is the one used)"
        ));
        Err(self.refuse(&entry, refusal))
    }

    /// `refusal`, after keeping the refused entry's text (if it was read) for the
    /// snippets of its diagnostics.
    fn refuse(&mut self, entry: &PresetEntry, refusal: Diagnostic) -> Diagnostic {
        if let Some(text) = entry.source_text() {
            self.refused.insert(entry.display.clone(), text.clone());
        }
        refusal
    }

    /// Read `dir` and offer its `*.yaml` / `*.yml` files, in file-name order.
    fn scan_dir(
        &mut self,
        dir: &Path,
        source: PresetSource,
        must_exist: bool,
        problems: &mut Vec<Diagnostic>,
    ) {
        let shown = self.display_path(dir);
        let read = match fs::read_dir(dir) {
            Ok(read) => read,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && !must_exist => return,
            Err(e) => {
                problems.push(Diagnostic::new(
                    DiagnosticKind::Io,
                    format!("cannot read preset directory `{shown}`: {e}"),
                ));
                return;
            }
        };
        let mut files = Vec::new();
        for item in read {
            match item {
                // What an entry is gets decided when it is read, on the opened
                // descriptor; only directories are left out here. (The listing's own
                // file type does not follow links: a link is offered and its target
                // judged by the read.)
                Ok(item) if item.file_type().is_ok_and(|t| t.is_dir()) => {}
                Ok(item) => files.push(item.path()),
                Err(e) => problems.push(Diagnostic::new(
                    DiagnosticKind::Io,
                    format!("cannot read preset directory `{shown}`: {e}"),
                )),
            }
        }
        files.sort();
        for path in files {
            if !has_preset_extension(&path) {
                continue;
            }
            let display = self.display_path(&path);
            let name = match stem_of(&path, &display) {
                Ok(name) => name,
                Err(d) => {
                    problems.push(d);
                    continue;
                }
            };
            let entry = PresetEntry::new(name, source, display, Content::File(path));
            if let Err(d) = self.insert(entry) {
                problems.push(d);
            }
        }
    }

    fn display_path(&self, path: &Path) -> Arc<str> {
        let shown = self
            .display_base
            .as_deref()
            .and_then(|base| path.strip_prefix(base).ok())
            .filter(|rel| !rel.as_os_str().is_empty())
            .unwrap_or(path);
        shown.to_string_lossy().into()
    }
}

fn builtin_shadow(entry: &PresetEntry) -> Diagnostic {
    let name = &entry.name;
    // Point at the file's `name` when it parses; else at its first line.
    let span = entry
        .parsed()
        .ok()
        .map(|p| p.span_of(&p.file.name))
        .unwrap_or_else(|| Span::new(entry.display.clone(), 1, 1));
    Diagnostic::new(
        DiagnosticKind::BuiltinShadow,
        format!(
            "`{name}` is a built-in preset; `{}` cannot take its name",
            entry.display
        ),
    )
    .at(span)
    .help(format!(
        "rename the file and its `name` (for example to `my-{name}`) and write \
         `extends: {name}` to build on the built-in"
    ))
}

fn has_preset_extension(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("yaml") || e.eq_ignore_ascii_case("yml"))
}

fn stem_of(path: &Path, display: &Arc<str>) -> Result<String, Diagnostic> {
    path.file_stem()
        .and_then(|s| s.to_str())
        .map(str::to_owned)
        .ok_or_else(|| {
            Diagnostic::new(
                DiagnosticKind::InvalidName,
                format!("the file name of `{display}` is not a valid preset name"),
            )
            .help("preset names use `a`-`z`, `0`-`9` and `-`; rename the file")
        })
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (fs::canonicalize(a), fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins_parse_and_match_their_names() {
        let catalog = PresetCatalog::builtin();
        assert_eq!(catalog.names().collect::<Vec<_>>(), ["minimal", "standard"]);
        for entry in catalog.entries() {
            let parsed = entry.parsed().unwrap_or_else(|d| panic!("{d}"));
            assert_eq!(parsed.name(), entry.name());
            assert_eq!(entry.source(), PresetSource::Builtin);
            assert!(entry.display().starts_with("<builtin>/"));
            assert!(entry.description().is_some());
        }
    }

    #[test]
    fn add_text_and_mismatch() {
        let mut catalog = PresetCatalog::builtin();
        catalog
            .add_text("reviewer", "reviewer.yaml", "version: 1\nname: reviewr\n")
            .unwrap();
        let err = catalog.parsed("reviewer").unwrap().unwrap_err();
        let d = &err.as_slice()[0];
        assert_eq!(d.kind, DiagnosticKind::NameMismatch);
        assert_eq!(
            d.span,
            Some(Span::new("reviewer.yaml".into(), 2, 7).with_len(7))
        );
        assert_eq!(
            d.help.as_deref(),
            Some("rename the file to `reviewr.yaml`, or write `name: reviewer`")
        );
        let err = catalog.add_text("standard", "standard.yaml", "version: 1\nname: standard\n");
        assert_eq!(err.unwrap_err().kind, DiagnosticKind::BuiltinShadow);
        assert!(catalog.parsed("nope").is_none());
    }
}
