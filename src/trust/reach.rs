//! [`PresetReach`]: what a preset's resolved settings reach outside the process with
//! values from files the user did not write, each with the file and line it came from.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::diagnostic::Span;
use crate::preset::catalog::{PresetCatalog, PresetEntry, PresetSource, default_config_dir};
use crate::preset::source::ParsedPreset;
use crate::preset::spec::{PresetFile, Spanned};
use crate::preset::validate::ValidPreset;
use crate::provider::{ModelSettings, default_api_key_env, is_default_host};
use crate::tools::external::ServerListings;

/// Whose a preset file is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Authorship {
    /// The user's own: a built-in, a file under the user configuration directory, or text
    /// the embedding program supplied.
    Own,
    /// Anyone's: a project's `.agent-presets/`, a `--preset-dir` or a file path outside
    /// the user configuration directory, standard input.
    Foreign,
}

/// Decides whose a preset file is: everything under the user configuration directory
/// (and the built-ins) is the user's own, everything else is foreign.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrustPolicy {
    /// The user configuration directory, canonical when it exists.
    config_dir: Option<PathBuf>,
}

impl TrustPolicy {
    /// The policy for the user configuration directory `dir` (`None`: there is none, and
    /// only built-ins and host-supplied text are the user's own).
    pub fn new(config_dir: Option<PathBuf>) -> Self {
        let config_dir = config_dir.map(|d| d.canonicalize().unwrap_or(d));
        TrustPolicy { config_dir }
    }

    /// The policy for [`default_config_dir`] (`$AGENT_PRESETS_CONFIG_DIR`, else
    /// `~/.config/agent-presets`).
    pub fn from_environment() -> Self {
        TrustPolicy::new(default_config_dir())
    }

    /// The user configuration directory, if there is one.
    pub fn config_dir(&self) -> Option<&Path> {
        self.config_dir.as_deref()
    }

    /// Whose the file of `entry` is, decided on the file its bytes were read from
    /// ([`PresetEntry::resolved_path`], named by the opened descriptor): a link flipped
    /// after the read cannot change the answer. A file not read yet, or not told for
    /// sure, is anyone's.
    pub fn authorship(&self, entry: &PresetEntry) -> Authorship {
        match entry.source() {
            PresetSource::Builtin | PresetSource::Inline => Authorship::Own,
            PresetSource::Stdin => Authorship::Foreign,
            PresetSource::User | PresetSource::Project | PresetSource::Path => {
                match entry.resolved_path() {
                    Some(path) if self.is_under_config_dir(path) => Authorship::Own,
                    // A user directory elsewhere (`CatalogOptions::user_dir`) was still
                    // chosen by the user.
                    _ if entry.source() == PresetSource::User => Authorship::Own,
                    _ => Authorship::Foreign,
                }
            }
        }
    }

    /// Is `path` inside the user configuration directory? `path` must already be
    /// resolved (absolute, no links: [`PresetEntry::resolved_path`]); it is compared as it
    /// is, never looked up again.
    pub fn is_under_config_dir(&self, path: &Path) -> bool {
        self.config_dir
            .as_ref()
            .is_some_and(|dir| path.is_absolute() && path.starts_with(dir))
    }
}

/// A setting that reaches outside the process. New kinds (MCP servers, command tools, a
/// weaker sandbox) are new variants; a record holds their names as text, so old records
/// stay readable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum ReachField {
    /// `model.baseUrl`: where requests (with the key and the conversation) go.
    BaseUrl,
    /// `model.apiKeyEnv`: which environment variable is sent as the key.
    ApiKeyEnv,
    /// `model.allowInsecure`: plain `http://` to another host.
    AllowInsecure,
    /// `passEnv`: an environment variable commands get.
    PassEnv,
    /// `sandbox`: a weaker sandbox for commands than the default (`full-access`).
    Sandbox,
    /// `allowRead`: a path commands may read in their sandbox.
    AllowRead,
    /// `mcpServers.<name>`: a program started (or an endpoint contacted) for its tools.
    McpServer,
    /// `commands.<name>`: a program run when the model calls the tool.
    Command,
    /// A foreign file that takes the name of a preset of the user's own (same name,
    /// higher precedence): `run NAME` would run it instead. The value is the user's file.
    Shadows,
    /// The `presets.lock` entry of a server the preset reaches, as approved: `NAME:
    /// sha256:<hex>` of what the entry holds for it (its listing, and whatever else the
    /// lock binds), or `NAME: not locked`.
    LockEntry,
    /// A workspace file named in the argv of a command tool or server the preset reaches
    /// (`run: [python3, tools/wc.py]`, `command: [./server.sh]`): `PATH: sha256:<hex>`.
    FileDigest,
    /// `permissions.allow`: a rule that lets calls run without asking (`bash(make *)`),
    /// or `permissions.override` dropping the denies a chain inherited. A foreign file
    /// that could allow `bash` without a prompt reaches as far as a command tool.
    PermissionAllow,
    /// `hooks.<event>`: a program run at an event of the run (before or after a tool
    /// call, at the end, on the prompt), which may also rewrite calls. The value is
    /// `PRESET.<event>[i]: <the hook as JSON>`.
    Hook,
    /// `checks`: a success check, a program run after each final answer. The value is
    /// `PRESET.checks[i]: <the check as JSON>`.
    Check,
}

