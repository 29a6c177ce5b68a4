//! Prompt-drift locks: `lock` writes `presets.lock`, and `validate --locked` fails when a
//! preset's cacheable prefix no longer matches it, with a unified diff naming what
//! changed.
//!
//! Each preset's entry is its prefix rendered with pinned representative values (the
//! built-in variables' examples, the preset's own model and provider, `<name>` for
//! required variables), so the same presets give the same lock on every machine: its
//! fingerprint, token counts, and the prefix itself — every section (name, order, tokens,
//! text as a list of lines, so the lock diffs well in review) and every tool (name,
//! tokens, the definition sent). Runtime contexts are not in the prefix, so editing one
//! never changes the lock.
//!
//! The file is typed data ([`LockFile`], one [`PresetLock`] per preset): reading it checks
//! every field (a lock with a field this build does not write is refused, not carried
//! along), and the drift diagnostics compare entries field by field.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use similar::TextDiff;

use super::{Project, config};
use crate::diagnostic::{Diagnostic, DiagnosticKind, Span};
use crate::mcp::ServerListing;
use crate::preset::spec::Spanned;
use crate::preset::{ParsedPreset, ProvenanceError, ValidPreset};
use crate::prompt::{
    BUILTIN_VARIABLES, MODEL_VARIABLE, PROVIDER_VARIABLE, Values, is_derived_variable,
};
use crate::report::{order_json, pretty};
use crate::tokens;
use crate::tools::external::ListingMap;
use crate::tools::{ServerListings, ToolCatalog, WireTool};

use super::server_identity::{LockedFile, ServerIdentity};
use super::servers::{ToolChange, compare_listings};

/// The lock file's name, in the project directory.
pub const LOCK_FILE: &str = "presets.lock";

/// The format version of the lock file.
const LOCK_VERSION: u64 = 1;

/// Why a lock cannot be read or an entry not written.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// The file exists but cannot be read.
    #[error("cannot read `{}`: {error}", path.display())]
    Read {
        /// The lock file.
        path: PathBuf,
        /// Why.
        error: crate::bounded::BoundedReadError,
    },
    /// The file is not a lock this build wrote.
    #[error("`{}` is not a lock file agent-presets wrote: {what}", path.display())]
    Corrupt {
        /// The lock file.
        path: PathBuf,
        /// What is wrong with it.
        what: String,
    },
    /// The preset's prefix could not be rendered with the pinned values.
    #[error("cannot lock `{preset}`: {what}")]
    Render {
        /// The preset.
        preset: String,
        /// What failed.
        what: String,
    },
}

impl LockError {
    /// How to fix it.
    pub fn help(&self) -> Option<&'static str> {
        match self {
            LockError::Corrupt { .. } => Some("run `agent-presets lock` to write it again"),
            LockError::Read { .. } | LockError::Render { .. } => None,
        }
    }
}

/// `presets.lock`: one entry per preset, by name.
#[derive(Debug, Default)]
pub struct LockFile {
    presets: BTreeMap<String, PresetLock>,
}

/// The lock file as it is written: its format version, the token encoding, the pinned
/// runtime values every entry is rendered with, and the entries.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct LockText {
    version: u64,
    encoding: String,
    values: Map<String, Value>,
    presets: BTreeMap<String, PresetLock>,
}

/// One preset's entry: its cacheable prefix rendered with the pinned values.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(into = "PresetLockText", from = "PresetLockText")]
pub struct PresetLock {
    /// The provider (`null` when the preset names none and no example applies).
    pub provider: Option<String>,
    /// The model.
    pub model: Option<String>,
    /// What else the preset puts in every request besides the prefix: its model
    /// parameters (`temperature`, `topP`, …, as the preset writes them) and the sha256 of
    /// its output schema (`output`). Not part of the fingerprint (they do not change the
    /// cacheable prefix) but part of the entry, so `validate --locked` notices a change.
    /// Not written when empty.
    pub request: BTreeMap<String, Value>,
    /// sha256 of the cacheable prefix, `sha256:<hex>`.
    pub fingerprint: String,
    /// Token counts of the prefix.
    pub tokens: PrefixTokens,
    /// The system prompt's sections, in order.
    pub sections: Vec<LockedSection>,
    /// The visible tools, in wire order.
    pub tools: Vec<LockedTool>,
    /// What each MCP server the preset declares listed when `lock --connect` last
    /// reached it (schemas normalised), by the server's name in the preset. Validation,
    /// `render` and `lock` without `--connect` take the servers' tools from here; no
    /// server is started. Not written when the preset declares no server.
    pub servers: BTreeMap<String, ServerListing>,
    /// What ran for each server of [`servers`](Self::servers) when it was listed: its
    /// argv or URL, its program and scripts with their digests. Written beside its
    /// listing, in the same object of the file (`command`, `program`, … then
    /// `serverName`, `tools`).
    pub identities: BTreeMap<String, ServerIdentity>,
    /// Each hook the preset runs (`hooks:` along the chain), by `PRESET.<event>[i]`, as
    /// declared (`run`, `match`, `timeout`, `onError`), and each success check
    /// (`checks:`), by `PRESET.checks[i]` (`run`, `retries`, `timeout`): a changed or
    /// added one is drift.
    /// Not written when the preset has none.
    pub hooks: BTreeMap<String, Value>,
    /// The script each hook of [`hooks`](Self::hooks) runs (the first argument of its
    /// `run` that names a file beneath the project, as written) and the sha256 of its
    /// bytes when it was locked ([`with_hook_scripts`]): a script changed since is
    /// refused by `validate --locked` and `run` ([`hook_changes`]). Written as
    /// `hookScripts`; not when no hook names a file.
    pub hook_scripts: BTreeMap<String, LockedFile>,
    /// The permission rules in force (`permissions:` along the chain, merged), by list
    /// (`deny`, `ask`, `allow`), in evaluation order as written: a changed rule set is
    /// drift. Empty lists are not written; nor is this when the preset has no rules.
    pub permissions: BTreeMap<String, Vec<String>>,
}

/// [`PresetLock`] as the file holds it: each server's identity and listing in one object.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct PresetLockText {
    provider: Option<String>,
    model: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    request: BTreeMap<String, Value>,
    fingerprint: String,
    tokens: PrefixTokens,
    sections: Vec<LockedSection>,
    tools: Vec<LockedTool>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    servers: BTreeMap<String, LockedServerText>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    hooks: BTreeMap<String, Value>,
    #[serde(
        default,
        rename = "hookScripts",
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    hook_scripts: BTreeMap<String, LockedFile>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    permissions: BTreeMap<String, Vec<String>>,
}

/// One server of a lock entry as the file holds it: what ran, then what it listed.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct LockedServerText {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    command: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    program: Option<LockedFile>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    scripts: Vec<LockedFile>,
    server_name: String,
    server_version: String,
    protocol_version: String,
    tools: Vec<crate::mcp::ListedTool>,
}

impl From<PresetLock> for PresetLockText {
    fn from(lock: PresetLock) -> Self {
        let mut identities = lock.identities;
        let servers = lock
            .servers
            .into_iter()
            .map(|(name, listing)| {
                let id = identities.remove(&name).unwrap_or_default();
                let text = LockedServerText {
                    command: id.command,
                    url: id.url,
                    program: id.program,
                    scripts: id.scripts,
                    server_name: listing.server_name,
                    server_version: listing.server_version,
                    protocol_version: listing.protocol_version,
                    tools: listing.tools,
                };
                (name, text)
            })
            .collect();
        PresetLockText {
            provider: lock.provider,
            model: lock.model,
            request: lock.request,
            fingerprint: lock.fingerprint,
            tokens: lock.tokens,
            sections: lock.sections,
            tools: lock.tools,
            servers,
            hooks: lock.hooks,
            hook_scripts: lock.hook_scripts,
            permissions: lock.permissions,
        }
    }
}

impl From<PresetLockText> for PresetLock {
    fn from(text: PresetLockText) -> Self {
        let mut servers = BTreeMap::new();
        let mut identities = BTreeMap::new();
        for (name, s) in text.servers {
            let id = ServerIdentity {
                command: s.command,
                url: s.url,
                program: s.program,
                scripts: s.scripts,
            };
            if id != ServerIdentity::default() {
                identities.insert(name.clone(), id);
            }
            servers.insert(
                name,
                ServerListing {
                    server_name: s.server_name,
                    server_version: s.server_version,
                    protocol_version: s.protocol_version,
                    tools: s.tools,
                },
            );
        }
        PresetLock {
            provider: text.provider,
            model: text.model,
            request: text.request,
            fingerprint: text.fingerprint,
            tokens: text.tokens,
            sections: text.sections,
            tools: text.tools,
            servers,
            identities,
            hooks: text.hooks,
            hook_scripts: text.hook_scripts,
            permissions: text.permissions,
        }
    }
}

