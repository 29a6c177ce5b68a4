//! The endpoint a preset's requests go to: the preset's `model` block with the
//! [`Overrides`] applied, and the provider lint of exactly the tools that endpoint gets,
//! run once (validation's memo answers what it already linted).

use crate::diagnostic::Diagnostic;
use crate::endpoint::{ModelSettings, OverrideError, Overrides};
use crate::preset::ValidPreset;
use crate::preset::catalog::PresetCatalog;
use crate::provider::lint::LintedTools;

/// The endpoint `overrides` make of `preset`'s `model` block; `Ok(None)` when neither
/// names a provider and a model.
pub fn settings(
    preset: &ValidPreset,
    overrides: &Overrides,
) -> Result<Option<ModelSettings>, OverrideError> {
    overrides.apply(preset.model().map(|m| m.endpoint()))
}

/// The tools `preset` sends to the endpoint `settings`, linted once for it. Validation
/// linted the tools against the preset's own `model` block; `--provider`, `--base-url`
/// or a dialect switch may pick another endpoint, whose rules are checked here. The
/// catalog's memo answers what validation already linted. Errors among
/// [`LintedTools::diagnostics`] mean the endpoint would refuse the request.
pub fn lint(
    preset: &ValidPreset,
    settings: &ModelSettings,
    catalog: &PresetCatalog,
) -> LintedTools {
    LintedTools::with_memo(settings, preset.assembler().registry(), catalog.lint_memo())
}

/// [`lint`]'s findings, for a caller that only reports them.
pub fn problems(
    preset: &ValidPreset,
    settings: &ModelSettings,
    catalog: &PresetCatalog,
) -> Vec<Diagnostic> {
    lint(preset, settings, catalog).diagnostics().to_vec()
}