impl ReachField {
    /// Every field.
    pub const ALL: &'static [ReachField] = &[
        ReachField::BaseUrl,
        ReachField::ApiKeyEnv,
        ReachField::AllowInsecure,
        ReachField::PassEnv,
        ReachField::Sandbox,
        ReachField::AllowRead,
        ReachField::McpServer,
        ReachField::Command,
        ReachField::Shadows,
        ReachField::LockEntry,
        ReachField::FileDigest,
        ReachField::PermissionAllow,
        ReachField::Hook,
        ReachField::Check,
    ];

    /// The field named `name` ([`ReachField::as_str`]).
    pub fn from_name(name: &str) -> Option<ReachField> {
        ReachField::ALL.iter().copied().find(|f| f.as_str() == name)
    }

    /// Does the field hold a set of values (one item each) rather than one value?
    pub fn is_set(self) -> bool {
        matches!(
            self,
            ReachField::PassEnv
                | ReachField::AllowRead
                | ReachField::Shadows
                | ReachField::PermissionAllow
        )
    }

    /// Does the field hold named values, one item per name (`NAME: …`): a server, a
    /// command tool, a lock entry, a file's digest? Two items of one name are the same
    /// thing, changed.
    pub fn is_named(self) -> bool {
        matches!(
            self,
            ReachField::McpServer
                | ReachField::Command
                | ReachField::Hook
                | ReachField::Check
                | ReachField::LockEntry
                | ReachField::FileDigest
        )
    }

    /// The key as written in a preset (`model.baseUrl`, `passEnv`).
    pub fn as_str(self) -> &'static str {
        match self {
            ReachField::BaseUrl => "model.baseUrl",
            ReachField::ApiKeyEnv => "model.apiKeyEnv",
            ReachField::AllowInsecure => "model.allowInsecure",
            ReachField::PassEnv => "passEnv",
            ReachField::Sandbox => "sandbox",
            ReachField::AllowRead => "allowRead",
            ReachField::McpServer => "mcpServers",
            ReachField::Command => "commands",
            ReachField::Shadows => "shadows",
            ReachField::LockEntry => "presets.lock",
            ReachField::FileDigest => "file",
            ReachField::PermissionAllow => "permissions.allow",
            ReachField::Hook => "hooks",
            ReachField::Check => "checks",
        }
    }
}

impl std::fmt::Display for ReachField {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One setting from a foreign file that reaches outside the process.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReachItem {
    /// What it sets.
    pub field: ReachField,
    /// Its value as used (a URL, a variable's name, `true`).
    pub value: String,
    /// The file it came from, resolved (for the record), or as shown when it has no path.
    pub file: String,
    /// Where it is written (file as shown, line).
    pub span: Span,
    /// Not written: the value follows from another setting (the provider's default key
    /// variable, sent to a `baseUrl` the file chose).
    pub implied: bool,
    /// Written in a file of the user's own, and reached because a foreign file of the
    /// chain extends it (or is extended by it): a program-starting setting (`sandbox`,
    /// `commands`, `mcpServers`) the foreign file chose to build on.
    pub inherited: bool,
}

impl ReachItem {
    /// The item as recorded.
    pub fn recorded(&self) -> RecordedItem {
        RecordedItem {
            field: self.field.as_str().to_owned(),
            value: self.value.clone(),
            file: self.file.clone(),
        }
    }
}

/// A reach item as the trust store keeps it: field, value and file, as text.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordedItem {
    /// The field (`model.baseUrl`, `passEnv`, …).
    pub field: String,
    /// Its value.
    pub value: String,
    /// The file it came from.
    pub file: String,
}

