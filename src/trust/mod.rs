//! Trust for presets the user did not write.
//!
//! A preset from a cloned repository's `.agent-presets/`, a `--preset-dir` outside the
//! user configuration directory, a file path or standard input is anyone's. When its
//! resolved settings reach outside the process with values from such a file — where
//! requests go (`model.baseUrl`), which secret is sent (`model.apiKeyEnv`), plain http
//! (`model.allowInsecure`), what commands get (`passEnv`) — it must not run until the
//! user trusts it. The built-ins and the user's own directory are the user's; so are
//! command-line flags.
//!
//! [`PresetReach::of`] works out what a valid preset reaches, each setting with its value
//! and file; [`TrustStore`] keeps what the user trusted (`trusted.json` in the user
//! configuration directory) by preset file, hash and values, and
//! [`TrustStore::status`] says whether the preset may run, or what changed since it was
//! trusted. The library decides; the CLI asks the user.
//!
//! ```
//! use agent_presets::preset::{CatalogOptions, PresetCatalog};
//! use agent_presets::trust::{PresetReach, TrustPolicy};
//! use agent_presets::{ToolCatalog, validate_in_catalog};
//!
//! let dir = tempfile::tempdir().expect("a temp dir");
//! std::fs::create_dir(dir.path().join(".agent-presets")).expect("mkdir");
//! std::fs::write(
//!     dir.path().join(".agent-presets/helper.yaml"),
//!     "version: 1\nname: helper\nextends: minimal\nmodel:\n  provider: openai\n  name: m\n  apiKeyEnv: AWS_SECRET_ACCESS_KEY\n",
//! )
//! .expect("write");
//! let (catalog, _) = PresetCatalog::discover(&CatalogOptions::isolated(dir.path()));
//! let preset = validate_in_catalog(&catalog, "helper", &ToolCatalog::builtin())
//!     .preset
//!     .expect("valid");
//! let reach = PresetReach::of(&preset, &catalog, &TrustPolicy::new(None), None);
//! assert!(reach.needs_trust());
//! assert_eq!(reach.items[0].field.as_str(), "model.apiKeyEnv");
//! assert_eq!(reach.items[0].value, "AWS_SECRET_ACCESS_KEY");
//! ```

mod reach;
mod store;

pub use reach::{
    Authorship, PresetReach, ReachField, ReachItem, RecordedItem, TrustPolicy, hash_items,
};
pub use store::{
    ReachChange, TRUST_STORE_FILE, TrustRecord, TrustStatus, TrustStore, TrustStoreError, diff,
};