impl PresetLock {
    /// Is the prefix and the pinned listings the same as `other`'s (the identities and
    /// the hooks' scripts aside: [`server_changes`] and [`hook_changes`] compare those)?
    pub fn same_prefix(&self, other: &PresetLock) -> bool {
        self.provider == other.provider
            && self.model == other.model
            && self.request == other.request
            && self.fingerprint == other.fingerprint
            && self.tokens == other.tokens
            && self.sections == other.sections
            && self.tools == other.tools
            && self.servers == other.servers
            && self.hooks == other.hooks
            && self.permissions == other.permissions
    }
}

/// The `server-changed` diagnostics of `preset` against its `locked` entry: each server
/// it declares that the lock pins, compared with what it would start now from `cwd`
/// ([`server_identity`](super::server_identity)), `vars` being the agent's environment.
/// `only` limits it to those servers (`run`: the servers it starts).
pub fn server_changes(
    preset: &ValidPreset,
    locked: &PresetLock,
    vars: &[(std::ffi::OsString, std::ffi::OsString)],
    cwd: &Path,
    only: Option<&[String]>,
) -> Vec<Diagnostic> {
    use super::server_identity::{
        changed_diagnostic, declared_span, identity_changes, of_declared,
    };
    let mut out = Vec::new();
    for declared in preset.mcp_servers() {
        let name = declared.name.value.as_str();
        if !locked.servers.contains_key(name) || only.is_some_and(|o| !o.iter().any(|s| s == name))
        {
            continue;
        }
        let now = of_declared(&declared, vars, cwd);
        let changes = identity_changes(locked.identities.get(name), &now);
        if !changes.is_empty() {
            out.push(changed_diagnostic(
                preset.name(),
                name,
                Some(declared_span(&declared)),
                &changes,
            ));
        }
    }
    out
}

/// The script a hook's `run` names: its first argument (the program included) that is
/// a relative path to a file beneath `workspace` (`[python3, .agent-presets/hooks/guard.py]`:
/// `guard.py`; `[./hooks/x.sh]`: `x.sh`), as written and as found, links followed.
/// `None` when no argument names one (`[sh, -c, '…']`, `[cargo, fmt]`).
fn hook_script(run: &[String], workspace: &Path) -> Option<(String, PathBuf)> {
    let root = workspace.canonicalize().ok()?;
    run.iter().find_map(|arg| {
        if arg.is_empty() || arg.contains("{{") || arg.contains("{%") {
            return None;
        }
        let path = Path::new(arg);
        if path.is_absolute() {
            return None;
        }
        let found = workspace.join(path).canonicalize().ok()?;
        (found.is_file() && found.starts_with(&root)).then(|| (arg.clone(), found))
    })
}

/// Every program the chain runs around the model besides its tools: each hook (by
/// `PRESET.<event>[i]`) and each success check (by `PRESET.checks[i]`), root first, with
/// the index of its preset in the chain, its declaration as the lock pins it, and its
/// `run`.
fn declared_programs<'a>(chain: &[&'a ParsedPreset]) -> Vec<(String, usize, Value, &'a Argv)> {
    let mut out: Vec<_> = crate::preset::hooks::declared(chain)
        .into_iter()
        .map(|(key, at, spec)| {
            let json = serde_json::to_value(spec).unwrap_or_default();
            (key, at, json, &spec.run)
        })
        .collect();
    out.extend(
        crate::preset::checks::declared(chain)
            .into_iter()
            .map(|(key, at, spec)| {
                let json = serde_json::to_value(spec).unwrap_or_default();
                (key, at, json, &spec.run)
            }),
    );
    out
}

/// A hook's or check's `run`, as written.
type Argv = Spanned<Vec<Spanned<String>>>;

/// "hook" or "check": what the lock key `key` names.
fn program_kind(key: &str) -> &'static str {
    if key.contains(".checks[") {
        "check"
    } else {
        "hook"
    }
}

/// The script of each hook `preset` runs with its digest, read beneath `workspace` (the
/// project): what [`PresetLock::hook_scripts`] pins. `lock` writes an entry with them.
pub fn with_hook_scripts(
    mut entry: PresetLock,
    preset: &ValidPreset,
    workspace: &Path,
) -> PresetLock {
    let chain: Vec<&ParsedPreset> = preset.chain().iter().collect();
    entry.hook_scripts = declared_programs(&chain)
        .into_iter()
        .filter_map(|(key, _, _, run)| {
            let run: Vec<String> = run.value.iter().map(|a| a.value.clone()).collect();
            let (written, found) = hook_script(&run, workspace)?;
            let sha256 = super::server_identity::file_digest(&found)?;
            Some((
                key,
                LockedFile {
                    path: written,
                    sha256,
                },
            ))
        })
        .collect();
    entry
}

/// The findings (`prefix-drift`, located at the hook's `run`) on each hook of `preset`
/// whose script, read beneath `workspace`, is not the one `locked` pinned: changed since
/// locking, gone, or not pinned at all (the lock predates script digests, or the file
/// was not there). A hook whose declaration changed is left to [`drift`], which names
/// that change; a hook the lock does not know is too.
pub fn hook_changes(
    preset: &ValidPreset,
    locked: &PresetLock,
    workspace: &Path,
) -> Vec<Diagnostic> {
    let chain: Vec<&ParsedPreset> = preset.chain().iter().collect();
    let name = preset.name();
    let mut out = Vec::new();
    for (key, at, declared, run_spec) in declared_programs(&chain) {
        if locked.hooks.get(&key) != Some(&declared) {
            continue;
        }
        let run: Vec<String> = run_spec.value.iter().map(|a| a.value.clone()).collect();
        let now = hook_script(&run, workspace).map(|(written, found)| {
            let digest = super::server_identity::file_digest(&found);
            (written, digest)
        });
        let what = match (locked.hook_scripts.get(&key), now) {
            (Some(old), Some((path, Some(new)))) if old.path == path && old.sha256 == new => {
                continue;
            }
            (None, None) => continue,
            (Some(old), Some((path, Some(new)))) if old.path == path => format!(
                "script `{path}` changed since locking ({} → {})",
                short_digest(&old.sha256),
                short_digest(&new)
            ),
            (Some(old), Some((path, _))) if old.path == path => {
                format!("script `{path}` cannot be read")
            }
            (Some(old), Some((path, _))) => {
                format!("script `{}` was locked, but it now runs `{path}`", old.path)
            }
            (Some(old), None) => format!("script `{}` is gone since locking", old.path),
            (None, Some((path, _))) => format!(
                "script `{path}` is not pinned by {LOCK_FILE} (it was written by an older agent-presets, or the file was not there)"
            ),
        };
        let span = chain.get(at).map(|p| p.span_of(run_spec));
        let kind = program_kind(&key);
        let when = if kind == "check" {
            "after every final answer"
        } else {
            "on every matching event"
        };
        out.push(
            Diagnostic::new(
                DiagnosticKind::PrefixDrift,
                format!("{kind} `{key}` of `{name}`: {what}"),
            )
            .at(span)
            .help(format!(
                "a {kind} runs its script {when}, so {LOCK_FILE} pins it; review the change, and if it is intended run `agent-presets lock {name}` and commit {LOCK_FILE}"
            )),
        );
    }
    out
}

/// `sha256:` and the first 12 hex digits.
fn short_digest(digest: &str) -> &str {
    digest.get(..19).unwrap_or(digest)
}

/// Token counts of a locked prefix ([`tokens::ENCODING`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PrefixTokens {
    /// The system prompt.
    pub system: u64,
    /// The tool definitions.
    pub tools: u64,
    /// Both.
    pub prefix: u64,
}

/// A section of the system prompt, its text as lines (so the lock diffs well in review).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockedSection {
    /// The section's name (`tool:<name>` for a tool's guidance).
    pub name: String,
    /// Its order (written as an integer when it is one).
    #[serde(serialize_with = "serialize_order")]
    pub order: f64,
    /// Its tokens.
    pub tokens: u64,
    /// Its text, line by line.
    pub text: Vec<String>,
}

/// A tool as the model sees it, and its tokens.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockedTool {
    /// The wire name.
    pub name: String,
    /// Its tokens.
    pub tokens: u64,
    /// The definition sent.
    pub definition: LockedDefinition,
}

/// A tool definition as sent: exactly `name`, `description`, `parameters`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockedDefinition {
    /// The wire name.
    pub name: String,
    /// The description.
    pub description: String,
    /// The parameter schema.
    pub parameters: Value,
}

impl From<&WireTool> for LockedDefinition {
    fn from(tool: &WireTool) -> Self {
        LockedDefinition {
            name: tool.name.clone(),
            description: tool.description.clone(),
            parameters: (*tool.parameters).clone(),
        }
    }
}

fn serialize_order<S: serde::Serializer>(order: &f64, s: S) -> Result<S::Ok, S::Error> {
    order_json(*order).serialize(s)
}

impl LockedSection {
    /// The text as the prompt has it (the lines joined, a final newline).
    pub fn text(&self) -> String {
        let mut text = self.text.join("\n");
        text.push('\n');
        text
    }
}