/// What a preset reaches outside the process through files the user did not write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PresetReach {
    /// The preset's name.
    pub name: String,
    /// The preset's own file (resolved), under which trust is recorded; `None` for a
    /// preset without one (standard input), which cannot be trusted.
    pub key: Option<PathBuf>,
    /// The preset's file as shown to users.
    pub display: String,
    /// Each reaching setting, in chain order (model first, then `passEnv`).
    pub items: Vec<ReachItem>,
}

impl PresetReach {
    /// What `preset` (from `catalog`) reaches with values from foreign files, as it would
    /// run with `endpoint` (the final settings after command-line overrides, which are the
    /// user's own), or with its own `model` block when `endpoint` is `None`.
    ///
    /// Needs no trust, so is left out: anything from the user's own files; the
    /// provider's default key variable on the provider's default host (a project preset
    /// with `provider: openai` and no `baseUrl`); a model block the user replaced with
    /// `--provider`; a `baseUrl` the user replaced with `--base-url` (unless the file also
    /// names a key variable other than the provider's default); a key variable the user
    /// replaced with `run --api-key-env` (only a variable the file names *and* `endpoint`
    /// uses counts); a `passEnv` name an own file lists too.
    pub fn of(
        preset: &ValidPreset,
        catalog: &PresetCatalog,
        policy: &TrustPolicy,
        endpoint: Option<&ModelSettings>,
    ) -> PresetReach {
        PresetReach::of_chain(preset.name(), preset.chain(), catalog, policy, endpoint)
    }

    /// [`of`](Self::of) for the resolved chain of the preset `name` (root first), valid
    /// or not: what `lock --connect` asks about before a preset can be valid.
    pub fn of_chain(
        name: &str,
        chain: &[ParsedPreset],
        catalog: &PresetCatalog,
        policy: &TrustPolicy,
        endpoint: Option<&ModelSettings>,
    ) -> PresetReach {
        let origin = |p: &ParsedPreset| -> (Authorship, String) {
            match catalog.entry_of(p) {
                Some(entry) => (
                    policy.authorship(entry),
                    file_key(entry)
                        .map(|path| path.to_string_lossy().into_owned())
                        .unwrap_or_else(|| entry.display().to_string()),
                ),
                // Not read through this catalog: nobody vouches for it.
                None => (Authorship::Foreign, p.source.display.to_string()),
            }
        };
        let leaf = &chain[chain.len() - 1];
        let leaf_entry = catalog.entry_of(leaf);
        let key = leaf_entry.and_then(file_key);
        let mut items = Vec::new();
        if let Some(file) = chain.iter().rev().find(|p| p.file.model.is_some()) {
            let (authorship, path) = origin(file);
            if authorship == Authorship::Foreign {
                model_items(file, &path, endpoint, &mut items);
            }
        }
        list_items(
            chain,
            &origin,
            ReachField::PassEnv,
            |f| &f.pass_env,
            &mut items,
        );
        // A foreign file anywhere in the chain chose what it builds on: the settings
        // that start programs count whoever wrote them.
        let foreign_chain = chain.iter().any(|p| origin(p).0 == Authorship::Foreign);
        sandbox_items(chain, &origin, foreign_chain, &mut items);
        tool_items(chain, &origin, foreign_chain, &mut items);
        hook_items(chain, &origin, foreign_chain, &mut items);
        check_items(chain, &origin, foreign_chain, &mut items);
        permission_items(chain, &origin, &mut items);
        shadow_items(chain, catalog, &origin, &mut items);
        PresetReach {
            name: name.to_owned(),
            key,
            display: leaf.source.display.to_string(),
            items,
        }
    }

    /// The reach with what the approval binds beyond the preset's files: for each server
    /// it reaches, the digest of its `presets.lock` entry as `listings` holds it (what
    /// the run uses); for each command tool and server it reaches, the digest of every
    /// file of `workspace` its argv names. So a script the model rewrote, or a lock entry
    /// someone edited, asks again.
    pub fn with_digests(
        self,
        preset: &ValidPreset,
        workspace: &Path,
        listings: &dyn ServerListings,
    ) -> PresetReach {
        let chain: Vec<&ParsedPreset> = preset.chain().iter().collect();
        self.with_digests_of_chain(preset.name(), &chain, workspace, listings)
    }

