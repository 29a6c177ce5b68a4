//! `explain [CODE]`: the page of a diagnostic code (what it means, an example that
//! triggers it, the fix), or the list of every code.

use clap::{Args, ValueEnum};
use serde_json::{Value, json};

use super::{CliError, Exit, GlobalArgs, Io};
use crate::codes::CodePage;
use crate::report::pretty;
use crate::suggest::help_did_you_mean;

/// Arguments of `explain`.
#[derive(Debug, Args)]
pub(crate) struct ExplainArgs {
    /// A code (`P0103`, `p0103`) or a kind (`unknown-tool`). Without it, every code is
    /// listed.
    #[arg(value_name = "CODE")]
    code: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ExplainFormat::Text)]
    format: ExplainFormat,
}

/// How `explain` prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum ExplainFormat {
    /// The page as Markdown (or, without CODE, one line per code).
    Text,
    /// `{"code", "kind", "severity", "summary", "meaning", "example", "fix", "url"}` (or,
    /// without CODE, `{"codes": [...]}`).
    Json,
}

pub(crate) fn run(
    _global: &GlobalArgs,
    args: &ExplainArgs,
    io: &mut Io<'_>,
) -> Result<Exit, CliError> {
    let text = match &args.code {
        Some(query) => {
            let page = CodePage::lookup(query).ok_or_else(|| unknown_code(query))?;
            match args.format {
                ExplainFormat::Text => text_page(page, io),
                ExplainFormat::Json => pretty(&page_json(page)),
            }
        }
        None => match args.format {
            ExplainFormat::Text => text_list(io),
            ExplainFormat::Json => {
                let codes: Vec<Value> = CodePage::all().iter().map(page_json).collect();
                pretty(&json!({ "codes": codes }))
            }
        },
    };
    io.out.write_all(text.as_bytes())?;
    Ok(Exit::Ok)
}

fn unknown_code(query: &str) -> CliError {
    let candidates = CodePage::all()
        .iter()
        .flat_map(|p| [p.kind().code(), p.kind().name()]);
    let suggestion = help_did_you_mean(&query.to_ascii_lowercase(), candidates.clone())
        .or_else(|| help_did_you_mean(&query.to_ascii_uppercase(), candidates));
    CliError::usage_with(
        format!("no diagnostic code or kind `{query}`"),
        Some(
            suggestion
                .unwrap_or_else(|| "run `agent-presets explain` to list every code".to_owned()),
        ),
    )
}

/// The page's Markdown, then where it lives online.
fn text_page(page: &CodePage, io: &Io<'_>) -> String {
    let markdown = page.markdown().trim_end();
    let (title, rest) = markdown.split_once('\n').unwrap_or((markdown, ""));
    format!(
        "{}\n{rest}\n\n{}\n",
        io.out_style.bold(title),
        io.out_style.dim(format!("Online: {}", page.url()))
    )
}

/// `P0103  unknown-tool        A tool name no registry knows …`, one per code.
fn text_list(io: &Io<'_>) -> String {
    let width = CodePage::all()
        .iter()
        .map(|p| p.kind().name().len())
        .max()
        .unwrap_or(0);
    let mut out = String::new();
    for page in CodePage::all() {
        let kind = page.kind();
        out.push_str(&format!(
            "{}  {:width$}  {}\n",
            io.out_style.bold(kind.code()),
            kind.name(),
            page.summary()
        ));
    }
    out.push_str("\nRun `agent-presets explain CODE` for a code's page.\n");
    out
}

fn page_json(page: &CodePage) -> Value {
    let kind = page.kind();
    json!({
        "code": kind.code(),
        "kind": kind.name(),
        "severity": kind.severity().as_str(),
        "summary": page.summary(),
        "meaning": page.meaning(),
        "example": page.example(),
        "fix": page.fix(),
        "url": page.url(),
    })
}
