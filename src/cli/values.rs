//! The values a step is rendered with, from the command line and the machine: shared by
//! `render` and `run`.
//!
//! `cwd`, `os`, `shell` and `date` come from the real environment (`--cwd` overrides the
//! working directory); `model` and `provider` from the preset's `model` block, overridden
//! by `--model` / `--provider`; then each `--var-file` in order, then `--var k=v`, so the
//! last value given wins. Values are read as the type the preset declares for them.
//! `tools` is derived from the visible tools and cannot be set.

use clap::Args;

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use minijinja::Value;

use super::environment;
use super::snippet::HumanRenderer;
use super::workspace::Workspace;
use super::{CliError, Exit, Io};
use crate::bounded::{BoundedReadError, byte_size, read_bounded_or_pipe, read_stream_bounded};
use crate::diagnostic::{Diagnostic, DiagnosticKind, Diagnostics, Span};
use crate::preset::ValidPreset;
use crate::preset::catalog::STDIN_DISPLAY;
use crate::preset::source::{MAX_PRESET_FILE_BYTES, SourceFile};
use crate::preset::spec::Provider;
use crate::preset::values_file::{ValueEntry, ValuesFile};
use crate::prompt::{
    MODEL_VARIABLE, PROVIDER_VARIABLE, RUNTIME_CONTEXT_VARIABLE, TOOLS_VARIABLE, Values,
    is_derived_variable,
};
use crate::provider::lint::LintMemo;
use crate::provider::{ModelSettings, is_deepseek_beta};
use crate::source_files::{SourceFiles, SourceText};
use crate::suggest::help_did_you_mean;

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

    /// The values for `preset`, with `cwd` as the working directory.
    pub(crate) fn values(&self, preset: &ValidPreset, cwd: String) -> Result<Values, CliError> {
        let assembler = preset.assembler();
        let mut values = Values::new();
        values.set("cwd", cwd);
        values.set("os", environment::os());
        values.set("shell", environment::shell());
        values.set("sandbox", preset.sandbox_mode().as_str());
        values.set("date", environment::today_utc());
        if let Some(model) = preset.model() {
            values.set("model", model.name.value.clone());
            values.set("provider", model.provider.value.as_str());
        }
        if let Some(model) = &self.model {
            values.set("model", model.clone());
        }
        if let Some(provider) = self.provider()? {
            values.set("provider", provider.as_str());
        }
        let known: Vec<&str> = assembler
            .known_variables()
            .filter(|v| !is_derived_variable(v))
            .collect();
        // Files first, in order, then `--var`: the last value given wins.
        let mut sources = SourceFiles::new();
        let mut problems: Vec<Diagnostic> = Vec::new();
        let mut exit = Exit::Invalid;
        for loaded in self.var_files()?.iter() {
            let file = match loaded {
                Ok(file) => file,
                Err((list, read)) => {
                    if let Some((display, text)) = read {
                        sources.insert(display.clone(), text.clone());
                    }
                    problems.extend(list.iter().cloned());
                    exit = Exit::Usage;
                    continue;
                }
            };
            sources.insert(file.source.display.clone(), file.source.source_text());
            for entry in &file.entries {
                let key = entry.name.as_str();
                if is_derived_variable(key) || !known.contains(&key) {
                    problems.push(unknown_in_file(key, &known, &file.source.display, entry));
                    exit = Exit::Usage;
                    continue;
                }
                match typed_value(preset, key, &entry.text) {
                    Ok(value) => {
                        values.set(key, value);
                    }
                    Err(d) => problems.push(d.at(entry.span.clone())),
                }
            }
        }
        for (key, value) in &self.vars {
            if key == TOOLS_VARIABLE {
                return Err(CliError::usage_with(
                    "`tools` cannot be set: it is derived from the preset's visible tools",
                    Some(
                        "narrow the tools in the preset (`tools: { allow: [...] }`) instead".into(),
                    ),
                ));
            }
            if key == RUNTIME_CONTEXT_VARIABLE {
                return Err(CliError::usage_with(
                    "`runtime_context` cannot be set: it says whether the preset sends runtime context",
                    Some("set `persona.includeRuntimeContext` in the preset instead".into()),
                ));
            }
            if !known.contains(&key.as_str()) {
                let help = help_did_you_mean(key, known.iter().copied())
                    .or_else(|| Some(format!("known variables: {}", known.join(", "))));
                return Err(CliError::usage_with(
                    format!("unknown variable `{key}` in `--var {key}=…`"),
                    help,
                ));
            }
            match typed_value(preset, key, value) {
                Ok(value) => {
                    values.set(key.clone(), value);
                }
                Err(d) => problems.push(d),
            }
        }
        if !problems.is_empty() {
            return Err(CliError::Diagnostics {
                list: problems,
                exit,
                sources,
            });
        }
        Ok(values)
    }
}