    /// [`with_digests`](Self::with_digests) for the preset `name` whose `extends` chain
    /// (root first) is `chain`, valid or not yet (`lock --connect` asks before the
    /// servers are listed).
    pub fn with_digests_of_chain(
        mut self,
        preset_name: &str,
        chain: &[&ParsedPreset],
        workspace: &Path,
        listings: &dyn ServerListings,
    ) -> PresetReach {
        use crate::preset::own_tools::{declared_commands, declared_servers};
        let chain: Vec<&ParsedPreset> = chain.to_vec();
        let reached = |items: &[ReachItem], field: ReachField, name: &str| {
            items
                .iter()
                .find(|i| i.field == field && item_name(&i.value) == name)
                .map(|i| i.file.clone())
        };
        let mut added = Vec::new();
        for server in declared_servers(&chain) {
            let name = &server.name.value;
            let Some(file) = reached(&self.items, ReachField::McpServer, name) else {
                continue;
            };
            let locked = match listings.listing(preset_name, name) {
                Some(listing) => {
                    let mut bytes = serde_json::to_vec(listing).unwrap_or_default();
                    if let Some(id) = listings.identity_json(preset_name, name) {
                        bytes.push(b'\n');
                        bytes.extend(id);
                    }
                    digest(&bytes)
                }
                None => "not locked".to_owned(),
            };
            added.push(ReachItem {
                field: ReachField::LockEntry,
                value: format!("{name}: {locked}"),
                file: LOCK_FILE.to_owned(),
                span: Span::new(LOCK_FILE.into(), 1, 1),
                implied: false,
                inherited: false,
            });
            let words = server.spec.command.iter().flat_map(|c| c.value.iter());
            file_digests(server.preset, words, &file, workspace, &mut added);
        }
        for command in declared_commands(&chain) {
            let Some(file) = reached(&self.items, ReachField::Command, &command.name.value) else {
                continue;
            };
            let words = command.spec.run.value.iter();
            file_digests(command.preset, words, &file, workspace, &mut added);
        }
        for preset in &chain {
            let Some(spec) = &preset.file.hooks else {
                continue;
            };
            for event in crate::hooks::HookEvent::ALL {
                for (i, hook) in crate::preset::hooks::list(spec, event).iter().enumerate() {
                    let name = hook_name(preset, event, i);
                    let Some(file) = reached(&self.items, ReachField::Hook, &name) else {
                        continue;
                    };
                    file_digests(preset, hook.run.value.iter(), &file, workspace, &mut added);
                }
            }
        }
        for preset in &chain {
            for (i, c) in preset.file.checks.iter().flatten().enumerate() {
                let name = crate::preset::checks::check_key(preset.name(), i);
                let Some(file) = reached(&self.items, ReachField::Check, &name) else {
                    continue;
                };
                file_digests(preset, c.run.value.iter(), &file, workspace, &mut added);
            }
        }
        for item in added {
            let seen = self
                .items
                .iter()
                .any(|i| i.field == item.field && i.value == item.value);
            if !seen {
                self.items.push(item);
            }
        }
        self
    }

    /// Does running it need the user's trust?
    pub fn needs_trust(&self) -> bool {
        !self.items.is_empty()
    }

    /// The items as recorded, in a canonical order.
    pub fn recorded(&self) -> Vec<RecordedItem> {
        let mut items: Vec<RecordedItem> = self.items.iter().map(ReachItem::recorded).collect();
        items.sort();
        items.dedup();
        items
    }

    /// The hash trust is recorded under: SHA-256 of the canonical JSON of the recorded
    /// items (`{"version":1,"items":[{"field","value","file"},…]}`, sorted), as
    /// `sha256:<hex>`. Lines are not in it: moving a setting does not change it.
    pub fn hash(&self) -> String {
        hash_items(&self.recorded())
    }
}

/// The name a named item's value starts with (`NAME: …`, see [`ReachField::is_named`]).
pub fn item_name(value: &str) -> &str {
    value.split_once(": ").map_or(value, |(name, _)| name)
}

/// `sha256:<hex>` of `bytes`.
fn digest(bytes: &[u8]) -> String {
    let mut hex = String::with_capacity(7 + 64);
    hex.push_str("sha256:");
    for byte in Sha256::digest(bytes) {
        hex.push_str(&format!("{byte:02x}"));
    }
    hex
}

