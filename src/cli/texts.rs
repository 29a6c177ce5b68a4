//! `texts [PRESET] [ID]`: every text id the model may read, with where its text comes
//! from (built-in, a locale pack, a preset's `texts:`), or one text in full with the
//! placeholders and protected tokens a replacement keeps.

use clap::{Args, ValueEnum};

use super::workspace::Workspace;
use super::{CliError, Exit, GlobalArgs, Io};
use crate::preset::texts::{
    TextRow, has_own_tool_texts, help_for_unknown_id, locale_texts, text_rows,
};
use crate::texts::TextSource;

/// Arguments of `texts`.
#[derive(Debug, Args)]
pub(crate) struct TextsArgs {
    /// The preset whose texts to list (a name or a file); without it, every text id with
    /// its built-in (or `--locale`) text. An argument with a `.` that is not a file is
    /// taken as an ID.
    #[arg(value_name = "PRESET|ID", id = "id_or_preset")]
    preset: Option<String>,
    /// Show this one text in full.
    #[arg(value_name = "ID")]
    id: Option<String>,
    /// Apply this locale's pack instead of the preset's `locale`.
    #[arg(long, value_name = "LOCALE")]
    locale: Option<String>,
    /// Output format: a table (or the one text), or the whole catalog (or the one text) as
    /// JSON.
    #[arg(long, value_enum, default_value_t = TextsFormat::Human)]
    format: TextsFormat,
    /// With an ID: put VALUE into the text's `{{ KEY }}` placeholder (repeatable).
    #[arg(long = "var", value_name = "KEY=VALUE", requires = "id_or_preset")]
    vars: Vec<String>,
}

/// How `texts` prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum TextsFormat {
    /// `ID  SOURCE` rows, or one text with its header.
    Human,
    /// `{"texts": [{"id", "source", "text", "placeholders", "protected"}], "ownTexts"}`,
    /// or the one text's object.
    Json,
}

pub(crate) fn run(
    global: &GlobalArgs,
    args: &TextsArgs,
    io: &mut Io<'_>,
) -> Result<Exit, CliError> {
    let mut workspace = Workspace::discover(global)?;
    if let Some(locale) = args.locale.clone() {
        workspace.presets.set_locale(Some(locale));
    }
    // `texts tool.read_file.description`: an id, not a preset.
    let (preset, id) = match (&args.preset, &args.id) {
        (Some(p), None) if looks_like_id(p) => (None, Some(p.as_str())),
        (p, id) => (p.as_deref(), id.as_deref()),
    };
    let mut own_texts = false;
    let rows = match preset {
        Some(name) => {
            let preset = workspace.valid_preset(name, io)?;
            let chain: Vec<&crate::preset::ParsedPreset> = preset.chain().iter().collect();
            own_texts = has_own_tool_texts(&chain);
            text_rows(Some(&chain), preset.texts())
        }
        None => {
            let (texts, problems) = locale_texts(workspace.presets.packs(), args.locale.as_deref());
            if problems.iter().any(crate::Diagnostic::is_error) {
                return Err(CliError::Diagnostics {
                    list: problems,
                    exit: Exit::Invalid,
                    sources: workspace.presets.source_files(),
                });
            }
            text_rows(None, &texts)
        }
    };
    let mut values = Vec::new();
    for v in &args.vars {
        let Some((k, val)) = v.split_once('=') else {
            return Err(CliError::usage_with(
                format!("`--var {v}` has no `=`"),
                Some("write `--var KEY=VALUE`, e.g. `--var tool=bash`".to_owned()),
            ));
        };
        values.push((k.to_owned(), val.to_owned()));
    }
    if !values.is_empty() && id.is_none() {
        return Err(CliError::usage_with(
            "`--var` fills in the placeholders of one text, but no ID was given",
            Some("name the text: `agent-presets texts [PRESET] ID --var KEY=VALUE`".to_owned()),
        ));
    }
    let text = match id {
        Some(id) => {
            let Some(row) = rows.iter().find(|r| r.id == id) else {
                return Err(CliError::usage_with(
                    format!("no text has the id `{id}`"),
                    Some(help_for_unknown_id(id)),
                ));
            };
            let mut row = row.clone();
            if !values.is_empty() {
                row.text = row.render(&values).map_err(|e| {
                    CliError::usage_with(
                        e,
                        Some("give `--var` only for the placeholders the text lists".to_owned()),
                    )
                })?;
            }
            match args.format {
                TextsFormat::Human => one(&row),
                TextsFormat::Json => json_text(&row.to_json()),
            }
        }
        None => match args.format {
            TextsFormat::Human => {
                let mut out = table(&rows);
                if own_texts {
                    out.push_str(OWN_TEXTS_NOTE);
                    out.push('\n');
                }
                out
            }
            TextsFormat::Json => json_text(&serde_json::json!({
                "texts": rows.iter().map(TextRow::to_json).collect::<Vec<_>>(),
                "ownTexts": own_texts.then_some(OWN_TEXTS_NOTE),
            })),
        },
    };
    io.out.write_all(text.as_bytes())?;
    Ok(Exit::Ok)
}

/// What `texts` says of a preset with command tools or MCP servers.
const OWN_TEXTS_NOTE: &str = "note: command tools and MCP servers keep their own texts (descriptions, parameters, results and errors, as their authors write them): they have no ids here and no pack translates them";

fn json_text(value: &serde_json::Value) -> String {
    let mut out = serde_json::to_string_pretty(value).unwrap_or_default();
    out.push('\n');
    out
}

fn looks_like_id(arg: &str) -> bool {
    arg.contains('.') && !arg.contains('/') && !arg.ends_with(".yaml") && !arg.ends_with(".yml")
}

fn source(s: &TextSource) -> String {
    s.describe()
}

fn table(rows: &[TextRow]) -> String {
    let width = rows.iter().map(|r| r.id.len()).max().unwrap_or(2).max(2);
    let mut out = format!("{:width$}  SOURCE\n", "ID");
    for r in rows {
        out.push_str(&format!("{:width$}  {}\n", r.id, source(&r.source)));
    }
    out
}

fn one(row: &TextRow) -> String {
    let list = |items: &[String], wrap: bool| {
        if items.is_empty() {
            "(none)".to_owned()
        } else {
            items
                .iter()
                .map(|i| {
                    if wrap {
                        format!("{{{{ {i} }}}}")
                    } else {
                        i.clone()
                    }
                })
                .collect::<Vec<_>>()
                .join(", ")
        }
    };
    let mut out = format!(
        "id: {}\nsource: {}\nplaceholders: {}\nprotected: {}\n---\n{}",
        row.id,
        source(&row.source),
        list(&row.placeholders, true),
        list(&row.protected, false),
        row.text
    );
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out
}