/// A name in a values file that the preset does not know (or a derived one): a usage error at
/// the name, with "did you mean".
fn unknown_in_file(key: &str, known: &[&str], file: &str, entry: &ValueEntry) -> Diagnostic {
    let (message, help) = if is_derived_variable(key) {
        (
            format!("`{key}` cannot be set (in `{file}`): it is derived from the preset"),
            if key == TOOLS_VARIABLE {
                "narrow the tools in the preset instead".to_owned()
            } else {
                "set `persona.includeRuntimeContext` in the preset instead".to_owned()
            },
        )
    } else {
        (
            format!("unknown variable `{key}` in `{file}`"),
            help_did_you_mean(key, known.iter().copied())
                .unwrap_or_else(|| format!("known variables: {}", known.join(", "))),
        )
    };
    Diagnostic::new(DiagnosticKind::UnknownVariable, message)
        .at(entry.name_span.clone())
        .help(help)
}

/// The argument of `--var-file` that means standard input.
const STDIN_ARG: &str = "-";

/// One `--var-file`, parsed; or the diagnostics and (when it was read) the text they
/// point into.
type LoadedVarFile = Result<ValuesFile, (Vec<Diagnostic>, Option<(Arc<str>, SourceText)>)>;

/// Read and parse one `--var-file`, bounded like a preset file: `-` is standard input
/// (shown as `<stdin>`), and a pipe the user names (`<(cmd)`, a FIFO) is read as it
/// comes, since they asked for it.
fn read_var_file(path: &Path) -> LoadedVarFile {
    let limit = MAX_PRESET_FILE_BYTES as u64;
    let (display, read): (Arc<str>, _) = if path.as_os_str() == STDIN_ARG {
        (
            STDIN_DISPLAY.into(),
            read_stream_bounded(std::io::stdin().lock(), limit),
        )
    } else {
        (
            path.to_string_lossy().into(),
            read_bounded_or_pipe(path, limit),
        )
    };
    let bytes = read.map_err(|e| {
        let what = if path.as_os_str() == STDIN_ARG {
            "standard input (`--var-file -`)".to_owned()
        } else {
            format!("`--var-file {display}`")
        };
        let d = match e {
            // A size limit, like a preset file's (README: Limits).
            BoundedReadError::TooLarge { .. } => Diagnostic::new(
                DiagnosticKind::LimitExceeded,
                format!("cannot read {what}: {e}"),
            )
            .at(Span::new(display.clone(), 1, 1))
            .help(format!(
                "a values file may hold at most {}: values are short; long text belongs in a `textFile` of the preset",
                byte_size(limit)
            )),
            e => Diagnostic::new(DiagnosticKind::Io, format!("cannot read {what}: {e}")).help(
                "give a YAML or JSON file mapping variable names to values, e.g. `focus: security`",
            ),
        };
        (vec![d], None)
    })?;
    ValuesFile::parse(display.clone(), &bytes).map_err(|ds| {
        (
            ds.into_vec(),
            Some((display, SourceFile::lossy_text(&bytes))),
        )
    })
}