/// The lock file's name, as shown on its items (`project::LOCK_FILE`; the project layer
/// is above this one).
const LOCK_FILE: &str = "presets.lock";

/// The largest file digested (a script or a program in the workspace).
const MAX_DIGESTED_BYTES: u64 = 256 * 1024 * 1024;

/// A digest item for each word of an argv that names a file of `workspace` (relative to
/// it, or absolute beneath it; a word with a template is left out: it is not a file
/// until it runs).
fn file_digests<'a>(
    preset: &ParsedPreset,
    words: impl Iterator<Item = &'a Spanned<String>>,
    file: &str,
    workspace: &Path,
    items: &mut Vec<ReachItem>,
) {
    use crate::bounded::{BoundedReadError, read_bounded};
    for word in words {
        let text = &word.value;
        if text.is_empty() || text.contains("{{") || text.contains("{%") {
            continue;
        }
        let path = Path::new(text);
        if path.is_absolute() && !path.starts_with(workspace) {
            continue;
        }
        let value = match read_bounded(&workspace.join(path), MAX_DIGESTED_BYTES) {
            Ok(bytes) => digest(&bytes),
            Err(
                BoundedReadError::NotFound
                | BoundedReadError::Directory
                | BoundedReadError::DanglingLink,
            ) => continue,
            Err(e) => format!("unreadable ({e})"),
        };
        if items
            .iter()
            .any(|i| i.field == ReachField::FileDigest && item_name(&i.value) == text)
        {
            continue;
        }
        items.push(ReachItem {
            field: ReachField::FileDigest,
            value: format!("{text}: {value}"),
            file: file.to_owned(),
            span: preset.span_of(word),
            implied: false,
            inherited: false,
        });
    }
}

/// The hash of recorded items (see [`PresetReach::hash`]).
pub fn hash_items(items: &[RecordedItem]) -> String {
    let mut sorted = items.to_vec();
    sorted.sort();
    sorted.dedup();
    let canonical = serde_json::json!({"version": 1, "items": sorted});
    let digest = Sha256::digest(canonical.to_string().as_bytes());
    let mut hex = String::with_capacity(7 + 64);
    hex.push_str("sha256:");
    for byte in digest {
        hex.push_str(&format!("{byte:02x}"));
    }
    hex
}

/// A weaker sandbox than the default from the nearest foreign file that sets one, and
/// the `allowRead` paths of foreign files (a path an own file lists too needs no trust).
fn sandbox_items(
    chain: &[ParsedPreset],
    origin: &dyn Fn(&ParsedPreset) -> (Authorship, String),
    foreign_chain: bool,
    items: &mut Vec<ReachItem>,
) {
    use crate::process::SandboxMode;
    if let Some(file) = chain.iter().rev().find(|p| p.file.sandbox.is_some())
        && let Some(setting) = &file.file.sandbox
        && !setting
            .value
            .mode()
            .at_least_as_strict_as(SandboxMode::WorkspaceWrite)
    {
        let (authorship, path) = origin(file);
        if authorship == Authorship::Foreign || foreign_chain {
            items.push(ReachItem {
                field: ReachField::Sandbox,
                value: setting.value.mode().as_str().to_owned(),
                file: path,
                span: file.span_of(setting),
                implied: false,
                inherited: authorship == Authorship::Own,
            });
        }
    }
    list_items(
        chain,
        origin,
        ReachField::AllowRead,
        |f| &f.allow_read,
        items,
    );
}

/// The MCP servers and command tools the chain declares (after `extends`), when a
/// foreign file is in it: those of foreign files, and those of the user's own files a
/// foreign file builds on. The value is the name and the whole declaration as compact
/// JSON, so any change to what is started, passed or contacted asks again.
fn tool_items(
    chain: &[ParsedPreset],
    origin: &dyn Fn(&ParsedPreset) -> (Authorship, String),
    foreign_chain: bool,
    items: &mut Vec<ReachItem>,
) {
    use crate::preset::own_tools::{declared_commands, declared_servers};
    let chain: Vec<&ParsedPreset> = chain.iter().collect();
    let mut push = |field, preset: &ParsedPreset, name: &Spanned<String>, json: String| {
        let (authorship, path) = origin(preset);
        if authorship == Authorship::Foreign || foreign_chain {
            items.push(ReachItem {
                field,
                value: format!("{}: {json}", name.value),
                file: path,
                span: preset.span_of(name),
                implied: false,
                inherited: authorship == Authorship::Own,
            });
        }
    };
    for server in declared_servers(&chain) {
        let json = serde_json::to_string(server.spec).unwrap_or_default();
        push(ReachField::McpServer, server.preset, server.name, json);
    }
    for command in declared_commands(&chain) {
        let json = serde_json::to_string(command.spec).unwrap_or_default();
        push(ReachField::Command, command.preset, command.name, json);
    }
}

