//! The values a step is rendered with, from the command line and the machine: shared by
//! `render` and `run`.
//!
//! `cwd`, `os`, `shell` and `date` come from the real environment (`--cwd` overrides the
//! working directory); `model` and `provider` from the preset's `model` block, overridden
//! by `--model` / `--provider`; then each `--var-file` in order, then `--var k=v`, so the
//! last value given wins. Values are read as the type the preset declares for them.
//! `tools` is derived from the visible tools and cannot be set.

use clap::Args;

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use super::workspace::Workspace;
use super::{CliError, Exit, Io};
use crate::diagnostic::Diagnostics;
use crate::endpoint::{ModelSettings, Overrides, Provider, UnknownProvider};
use crate::preset::ValidPreset;
use crate::project::value_flags;
use crate::project::values::{
    LoadedVarFile, ValueInputs, ValuesError, explain_missing, runtime_values,
};
use crate::prompt::Values;
use crate::provider::lint::LintedTools;
use crate::report::HumanRenderer;

/// The options that set template values.
#[derive(Clone, Debug, Args)]
pub(crate) struct ValueArgs {
    /// Set a template variable, built-in ones included (repeatable), e.g.
    /// `--var date=2030-01-01` to pin the output.
    #[arg(long = "var", value_name = "KEY=VALUE", value_parser = parse_var)]
    pub vars: Vec<(String, String)>,
    /// Set many variables from a YAML or JSON file mapping names to values
    /// (repeatable; later files win, `--var` wins over every file). `-` reads standard
    /// input; a pipe such as `<(cmd)` works too.
    #[arg(long = "var-file", value_name = "FILE")]
    pub var_files: Vec<PathBuf>,
    /// The `--var-file`s, each read once (standard input and pipes cannot be read twice).
    #[arg(skip)]
    loaded: OnceLock<Arc<[LoadedVarFile]>>,
    /// The model name [default: the preset's `model.name`].
    #[arg(long, value_name = "NAME")]
    pub model: Option<String>,
    /// The provider [default: the preset's `model.provider`].
    #[arg(long, value_name = "PROVIDER")]
    pub provider: Option<String>,
    /// The working directory the agent is told about [default: the current directory].
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<String>,
    /// The locale pack the model's texts come from (`de`), instead of the preset's
    /// `locale`; `en` is the built-in English.
    #[arg(long, value_name = "LOCALE", value_parser = parse_locale)]
    pub locale: Option<String>,
}

fn parse_locale(text: &str) -> Result<String, String> {
    if crate::preset::locale_pack::is_valid_locale(text) {
        Ok(text.to_owned())
    } else {
        Err(format!(
            "`{text}` is not a locale: write a language code, optionally with a region (`de`, `pt-BR`)"
        ))
    }
}

fn parse_var(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((key, value)) if !key.is_empty() => Ok((key.to_owned(), value.to_owned())),
        _ => Err(format!("expected KEY=VALUE, found `{text}`")),
    }
}

impl ValueArgs {
    /// The provider named by `--provider`, checked; `None` when not given.
    pub(crate) fn provider(&self) -> Result<Option<Provider>, CliError> {
        self.provider.as_deref().map(parse_provider).transpose()
    }

    /// The values for `preset`, with `cwd` as the working directory (see
    /// [`runtime_values`]).
    pub(crate) fn values(&self, preset: &ValidPreset, cwd: String) -> Result<Values, CliError> {
        let inputs = ValueInputs {
            cwd: &cwd,
            model: self.model.as_deref(),
            provider: self.provider()?,
            var_files: self.var_files()?,
            vars: &self.vars,
        };
        runtime_values(preset, &inputs).map_err(|e| match e {
            ValuesError::Usage { message, help } => CliError::usage_with(message, help),
            ValuesError::Invalid {
                diagnostics,
                usage,
                sources,
            } => CliError::Diagnostics {
                list: diagnostics,
                exit: if usage { Exit::Usage } else { Exit::Invalid },
                sources,
            },
        })
    }
}

/// Options that shape the request beyond the template values.
#[derive(Clone, Debug, Args)]
pub(crate) struct ModelArgs {
    /// The API root requests go to [default: the preset's `model.baseUrl`, else the
    /// provider's], e.g. `http://127.0.0.1:8080/v1`.
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// The output token limit per request [default: the preset's `model.maxTokens`].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_tokens: Option<u32>,
}

impl ValueArgs {
    /// The model a request goes to: the preset's `model` block, with `--provider`,
    /// `--model`, `--base-url` and `--max-tokens` applied. `None` when neither the preset
    /// nor the flags name a provider and a model.
    ///
    /// A `--provider` other than the preset's starts from that provider's defaults (base
    /// URL, key variable); the preset's model name is kept unless `--model` is given.
    pub(crate) fn model_settings(
        &self,
        preset: &ValidPreset,
        model: &ModelArgs,
    ) -> Result<Option<ModelSettings>, CliError> {
        let overrides = Overrides {
            provider: self.provider()?,
            model: self.model.clone(),
            base_url: model.base_url.clone(),
            max_tokens: model.max_tokens,
        };
        crate::project::endpoint::settings(preset, &overrides)
            .map_err(|e| CliError::usage_with(e.to_string(), Some(e.help().to_owned())))
    }

