//! `render NAME`: the exact system prompt, tools (wire order) and runtime context a
//! preset sends, with the fingerprint of the cacheable prefix and the token counts
//! (o200k_base) — or, with
//! `--format openai|anthropic`, the exact JSON body of the first request `run` would send
//! (no network, no key needed).
//!
//! The values come from [`ValueArgs`](super::values::ValueArgs).

use clap::{Args, ValueEnum};

use super::values::{ModelArgs, ValueArgs, lint_endpoint, render_failed};
use super::workspace::Workspace;
use super::{CliError, Exit, GlobalArgs, Io};
use crate::preset::ProvenanceError;
use crate::project::endpoint::for_dialect;
use crate::prompt::{ContextSnapshot, MODEL_VARIABLE, PROVIDER_VARIABLE};
use crate::provider::{self, Dialect};
use crate::report::explain;
use crate::report::render::{TokenCounts, json_output, text_output};
use crate::report::{MachineFormat, pretty};
use crate::request::{Message, RequestEnvelope};

/// Arguments of `render`.
#[derive(Debug, Args)]
pub(crate) struct RenderArgs {
    /// The preset to render: a name, a file (an argument containing `/` or ending in
    /// `.yaml`/`.yml`), or `-` to read one preset from standard input.
    #[arg(value_name = "NAME|PATH|-")]
    name: String,
    #[command(flatten)]
    values: ValueArgs,
    #[command(flatten)]
    model: ModelArgs,
    /// The user's first message, for `--format openai|anthropic` (without it the
    /// messages hold only the runtime-context snapshot).
    #[arg(long, value_name = "TEXT")]
    prompt: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = RenderFormat::Text)]
    format: RenderFormat,
    /// Instead of the request, show where each piece comes from: every section and
    /// context with its order, source `file:line`, whether it is in the cacheable prefix,
    /// its bytes and tokens; every tool with the rule that admitted it and its tokens.
    #[arg(long)]
    explain: bool,
    /// Instead of the request, show what this preset changes against OTHER (another
    /// preset, or the built-in it extends): per section, tool and text, as lock drift.
    #[arg(long, value_name = "OTHER", conflicts_with = "explain")]
    diff_against: Option<String>,
}

/// How `render` prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum RenderFormat {
    /// Labelled blocks: system, tools, context, fingerprint, token counts.
    Text,
    /// `{"preset", "model", "system", "tools", "context", "fingerprint", "tokens"}`.
    Json,
    /// The OpenAI Chat Completions request body (DeepSeek, OpenAI, compatible servers).
    Openai,
    /// The Anthropic Messages request body.
    Anthropic,
}

impl RenderArgs {
    /// `--format json` (the request bodies of `openai`/`anthropic` are not reports).
    pub(crate) fn machine_format(&self) -> Option<MachineFormat> {
        (self.format == RenderFormat::Json).then_some(MachineFormat::Json)
    }
}

pub(crate) fn run(
    global: &GlobalArgs,
    args: &RenderArgs,
    io: &mut Io<'_>,
) -> Result<Exit, CliError> {
    args.values.check_stdin(&args.name)?;
    let mut workspace = Workspace::discover(global)?;
    if let Some(locale) = args.values.locale.clone() {
        workspace.presets.set_locale(Some(locale));
    }
    let preset = workspace.valid_preset(&args.name, io)?;
    if let Some(other) = &args.diff_against {
        let other = workspace.valid_preset(other, io)?;
        let text = crate::project::lock::compare(&preset, &other)
            .map_err(|e| CliError::usage(e.to_string()))?
            .unwrap_or_else(|| {
                format!(
                    "`{}` changes nothing against `{}`\n",
                    preset.name(),
                    other.name()
                )
            });
        io.out.write_all(text.as_bytes())?;
        return Ok(Exit::Ok);
    }
    // Checked and made absolute as `run` does: a missing directory is refused alike.
    let cwd = crate::project::run_setup::working_directory(args.values.cwd.as_deref())?
        .to_string_lossy()
        .into_owned();
    let mut settings = args.values.model_settings(&preset, &args.model)?;
    if args.explain && matches!(args.format, RenderFormat::Openai | RenderFormat::Anthropic) {
        return Err(CliError::usage_with(
            "`--explain` shows provenance as text or JSON, not a request body",
            Some("use `--explain` alone or with `--format json`".into()),
        ));
    }
    let dialect = match args.format {
        RenderFormat::Openai => Some(Dialect::OpenAi),
        RenderFormat::Anthropic => Some(Dialect::Anthropic),
        RenderFormat::Text | RenderFormat::Json => None,
    };
    let mut values = args.values.values(&preset, cwd)?;
    let body_settings = match dialect {
        Some(dialect) => {
            let s = for_dialect(settings.take(), dialect)?;
            // The prompt and fingerprint name the model the body goes to, unless `--var`
            // or a `--var-file` pinned them.
            let pinned = |key: &str| args.values.pins(key);
            if !pinned(PROVIDER_VARIABLE) {
                values.set(PROVIDER_VARIABLE, s.provider.as_str());
            }
            if !pinned(MODEL_VARIABLE) {
                values.set(MODEL_VARIABLE, s.name.clone());
            }
            Some(s)
        }
        None => None,
    };
    // The endpoint may not be the one the preset was validated against.
    if let Some(endpoint) = body_settings.as_ref().or(settings.as_ref()) {
        lint_endpoint(&preset, endpoint, &workspace, io)?;
    }
    let assembly = preset
        .assembler()
        .assemble(&values)
        .map_err(|ds| render_failed(ds, &workspace))?;
    if args.explain {
        let provenance = preset.provenance(&values).map_err(|e| match e {
            ProvenanceError::Render(ds) => render_failed(ds, &workspace),
            ProvenanceError::Tokenizer(e) => CliError::usage(e.to_string()),
        })?;
        let text = match args.format {
            RenderFormat::Json => explain::json(
                preset.name(),
                &provenance,
                &assembly.fingerprint.to_string(),
            ),
            _ => explain::text(&provenance, &assembly.fingerprint.to_string()),
        };
        io.out.write_all(text.as_bytes())?;
        return Ok(Exit::Ok);
    }
    let text = match (args.format, body_settings) {
        (_, Some(settings)) => {
            let mut history: Vec<Message> = args.prompt.iter().map(Message::user).collect();
            let mut snapshot = ContextSnapshot::new();
            snapshot.use_texts(preset.assembler().texts());
            let request = RequestEnvelope::build(&assembly, &mut history, &mut snapshot);
            let tools = provider::wire_tools(&settings, preset.assembler().registry());
            pretty(&provider::request_body(&settings, &request, &tools, true))
        }
        (RenderFormat::Json, None) => {
            let counts = TokenCounts::of(&assembly).map_err(|e| CliError::usage(e.to_string()))?;
            json_output(preset.name(), settings.as_ref(), &assembly, &counts)
        }
        (_, None) => text_output(
            &assembly,
            &TokenCounts::of(&assembly).map_err(|e| CliError::usage(e.to_string()))?,
        ),
    };
    io.out.write_all(text.as_bytes())?;
    Ok(Exit::Ok)
}