/// `PRESET.<event>[i]`: the name of a hook item (the `i`th hook of `event` in `preset`).
fn hook_name(preset: &ParsedPreset, event: crate::hooks::HookEvent, i: usize) -> String {
    crate::preset::hooks::hook_key(preset.name(), event, i)
}

/// The hooks the chain declares, when a foreign file is in it: each is a program that
/// runs at every event it is for, so any change to one asks again (like a command tool).
fn hook_items(
    chain: &[ParsedPreset],
    origin: &dyn Fn(&ParsedPreset) -> (Authorship, String),
    foreign_chain: bool,
    items: &mut Vec<ReachItem>,
) {
    for preset in chain {
        let Some(spec) = &preset.file.hooks else {
            continue;
        };
        let (authorship, path) = origin(preset);
        if authorship != Authorship::Foreign && !foreign_chain {
            continue;
        }
        for event in crate::hooks::HookEvent::ALL {
            for (i, hook) in crate::preset::hooks::list(spec, event).iter().enumerate() {
                let json = serde_json::to_string(hook).unwrap_or_default();
                items.push(ReachItem {
                    field: ReachField::Hook,
                    value: format!("{}: {json}", hook_name(preset, event, i)),
                    file: path.clone(),
                    span: preset.span_of(&hook.run),
                    implied: false,
                    inherited: authorship == Authorship::Own,
                });
            }
        }
    }
}

/// The success checks the chain declares, when a foreign file is in it: each is a
/// program that runs after every final answer, so any change to one asks again.
fn check_items(
    chain: &[ParsedPreset],
    origin: &dyn Fn(&ParsedPreset) -> (Authorship, String),
    foreign_chain: bool,
    items: &mut Vec<ReachItem>,
) {
    for preset in chain {
        let (authorship, path) = origin(preset);
        if authorship != Authorship::Foreign && !foreign_chain {
            continue;
        }
        for (i, c) in preset.file.checks.iter().flatten().enumerate() {
            let json = serde_json::to_string(c).unwrap_or_default();
            items.push(ReachItem {
                field: ReachField::Check,
                value: format!(
                    "{}: {json}",
                    crate::preset::checks::check_key(preset.name(), i)
                ),
                file: path.clone(),
                span: preset.span_of(&c.run),
                implied: false,
                inherited: authorship == Authorship::Own,
            });
        }
    }
}

/// Each foreign file of the chain that hides a preset of the user's own directory under
/// its name: `run NAME` (or an `extends: NAME` of the user's) gets it instead.
fn shadow_items(
    chain: &[ParsedPreset],
    catalog: &PresetCatalog,
    origin: &dyn Fn(&ParsedPreset) -> (Authorship, String),
    items: &mut Vec<ReachItem>,
) {
    for file in chain {
        let (authorship, path) = origin(file);
        let Some(entry) = catalog.entry_of(file) else {
            continue;
        };
        if authorship == Authorship::Own {
            continue;
        }
        for hidden in entry.shadows() {
            if hidden.source == PresetSource::User {
                items.push(ReachItem {
                    field: ReachField::Shadows,
                    value: hidden.display.to_string(),
                    file: path.clone(),
                    span: file.span_of(&file.file.name),
                    implied: false,
                    inherited: false,
                });
            }
        }
    }
}

