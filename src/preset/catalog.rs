//! [`PresetCatalog`]: which presets exist and where they come from.
//!
//! Sources, highest precedence first: the project (`<project>/.agent-presets/*.yaml|*.yml`),
//! each extra directory (`--preset-dir`) in the order given, the user's directory
//! (`<config dir>/agent-presets/presets/`, or `$AGENT_PRESETS_CONFIG_DIR/presets/`), and
//! the built-ins (`standard`, `minimal`, embedded in the binary). A file's stem is its
//! preset name. A higher source wins a name silently over a lower one (the winner's
//! [`PresetEntry::shadows`] lists the files it hides), as editors and agent tools do with
//! project and user settings; two files offering one name within one source are a
//! `duplicate-preset` (the first one found keeps the name, and the name is ambiguous).
//! The built-ins cannot be shadowed: a custom file with a built-in's name is refused
//! (`builtin-shadow`), and the built-in stays.
//!
//! Files named explicitly (a path, or text read from standard input) are *targets*
//! ([`PresetCatalog::add_file`], [`PresetCatalog::add_stdin`]): validated, shown and
//! rendered as themselves, never offered by name. A file's own directory is searched for
//! its `extends` before the sources above.
//!
//! Discovery only lists directories. Each file is read and parsed lazily, at most once,
//! the first time its content is asked for ([`PresetEntry::parsed`]); parse errors stay
//! with the entry, so one broken preset does not hide the others.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use super::locale_pack::LocalePacks;
use super::salvage::{Salvaged, in_file_order};
use super::source::{
    MAX_PRESET_FILE_BYTES, ParsedPreset, SourceFile, file_too_large, parse_salvaging,
};
use super::spec::is_valid_preset_name;
use super::text_file::load_text_files;
use super::validate::FileLayer;
use crate::bounded::{BoundedReadError, IdentifiedFile, read_bounded_identified};
use crate::diagnostic::{Diagnostic, DiagnosticKind, Diagnostics, Span};
use crate::provider::lint::LintMemo;
use crate::source_files::{SourceFiles, SourceText};

/// The environment variable that overrides the user configuration directory: user
/// presets are then read from `$AGENT_PRESETS_CONFIG_DIR/presets/`. Set it to the empty
/// string to turn user presets off (tests and CI do).
pub const CONFIG_DIR_ENV: &str = "AGENT_PRESETS_CONFIG_DIR";

/// The environment variable that leaves the user directory out (like `--no-user`): any
/// value but empty, `0`, `false` or `no`.
pub const NO_USER_ENV: &str = "AGENT_PRESETS_NO_USER";

/// Does [`NO_USER_ENV`] say to leave the user directory out?
pub fn user_presets_disabled() -> bool {
    env_flag(NO_USER_ENV)
}

/// Is the environment variable `name` set to anything but empty, `0`, `false` or `no`?
pub(crate) fn env_flag(name: &str) -> bool {
    std::env::var_os(name).is_some_and(|v| {
        let v = v.to_string_lossy();
        let v = v.trim();
        !(v.is_empty()
            || v == "0"
            || v.eq_ignore_ascii_case("false")
            || v.eq_ignore_ascii_case("no"))
    })
}

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
    /// Text read from standard input ([`PresetCatalog::add_stdin`]).
    Stdin,
}