impl LockFile {
    /// Where the lock lives for this project.
    pub fn path(project: &Project) -> PathBuf {
        project.lock_path.clone()
    }

    /// Read the lock; `Ok(None)` when there is none.
    pub fn load(path: &Path) -> Result<Option<LockFile>, LockError> {
        let bytes = match crate::bounded::read_bounded(path, MAX_LOCK_BYTES) {
            Ok(bytes) => bytes,
            Err(crate::bounded::BoundedReadError::NotFound) => return Ok(None),
            Err(error) => {
                return Err(LockError::Read {
                    path: path.to_path_buf(),
                    error,
                });
            }
        };
        LockFile::parse(&bytes)
            .map(Some)
            .map_err(|what| LockError::Corrupt {
                path: path.to_path_buf(),
                what,
            })
    }

    /// A lock from its text; what is wrong with it otherwise.
    fn parse(bytes: &[u8]) -> Result<LockFile, String> {
        let value: Value = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
        // The version first: a lock of another format says so rather than which field
        // this build misses.
        if value["version"] != LOCK_VERSION {
            return Err(format!(
                "its `version` is {}, this build writes {LOCK_VERSION}",
                value["version"]
            ));
        }
        let text: LockText = serde_json::from_value(value).map_err(|e| e.to_string())?;
        Ok(LockFile {
            presets: text.presets,
        })
    }

    /// The file's text: pretty JSON, presets by name, a final newline.
    pub fn to_text(&self) -> String {
        let values = pinned_runtime_values()
            .into_iter()
            .map(|(k, v)| (k.to_owned(), Value::from(v)))
            .collect();
        let text = LockText {
            version: LOCK_VERSION,
            encoding: tokens::ENCODING.to_owned(),
            values,
            presets: self.presets.clone(),
        };
        // Serialising plain data cannot fail.
        pretty(&serde_json::to_value(&text).unwrap_or_default())
    }

    /// The locked entry of `name`.
    pub fn get(&self, name: &str) -> Option<&PresetLock> {
        self.presets.get(name)
    }

    /// Lock `name` with `entry` (from [`entry`]), replacing what was locked.
    pub fn insert(&mut self, name: String, entry: PresetLock) {
        self.presets.insert(name, entry);
    }

    /// Locked preset names.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.presets.keys().map(String::as_str)
    }

    /// Every pinned server listing, by preset and server: what a [`ToolCatalog`] takes
    /// MCP tool definitions from ([`ToolCatalog::with_listings`]).
    pub fn listings(&self) -> ListingMap {
        let mut map = ListingMap::new();
        for (preset, entry) in &self.presets {
            for (server, listing) in &entry.servers {
                map.insert(preset.clone(), server.clone(), listing.clone());
            }
            for (server, id) in &entry.identities {
                if let Ok(json) = serde_json::to_vec(id) {
                    map.insert_identity(preset.clone(), server.clone(), json);
                }
            }
        }
        map
    }
}

impl ServerListings for LockFile {
    fn listing(&self, preset: &str, server: &str) -> Option<&ServerListing> {
        self.presets.get(preset)?.servers.get(server)
    }

    fn identity_json(&self, preset: &str, server: &str) -> Option<Vec<u8>> {
        let id = self.presets.get(preset)?.identities.get(server)?;
        serde_json::to_vec(id).ok()
    }
}

/// `tools` taking the MCP tools of presets from the lock at `lock_path` (the project's
/// [`LockFile::path`]), when it pins any server: how `validate`, `render` and `run`
/// know a server's tools without starting it. A lock that cannot be read pins
/// nothing here (presets that declare servers are then reported as not locked, and
/// `validate --locked` and `lock` say what is wrong with the file).
pub fn with_lock_listings(tools: ToolCatalog, lock_path: &Path) -> ToolCatalog {
    let Ok(bytes) = crate::bounded::read_bounded(lock_path, MAX_LOCK_BYTES) else {
        return tools;
    };
    // Most locks pin no server: skip parsing them.
    if memchr::memmem::find(&bytes, b"\"servers\"").is_none() {
        return tools;
    }
    match LockFile::parse(&bytes) {
        Ok(lock) => tools.with_listings(Arc::new(lock.listings())),
        Err(_) => tools,
    }
}

/// A lock is JSON text a few KiB per preset; anything past this is not one.
const MAX_LOCK_BYTES: u64 = 64 * 1024 * 1024;

/// The runtime facts every entry is rendered with (the built-in variables' examples).
fn pinned_runtime_values() -> Vec<(&'static str, &'static str)> {
    BUILTIN_VARIABLES
        .iter()
        .filter(|b| !is_derived_variable(b.name))
        .filter(|b| b.name != MODEL_VARIABLE && b.name != PROVIDER_VARIABLE)
        .map(|b| (b.name, b.example))
        .collect()
}

/// The values a preset is locked with: the pinned runtime facts, the preset's model and
/// provider (the examples when it names none), and `<name>` for each required variable.
fn lock_values(preset: &ValidPreset) -> Values {
    let mut values = Values::new();
    for b in BUILTIN_VARIABLES
        .iter()
        .filter(|b| !is_derived_variable(b.name))
    {
        values.set(b.name, b.example);
    }
    for (name, value) in preset.default_values().iter() {
        values.set(name, value.clone());
    }
    for name in preset.assembler().required_variables() {
        values.set(name, format!("<{name}>"));
    }
    values
}

/// What the preset adds to every request besides the prefix (see [`PresetLock::request`]).
fn request_entry(preset: &ValidPreset) -> BTreeMap<String, Value> {
    let mut out = BTreeMap::new();
    if let Some(spec) = preset.model()
        && let Ok(Value::Object(params)) =
            serde_json::to_value(crate::endpoint::ModelSettings::from_spec(spec).params)
    {
        out.extend(params);
    }
    out
}

/// The hooks of a valid preset as the lock pins them (see [`PresetLock::hooks`]).
fn hooks_entry(preset: &ValidPreset) -> BTreeMap<String, Value> {
    let chain: Vec<&crate::preset::ParsedPreset> = preset.chain().iter().collect();
    declared_programs(&chain)
        .into_iter()
        .map(|(key, _, json, _)| (key, json))
        .collect()
}

/// The permission rules of a valid preset as the lock pins them (see
/// [`PresetLock::permissions`]).
fn permissions_entry(preset: &ValidPreset) -> BTreeMap<String, Vec<String>> {
    let chain: Vec<&crate::preset::ParsedPreset> = preset.chain().iter().collect();
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (list, _, text) in crate::preset::permissions::rules_in_force(&chain) {
        out.entry(list.as_str().to_owned())
            .or_default()
            .push(text.value.clone());
    }
    out
}

/// The lock entry of a valid preset, with the listings of its MCP servers it was
/// validated with (see [`entry_with_listings`]).
pub fn entry(preset: &ValidPreset) -> Result<PresetLock, LockError> {
    entry_with_listings(preset, preset.tool_catalog().listings())
}

/// The prefix part of the lock entry of a valid preset (no server listings).
fn prefix_entry(preset: &ValidPreset) -> Result<PresetLock, LockError> {
    let values = lock_values(preset);
    let failed = |what: String| LockError::Render {
        preset: preset.name().to_owned(),
        what,
    };
    let assembly = preset
        .assembler()
        .assemble(&values)
        .map_err(|ds| failed(ds.to_string()))?;
    let provenance = preset.provenance(&values).map_err(|e| match e {
        ProvenanceError::Render(ds) => failed(ds.to_string()),
        ProvenanceError::Tokenizer(e) => failed(e.to_string()),
    })?;
    let text_value = |name: &str| values.get(name).and_then(|v| v.as_str()).map(str::to_owned);
    let sections = provenance
        .sections
        .iter()
        .map(|s| LockedSection {
            name: s.piece.name.to_string(),
            order: s.piece.order,
            tokens: s.size.tokens as u64,
            text: s.piece.text.lines().map(str::to_owned).collect(),
        })
        .collect();
    let tools = assembly
        .tools
        .iter()
        .zip(&provenance.tools)
        .map(|(tool, p)| LockedTool {
            name: tool.name.clone(),
            tokens: p.tokens as u64,
            definition: LockedDefinition::from(tool),
        })
        .collect();
    Ok(PresetLock {
        provider: text_value(PROVIDER_VARIABLE),
        model: text_value(MODEL_VARIABLE),
        request: request_entry(preset),
        fingerprint: assembly.fingerprint.to_string(),
        tokens: PrefixTokens {
            system: provenance.system.tokens as u64,
            tools: provenance.tool_tokens as u64,
            prefix: (provenance.system.tokens + provenance.tool_tokens) as u64,
        },
        sections,
        tools,
        servers: BTreeMap::new(),
        identities: BTreeMap::new(),
        hooks: hooks_entry(preset),
        hook_scripts: BTreeMap::new(),
        permissions: permissions_entry(preset),
    })
}