/// The permission rules of foreign files that let calls through without a prompt: each
/// `allow` rule (none an own file of the chain writes too), and `override: true`, which
/// drops the denies and asks the chain inherited. Denies and asks only tighten: no trust.
fn permission_items(
    chain: &[ParsedPreset],
    origin: &dyn Fn(&ParsedPreset) -> (Authorship, String),
    items: &mut Vec<ReachItem>,
) {
    static NO_RULES: Option<Vec<Spanned<String>>> = None;
    fn allow_rules(file: &PresetFile) -> &Option<Vec<Spanned<String>>> {
        match &file.permissions {
            Some(p) => &p.allow,
            None => &NO_RULES,
        }
    }
    list_items(
        chain,
        origin,
        ReachField::PermissionAllow,
        allow_rules,
        items,
    );
    for file in chain {
        let (authorship, path) = origin(file);
        if authorship == Authorship::Own {
            continue;
        }
        if let Some(flag) = file
            .file
            .permissions
            .as_ref()
            .and_then(|p| p.overrides.as_ref())
            && flag.value
        {
            items.push(ReachItem {
                field: ReachField::PermissionAllow,
                value: "override: true (drops the inherited rules)".to_owned(),
                file: path,
                span: file.span_of(flag),
                implied: false,
                inherited: false,
            });
        }
    }
}

/// The entries of a list field (`passEnv`, `allowRead`) that foreign files add: each
/// once, and none an own file of the chain lists too.
fn list_items(
    chain: &[ParsedPreset],
    origin: &dyn Fn(&ParsedPreset) -> (Authorship, String),
    field: ReachField,
    list: fn(&PresetFile) -> &Option<Vec<Spanned<String>>>,
    items: &mut Vec<ReachItem>,
) {
    let own: Vec<&str> = chain
        .iter()
        .filter(|p| origin(p).0 == Authorship::Own)
        .flat_map(|p| list(&p.file).iter().flatten())
        .map(|n| n.value.as_str())
        .collect();
    for file in chain {
        let (authorship, path) = origin(file);
        if authorship == Authorship::Own {
            continue;
        }
        for entry in list(&file.file).iter().flatten() {
            let taken = own.contains(&entry.value.as_str())
                || items
                    .iter()
                    .any(|i| i.field == field && i.value == entry.value);
            if !taken {
                items.push(ReachItem {
                    field,
                    value: entry.value.clone(),
                    file: path.clone(),
                    span: file.span_of(entry),
                    implied: false,
                    inherited: false,
                });
            }
        }
    }
}

/// The model block's reaching settings from a foreign `file`, as they apply at
/// `endpoint`.
fn model_items(
    file: &ParsedPreset,
    path: &str,
    endpoint: Option<&ModelSettings>,
    items: &mut Vec<ReachItem>,
) {
    let Some(spec) = &file.file.model else {
        return;
    };
    let own_settings;
    let settings = match endpoint {
        Some(s) => s,
        None => {
            own_settings = ModelSettings::from_spec(spec);
            &own_settings
        }
    };
    // `--provider` with another provider replaced the whole block with its defaults.
    if settings.provider != spec.provider.value {
        return;
    }
    let provider = settings.provider;
    let item = |field, value: String, span, implied| ReachItem {
        field,
        value,
        file: path.to_owned(),
        span,
        implied,
        inherited: false,
    };
    let url_from_file = spec
        .base_url
        .as_ref()
        .is_some_and(|u| u.value == settings.base_url);
    let foreign_url = url_from_file && !is_default_host(provider, &settings.base_url);
    if foreign_url && let Some(url) = &spec.base_url {
        items.push(item(
            ReachField::BaseUrl,
            url.value.clone(),
            file.span_of(url),
            false,
        ));
    }
    if let Some(key) = &settings.api_key_env {
        let is_default = default_api_key_env(provider) == Some(key.as_str());
        let written = spec.api_key_env.as_ref().filter(|k| &k.value == key);
        if is_default {
            if foreign_url {
                let span = match written {
                    Some(k) => file.span_of(k),
                    None => file.span_of(&spec.provider),
                };
                items.push(item(
                    ReachField::ApiKeyEnv,
                    key.clone(),
                    span,
                    written.is_none(),
                ));
            }
        } else if let Some(k) = written {
            items.push(item(
                ReachField::ApiKeyEnv,
                key.clone(),
                file.span_of(k),
                false,
            ));
        }
    }
    if let Some(flag) = &spec.allow_insecure
        && flag.value
    {
        items.push(item(
            ReachField::AllowInsecure,
            "true".to_owned(),
            file.span_of(flag),
            false,
        ));
    }
}

/// The file trust is recorded under for `entry`: the file its bytes came from, as the
/// opened descriptor names it; the path it was found at when that could not be told (it
/// is then anyone's, see [`TrustPolicy::authorship`]).
fn file_key(entry: &PresetEntry) -> Option<PathBuf> {
    entry
        .resolved_path()
        .or_else(|| entry.path())
        .map(Path::to_path_buf)
}
