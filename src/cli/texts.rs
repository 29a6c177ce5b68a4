//! `texts [PRESET] [ID]`: every text id the model may read, with where its text comes
//! from (built-in, a locale pack, a preset's `texts:`), or one text in full with the
//! placeholders and protected tokens a replacement keeps.

use clap::Args;

use super::workspace::Workspace;
use super::{CliError, Exit, GlobalArgs, Io};
use crate::preset::texts::{TextRow, help_for_unknown_id, locale_texts, text_rows};
use crate::texts::TextSource;

/// Arguments of `texts`.
#[derive(Debug, Args)]
pub(crate) struct TextsArgs {
    /// The preset whose texts to list (a name or a file); without it, every text id with
    /// its built-in (or `--locale`) text. An argument with a `.` that is not a file is
    /// taken as an ID.
    #[arg(value_name = "PRESET|ID")]
    preset: Option<String>,
    /// Show this one text in full.
    #[arg(value_name = "ID")]
    id: Option<String>,
    /// Apply this locale's pack instead of the preset's `locale`.
    #[arg(long, value_name = "LOCALE")]
    locale: Option<String>,
}

pub(crate) fn run(
    global: &GlobalArgs,
    args: &TextsArgs,
    io: &mut Io<'_>,
) -> Result<Exit, CliError> {
    let mut workspace = Workspace::discover(global)?;
    workspace.presets.set_locale(args.locale.clone());
    // `texts tool.read_file.description`: an id, not a preset.
    let (preset, id) = match (&args.preset, &args.id) {
        (Some(p), None) if looks_like_id(p) => (None, Some(p.as_str())),
        (p, id) => (p.as_deref(), id.as_deref()),
    };
    let rows = match preset {
        Some(name) => {
            let preset = workspace.valid_preset(name, io)?;
            let chain: Vec<&crate::preset::ParsedPreset> = preset.chain().iter().collect();
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
    let text = match id {
        Some(id) => {
            let Some(row) = rows.iter().find(|r| r.id == id) else {
                return Err(CliError::usage_with(
                    format!("no text has the id `{id}`"),
                    Some(help_for_unknown_id(id)),
                ));
            };
            one(row)
        }
        None => table(&rows),
    };
    io.out.write_all(text.as_bytes())?;
    Ok(Exit::Ok)
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