/// The lock entry of a valid preset with the pinned listing of each MCP server it
/// declares, from `listings` (the lock the preset was validated with, or what
/// `lock --connect` just listed).
pub fn entry_with_listings(
    preset: &ValidPreset,
    listings: &dyn ServerListings,
) -> Result<PresetLock, LockError> {
    let mut locked = prefix_entry(preset)?;
    for server in preset.mcp_servers() {
        let name = server.name.value.as_str();
        if let Some(listing) = listings.listing(preset.name(), name) {
            locked.servers.insert(name.to_owned(), listing.clone());
        }
    }
    Ok(locked)
}

/// A preset whose cacheable prefix differs from the lock: the whole story for people
/// and programs, one short finding per change for pull-request annotations.
#[derive(Debug)]
pub struct Drift {
    /// The preset.
    pub preset: String,
    /// Every change and its full unified diff (the human and JSON outputs).
    pub diagnostic: Diagnostic,
    /// One diagnostic per changed section, tool or model, each with a short, bounded
    /// diff and pinned on the line of the preset's own file that declares or inherits
    /// it (GitHub annotations and SARIF results); for a preset built into the binary,
    /// one without a location, since no file of the repository holds it.
    pub changes: Vec<Diagnostic>,
    /// The files the changes may come from (the layer that declares each changed item;
    /// the repository files of the chain for an item declared nowhere any more; the
    /// built-in tools): drifts that share one come from one edit, and are re-locked
    /// together.
    causes: BTreeSet<Arc<str>>,
    /// For each of `changes`, the change as the file declaring it made it, when that
    /// file is in the repository ([`collapse`] groups drifts by it).
    shared: Vec<Option<SharedChange>>,
}

/// Most diff lines an annotation shows; the rest are counted.
const MAX_DIFF_LINES: usize = 8;
/// Most characters of one diff line an annotation shows.
const MAX_DIFF_LINE_CHARS: usize = 160;
/// Most items of a tool's change summary an annotation shows.
const MAX_TOOL_CHANGES: usize = 6;
/// Most preset names one re-lock command lists; past this, `agent-presets lock` (all),
/// when that drops no entry the run could not see ([`Relock::all_seen`]).
const MAX_RELOCK_NAMES: usize = 20;

/// How a re-lock command may be written.
#[derive(Clone, Copy, Debug, Default)]
pub struct Relock {
    /// Does this run see every preset the lock knows (a project config names every
    /// preset directory, or no entry is of a preset not found)? Only then may a long
    /// list of names become a bare `agent-presets lock`, which drops the entries of the
    /// presets it does not see; otherwise the command names every preset.
    pub all_seen: bool,
}

impl Relock {
    /// The re-lock command for `names`.
    fn command(self, names: &[&str]) -> String {
        if names.len() > MAX_RELOCK_NAMES && self.all_seen {
            "agent-presets lock".to_owned()
        } else {
            format!("agent-presets lock {}", names.join(" "))
        }
    }
}

