//! The preset file format: parsing (serde-saphyr, with spans), discovery, `extends`
//! resolution and full-build validation.

pub mod catalog;
pub mod chain_settings;
pub mod checks;
pub mod hooks;
pub mod locale_pack;
pub mod output;
pub mod own_tools;
pub mod permissions;
pub mod provenance;
pub mod resolve;
mod salvage;
mod shape;
pub(crate) use shape::DocumentShape;
pub mod source;
mod source_file;
pub mod spec;
mod text_file;
pub mod texts;
mod tree;
mod tree_de;
pub mod validate;
pub mod values_file;

pub use catalog::{
    CONFIG_DIR_ENV, CatalogOptions, NO_USER_ENV, PresetCatalog, PresetEntry, PresetSource,
    ShadowedFile, TargetId, check_preset_name, default_config_dir, default_user_preset_dir,
};
pub use output::{DEFAULT_OUTPUT_RETRIES, OutputContract};
pub use provenance::{
    PieceProvenance, Provenance, ProvenanceError, Size, ToolAdmission, ToolProvenance,
};
pub use resolve::{Lookup, MAX_EXTENDS_DEPTH, PresetChain, resolve_chain};
pub use source::{MAX_PRESET_FILE_BYTES, ParsedPreset, SourceFile, TextFile, parse_preset};
pub use spec::{
    BudgetSpec, ContextSpec, HookOnError, HookSpec, HooksSpec, ModelSpec, PermissionsSpec,
    PersonaSpec, PresetFile, Provider, SectionSpec, Spanned, ToolsSpec, VariableEntry, VariableMap,
    VariableSpec, is_valid_preset_name, is_valid_section_name, is_valid_variable_name,
    preset_json_schema,
};
pub use validate::{
    RunLimits, ValidPreset, Validation, validate_chain, validate_in_catalog, validate_preset,
    validate_target,
};
pub use values_file::{ValueEntry, ValuesFile};