/// The value of `--var key=text`: typed as the preset declares `key` (`type`, `enum`);
/// a value that does not fit is an invalid render (exit 1) naming the variable and, for
/// an `enum`, the choices. Built-in variables take text.
fn typed_value(preset: &ValidPreset, key: &str, text: &str) -> Result<Value, Diagnostic> {
    match preset.assembler().declaration(key) {
        Some(decl) => decl.parse_value(text),
        None => Ok(Value::from(text)),
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
        let from_preset = preset.model().map(ModelSettings::from_spec);
        let mut settings = match (self.provider()?, from_preset) {
            (Some(p), Some(s)) if p == s.provider => s,
            (Some(p), Some(s)) => ModelSettings::new(p, s.name),
            (Some(p), None) => {
                match &self.model {
                    Some(name) => ModelSettings::new(p, name.clone()),
                    None => {
                        return Err(CliError::usage_with(
                        format!("`--provider {p}` needs `--model NAME`: the preset has no `model` block"),
                        Some("name the model as the provider spells it, e.g. `--model gpt-5-mini`".into()),
                    ));
                    }
                }
            }
            (None, Some(s)) => s,
            (None, None) => return Ok(None),
        };
        if let Some(name) = &self.model {
            settings = settings.with_model(name.clone());
        }
        if let Some(url) = &model.base_url {
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(CliError::usage_with(
                    format!("`--base-url` must be an http(s) URL, not `{url}`"),
                    Some("e.g. `--base-url http://127.0.0.1:8080/v1`".into()),
                ));
            }
            settings = settings.with_base_url(url.clone());
            // A new root resets strict mode to the provider's default there; the preset's
            // explicit `strictTools` still holds for its own provider.
            let explicit = preset
                .model()
                .filter(|spec| spec.provider.value == settings.provider)
                .and_then(|spec| spec.strict_tools.as_ref());
            if let Some(strict) = explicit {
                if strict.value
                    && settings.provider == Provider::Deepseek
                    && !is_deepseek_beta(&settings.base_url)
                {
                    return Err(CliError::usage_with(
                        format!(
                            "the preset sets `strictTools: true`, which DeepSeek supports only at its beta root, not at `{url}`"
                        ),
                        Some("pass the beta root (`--base-url https://api.deepseek.com/beta`), or set `strictTools: false`".into()),
                    ));
                }
                settings = settings.with_strict_tools(strict.value);
            }
        }
        if let Some(max) = model.max_tokens {
            settings = settings.with_max_tokens(max);
        }
        if settings.base_url.is_empty() {
            return Err(CliError::usage_with(
                format!("provider `{}` needs a base URL", settings.provider),
                Some("set `model.baseUrl` in the preset or pass `--base-url URL` (the server's API root, e.g. `http://127.0.0.1:8080/v1`)".into()),
            ));
        }
        Ok(Some(settings))
    }

    /// Refuse `--var model=…` / `--var provider=…` (or those names in a `--var-file`)
    /// where the model actually called must be what the prompt says (`run`): those come
    /// from `--model` / `--provider`.
    pub(crate) fn refuse_model_vars(&self) -> Result<(), CliError> {
        for (key, _) in &self.vars {
            if key == MODEL_VARIABLE || key == PROVIDER_VARIABLE {
                return Err(CliError::usage_with(
                    format!(
                        "`--var {key}=…` would make the prompt name another model than the one called"
                    ),
                    Some(format!("use `--{key} …` instead")),
                ));
            }
        }
        for (file, key) in self.file_keys() {
            if key == MODEL_VARIABLE || key == PROVIDER_VARIABLE {
                return Err(CliError::usage_with(
                    format!(
                        "`{key}` in `--var-file {file}` would make the prompt name another model than the one called"
                    ),
                    Some(format!(
                        "use `--{key} …` instead, and remove `{key}` from the file"
                    )),
                ));
            }
        }
        Ok(())
    }

    /// Does `--var` or a `--var-file` set `key` (so the caller must not replace it)?
    pub(crate) fn pins(&self, key: &str) -> bool {
        self.vars.iter().any(|(k, _)| k == key) || self.file_keys().iter().any(|(_, k)| k == key)
    }

    /// `(file, name)` of every name the `--var-file`s that can be read set. (Files that
    /// cannot be read are reported by [`ValueArgs::values`].)
    fn file_keys(&self) -> Vec<(String, String)> {
        let Ok(loaded) = self.var_files() else {
            return Vec::new();
        };
        loaded
            .iter()
            .filter_map(|file| file.as_ref().ok())
            .flat_map(|file| {
                let shown = file.source.display.to_string();
                file.entries
                    .iter()
                    .map(move |e| (shown.clone(), e.name.clone()))
            })
            .collect()
    }

    /// Refuse a second reader of standard input: the preset `-` and `--var-file -`.
    pub(crate) fn check_stdin(&self, preset_arg: &str) -> Result<(), CliError> {
        if preset_arg == STDIN_ARG && self.var_files.iter().any(|p| p.as_os_str() == STDIN_ARG) {
            return Err(CliError::usage_with(
                "the preset `-` and `--var-file -` both read standard input, which can be read only once",
                Some(
                    "give the values in a file (`--var-file values.yaml`), or the preset as a path"
                        .into(),
                ),
            ));
        }
        Ok(())
    }

    /// Every `--var-file`, read and parsed the first time it is needed. Standard input
    /// may be given once.
    fn var_files(&self) -> Result<&[LoadedVarFile], CliError> {
        if self
            .var_files
            .iter()
            .filter(|p| p.as_os_str() == STDIN_ARG)
            .count()
            > 1
        {
            return Err(CliError::usage_with(
                "`--var-file -` is given twice, but standard input can be read only once",
                Some("put all the values into one file on standard input".into()),
            ));
        }
        Ok(self
            .loaded
            .get_or_init(|| self.var_files.iter().map(|p| read_var_file(p)).collect()))
    }
}