/// What changed, for [`origin`].
#[derive(Clone, Copy)]
enum Item<'a> {
    /// A section written in a preset (declared, replaced or removed along the chain).
    Section(&'a str),
    /// A tool (or its guidance section) that became visible or hidden: the `tools`
    /// restriction along the chain decides.
    Listed(&'a str),
    /// A tool's definition or guidance, which comes with the tool registry.
    Definition(&'a str),
    /// The model or provider.
    Model,
    /// A hook, by its key (`PRESET.<event>[i]`).
    Hook(&'a str),
    /// The permission rules (`permissions:` along the chain).
    Permissions,
    /// The prefix as a whole (order, fingerprint, token counts).
    Whole,
}

/// Where a change is reported and where it comes from.
struct Origin {
    /// A line of the preset's own file: where it declares the item, or its `extends`.
    span: Option<Span>,
    /// ", inherited from …", when the preset does not declare the item itself.
    from: String,
    /// The files (or the tool registry) the change may come from.
    causes: Vec<Arc<str>>,
    /// The preset of the repository that declares the item, and where: the line a change
    /// shared by many presets is reported at once ([`collapse`]).
    at: Option<(String, Span)>,
}

const BUILTIN_PREFIX: &str = "<builtin>/";
const TOOL_REGISTRY: &str = "<built-in tools>";

fn is_builtin(p: &ParsedPreset) -> bool {
    p.source.display.starts_with(BUILTIN_PREFIX)
}

/// The layer (index in the chain) that declares `item`, and where.
fn declaring(chain: &[ParsedPreset], item: Item<'_>) -> Option<(usize, Span)> {
    let rev = chain.iter().enumerate().rev();
    match item {
        Item::Section(name) => rev.clone().find_map(|(i, p)| {
            let persona = p.file.persona.as_ref()?;
            let declared = persona
                .sections
                .iter()
                .flatten()
                .find(|s| s.name.value == name)
                .map(|s| p.span_of(&s.name));
            let removed = || {
                persona
                    .remove
                    .iter()
                    .flatten()
                    .find(|r| r.value == name)
                    .map(|r| p.span_of(r))
            };
            declared.or_else(removed).map(|span| (i, span))
        }),
        Item::Listed(tool) => rev.clone().find_map(|(i, p)| {
            let tools = p.file.tools.as_ref()?;
            let spec = &tools.value;
            let entry = [&spec.allow, &spec.deny, &spec.order]
                .into_iter()
                .flatten()
                .flatten()
                .find(|e| e.value == tool)
                .map(|e| p.span_of(e));
            Some((i, entry.unwrap_or_else(|| p.span_of(tools))))
        }),
        Item::Model => rev.clone().find_map(|(i, p)| {
            let model = p.file.model.as_ref()?;
            Some((i, p.span_of(&model.name)))
        }),
        Item::Hook(key) => {
            let refs: Vec<&ParsedPreset> = chain.iter().collect();
            declared_programs(&refs)
                .into_iter()
                .find(|(k, _, _, _)| k == key)
                .map(|(_, at, _, run)| (at, chain[at].span_of(run)))
        }
        Item::Permissions => rev.clone().find_map(|(i, p)| {
            let spec = p.file.permissions.as_ref()?;
            let first = [&spec.deny, &spec.ask, &spec.allow]
                .into_iter()
                .flatten()
                .flatten()
                .next()?;
            Some((i, p.span_of(first)))
        }),
        Item::Definition(_) | Item::Whole => None,
    }
}

/// Where to report a change of `item` in `preset`, and where it comes from.
fn origin(preset: &ValidPreset, item: Item<'_>) -> Origin {
    let chain = preset.chain();
    let Some(leaf) = chain.last() else {
        return Origin {
            span: None,
            from: String::new(),
            causes: vec![TOOL_REGISTRY.into()],
            at: None,
        };
    };
    let leaf_index = chain.len() - 1;
    let extends_span = leaf.file.extends.as_ref().map(|e| leaf.span_of(e));
    let name_span = leaf.span_of(&leaf.file.name);
    let own = |span: Span| (!is_builtin(leaf)).then_some(span);
    let declared = declaring(chain, item);
    let at = declared
        .as_ref()
        .filter(|(i, _)| !is_builtin(&chain[*i]))
        .map(|(i, span)| (chain[*i].name().to_owned(), span.clone()));
    match (item, declared) {
        (_, Some((i, span))) if i == leaf_index => Origin {
            span: own(span),
            from: String::new(),
            causes: vec![leaf.source.display.clone()],
            at,
        },
        (_, Some((i, span))) => {
            let parent = &chain[i];
            let via = chain
                .get(leaf_index.saturating_sub(1))
                .filter(|_| i + 1 < leaf_index)
                .map(|p| format!(" through `{}`", p.name()))
                .unwrap_or_default();
            let from = if is_builtin(parent) {
                format!(
                    ", inherited from the built-in preset `{}`{via} (the lock was written with another version of it, by another agent-presets release?)",
                    parent.name()
                )
            } else {
                format!(", inherited from `{}`{via} ({span})", parent.name())
            };
            Origin {
                span: own(extends_span.unwrap_or(name_span)),
                from,
                causes: vec![parent.source.display.clone()],
                at,
            }
        }
        (Item::Definition(tool), None) => {
            let tools = leaf.file.tools.as_ref().map(|t| leaf.span_of(t));
            Origin {
                span: own(tools.or(extends_span).unwrap_or(name_span)),
                from: format!(
                    " (`{tool}` is a built-in tool: the lock was written with another version of it, by another agent-presets release?)"
                ),
                causes: vec![TOOL_REGISTRY.into()],
                at: None,
            }
        }
        (item, None) => Origin {
            span: own(extends_span.unwrap_or(name_span)),
            from: match (item, &leaf.file.extends) {
                (Item::Section(_), Some(parent)) => format!(
                    ", declared by neither `{name}` nor the presets it extends (`{}`, …) any more",
                    parent.value,
                    name = leaf.name()
                ),
                _ => String::new(),
            },
            // Declared nowhere now (removed from a parent, say): any file of the chain in
            // the repository may have done it.
            causes: {
                let files: Vec<Arc<str>> = chain
                    .iter()
                    .filter(|p| !is_builtin(p))
                    .map(|p| p.source.display.clone())
                    .collect();
                if files.is_empty() {
                    vec![leaf.source.display.clone()]
                } else {
                    files
                }
            },
            at: None,
        },
    }
}

/// The drift of `preset` when `now` (its entry as it renders today) differs from
/// `locked`: what changed, a unified diff of each changed section and tool, and one
/// short finding per change.
pub fn drift(preset: &ValidPreset, locked: &PresetLock, now: &PresetLock) -> Option<Drift> {
    drift_from(preset, locked, now, LOCK_FILE)
}

/// What `preset` changes against `other` (another preset, or the built-in it extends):
/// per section, tool and model, the unified diffs lock drift shows (`other` in the
/// lock's place), then every text id whose text in effect differs. `None`: the same
/// prefix and the same texts.
pub fn compare(preset: &ValidPreset, other: &ValidPreset) -> Result<Option<String>, LockError> {
    let mine = entry(preset)?;
    let theirs = entry(other)?;
    let mut out = String::new();
    if let Some(d) = drift_from(preset, &theirs, &mine, &format!("`{}`", other.name())) {
        out.push_str(&d.diagnostic.message);
        out.push('\n');
    }
    let rows = |p: &ValidPreset| {
        let chain: Vec<&crate::preset::ParsedPreset> = p.chain().iter().collect();
        crate::preset::texts::text_rows(Some(&chain), p.texts())
    };
    let (a, b) = (rows(preset), rows(other));
    let mut texts = Vec::new();
    for row in &a {
        match b.iter().find(|r| r.id == row.id) {
            Some(o) if o.text == row.text => {}
            Some(o) => texts.push(format!(
                "text `{}` changed ({} → {})",
                row.id,
                o.source.describe(),
                row.source.describe()
            )),
            None => texts.push(format!(
                "text `{}` added ({})",
                row.id,
                row.source.describe()
            )),
        }
    }
    for row in b.iter().filter(|r| !a.iter().any(|x| x.id == r.id)) {
        texts.push(format!("text `{}` removed", row.id));
    }
    if !texts.is_empty() {
        out.push_str(&texts.join("\n"));
        out.push('\n');
    }
    Ok((!out.is_empty()).then_some(out))
}

/// [`drift`] against `against` (the lock file, or another preset).
fn drift_from(
    preset: &ValidPreset,
    locked: &PresetLock,
    now: &PresetLock,
    against: &str,
) -> Option<Drift> {
    if locked.same_prefix(now) {
        return None;
    }
    let name = preset.name();
    let mut changes: Vec<String> = Vec::new();
    // Each change: where it is reported, its short text (the annotation's), and its
    // whole unified diff (empty for a change without one).
    let mut parts: Vec<(Origin, String, String)> = Vec::new();
    let mut diff = String::new();
    for (key, old, new) in [
        (PROVIDER_VARIABLE, &locked.provider, &now.provider),
        (MODEL_VARIABLE, &locked.model, &now.model),
    ] {
        if old != new {
            let what = format!("{key} {} → {}", shown(old), shown(new));
            parts.push((origin(preset, Item::Model), what.clone(), String::new()));
            changes.push(what);
        }
    }
    let keys: BTreeSet<&String> = locked.request.keys().chain(now.request.keys()).collect();
    for key in keys {
        let (old, new) = (locked.request.get(key), now.request.get(key));
        if old != new {
            let show = |v: Option<&Value>| v.map_or_else(|| "(unset)".to_owned(), Value::to_string);
            let what = format!("request `{key}` {} → {}", show(old), show(new));
            parts.push((origin(preset, Item::Model), what.clone(), String::new()));
            changes.push(what);
        }
    }
    // Hooks and permission rules are pinned beside the prefix, not in it: their changes
    // are named apart (they change what runs, not what is sent).
    let mut policy: Vec<String> = Vec::new();
    let (mut hook_changed, mut rules_changed, mut check_changed) = (false, false, false);
    let keys: BTreeSet<&String> = locked.hooks.keys().chain(now.hooks.keys()).collect();
    for key in keys {
        let (old, new) = (locked.hooks.get(key), now.hooks.get(key));
        if old != new {
            let what = match (old, new) {
                (Some(o), Some(n)) => {
                    format!("{} `{key}` changed ({o} → {n})", program_kind(key))
                }
                (None, _) => format!("{} `{key}` added", program_kind(key)),
                (Some(_), None) => format!("{} `{key}` removed", program_kind(key)),
            };
            parts.push((origin(preset, Item::Hook(key)), what.clone(), String::new()));
            if program_kind(key) == "check" {
                check_changed = true;
            } else {
                hook_changed = true;
            }
            policy.push(what.clone());
            changes.push(what);
        }
    }
    let lists: BTreeSet<&String> = locked
        .permissions
        .keys()
        .chain(now.permissions.keys())
        .collect();
    for list in lists {
        let (old, new) = (locked.permissions.get(list), now.permissions.get(list));
        if old != new {
            let show = |v: Option<&Vec<String>>| {
                v.map_or_else(|| "(none)".to_owned(), |r| format!("{r:?}"))
            };
            let what = format!(
                "permission rules `{list}` changed ({} → {})",
                show(old),
                show(new)
            );
            parts.push((
                origin(preset, Item::Permissions),
                what.clone(),
                String::new(),
            ));
            rules_changed = true;
            policy.push(what.clone());
            changes.push(what);
        }
    }
    let section_name = |s: &LockedSection| s.name.clone();
    for (section, old, new) in paired(&locked.sections, &now.sections, section_name) {
        let (what, changed_text) = match (old, new) {
            (Some(o), Some(n)) if o == n => continue,
            (Some(o), Some(n)) if o.text == n.text => (
                format!(
                    "section `{section}` moved (order {} → {})",
                    order_json(o.order),
                    order_json(n.order)
                ),
                false,
            ),
            (Some(_), Some(_)) => (format!("section `{section}` changed"), true),
            (Some(_), None) => (format!("section `{section}` removed"), true),
            (None, _) => (format!("section `{section}` added"), true),
        };
        let (old_text, new_text) = (
            old.map(LockedSection::text).unwrap_or_default(),
            new.map(LockedSection::text).unwrap_or_default(),
        );
        let item_diff = unified(
            against,
            &format!("section `{section}`"),
            &old_text,
            &new_text,
        );
        diff.push_str(&item_diff);
        let item = match section.strip_prefix("tool:") {
            Some(tool) if old.is_some() && new.is_some() => Item::Definition(tool),
            Some(tool) => Item::Listed(tool),
            None => Item::Section(&section),
        };
        let mut text = what.clone();
        if changed_text {
            text.push('\n');
            text.push_str(&bounded_diff(&old_text, &new_text, name));
        }
        parts.push((origin(preset, item), text, item_diff));
        changes.push(what);
    }
    let tool_name = |t: &LockedTool| t.name.clone();
    for (tool, old, new) in paired(&locked.tools, &now.tools, tool_name) {
        let (what, item, summary) = match (old, new) {
            (Some(o), Some(n)) if o.definition == n.definition => continue,
            (Some(o), Some(n)) => (
                format!("tool `{tool}` changed"),
                Item::Definition(&tool),
                tool_summary(&o.definition, &n.definition),
            ),
            (Some(_), None) => (
                format!("tool `{tool}` removed"),
                Item::Listed(&tool),
                vec![],
            ),
            (None, n) => (
                format!("tool `{tool}` added"),
                Item::Listed(&tool),
                n.and_then(|n| parameter_list(&n.definition.parameters))
                    .into_iter()
                    .collect(),
            ),
        };
        let item_diff = unified(
            against,
            &format!("tool `{tool}`"),
            &old.map(|t| definition_text(&t.definition))
                .unwrap_or_default(),
            &new.map(|t| definition_text(&t.definition))
                .unwrap_or_default(),
        );
        diff.push_str(&item_diff);
        let text = if summary.is_empty() {
            what.clone()
        } else {
            format!("{what}: {}", summary.join(", "))
        };
        parts.push((origin(preset, item), text, item_diff));
        changes.push(what);
    }
    for (server, old, new) in paired_servers(&locked.servers, &now.servers) {
        let what = match (old, new) {
            (Some(o), Some(n)) if o == n => continue,
            (Some(o), Some(n)) => {
                let tools: Vec<String> = compare_listings(o, n)
                    .iter()
                    .map(ToolChange::summary)
                    .collect();
                if tools.is_empty() {
                    format!("the pinned listing of MCP server `{server}` changed")
                } else {
                    format!(
                        "the pinned tools of MCP server `{server}` changed: {}",
                        tools.join(", ")
                    )
                }
            }
            (Some(_), None) => format!("MCP server `{server}` is no longer declared"),
            (None, _) => format!("MCP server `{server}` added"),
        };
        parts.push((origin(preset, Item::Whole), what.clone(), String::new()));
        changes.push(what);
    }
    let mut whole = |what: &str, changes: &mut Vec<String>| {
        parts.push((origin(preset, Item::Whole), what.to_owned(), String::new()));
        changes.push(what.to_owned());
    };
    let same_order = |a: &[LockedSection], b: &[LockedSection]| {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.name == y.name)
    };
    if changes.is_empty() && !same_order(&locked.sections, &now.sections) {
        whole("the order of the sections changed", &mut changes);
    }
    let same_tools = |a: &[LockedTool], b: &[LockedTool]| {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.name == y.name)
    };
    if changes.is_empty() && !same_tools(&locked.tools, &now.tools) {
        whole("the wire order of the tools changed", &mut changes);
    }
    if changes.is_empty() && locked.fingerprint != now.fingerprint {
        // Same prefix, another fingerprint: the lock predates the fingerprint's encoding.
        whole(
            "its fingerprint changed (the lock was written by a build that encoded fingerprints differently)",
            &mut changes,
        );
    }
    if changes.is_empty() {
        // Same prefix, other counts (e.g. a new tokenizer): the lock is merely stale.
        whole("its token counts changed", &mut changes);
    }
    let prefix: Vec<&String> = changes.iter().filter(|c| !policy.contains(c)).collect();
    let programs = match (hook_changed, check_changed) {
        (true, true) => "the hooks and checks",
        (false, true) => "the checks",
        _ => "the hooks",
    };
    let what_runs = match (hook_changed || check_changed, rules_changed) {
        (true, true) => format!("{programs} and permission rules"),
        (true, false) => programs.to_owned(),
        _ => "the permission rules".to_owned(),
    };
    let joined = |l: &[&String]| l.iter().map(|c| c.as_str()).collect::<Vec<_>>().join(", ");
    let policy: Vec<&String> = policy.iter().collect();
    let headline = match (prefix.is_empty(), policy.is_empty()) {
        (false, true) => format!(
            "the cacheable prefix of `{name}` differs from {against}: {}",
            joined(&prefix)
        ),
        (true, _) => format!(
            "{what_runs} of `{name}` differ from {against} (its prompt prefix does not): {}",
            joined(&policy)
        ),
        (false, false) => format!(
            "the cacheable prefix of `{name}` differs from {against}: {}; and {what_runs}: {}",
            joined(&prefix),
            joined(&policy)
        ),
    };
    let message = format!("{headline}\n{}", diff.trim_end());
    let help = relock_help(&[name], &BTreeSet::new(), Relock::default());
    let span = parts
        .iter()
        .find_map(|(o, _, _)| o.span.clone())
        .or_else(|| preset_name_span(preset));
    let diagnostic = Diagnostic::new(DiagnosticKind::PrefixDrift, message.trim_end())
        .at(span)
        .help(help.clone());
    let causes = parts
        .iter()
        .flat_map(|(o, _, _)| o.causes.iter().cloned())
        .collect();
    let builtin = preset.chain().last().is_some_and(is_builtin);
    let shared = if builtin {
        vec![None]
    } else {
        parts
            .iter()
            .map(|(o, text, full)| {
                o.at.as_ref().map(|(layer, at)| SharedChange {
                    layer: layer.clone(),
                    at: at.clone(),
                    text: text.clone(),
                    diff: full.trim_end().to_owned(),
                })
            })
            .collect()
    };
    let changes = if builtin {
        // No file of the repository holds a built-in preset: one finding without a
        // location, the changes named (the diff is in the human and JSON outputs).
        vec![
            Diagnostic::new(
                DiagnosticKind::PrefixDrift,
                format!(
                    "the built-in preset `{name}` differs from {LOCK_FILE} (the lock was written by another agent-presets release?): {}",
                    cut(&changes.join(", "), 4 * MAX_DIFF_LINE_CHARS)
                ),
            )
            .help(help.clone()),
        ]
    } else {
        parts
            .into_iter()
            .map(|(o, text, _)| {
                let (first, rest) = text.split_once('\n').unwrap_or((&text, ""));
                let mut message = format!("`{name}`: {first}{}", o.from);
                if !rest.is_empty() {
                    message.push('\n');
                    message.push_str(rest.trim_end());
                }
                Diagnostic::new(DiagnosticKind::PrefixDrift, message)
                    .at(o.span)
                    .help(help.clone())
            })
            .collect()
    };
    Some(Drift {
        preset: name.to_owned(),
        diagnostic,
        changes,
        causes,
        shared,
    })
}

/// A change as the file that declares it made it: what several drifts share when one
/// edit drifts them all.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct SharedChange {
    /// The preset whose file declares the changed item.
    layer: String,
    /// Where it declares it.
    at: Span,
    /// What changed, with the short diff (the annotation's text, without a preset name).
    text: String,
    /// The whole unified diff of it (empty for a change without one).
    diff: String,
}