    /// Refuse `--var model=…` / `--var provider=…` (or those names in a `--var-file`)
    /// where the model actually called must be what the prompt says (`run`): those come
    /// from `--model` / `--provider`.
    pub(crate) fn refuse_model_vars(&self) -> Result<(), CliError> {
        Ok(value_flags::refuse_model_vars(
            &self.vars,
            &self.file_keys(),
        )?)
    }

    /// Does `--var` or a `--var-file` set `key` (so the caller must not replace it)?
    pub(crate) fn pins(&self, key: &str) -> bool {
        value_flags::pins(&self.vars, &self.file_keys(), key)
    }

    /// `(file, name)` of every name the `--var-file`s that can be read set. (Files that
    /// cannot be read are reported by [`ValueArgs::values`].)
    fn file_keys(&self) -> Vec<(String, String)> {
        self.var_files()
            .map(value_flags::file_keys)
            .unwrap_or_default()
    }

    /// Refuse a second reader of standard input: the preset `-` and `--var-file -`.
    pub(crate) fn check_stdin(&self, preset_arg: &str) -> Result<(), CliError> {
        Ok(value_flags::check_stdin(preset_arg, &self.var_files)?)
    }

    /// Every `--var-file`, read and parsed the first time it is needed. Standard input
    /// may be given once.
    fn var_files(&self) -> Result<&[LoadedVarFile], CliError> {
        Ok(value_flags::load_var_files(&self.var_files, &self.loaded)?)
    }
}

/// Parse a provider name as preset files spell it.
pub(crate) fn parse_provider(provider: &str) -> Result<Provider, CliError> {
    provider
        .parse()
        .map_err(|e: UnknownProvider| CliError::usage_with(e.to_string(), Some(e.help())))
}

/// A step that failed to render (exit 1), its diagnostics ready to print.
pub(crate) fn render_failed(ds: Diagnostics, workspace: &Workspace) -> CliError {
    CliError::Diagnostics {
        list: explain_missing(ds),
        exit: Exit::Invalid,
        sources: workspace.presets.source_files(),
    }
}

/// The provider lint for the endpoint actually used, run once
/// ([`project::endpoint::lint`](crate::project::endpoint::lint)). Errors stop the command
/// (exit 1); anything else is printed on stderr. The linted tools go to the agent.
pub(crate) fn lint_endpoint(
    preset: &ValidPreset,
    settings: &ModelSettings,
    workspace: &Workspace,
    io: &mut Io<'_>,
) -> Result<LintedTools, CliError> {
    let linted = crate::project::endpoint::lint(preset, settings, &workspace.presets);
    let found = linted.diagnostics();
    if found.is_empty() {
        return Ok(linted);
    }
    let sources = workspace.presets.source_files();
    if linted.refused() {
        return Err(CliError::Diagnostics {
            list: found.to_vec(),
            exit: Exit::Invalid,
            sources,
        });
    }
    let renderer = HumanRenderer::new(io.err_style, &sources, found);
    io.err.write_all(renderer.render_all(found).as_bytes())?;
    Ok(linted)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--base-url` moves the endpoint but keeps the preset's explicit `strictTools`.
    #[test]
    fn base_url_keeps_an_explicit_strict_tools() {
        let settings = |yaml: &str, base_url: &str| {
            let mut presets = crate::preset::PresetCatalog::builtin();
            presets.add_text("p", "p.yaml", yaml).unwrap();
            let tools = crate::tools::ToolCatalog::builtin();
            let v = crate::preset::validate_in_catalog(&presets, "p", &tools);
            let preset = v.preset.unwrap_or_else(|| panic!("{:?}", v.diagnostics));
            let values = ValueArgs {
                vars: Vec::new(),
                var_files: Vec::new(),
                loaded: OnceLock::new(),
                model: None,
                provider: None,
                cwd: None,
                locale: None,
            };
            let model = ModelArgs {
                base_url: Some(base_url.to_owned()),
                max_tokens: None,
            };
            values
                .model_settings(&preset, &model)
                .map(|s| s.map(|s| s.strict_tools))
        };
        let openai = "version: 1\nname: p\nextends: minimal\nmodel: {provider: openai, name: m, strictTools: false}\n";
        assert_eq!(
            settings(openai, "http://127.0.0.1:9/v1").unwrap(),
            Some(false)
        );
        let default = "version: 1\nname: p\nextends: minimal\nmodel: {provider: openai, name: m}\n";
        assert_eq!(
            settings(default, "http://127.0.0.1:9/v1").unwrap(),
            Some(true)
        );
        let beta = "version: 1\nname: p\nextends: minimal\nmodel: {provider: deepseek, name: m, baseUrl: 'https://api.deepseek.com/beta', strictTools: true}\n";
        assert_eq!(
            settings(beta, "http://127.0.0.1:9/beta").unwrap(),
            Some(true)
        );
        assert!(matches!(
            settings(beta, "https://api.deepseek.com"),
            Err(CliError::Usage { .. })
        ));
    }

    #[test]
    fn vars_split_at_the_first_equals_sign() {
        assert_eq!(parse_var("a=b=c"), Ok(("a".into(), "b=c".into())));
        assert_eq!(parse_var("a="), Ok(("a".into(), String::new())));
        assert!(parse_var("=b").is_err());
        assert!(parse_var("ab").is_err());
    }
}
