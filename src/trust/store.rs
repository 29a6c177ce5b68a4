//! [`TrustStore`]: the presets the user trusts, as `trusted.json` in the user
//! configuration directory. Keyed by the preset file's resolved path (as direnv's `allow`
//! keys by path and content); each record holds the hash of what the preset reached when
//! it was trusted and those values themselves, so a changed preset can be shown field by
//! field.

use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::bounded::BoundedReadError;

use super::reach::{PresetReach, ReachField, RecordedItem, hash_items, item_name};

/// The store's file name in the user configuration directory.
pub const TRUST_STORE_FILE: &str = "trusted.json";

/// The largest store read (a record is a few hundred bytes).
const MAX_STORE_BYTES: u64 = 16 * 1024 * 1024;

/// The store's format version.
const STORE_VERSION: u32 = 1;

/// What the user trusted for one preset file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrustRecord {
    /// [`PresetReach::hash`] when it was trusted.
    pub hash: String,
    /// The preset's name then.
    pub name: String,
    /// What it reached then.
    pub items: Vec<RecordedItem>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct StoreFile {
    version: u32,
    /// Resolved preset file path → record.
    presets: BTreeMap<String, TrustRecord>,
}

/// Why the store could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum TrustStoreError {
    /// There is no user configuration directory to keep it in.
    #[error(
        "there is no user configuration directory to keep trusted presets in (`AGENT_PRESETS_CONFIG_DIR` is set but empty, or no home directory is known)"
    )]
    NoConfigDir,
    /// The file exists but is not a store this build reads.
    #[error("the trust store `{path}` is corrupt: {reason}")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// Reading or writing failed.
    #[error("cannot {action} the trust store `{path}`: {source}")]
    Io {
        /// `read` or `write`.
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

impl TrustStoreError {
    /// How to fix it.
    pub fn help(&self) -> Option<String> {
        match self {
            TrustStoreError::NoConfigDir => Some(
                "set `AGENT_PRESETS_CONFIG_DIR` to a directory of yours (or unset it to use ~/.config/agent-presets)".into(),
            ),
            TrustStoreError::Corrupt { path, .. } => Some(format!(
                "fix or delete `{}` (deleting it forgets every trusted preset)",
                path.display()
            )),
            TrustStoreError::Io { .. } => None,
        }
    }
}

/// How a preset's reach compares with what the user trusted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TrustStatus {
    /// It reaches nothing through foreign files: no trust needed.
    NotNeeded,
    /// The user trusted exactly this.
    Trusted,
    /// Never trusted (or the record was revoked).
    Untrusted,
    /// Trusted once, but what it reaches has changed since.
    Changed(Vec<ReachChange>),
}

/// One difference between a record and a preset's reach now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReachChange {
    /// A setting that was not there.
    Added(RecordedItem),
    /// A setting that is gone.
    Removed(RecordedItem),
    /// A single-valued setting with another value (or from another file).
    Changed {
        /// As recorded.
        old: RecordedItem,
        /// As it is now.
        new: RecordedItem,
    },
}

/// The trusted presets of one user.
#[derive(Debug)]
pub struct TrustStore {
    path: PathBuf,
    file: StoreFile,
}

impl TrustStore {
    /// The store in the user configuration directory `config_dir`
    /// (`<config_dir>/trusted.json`); a missing file is an empty store, a file that is not
    /// a store is [`TrustStoreError::Corrupt`] (never silently reset).
    pub fn open(config_dir: Option<&Path>) -> Result<TrustStore, TrustStoreError> {
        let dir = config_dir.ok_or(TrustStoreError::NoConfigDir)?;
        TrustStore::open_file(dir.join(TRUST_STORE_FILE))
    }

    /// The store in the file `path` (see [`TrustStore::open`]).
    pub fn open_file(path: PathBuf) -> Result<TrustStore, TrustStoreError> {
        let bytes = match crate::bounded::read_bounded(&path, MAX_STORE_BYTES) {
            Ok(bytes) => bytes,
            Err(BoundedReadError::NotFound) => {
                return Ok(TrustStore {
                    path,
                    file: StoreFile {
                        version: STORE_VERSION,
                        presets: BTreeMap::new(),
                    },
                });
            }
            Err(BoundedReadError::Io(source)) => {
                return Err(TrustStoreError::Io {
                    action: "read",
                    path,
                    source,
                });
            }
            Err(e) => {
                return Err(TrustStoreError::Corrupt {
                    reason: e.to_string(),
                    path,
                });
            }
        };
        let file: StoreFile =
            serde_json::from_slice(&bytes).map_err(|e| TrustStoreError::Corrupt {
                path: path.clone(),
                reason: e.to_string(),
            })?;
        if file.version != STORE_VERSION {
            return Err(TrustStoreError::Corrupt {
                path,
                reason: format!(
                    "format version {} (this build reads {STORE_VERSION})",
                    file.version
                ),
            });
        }
        for (key, record) in &file.presets {
            if hash_items(&record.items) != record.hash {
                return Err(TrustStoreError::Corrupt {
                    path,
                    reason: format!("the record of `{key}` does not match its hash"),
                });
            }
        }
        Ok(TrustStore { path, file })
    }