/// One edit that drifted several presets, reported once ([`collapse`]).
#[derive(Debug)]
pub struct SharedDrift {
    /// At the line that changed: "`org-base`'s section `safety` changed: 19 presets
    /// drift", the diff, and the help naming them with one re-lock command.
    pub diagnostic: Diagnostic,
    /// The same with a short, bounded diff: the one GitHub annotation and SARIF result.
    pub annotation: Diagnostic,
    /// The presets it drifts, in the order given.
    pub presets: Vec<String>,
    /// The per-preset findings ([`Drift::changes`]) it stands for.
    pub covers: Vec<Diagnostic>,
    /// The whole drifts ([`Drift::diagnostic`]) of the presets it drifts that it
    /// explains entirely (each of their changes is covered by a shared drift).
    pub replaces: Vec<Diagnostic>,
    /// The whole drifts of the presets it drifts (explained entirely or not).
    pub of: Vec<Diagnostic>,
}

/// Group the changes that several drifts share: one change of one line of a file of
/// the repository (a parent's section, say) that drifts two or more presets becomes one
/// [`SharedDrift`] on that line. `--format json` keeps the per-preset drifts; the human,
/// GitHub and SARIF outputs show each shared drift once in their place.
pub fn collapse(drifts: &[&Drift], relock: Relock) -> Vec<SharedDrift> {
    // Each shared change, in the order first seen, with (drift, change) indices.
    let mut keys: Vec<&SharedChange> = Vec::new();
    let mut members: Vec<Vec<(usize, usize)>> = Vec::new();
    let mut index: HashMap<&SharedChange, usize> = HashMap::new();
    for (i, drift) in drifts.iter().enumerate() {
        for (j, key) in drift.shared.iter().enumerate() {
            let Some(key) = key else { continue };
            let k = *index.entry(key).or_insert_with(|| {
                keys.push(key);
                members.push(Vec::new());
                keys.len() - 1
            });
            members[k].push((i, j));
        }
    }
    let shared: Vec<bool> = members
        .iter()
        .map(|m| {
            let presets: BTreeSet<usize> = m.iter().map(|&(i, _)| i).collect();
            presets.len() > 1
        })
        .collect();
    // A drift is explained entirely when every change of it is a shared one.
    let explained: Vec<bool> = drifts
        .iter()
        .enumerate()
        .map(|(i, d)| {
            !d.changes.is_empty()
                && (0..d.changes.len()).all(|j| {
                    members
                        .iter()
                        .zip(&shared)
                        .any(|(m, &s)| s && m.contains(&(i, j)))
                })
        })
        .collect();
    let mut out = Vec::new();
    for ((key, m), _) in keys.iter().zip(&members).zip(&shared).filter(|(_, s)| **s) {
        let mut seen = BTreeSet::new();
        let who: Vec<usize> = m
            .iter()
            .map(|&(i, _)| i)
            .filter(|i| seen.insert(*i))
            .collect();
        let names: Vec<&str> = who.iter().map(|&i| drifts[i].preset.as_str()).collect();
        let (first, short) = key.text.split_once('\n').unwrap_or((&key.text, ""));
        // "tool `glob` added: parameters …": the detail after the count.
        let (head, detail) = match first.split_once(": ") {
            Some((head, detail)) => (head, format!(" ({detail})")),
            None => (first, String::new()),
        };
        let message = format!(
            "`{}`'s {head}: {} presets drift{detail}",
            key.layer,
            names.len()
        );
        let help = shared_help(&names, relock);
        let with = |body: &str| {
            let mut text = message.clone();
            if !body.trim().is_empty() {
                text.push('\n');
                text.push_str(body.trim_end());
            }
            Diagnostic::new(DiagnosticKind::PrefixDrift, text)
                .at(Some(key.at.clone()))
                .help(help.clone())
        };
        let diagnostic = with(if key.diff.is_empty() {
            short
        } else {
            &key.diff
        });
        let annotation = with(short);
        let covers = m
            .iter()
            .map(|&(i, j)| drifts[i].changes[j].clone())
            .collect();
        out.push(SharedDrift {
            diagnostic,
            annotation,
            presets: names.iter().map(|n| (*n).to_owned()).collect(),
            covers,
            replaces: who
                .iter()
                .filter(|&&i| explained[i])
                .map(|&i| drifts[i].diagnostic.clone())
                .collect(),
            of: who.iter().map(|&i| drifts[i].diagnostic.clone()).collect(),
        });
    }
    out
}