/// Parse a provider name as preset files spell it.
pub(crate) fn parse_provider(provider: &str) -> Result<Provider, CliError> {
    if let Some(p) = Provider::ALL.iter().find(|p| p.as_str() == provider) {
        return Ok(*p);
    }
    let names: Vec<&str> = Provider::ALL.iter().map(|p| p.as_str()).collect();
    let help = help_did_you_mean(provider, names.iter().copied())
        .unwrap_or_else(|| format!("providers: {}", names.join(", ")));
    Err(CliError::usage_with(
        format!("unknown provider `{provider}`"),
        Some(help),
    ))
}

/// A step that failed to render (exit 1), its diagnostics ready to print.
pub(crate) fn render_failed(ds: Diagnostics, workspace: &Workspace) -> CliError {
    CliError::Diagnostics {
        list: ds.into_iter().map(explain_missing).collect(),
        exit: Exit::Invalid,
        sources: workspace.presets.source_files(),
    }
}

/// What the endpoint `settings` describes would refuse in the tools `preset` sends it.
/// `memo` is the catalog's: the endpoint validation already linted (the preset's own)
/// is answered from it, not linted again.
fn endpoint_problems(
    preset: &ValidPreset,
    settings: &ModelSettings,
    memo: &LintMemo,
) -> Vec<Diagnostic> {
    let tools = crate::provider::wire_tools(settings, preset.assembler().registry());
    memo.lint_tools(settings, &tools)
}

/// The provider lint for the endpoint actually used. Validation linted the tools against
/// the preset's own `model` block; `--provider`, `--base-url` or a dialect switch
/// (`render --format anthropic`) may pick another endpoint, whose rules are checked here
/// before anything is rendered or sent. Errors stop the command (exit 1); anything else
/// is printed on stderr.
pub(crate) fn lint_endpoint(
    preset: &ValidPreset,
    settings: &ModelSettings,
    workspace: &Workspace,
    io: &mut Io<'_>,
) -> Result<(), CliError> {
    let found = endpoint_problems(preset, settings, workspace.presets.lint_memo());
    if found.is_empty() {
        return Ok(());
    }
    let sources = workspace.presets.source_files();
    if found.iter().any(Diagnostic::is_error) {
        return Err(CliError::Diagnostics {
            list: found,
            exit: Exit::Invalid,
            sources,
        });
    }
    let renderer = HumanRenderer::new(io.err_style, &sources, &found);
    io.err.write_all(renderer.render_all(&found).as_bytes())?;
    Ok(())
}

/// A missing `model` or `provider` means the preset has no `model` block: say which flag
/// supplies it.
fn explain_missing(d: Diagnostic) -> Diagnostic {
    if d.kind != DiagnosticKind::MissingValue {
        return d;
    }
    for (var, flag) in [("model", "--model NAME"), ("provider", "--provider NAME")] {
        if d.message.contains(&format!("variable `{var}`")) {
            return d.help(format!(
                "this preset has no `model` block: pass `{flag}` (or `--var {var}=…`)"
            ));
        }
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(
            endpoint_problems(&preset, &own, &LintMemo::default()),
            Vec::new()
        );
        for provider in [
            Provider::Openai,
            Provider::Deepseek,
            Provider::OpenaiCompatible,
        ] {
            let other = ModelSettings::new(provider, "m").with_base_url("http://127.0.0.1:9");
            let found = endpoint_problems(&preset, &other, &LintMemo::default());
            let kinds: Vec<_> = found.iter().map(|d| d.kind).collect();
            assert_eq!(kinds, [DiagnosticKind::ToolNameRejected], "{found:?}");
            assert!(found[0].message.contains(&long), "{found:?}");
        }
    }

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