impl PresetSource {
    /// `"builtin"`, `"project"`, `"user"`, `"path"`, `"inline"` or `"stdin"`.
    pub fn as_str(self) -> &'static str {
        match self {
            PresetSource::Builtin => "builtin",
            PresetSource::Project => "project",
            PresetSource::User => "user",
            PresetSource::Path => "path",
            PresetSource::Inline => "inline",
            PresetSource::Stdin => "stdin",
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
    /// Read `user_dir` at all? (`--no-user` and [`NO_USER_ENV`] say no.)
    pub include_user: bool,
    /// Extra directories (`--preset-dir`); each must exist.
    pub extra_dirs: Vec<PathBuf>,
    /// Explicit preset files, added as targets ([`PresetCatalog::add_file`]); each must
    /// exist.
    pub paths: Vec<PathBuf>,
    /// Paths under this directory are shown relative to it (normally the current
    /// directory), so diagnostics read `.agent-presets/reviewer.yaml`.
    pub display_base: Option<PathBuf>,
}

impl CatalogOptions {
    /// The usual places: the current directory as the project, the user's directory
    /// ([`default_user_preset_dir`]) unless [`NO_USER_ENV`] says otherwise, paths shown
    /// relative to the current directory.
    pub fn from_environment() -> Self {
        let cwd = std::env::current_dir().ok();
        CatalogOptions {
            project_dir: cwd.clone(),
            user_dir: default_user_preset_dir(),
            include_user: !user_presets_disabled(),
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
    default_config_dir().map(|d| d.join("presets"))
}

/// The user configuration directory: `$AGENT_PRESETS_CONFIG_DIR` when that variable is
/// set (none when it is empty), else `<platform config dir>/agent-presets`
/// (`~/.config/agent-presets` on Linux). It holds the user presets (`presets/`) and the
/// trust store (`trusted.json`).
pub fn default_config_dir() -> Option<PathBuf> {
    match std::env::var_os(CONFIG_DIR_ENV) {
        Some(dir) if dir.is_empty() => None,
        Some(dir) => Some(PathBuf::from(dir)),
        None => dirs::config_dir().map(|d| d.join("agent-presets")),
    }
}

#[derive(Clone, Debug)]
enum Content {
    Embedded(&'static str),
    Inline(Arc<[u8]>),
    File(PathBuf),
    /// A file whose text an editor holds (unsaved): read from here, not from disk; its
    /// `textFile`s are still found beside the path.
    Overlay(PathBuf, Arc<[u8]>),
}

/// Precedence of the project's directory (lower wins).
const RANK_PROJECT: u32 = 10;
/// Precedence of the first `--preset-dir` (each next one is one lower).
const RANK_FIRST_DIR: u32 = 11;
/// Precedence of the user's directory.
const RANK_USER: u32 = u32::MAX - 1;
/// Texts a host adds rank above every directory.
const RANK_INLINE: u32 = 0;

/// A file a higher source hides: it offers the same name and is not used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShadowedFile {
    /// The source it is in.
    pub source: PresetSource,
    /// The file as shown to users.
    pub display: Arc<str>,
}

/// One preset on offer: its name, where it comes from, and (once asked) its parse.
#[derive(Clone, Debug)]
pub struct PresetEntry {
    name: String,
    source: PresetSource,
    /// Precedence among sources: lower wins (the project is above the user directory).
    rank: u32,
    display: Arc<str>,
    content: Content,
    loaded: OnceLock<Loaded>,
    /// What the file contributes to every chain it is in, once derived.
    layer: OnceLock<Arc<FileLayer>>,
    shadows: Vec<ShadowedFile>,
    /// The name is taken from the file's `name:` (standard input has no file name).
    named_by_content: bool,
    /// Set when a batch knows that presets it validates extend this one
    /// ([`PresetCatalog::mark_extended`]): its templates are then compiled once, into the
    /// cache its children use, also when it is validated itself.
    extended: OnceLock<()>,
}

/// What reading and parsing an entry gave.
#[derive(Clone, Debug)]
struct Loaded {
    /// The text as read (lossily decoded if it is not valid UTF-8); `None` when nothing
    /// could be read.
    source: Option<SourceText>,
    /// The `textFile`s read for it, by displayed name.
    text_files: Vec<(Arc<str>, SourceText)>,
    /// The `name` the file declares, when it parses (also if a later check fails).
    declared_name: Option<String>,
    parsed: Result<ParsedPreset, Diagnostics>,
    /// A file that failed for local shape problems only, pruned of them: for `validate`
    /// to find the file's other problems in one pass, never for use.
    salvaged: Option<Box<Salvaged>>,
    /// The file the bytes came from, as the opened descriptor names it
    /// ([`read_bounded_identified`]); `None` for text without a file, or when the file
    /// could not be told for sure.
    resolved: Option<PathBuf>,
}

impl Loaded {
    fn failed(d: Diagnostic) -> Loaded {
        Loaded {
            resolved: None,
            source: None,
            text_files: Vec::new(),
            declared_name: None,
            parsed: Err(d.into()),
            salvaged: None,
        }
    }
}

impl PresetEntry {
    fn new(name: String, source: PresetSource, display: Arc<str>, content: Content) -> Self {
        PresetEntry {
            name,
            source,
            rank: RANK_INLINE,
            display,
            content,
            loaded: OnceLock::new(),
            layer: OnceLock::new(),
            shadows: Vec::new(),
            named_by_content: false,
            extended: OnceLock::new(),
        }
    }

    /// Does a preset of the batch being validated extend this one (see
    /// [`PresetCatalog::mark_extended`])? `false` when nobody said.
    pub(crate) fn is_extended(&self) -> bool {
        self.extended.get().is_some()
    }

    fn ranked(mut self, rank: u32) -> Self {
        self.rank = rank;
        self
    }

    /// The files of lower sources this one hides (same name), highest first: empty when
    /// it hides nothing.
    pub fn shadows(&self) -> &[ShadowedFile] {
        &self.shadows
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
            Content::File(p) | Content::Overlay(p, _) => Some(p),
            _ => None,
        }
    }

    /// The file its bytes were read from: absolute, links resolved, decided on the
    /// descriptor the bytes came through (never by looking the name up again), so a
    /// decision on it (whose the file is, under which key trust is recorded) is about the
    /// bytes in use. `None` before the file is read, for presets without a file, and when
    /// the file could not be told for sure (it was replaced while being read).
    pub fn resolved_path(&self) -> Option<&Path> {
        self.loaded.get()?.resolved.as_deref()
    }

    /// The parsed file, read and parsed on first use and cached. Errors include read
    /// failures (`io`), every parse error, and a `name` that is invalid (`invalid-name`)
    /// or differs from the file stem (`name-mismatch`).
    pub fn parsed(&self) -> Result<&ParsedPreset, &Diagnostics> {
        self.loaded.get_or_init(|| self.load()).parsed.as_ref()
    }

    /// What the file contributes to every chain it is in (its layer and the problems of
    /// the file itself), derived on first use and kept; `None` unless it parses.
    pub(crate) fn file_layer(&self) -> Option<Arc<FileLayer>> {
        let parsed = self.parsed().ok()?;
        Some(Arc::clone(self.layer.get_or_init(|| {
            Arc::new(FileLayer::of(parsed).extended(self.is_extended()))
        })))
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
            Content::Inline(bytes) | Content::Overlay(_, bytes) => self.parse(bytes),
            Content::File(path) => match read_file(path, &self.display) {
                Ok(IdentifiedFile { bytes, resolved }) => Loaded {
                    resolved,
                    ..self.parse(&bytes)
                },
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
                    resolved: None,
                    source: Some(SourceFile::lossy_text(bytes)),
                    text_files: Vec::new(),
                    declared_name: None,
                    parsed: Err(d.into()),
                    salvaged: None,
                };
            }
        };
        let mut text_files = Vec::new();
        let text = source.source_text();
        let mut declared_name = None;
        let mut salvaged = None;
        let parsed = match parse_salvaging(source) {
            Ok(parsed) => Ok(parsed),
            Err(unparsed) => {
                let mut problems = unparsed.problems;
                salvaged = unparsed
                    .salvaged
                    .and_then(|s| self.salvage(s, &mut problems, &mut text_files));
                Err(problems)
            }
        };
        let parsed = parsed.and_then(|parsed| {
            declared_name = Some(parsed.name().to_owned());
            // Text from standard input has no file name: its `name` only has to be one.
            let stem = if self.named_by_content {
                parsed.name().to_owned()
            } else {
                self.name.clone()
            };
            let problems = check_preset_name(&parsed, &stem);
            if problems.is_empty() {
                Ok(parsed)
            } else {
                Err(Diagnostics::from_vec(problems))
            }
        });
        let parsed = parsed.and_then(|mut parsed| {
            load_text_files(&mut parsed, self.path(), &mut text_files)?;
            Ok(parsed)
        });
        Loaded {
            resolved: None,
            source: Some(text),
            text_files,
            declared_name,
            parsed,
            salvaged,
        }
    }