    /// The file the store is kept in.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// How `reach` compares with what was trusted for its file.
    pub fn status(&self, reach: &PresetReach) -> TrustStatus {
        if !reach.needs_trust() {
            return TrustStatus::NotNeeded;
        }
        match self.record_for(reach) {
            None => TrustStatus::Untrusted,
            Some(record) if record.hash == reach.hash() => TrustStatus::Trusted,
            Some(record) => TrustStatus::Changed(diff(&record.items, &reach.recorded())),
        }
    }

    /// The record for `reach`'s file, if any.
    pub fn record_for(&self, reach: &PresetReach) -> Option<&TrustRecord> {
        let key = reach.key.as_ref()?;
        self.file.presets.get(&*key.to_string_lossy())
    }

    /// Trust what `reach` reaches now (replacing an older record of its file). `false`
    /// when it has no file to record trust under (standard input).
    pub fn trust(&mut self, reach: &PresetReach) -> bool {
        let Some(key) = &reach.key else {
            return false;
        };
        self.file.presets.insert(
            key.to_string_lossy().into_owned(),
            TrustRecord {
                hash: reach.hash(),
                name: reach.name.clone(),
                items: reach.recorded(),
            },
        );
        true
    }

    /// Forget the records of `path` (a preset file) or, for a directory, of every file
    /// under it; returns the files forgotten.
    pub fn revoke(&mut self, path: &Path) -> Vec<String> {
        let path = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
        let gone: Vec<String> = self
            .file
            .presets
            .keys()
            .filter(|k| Path::new(k.as_str()).starts_with(&path))
            .cloned()
            .collect();
        for key in &gone {
            self.file.presets.remove(key);
        }
        gone
    }

    /// Every record, by file.
    pub fn records(&self) -> impl Iterator<Item = (&str, &TrustRecord)> {
        self.file.presets.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// Write the store: a new file in the same directory (mode 0600), renamed over the
    /// old one, so a reader never sees half a store.
    pub fn save(&self) -> Result<(), TrustStoreError> {
        let io = |source| TrustStoreError::Io {
            action: "write",
            path: self.path.clone(),
            source,
        };
        let dir = self
            .path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        fs::create_dir_all(dir).map_err(io)?;
        let mut text =
            serde_json::to_string_pretty(&self.file).map_err(|e| io(std::io::Error::other(e)))?;
        text.push('\n');
        let temp = dir.join(format!(".{TRUST_STORE_FILE}.{}.tmp", std::process::id()));
        // A file left by a crashed writer of the same pid; removing a link removes the link.
        let _ = fs::remove_file(&temp);
        let written = (|| {
            let mut options = fs::OpenOptions::new();
            options.write(true).create_new(true);
            #[cfg(unix)]
            {
                use std::os::unix::fs::OpenOptionsExt;
                options.mode(0o600);
            }
            let mut f = options.open(&temp)?;
            f.write_all(text.as_bytes())?;
            f.sync_all()?;
            fs::rename(&temp, &self.path)
        })();
        if written.is_err() {
            let _ = fs::remove_file(&temp);
        }
        written.map_err(io)
    }
}

/// Field by field: a single-valued field with one value on each side that differs is
/// changed (`old → new`); other differences, and every difference of a set such as
/// `passEnv`, are additions and removals.
pub fn diff(old: &[RecordedItem], new: &[RecordedItem]) -> Vec<ReachChange> {
    let mut fields: Vec<&str> = old.iter().chain(new).map(|i| i.field.as_str()).collect();
    fields.sort_unstable();
    fields.dedup();
    let mut changes = Vec::new();
    for field in fields {
        let before: Vec<&RecordedItem> = old.iter().filter(|i| i.field == field).collect();
        let after: Vec<&RecordedItem> = new.iter().filter(|i| i.field == field).collect();
        if ReachField::from_name(field).is_some_and(ReachField::is_named) {
            named_diff(&before, &after, &mut changes);
            continue;
        }
        let is_set = ReachField::from_name(field).is_some_and(ReachField::is_set);
        if let ([a], [b], false) = (before.as_slice(), after.as_slice(), is_set) {
            if a != b {
                changes.push(ReachChange::Changed {
                    old: (*a).clone(),
                    new: (*b).clone(),
                });
            }
            continue;
        }
        for a in &before {
            if !after.contains(a) {
                changes.push(ReachChange::Removed((*a).clone()));
            }
        }
        for b in &after {
            if !before.contains(b) {
                changes.push(ReachChange::Added((*b).clone()));
            }
        }
    }
    changes
}

/// The differences of a named field (servers, command tools, lock entries, digests):
/// items of one name on both sides are the same thing, changed when they differ.
fn named_diff(before: &[&RecordedItem], after: &[&RecordedItem], changes: &mut Vec<ReachChange>) {
    for a in before {
        match after
            .iter()
            .find(|b| item_name(&b.value) == item_name(&a.value))
        {
            Some(b) if *b != *a => changes.push(ReachChange::Changed {
                old: (*a).clone(),
                new: (*b).clone(),
            }),
            Some(_) => {}
            None => changes.push(ReachChange::Removed((*a).clone())),
        }
    }
    for b in after {
        if !before
            .iter()
            .any(|a| item_name(&a.value) == item_name(&b.value))
        {
            changes.push(ReachChange::Added((*b).clone()));
        }
    }
}
