//! The endpoint a preset's requests go to: the preset's `model` block with the
//! [`Overrides`] applied, and the provider lint of exactly the tools that endpoint gets,
//! run once (validation's memo answers what it already linted).

use super::UsageError;
use crate::diagnostic::Diagnostic;
use crate::endpoint::{Dialect, ModelSettings, OverrideError, Overrides, Provider};
use crate::preset::ValidPreset;
use crate::preset::catalog::PresetCatalog;
use crate::provider::lint::LintedTools;

/// The endpoint `overrides` make of `preset`'s `model` block; `Ok(None)` when neither
/// names a provider and a model.
pub fn settings(
    preset: &ValidPreset,
    overrides: &Overrides,
) -> Result<Option<ModelSettings>, OverrideError> {
    let settings = overrides.apply(preset.model().map(|m| m.endpoint()))?;
    let schema = preset.output().map(|o| o.schema);
    let instruction = schema.as_ref().map(|schema| {
        let schema = serde_json::to_string(&**schema).unwrap_or_default();
        std::sync::Arc::from(preset.assembler().texts().render(
            &crate::texts::AGENT_OUTPUT_INSTRUCTION,
            &[("schema", &schema)],
        ))
    });
    Ok(settings.map(|s| {
        s.with_output_schema(schema)
            .with_output_instruction(instruction)
    }))
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

/// The settings to render a body in `dialect` with: the preset's (or the flags') when its
/// provider speaks that dialect, else the dialect's own provider with the same model name.
pub fn for_dialect(
    settings: Option<ModelSettings>,
    dialect: Dialect,
) -> Result<ModelSettings, UsageError> {
    let Some(settings) = settings else {
        return Err(UsageError::with(
            "this preset has no `model` block to render a request for",
            Some(
                "pass `--provider NAME --model NAME` (or add a `model` block to the preset)".into(),
            ),
        ));
    };
    if settings.dialect() == dialect {
        return Ok(settings);
    }
    let provider = match dialect {
        Dialect::OpenAi => Provider::Openai,
        Dialect::Anthropic => Provider::Anthropic,
    };
    let mut switched = ModelSettings::new(provider, settings.name)
        .with_output_schema(settings.output_schema)
        .with_output_instruction(settings.output_instruction);
    if let Some(max) = settings.max_tokens {
        switched = switched.with_max_tokens(max);
    }
    Ok(switched)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::DiagnosticKind;
    use crate::endpoint::Provider;

    /// A host tool whose name OpenAI-dialect providers refuse (longer than 64).
    struct LongName(String);

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct NoArgs {}

    impl crate::tools::Tool for LongName {
        type Args = NoArgs;
        fn name(&self) -> &str {
            &self.0
        }
        fn description(&self) -> &str {
            "A host tool."
        }
        #[allow(clippy::manual_async_fn)]
        fn call(
            &self,
            _: NoArgs,
            _: crate::tools::ToolContext,
        ) -> impl Future<Output = Result<String, crate::tools::ToolError>> + Send + 'static
        {
            async { Ok(String::new()) }
        }
    }

    /// `--provider openai` on a preset validated for Anthropic: the endpoint's own rules
    /// apply, and the default endpoint (the preset's) has nothing to report.
    #[test]
    fn the_endpoint_in_use_is_linted() {
        let long = format!("lookup_{}", "x".repeat(70));
        let mut tools = crate::tools::ToolCatalog::builtin();
        tools.register(LongName(long.clone())).unwrap();
        let mut presets = crate::preset::PresetCatalog::builtin();
        let yaml = format!(
            "version: 1\nname: p\nmodel: {{provider: anthropic, name: m}}\ntools:\n  allow: [{long}, read_file]\n"
        );
        presets.add_text("p", "p.yaml", &yaml).unwrap();
        let v = crate::preset::validate_in_catalog(&presets, "p", &tools);
        let preset = v.preset.unwrap_or_else(|| panic!("{:?}", v.diagnostics));
        let own = ModelSettings::from_spec(preset.model().unwrap());
        assert_eq!(problems(&preset, &own, &presets), Vec::new());
        for provider in [
            Provider::Openai,
            Provider::Deepseek,
            Provider::OpenaiCompatible,
        ] {
            let other = ModelSettings::new(provider, "m").with_base_url("http://127.0.0.1:9");
            let found = problems(&preset, &other, &presets);
            let kinds: Vec<_> = found.iter().map(|d| d.kind).collect();
            assert_eq!(kinds, [DiagnosticKind::ToolNameRejected], "{found:?}");
            assert!(found[0].message.contains(&long), "{found:?}");
        }
    }

    /// A body in another dialect goes to that dialect's provider, same model and limit;
    /// one in the endpoint's own dialect keeps the endpoint.
    #[test]
    fn a_body_in_another_dialect_keeps_the_model_and_its_limit() {
        let deepseek = ModelSettings::new(Provider::Deepseek, "m".to_owned()).with_max_tokens(7);
        assert_eq!(
            for_dialect(Some(deepseek.clone()), Dialect::OpenAi).unwrap(),
            deepseek
        );
        let switched = for_dialect(Some(deepseek), Dialect::Anthropic).unwrap();
        assert_eq!(
            switched,
            ModelSettings::new(Provider::Anthropic, "m".to_owned()).with_max_tokens(7)
        );
        let back = for_dialect(Some(switched), Dialect::OpenAi).unwrap();
        assert_eq!(back.provider, Provider::Openai);
        let e = for_dialect(None, Dialect::OpenAi).unwrap_err();
        assert!(e.message.contains("no `model` block"), "{e:?}");
    }
}