    /// The pruned file of one that failed for local shape problems, checked as a parsed
    /// file is (its name, its `textFile`s); `None` when those checks fail: their problems
    /// are added to `problems`, and nothing more is looked for.
    fn salvage(
        &self,
        mut salvaged: Box<Salvaged>,
        problems: &mut Diagnostics,
        text_files: &mut Vec<(Arc<str>, SourceText)>,
    ) -> Option<Box<Salvaged>> {
        let stem = if self.named_by_content {
            salvaged.preset.name().to_owned()
        } else {
            self.name.clone()
        };
        let mut more = check_preset_name(&salvaged.preset, &stem);
        if more.is_empty()
            && let Err(ds) = load_text_files(&mut salvaged.preset, self.path(), text_files)
        {
            more = ds.into_vec();
        }
        if more.is_empty() {
            return Some(salvaged);
        }
        // Problems of the file as it is (not of the pruned part): all reported.
        let mut all = problems.as_slice().to_vec();
        all.append(&mut more);
        *problems = Diagnostics::from_vec(in_file_order(&self.display, all));
        None
    }

    /// The pruned file of one that failed for local shape problems only (see
    /// `super::salvage`): for finding its other problems, never for use.
    pub(crate) fn salvaged(&self) -> Option<&Salvaged> {
        self.loaded.get_or_init(|| self.load()).salvaged.as_deref()
    }
}

