//! The built-in `standard`, validated with the built-in tools, and one step's values for
//! it (shared by `benches/assemble.rs` and `benches/workload.rs`).

use agent_presets::preset::{PresetCatalog, ValidPreset, validate_in_catalog};
use agent_presets::prompt::Values;
use agent_presets::tools::ToolCatalog;

/// Every built-in variable `standard` may use, with realistic values.
pub fn values() -> Values {
    Values::new()
        .with("model", "deepseek-v4-flash")
        .with("provider", "deepseek")
        .with("cwd", "/workspace/acme-billing")
        .with("os", "linux")
        .with("shell", "bash")
        .with("date", "2030-01-01")
}

/// `standard`, validated, with the built-in tools.
pub fn standard() -> ValidPreset {
    let tools = ToolCatalog::builtin();
    let catalog = PresetCatalog::builtin();
    validate_in_catalog(&catalog, "standard", &tools)
        .preset
        .expect("standard validates")
}