/// The help of a [`SharedDrift`]: the presets it drifts and one command re-locking them.
fn shared_help(names: &[&str], relock: Relock) -> String {
    let command = relock.command(names);
    let listed: Vec<String> = names
        .iter()
        .take(MAX_RELOCK_NAMES)
        .map(|n| format!("`{n}`"))
        .collect();
    let more = names.len().saturating_sub(MAX_RELOCK_NAMES);
    let mut who = listed.join(", ");
    if more > 0 {
        who.push_str(&format!(" and {more} more"));
    }
    format!(
        "presets drifting: {who}; if the change is intended, re-lock them with `{command}` and commit {LOCK_FILE}"
    )
}

/// The help of drifts that come from one edit: name them all and re-lock them with one
/// command. Each drift is grouped with every other that shares a cause (a file a
/// changed item comes from), transitively.
pub fn relate(drifts: &mut [&mut Drift], relock: Relock) {
    let n = drifts.len();
    let mut group: Vec<usize> = (0..n).collect();
    fn find(group: &mut [usize], mut i: usize) -> usize {
        while group[i] != i {
            group[i] = group[group[i]];
            i = group[i];
        }
        i
    }
    let mut first_with: BTreeMap<&Arc<str>, usize> = BTreeMap::new();
    for (i, d) in drifts.iter().enumerate() {
        for cause in &d.causes {
            match first_with.get(cause) {
                Some(&j) => {
                    let (a, b) = (find(&mut group, i), find(&mut group, j));
                    group[a.max(b)] = a.min(b);
                }
                None => {
                    first_with.insert(cause, i);
                }
            }
        }
    }
    let roots: Vec<usize> = (0..n).map(|i| find(&mut group, i)).collect();
    let helps: Vec<Option<String>> = (0..n)
        .map(|i| {
            let members: Vec<usize> = (0..n).filter(|&j| roots[j] == roots[i]).collect();
            if members.len() < 2 {
                return None;
            }
            let names: Vec<&str> = members.iter().map(|&j| drifts[j].preset.as_str()).collect();
            // The causes this drift shares with the others of its group.
            let shared: BTreeSet<Arc<str>> = drifts[i]
                .causes
                .iter()
                .filter(|c| {
                    members
                        .iter()
                        .any(|&j| j != i && drifts[j].causes.contains(*c))
                })
                .cloned()
                .collect();
            Some(relock_help(&names, &shared, relock))
        })
        .collect();
    for (d, help) in drifts.iter_mut().zip(helps) {
        if let Some(help) = help {
            d.diagnostic.help = Some(help.clone());
            for c in &mut d.changes {
                c.help = Some(help.clone());
            }
        }
    }
}

/// "if the change is intended, run `agent-presets lock a b` and commit presets.lock",
/// naming the presets that drifted through one edit of `causes`.
fn relock_help(names: &[&str], causes: &BTreeSet<Arc<str>>, relock: Relock) -> String {
    let command = relock.command(names);
    if names.len() < 2 {
        return format!("if the change is intended, run `{command}` and commit {LOCK_FILE}");
    }
    let listed: Vec<String> = names
        .iter()
        .take(MAX_RELOCK_NAMES)
        .map(|n| format!("`{n}`"))
        .collect();
    let more = names.len().saturating_sub(MAX_RELOCK_NAMES);
    let mut who = listed.join(", ");
    if more > 0 {
        who.push_str(&format!(" and {more} more"));
    }
    let through = if causes.is_empty() {
        String::new()
    } else {
        let files: Vec<String> = causes.iter().map(|c| cause_text(c)).collect();
        format!(" through a change of {}", files.join(" and "))
    };
    format!(
        "{} presets drifted{through}: {who}; if the change is intended, re-lock them all with `{command}` and commit {LOCK_FILE}",
        names.len()
    )
}

/// A cause as a sentence shows it: `` `.agent-presets/x.yaml` ``, "the built-in preset
/// `standard`", "the built-in tools".
fn cause_text(cause: &str) -> String {
    if cause == TOOL_REGISTRY {
        "the built-in tools".to_owned()
    } else if let Some(file) = cause.strip_prefix(BUILTIN_PREFIX) {
        let name = file.strip_suffix(".yaml").unwrap_or(file);
        format!("the built-in preset `{name}`")
    } else {
        format!("`{cause}`")
    }
}

/// A few lines of the diff of `old` and `new` (hunk headers and changed lines, each
/// cut at [`MAX_DIFF_LINE_CHARS`]), at most [`MAX_DIFF_LINES`], then how many more.
fn bounded_diff(old: &str, new: &str, preset: &str) -> String {
    let diff = TextDiff::from_lines(old, new);
    let text = diff.unified_diff().context_radius(0).to_string();
    let lines: Vec<&str> = text.lines().collect();
    let mut out: Vec<String> = lines
        .iter()
        .take(MAX_DIFF_LINES)
        .map(|l| cut(l, MAX_DIFF_LINE_CHARS))
        .collect();
    if lines.len() > MAX_DIFF_LINES {
        out.push(format!(
            "… {} more diff lines: `agent-presets validate --locked {preset}` shows them all",
            lines.len() - MAX_DIFF_LINES
        ));
    }
    out.join("\n")
}

fn cut(line: &str, max: usize) -> String {
    match line.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line.to_owned(),
    }
}

/// The parameters of a tool's schema: "parameters `a`, `b`".
fn parameter_list(parameters: &Value) -> Option<String> {
    let props = parameters["properties"].as_object()?;
    if props.is_empty() {
        return None;
    }
    let names: Vec<String> = props.keys().map(|k| format!("`{k}`")).collect();
    Some(format!("parameters {}", names.join(", ")))
}

/// A definition as the lock writes it, for a diff.
fn definition_text(definition: &LockedDefinition) -> String {
    // Serialising plain data cannot fail.
    pretty(&serde_json::to_value(definition).unwrap_or_default())
}