/// Read a preset file, bounded (see [`read_bounded_identified`]): a file over the size limit is a
/// `limit-exceeded`; anything else that stops the read (missing, a directory, a FIFO or
/// device, permissions) is an `io` error saying what the path is. Both at the file.
fn read_file(path: &Path, display: &Arc<str>) -> Result<IdentifiedFile, Diagnostic> {
    read_preset_bytes(path, display).map_err(|d| d.at(Span::new(display.clone(), 1, 1)))
}

/// [`read_file`] without a location on `io` errors (for paths given explicitly, where
/// there may be no file to point at).
fn read_preset_bytes(path: &Path, display: &Arc<str>) -> Result<IdentifiedFile, Diagnostic> {
    read_bounded_identified(path, MAX_PRESET_FILE_BYTES as u64).map_err(|e| match e {
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

/// Every preset on offer, by name, and the presets named by their file.
#[derive(Clone, Debug)]
pub struct PresetCatalog {
    entries: BTreeMap<String, PresetEntry>,
    display_base: Option<PathBuf>,
    /// Texts of files that were read but not offered (a built-in's name taken): their
    /// diagnostics point into them.
    refused: SourceFiles,
    /// Presets named by their file or read from standard input.
    targets: Vec<Target>,
    /// Files found next to a target for its `extends` (shared by targets of one
    /// directory).
    siblings: Vec<PresetEntry>,
    /// The provider lint's results, shared by the presets validated from this catalog.
    lint_memo: LintMemo,
    /// The locale packs on offer (built-in, and `locales/` of every preset directory).
    packs: LocalePacks,
    /// The locale every preset is validated with, whatever its `locale` says
    /// (`--locale`).
    locale: Option<String>,
}

/// A preset named by its file (or read from standard input), see
/// [`PresetCatalog::add_file`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TargetId(usize);

#[derive(Clone, Debug)]
enum Target {
    /// The file is the one on offer under its name.
    Offered(String),
    /// A file of its own, with the files of its directory its `extends` chain reaches
    /// (name → index into `siblings`).
    Own {
        entry: Box<PresetEntry>,
        siblings: BTreeMap<String, usize>,
    },
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
                )
                .ranked(u32::MAX);
                ((*name).to_owned(), entry)
            })
            .collect();
        PresetCatalog {
            entries,
            display_base: None,
            refused: SourceFiles::new(),
            targets: Vec::new(),
            siblings: Vec::new(),
            lint_memo: LintMemo::default(),
            packs: LocalePacks::builtin(),
            locale: None,
        }
    }

    /// The locale packs on offer.
    pub fn packs(&self) -> &LocalePacks {
        &self.packs
    }

    /// Validate every preset with `locale`'s pack, whatever its `locale` key says
    /// (`render --locale`, `run --locale`); `None`: each preset's own.
    pub fn set_locale(&mut self, locale: Option<String>) {
        self.locale = locale;
    }

    /// What `validate` says about the locale packs found in preset directories: each
    /// pack's problems (unknown ids, dropped tokens, duplicate ids, …) and a warning for
    /// a pack whose locale no preset on offer names.
    pub fn pack_diagnostics(&self) -> Vec<Diagnostic> {
        if self.packs.found().next().is_none() && self.packs.problems().is_empty() {
            return Vec::new();
        }
        let targets = self.targets.iter().filter_map(|t| match t {
            Target::Own { entry, .. } => Some(&**entry),
            Target::Offered(_) => None,
        });
        let used: std::collections::BTreeSet<String> = self
            .entries
            .values()
            .chain(targets)
            .chain(&self.siblings)
            .filter_map(|e| {
                e.parsed()
                    .ok()?
                    .file
                    .locale
                    .as_ref()
                    .map(|l| l.value.clone())
            })
            .chain(self.locale.clone())
            .collect();
        super::texts::check_packs(&self.packs, &used)
    }

    /// The locale set with [`set_locale`](Self::set_locale).
    pub fn locale(&self) -> Option<&str> {
        self.locale.as_deref()
    }

    /// Find every preset `options` points at. Problems that stop a file from being
    /// offered (unreadable directories, `builtin-shadow`, `duplicate-preset`) are
    /// returned; problems inside a file wait for [`PresetEntry::parsed`].
    pub fn discover(options: &CatalogOptions) -> (PresetCatalog, Vec<Diagnostic>) {
        let mut catalog = PresetCatalog::builtin();
        catalog.display_base = options.display_base.clone();
        let mut problems = Vec::new();
        // Highest precedence first: a later source only adds what is not taken.
        if let Some(project) = &options.project_dir {
            let dir = project.join(PROJECT_PRESET_DIR);
            catalog.scan_dir(
                &dir,
                PresetSource::Project,
                RANK_PROJECT,
                false,
                &mut problems,
            );
            catalog.scan_packs(&dir, PresetSource::Project);
        }
        for (i, dir) in options.extra_dirs.iter().enumerate() {
            let rank = RANK_FIRST_DIR.saturating_add(u32::try_from(i).unwrap_or(u32::MAX));
            catalog.scan_dir(
                dir,
                PresetSource::Path,
                rank.min(RANK_USER - 1),
                true,
                &mut problems,
            );
            catalog.scan_packs(dir, PresetSource::Path);
        }
        if options.include_user
            && let Some(dir) = &options.user_dir
        {
            catalog.scan_dir(dir, PresetSource::User, RANK_USER, false, &mut problems);
            catalog.scan_packs(dir, PresetSource::User);
        }
        for path in &options.paths {
            if let Err(d) = catalog.add_file(path) {
                problems.push(d);
            }
        }
        (catalog, problems)
    }

    /// Add the preset file at `path` as a target: it is validated, shown and rendered as
    /// itself (its stem is its name), without being offered by name — another file of
    /// that name on offer is not disturbed. Its own directory is searched for its
    /// `extends` (and theirs) before the catalog. The same file as the one on offer
    /// under its name is that entry. A file that cannot be read at all (missing, a
    /// directory, a FIFO) or that takes a built-in's name is refused.
    pub fn add_file(&mut self, path: &Path) -> Result<TargetId, Diagnostic> {
        let display = self.display_path(path);
        if let Ok(name) = stem_of(path, &display)
            && let Some(existing) = self.entries.get(&name).and_then(PresetEntry::path)
            && same_file(existing, path)
        {
            return Ok(self.push_target(Target::Offered(name)));
        }
        // Read now, on one descriptor: what the path is (a FIFO, a directory, a giant)
        // is decided by the open, not by an earlier look-up another process can race.
        // A file that is merely too large is a target, invalid, like any other.
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
            Ok(IdentifiedFile { bytes, resolved }) => Loaded {
                resolved,
                ..entry.parse(&bytes)
            },
            Err(d) => Loaded::failed(d),
        };
        let _ = entry.loaded.set(loaded);
        self.own_target(entry)
    }

    /// Read the preset file at `path` from `text` instead of the disk (an editor's open
    /// buffer), or from the disk again (`None`, the buffer closed): every entry of that
    /// file forgets what it read and reads it anew when next asked. `true` when the
    /// catalog has an entry of that file.
    pub fn overlay(&mut self, path: &Path, text: Option<Arc<[u8]>>) -> bool {
        let mut found = false;
        let targets = self.targets.iter_mut().filter_map(|t| match t {
            Target::Own { entry, .. } => Some(&mut **entry),
            Target::Offered(_) => None,
        });
        for entry in self
            .entries
            .values_mut()
            .chain(targets)
            .chain(self.siblings.iter_mut())
        {
            let Some(own) = entry.path() else {
                continue;
            };
            if own != path && !same_file(own, path) {
                continue;
            }
            let own = own.to_path_buf();
            entry.content = match &text {
                Some(text) => Content::Overlay(own, Arc::clone(text)),
                None => Content::File(own),
            };
            entry.loaded = OnceLock::new();
            entry.layer = OnceLock::new();
            found = true;
        }
        found
    }

    /// [`PresetCatalog::add_file`] for a file whose text an editor holds: `bytes` are
    /// its text; its `extends` is looked up beside `path` first, like a file's.
    pub fn add_file_text(&mut self, path: &Path, bytes: &[u8]) -> Result<TargetId, Diagnostic> {
        let display = self.display_path(path);
        let name = stem_of(path, &display)?;
        let entry = PresetEntry::new(
            name,
            PresetSource::Path,
            display,
            Content::Overlay(path.to_path_buf(), Arc::from(bytes)),
        );
        let loaded = entry.parse(bytes);
        let _ = entry.loaded.set(loaded);
        self.own_target(entry)
    }

    /// Forget every target and the files found beside them (a host that validates one
    /// file after another, an editor, adds them anew each time).
    pub fn clear_targets(&mut self) {
        self.targets.clear();
        self.siblings.clear();
    }

    /// Add a preset read from standard input as a target (see [`PresetCatalog::add_file`]),
    /// shown as `<stdin>`: its name is its `name:`. It has no directory, so its `extends`
    /// is looked up in the catalog (and `textFile` cannot be used).
    pub fn add_stdin(&mut self, bytes: &[u8]) -> Result<TargetId, Diagnostic> {
        let mut entry = PresetEntry::new(
            String::new(),
            PresetSource::Stdin,
            STDIN_DISPLAY.into(),
            Content::Inline(Arc::from(bytes)),
        );
        entry.named_by_content = true;
        let loaded = entry.parse(bytes);
        entry.name = loaded
            .declared_name
            .clone()
            .unwrap_or_else(|| "-".to_owned());
        let _ = entry.loaded.set(loaded);
        self.own_target(entry)
    }

    fn own_target(&mut self, entry: PresetEntry) -> Result<TargetId, Diagnostic> {
        if self
            .entries
            .get(&entry.name)
            .is_some_and(|e| e.source == PresetSource::Builtin)
        {
            let refusal = builtin_shadow(&entry);
            return Err(self.refuse(&entry, refusal));
        }
        let siblings = self.find_siblings(&entry);
        Ok(self.push_target(Target::Own {
            entry: Box::new(entry),
            siblings,
        }))
    }

    fn push_target(&mut self, target: Target) -> TargetId {
        self.targets.push(target);
        TargetId(self.targets.len() - 1)
    }

    /// Follow `entry`'s `extends` through the files of its own directory: every parent
    /// found there (`<dir>/<name>.yaml` or `.yml`), up to the first one that is not, is
    /// the parent used. A built-in's name is always the built-in; a file that is the one
    /// on offer under its name is simply that entry.
    fn find_siblings(&mut self, entry: &PresetEntry) -> BTreeMap<String, usize> {
        let mut found = BTreeMap::new();
        let Some(dir) = entry.path().and_then(Path::parent).map(Path::to_path_buf) else {
            return found;
        };
        let mut current = entry.parsed().ok().and_then(|p| p.file.extends.clone());
        while let Some(parent) = current.take() {
            let name = parent.value;
            if found.contains_key(&name)
                || found.len() >= super::resolve::MAX_EXTENDS_DEPTH
                || !is_valid_preset_name(&name)
                || self
                    .entries
                    .get(&name)
                    .is_some_and(|e| e.source == PresetSource::Builtin)
            {
                break;
            }
            let candidates: Vec<PathBuf> = ["yaml", "yml"]
                .iter()
                .map(|ext| dir.join(format!("{name}.{ext}")))
                .filter(|p| fs::symlink_metadata(p).is_ok())
                .collect();
            let Some(first) = candidates.first() else {
                break;
            };
            if self
                .entries
                .get(&name)
                .and_then(PresetEntry::path)
                .is_some_and(|p| same_file(p, first))
            {
                // The one on offer: the catalog finds it (and what it extends).
                break;
            }
            let index = match self
                .siblings
                .iter()
                .position(|s| s.path().is_some_and(|p| same_file(p, first)))
            {
                Some(index) => index,
                None => {
                    let display = self.display_path(first);
                    let sibling = PresetEntry::new(
                        name.clone(),
                        PresetSource::Path,
                        display.clone(),
                        Content::File(first.clone()),
                    );
                    if let Some(second) = candidates.get(1) {
                        // Two files of one directory offer the name.
                        let d = duplicate_preset(&name, &display, &self.display_path(second));
                        let _ = sibling.loaded.set(Loaded::failed(d));
                    }
                    self.siblings.push(sibling);
                    self.siblings.len() - 1
                }
            };
            found.insert(name, index);
            current = self.siblings[index]
                .parsed()
                .ok()
                .and_then(|p| p.file.extends.clone());
        }
        found
    }

    /// The preset a target names.
    pub fn target(&self, id: TargetId) -> Option<&PresetEntry> {
        match self.targets.get(id.0)? {
            Target::Offered(name) => self.entries.get(name),
            Target::Own { entry, .. } => Some(entry),
        }
    }

    /// The preset `name` as the chain of target `id` sees it: a file of the target's
    /// own directory first, else the one on offer.
    pub fn lookup_for_target(&self, id: TargetId, name: &str) -> Option<&PresetEntry> {
        if let Some(Target::Own { siblings, .. }) = self.targets.get(id.0)
            && let Some(&index) = siblings.get(name)
        {
            return self.siblings.get(index);
        }
        self.entries.get(name)
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
        self.insert(
            PresetEntry::new(
                name.to_owned(),
                PresetSource::Inline,
                display.into(),
                Content::Inline(text.into_bytes().into()),
            )
            .ranked(RANK_INLINE),
        )
    }

    /// The entry `preset` was read from: the entry on offer, the target or the file found
    /// next to a target whose parse it is (the same text, not merely an equal one). `None`
    /// for a preset this catalog did not read.
    pub fn entry_of(&self, preset: &ParsedPreset) -> Option<&PresetEntry> {
        let targets = self.targets.iter().filter_map(|t| match t {
            Target::Own { entry, .. } => Some(&**entry),
            Target::Offered(_) => None,
        });
        self.entries
            .values()
            .chain(targets)
            .chain(&self.siblings)
            .find(|e| {
                e.loaded
                    .get()
                    .and_then(|l| l.parsed.as_ref().ok())
                    .is_some_and(|p| Arc::ptr_eq(&p.source.text, &preset.source.text))
            })
    }

    /// The provider lint's results so far (see [`LintMemo`]).
    pub(crate) fn lint_memo(&self) -> &LintMemo {
        &self.lint_memo
    }

    /// Every entry, sorted by name.
    pub fn entries(&self) -> impl Iterator<Item = &PresetEntry> {
        self.entries.values()
    }

    /// Every name, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.keys().map(String::as_str)
    }

    /// Say that presets about to be validated extend the preset `name`: validating it
    /// then compiles its templates into the cache they share (see
    /// [`PresetEntry::is_extended`]). A hint for speed: what validation finds is the same.
    pub(crate) fn mark_extended(&self, name: &str) {
        if let Some(entry) = self.entries.get(name) {
            let _ = entry.extended.set(());
        }
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
        let targets = self.targets.iter().filter_map(|t| match t {
            Target::Own { entry, .. } => Some(&**entry),
            Target::Offered(_) => None,
        });
        for entry in self.entries.values().chain(targets).chain(&self.siblings) {
            if let Some(text) = entry.source_text() {
                files.insert(entry.display.clone(), text.clone());
            }
            for (display, text) in entry.loaded.get().iter().flat_map(|l| &l.text_files) {
                files.insert(display.clone(), text.clone());
            }
        }
        files.extend(self.packs.source_files());
        files
    }

    /// Offer `entry` under its name. A built-in's name is refused; a name taken by a
    /// higher source shadows the new file (noted, not an error); a name taken within the
    /// same source is a `duplicate-preset` (the first keeps it).
    fn insert(&mut self, entry: PresetEntry) -> Result<(), Diagnostic> {
        let Some(existing) = self.entries.get_mut(&entry.name) else {
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
        if existing.rank == entry.rank {
            let refusal = duplicate_preset(&entry.name, &existing.display, &entry.display);
            return Err(self.refuse(&entry, refusal));
        }
        if existing.rank < entry.rank {
            let hidden = ShadowedFile {
                source: entry.source,
                display: entry.display.clone(),
            };
            if !existing.shadows.contains(&hidden) {
                existing.shadows.push(hidden);
            }
            return Ok(());
        }
        // A higher source added after a lower one (a host's text): it takes the name.
        let old = std::mem::replace(existing, entry);
        existing.shadows.push(ShadowedFile {
            source: old.source,
            display: old.display,
        });
        existing.shadows.extend(old.shadows);
        Ok(())
    }

    /// `refusal`, after keeping the refused entry's text (if it was read) for the
    /// snippets of its diagnostics.
    fn refuse(&mut self, entry: &PresetEntry, refusal: Diagnostic) -> Diagnostic {
        if let Some(text) = entry.source_text() {
            self.refused.insert(entry.display.clone(), text.clone());
        }
        refusal
    }

    /// Read `dir` and offer its `*.yaml` / `*.yml` files, in file-name order, at
    /// precedence `rank`.
    fn scan_dir(
        &mut self,
        dir: &Path,
        source: PresetSource,
        rank: u32,
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
        // One directory's entries: their names decide the order (the same order as
        // comparing whole paths, without splitting each path into components).
        files.sort_unstable_by(|a, b| a.file_name().cmp(&b.file_name()));
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
            let entry = PresetEntry::new(name, source, display, Content::File(path)).ranked(rank);
            if let Err(d) = self.insert(entry) {
                problems.push(d);
            }
        }
    }

    /// Add the locale packs of `<dir>/locales/`, below those of the sources scanned
    /// before.
    fn scan_packs(&mut self, dir: &Path, source: PresetSource) {
        let mut packs = std::mem::take(&mut self.packs);
        packs.scan(dir, source, &|p| self.display_path(p));
        self.packs = packs;
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

/// How a preset read from standard input is shown.
pub const STDIN_DISPLAY: &str = "<stdin>";

/// Two files of one source offer `name`; `first` keeps it.
fn duplicate_preset(name: &str, first: &Arc<str>, second: &Arc<str>) -> Diagnostic {
    Diagnostic::new(
        DiagnosticKind::DuplicatePreset,
        format!("two files offer the preset `{name}`: `{first}` and `{second}`"),
    )
    .at(Span::new(second.clone(), 1, 1))
    .help(format!(
        "a name may be offered once per preset directory; rename or remove one \
         (`{first}` is the one used)"
    ))
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