/// What differs between two definitions of a tool, in a few words each: "`description`
/// changed", "parameter `x` added", "parameter `y`: `type` changed", "`x` now required".
fn tool_summary(old: &LockedDefinition, new: &LockedDefinition) -> Vec<String> {
    let mut out = Vec::new();
    if old.name != new.name {
        out.push("`name` changed".to_owned());
    }
    if old.description != new.description {
        out.push("`description` changed".to_owned());
    }
    let (op, np) = (&old.parameters, &new.parameters);
    keys_changed(op, np, &["properties", "required"], "parameters ", &mut out);
    let empty = Map::new();
    let (oprops, nprops) = (
        op["properties"].as_object().unwrap_or(&empty),
        np["properties"].as_object().unwrap_or(&empty),
    );
    for (k, v) in nprops {
        match oprops.get(k) {
            None => out.push(format!("parameter `{k}` added")),
            Some(o) if o != v => {
                let mut inner = Vec::new();
                keys_changed(o, v, &[], "", &mut inner);
                if inner.is_empty() {
                    out.push(format!("parameter `{k}` changed"));
                } else {
                    out.push(format!("parameter `{k}`: {}", inner.join(", ")));
                }
            }
            Some(_) => {}
        }
    }
    for k in oprops.keys().filter(|k| !nprops.contains_key(*k)) {
        out.push(format!("parameter `{k}` removed"));
    }
    let required = |v: &Value| -> BTreeSet<String> {
        v["required"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default()
    };
    let (oreq, nreq) = (required(op), required(np));
    for k in nreq.difference(&oreq) {
        out.push(format!("`{k}` now required"));
    }
    for k in oreq.difference(&nreq).filter(|k| nprops.contains_key(*k)) {
        out.push(format!("`{k}` no longer required"));
    }
    if out.is_empty() {
        out.push("its definition changed".to_owned());
    }
    if out.len() > MAX_TOOL_CHANGES {
        let more = out.len() - MAX_TOOL_CHANGES;
        out.truncate(MAX_TOOL_CHANGES);
        out.push(format!("{more} more changes"));
    }
    out
}

/// "`key` changed / added / removed" for each top-level key of two objects that differs,
/// except `skip`.
fn keys_changed(old: &Value, new: &Value, skip: &[&str], prefix: &str, out: &mut Vec<String>) {
    let empty = Map::new();
    let (o, n) = (
        old.as_object().unwrap_or(&empty),
        new.as_object().unwrap_or(&empty),
    );
    for (k, v) in n {
        if skip.contains(&k.as_str()) {
            continue;
        }
        match o.get(k) {
            None => out.push(format!("{prefix}`{k}` added")),
            Some(ov) if ov != v => out.push(format!("{prefix}`{k}` changed")),
            Some(_) => {}
        }
    }
    for k in o
        .keys()
        .filter(|k| !n.contains_key(*k) && !skip.contains(&k.as_str()))
    {
        out.push(format!("{prefix}`{k}` removed"));
    }
}

/// `prefix-drift` for a valid preset that the lock does not know.
pub fn not_locked(preset: &ValidPreset) -> Drift {
    let diagnostic = not_locked_diagnostic(preset);
    Drift {
        preset: preset.name().to_owned(),
        changes: vec![diagnostic.clone()],
        diagnostic,
        causes: BTreeSet::new(),
        shared: vec![None],
    }
}

fn not_locked_diagnostic(preset: &ValidPreset) -> Diagnostic {
    let name = preset.name();
    Diagnostic::new(
        DiagnosticKind::PrefixDrift,
        format!("`{name}` is not in {LOCK_FILE}"),
    )
    .at(preset_name_span(preset))
    .help(format!(
        "run `agent-presets lock {name}` and commit {LOCK_FILE}"
    ))
}

/// `prefix-drift` for a locked preset that none of the directories searched offers.
/// With a project config, every preset directory of the project was searched: the
/// preset is gone, and `lock` drops its entry. Without one, it may well live in a
/// directory this command was not told about (a teammate's `--preset-dir`): the help
/// names the directories searched and never advises dropping the entry.
pub fn gone(project: &Project, name: &str) -> Diagnostic {
    let dirs: Vec<String> = project.searched.iter().map(|d| format!("`{d}`")).collect();
    let dirs = dirs.join(", ");
    match &project.config {
        Some(config) => Diagnostic::new(
            DiagnosticKind::PrefixDrift,
            format!(
                "{LOCK_FILE} locks `{name}`, which no preset directory of the project offers any more ({dirs})"
            ),
        )
        .help(format!(
            "if `{name}` was removed or renamed, run `agent-presets lock` to drop its entry and commit {LOCK_FILE}; if it lives elsewhere, add its directory to `presetDirs` in {}",
            config.path.file_name().map_or_else(|| config::CONFIG_FILE.into(), |n| n.to_string_lossy())
        )),
        None => Diagnostic::new(
            DiagnosticKind::PrefixDrift,
            format!(
                "{LOCK_FILE} locks `{name}`, which was not found in the directories searched ({dirs})"
            ),
        )
        .help(format!(
            "if `{name}` lives in another directory, pass it with `--preset-dir DIR`, or name every preset directory of the project in `{}` (`presetDirs: [DIR, ...]`) so that every command sees them",
            config::CONFIG_FILE
        )),
    }
}

/// A provider or model as a change names it (`null` when there is none).
fn shown(value: &Option<String>) -> String {
    value.clone().unwrap_or_else(|| "null".to_owned())
}

/// Items of two lists matched by name: those of `new` in its order, then the ones only
/// `old` has.
fn paired<'a, T>(
    old: &'a [T],
    new: &'a [T],
    name: impl Fn(&T) -> String,
) -> Vec<(String, Option<&'a T>, Option<&'a T>)> {
    let mut out: Vec<(String, Option<&T>, Option<&T>)> = new
        .iter()
        .map(|n| {
            let key = name(n);
            let o = old.iter().find(|o| name(o) == key);
            (key, o, Some(n))
        })
        .collect();
    for o in old {
        let key = name(o);
        if !new.iter().any(|n| name(n) == key) {
            out.push((key, Some(o), None));
        }
    }
    out
}

/// The servers of two entries by name, each with its listing on either side.
fn paired_servers<'a>(
    old: &'a BTreeMap<String, ServerListing>,
    new: &'a BTreeMap<String, ServerListing>,
) -> Vec<(
    &'a str,
    Option<&'a ServerListing>,
    Option<&'a ServerListing>,
)> {
    let names: BTreeSet<&str> = old.keys().chain(new.keys()).map(String::as_str).collect();
    names
        .into_iter()
        .map(|n| (n, old.get(n), new.get(n)))
        .collect()
}

/// A unified diff of one item, headed by what it is.
fn unified(against: &str, what: &str, old: &str, new: &str) -> String {
    let diff = TextDiff::from_lines(old, new);
    let mut text = diff
        .unified_diff()
        .context_radius(2)
        .header(&format!("{against}: {what}"), &format!("now: {what}"))
        .to_string();
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text
}

fn preset_name_span(preset: &ValidPreset) -> Option<Span> {
    preset.chain().last().map(|p| p.span_of(&p.file.name))
}

/// Locked presets, other than `locked`, that extend one of `locked` and whose prefix no
/// longer matches their entry in `lock`: after `lock docs-writer`, a `strict-docs` that
/// extends it.
pub fn stale_descendants(project: &Project, lock: &LockFile, locked: &[String]) -> Vec<String> {
    let mut stale = Vec::new();
    for name in lock.names() {
        if locked.iter().any(|l| l == name) || !project.presets.contains(name) {
            continue;
        }
        let Some(preset) = project.validate(name).preset else {
            continue;
        };
        let extends_locked = preset
            .chain()
            .iter()
            .any(|p| p.name() != name && locked.iter().any(|l| l == p.name()));
        if extends_locked
            && entry_with_listings(&preset, project.tools.listings())
                .ok()
                .as_ref()
                != lock.get(name)
        {
            stale.push(name.to_owned());
        }
    }
    stale
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn definition(value: Value) -> LockedDefinition {
        serde_json::from_value(value).unwrap()
    }

    /// The typed entries read and write the repository's own lock byte for byte.
    #[test]
    fn the_repository_lock_round_trips_byte_for_byte() {
        let text = include_str!("../../presets.lock");
        let lock = LockFile::parse(text.as_bytes()).unwrap();
        assert_eq!(lock.names().count(), 5);
        assert_eq!(lock.to_text(), text);
    }

    #[test]
    fn a_lock_with_a_field_this_build_does_not_write_is_refused() {
        let text = include_str!("../../presets.lock");
        let mut value: Value = serde_json::from_str(text).unwrap();
        value["presets"]["minimal"]["extra"] = json!(1);
        let bytes = serde_json::to_vec(&value).unwrap();
        let what = LockFile::parse(&bytes).err().unwrap();
        assert!(what.contains("unknown field `extra`"), "{what}");
        let bytes = br#"{"version": 7}"#;
        let what = LockFile::parse(bytes).err().unwrap();
        assert_eq!(what, "its `version` is 7, this build writes 1");
        let bytes = br#"{"version": 1, "encoding": "o200k_base", "values": {}, "presets": {"a": {"model": 3}}}"#;
        assert!(LockFile::parse(bytes).is_err());
    }

    #[test]
    fn an_annotation_diff_is_bounded_in_lines_and_characters() {
        let old: String = (0..30).map(|i| format!("line {i}\n")).collect();
        let new = format!("{}\n", "x".repeat(8_496));
        let text = bounded_diff(&old, &new, "big");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), MAX_DIFF_LINES + 1, "{text}");
        assert!(
            lines
                .iter()
                .all(|l| l.chars().count() <= MAX_DIFF_LINE_CHARS + 1),
            "{text}"
        );
        assert_eq!(
            lines[MAX_DIFF_LINES],
            "… 24 more diff lines: `agent-presets validate --locked big` shows them all"
        );
        assert_eq!(cut("héllo", 2), "hé…");
        assert_eq!(cut("hé", 2), "hé");
    }

    #[test]
    fn a_tool_schema_change_is_summarised() {
        let old = definition(json!({
            "name": "t",
            "description": "Old.",
            "parameters": {
                "type": "object",
                "properties": {
                    "path": { "type": "string", "description": "A path." },
                    "gone": { "type": "string" }
                },
                "required": ["path"]
            }
        }));
        let new = definition(json!({
            "name": "t",
            "description": "New.",
            "parameters": {
                "type": "object",
                "additionalProperties": false,
                "properties": {
                    "path": { "type": "string", "description": "The path." },
                    "limit": { "type": "integer" }
                },
                "required": ["path", "limit"]
            }
        }));
        assert_eq!(
            tool_summary(&old, &new),
            [
                "`description` changed",
                "parameters `additionalProperties` added",
                "parameter `path`: `description` changed",
                "parameter `limit` added",
                "parameter `gone` removed",
                "`limit` now required"
            ]
        );
        assert_eq!(tool_summary(&old, &old), ["its definition changed"]);
        assert_eq!(
            parameter_list(&new.parameters).as_deref(),
            Some("parameters `path`, `limit`")
        );
    }

    #[test]
    fn a_relock_command_names_at_most_a_few_presets() {
        assert_eq!(
            relock_help(&["a"], &BTreeSet::new(), Relock::default()),
            "if the change is intended, run `agent-presets lock a` and commit presets.lock"
        );
        let names: Vec<String> = (0..25).map(|i| format!("p{i}")).collect();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let causes = BTreeSet::from([Arc::from("<builtin>/standard.yaml")]);
        let help = relock_help(&refs, &causes, Relock { all_seen: true });
        assert!(
            help.starts_with(
                "25 presets drifted through a change of the built-in preset `standard`: `p0`, "
            ),
            "{help}"
        );
        assert!(
            help.ends_with(
                "`p19` and 5 more; if the change is intended, re-lock them all with `agent-presets lock` and commit presets.lock"
            ),
            "{help}"
        );
    }
}
