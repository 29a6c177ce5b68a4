//! `list`: every preset on offer, with its source and description.

use clap::{Args, ValueEnum};
use serde_json::{Value, json};

use super::workspace::Workspace;
use super::{CliError, Exit, GlobalArgs, Io};
use crate::report::HumanRenderer;
use crate::report::{MachineFormat, pretty};

/// Arguments of `list`.
#[derive(Debug, Args)]
pub(crate) struct ListArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = ListFormat::Human)]
    format: ListFormat,
}

/// How `list` prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum ListFormat {
    /// Aligned columns: NAME, SOURCE, DESCRIPTION.
    Human,
    /// `{"presets": [{"name", "source", "file", "description", "shadows"}]}`.
    Json,
}

/// One row.
struct Row {
    name: String,
    source: &'static str,
    file: String,
    /// `None` when the preset has no description or does not parse.
    description: Option<String>,
    parses: bool,
    /// Files of lower sources this one hides: `(source, file)`.
    shadows: Vec<(&'static str, String)>,
}

impl ListArgs {
    /// `--format json`.
    pub(crate) fn machine_format(&self) -> Option<MachineFormat> {
        (self.format == ListFormat::Json).then_some(MachineFormat::Json)
    }
}

pub(crate) fn run(global: &GlobalArgs, args: &ListArgs, io: &mut Io<'_>) -> Result<Exit, CliError> {
    let workspace = Workspace::discover(global)?;
    let rows: Vec<Row> = workspace
        .presets
        .entries()
        .map(|e| Row {
            name: e.name().to_owned(),
            source: e.source().as_str(),
            file: e.display().to_string(),
            description: e.description().map(|d| crate::report::mask(d).into_owned()),
            parses: e.parsed().is_ok(),
            shadows: e
                .shadows()
                .iter()
                .map(|s| (s.source.as_str(), s.display.to_string()))
                .collect(),
        })
        .collect();
    let text = match args.format {
        ListFormat::Human => human(&rows, io),
        ListFormat::Json => {
            let presets: Vec<Value> = rows
                .iter()
                .map(|r| {
                    let shadows: Vec<Value> = r
                        .shadows
                        .iter()
                        .map(|(source, file)| json!({ "source": source, "file": file }))
                        .collect();
                    json!({
                        "name": r.name,
                        "source": r.source,
                        "file": r.file,
                        "description": r.description,
                        "shadows": shadows,
                    })
                })
                .collect();
            pretty(&json!({ "presets": presets }))
        }
    };
    io.out.write_all(text.as_bytes())?;
    // Files that could not be offered: say so, but listing itself succeeded.
    if !workspace.problems.is_empty() {
        let sources = workspace.presets.source_files();
        let renderer = HumanRenderer::new(io.err_style, &sources, &workspace.problems);
        io.err
            .write_all(renderer.render_all(&workspace.problems).as_bytes())?;
    }
    Ok(Exit::Ok)
}

fn human(rows: &[Row], io: &Io<'_>) -> String {
    let style = io.out_style;
    let name_width = rows.iter().map(|r| r.name.len()).max().unwrap_or(0).max(4);
    let source_width = rows
        .iter()
        .map(|r| r.source.len())
        .max()
        .unwrap_or(0)
        .max(6);
    let mut out = format!(
        "{}\n",
        style.bold(format!(
            "{:name_width$}  {:source_width$}  DESCRIPTION",
            "NAME", "SOURCE"
        ))
    );
    for r in rows {
        let description = match (&r.description, r.parses) {
            (Some(d), _) => d.clone(),
            (None, true) => String::new(),
            (None, false) => crate::report::commands::with_flags(&format!(
                "(invalid: run `agent-presets validate {}`)",
                r.name
            ))
            .into_owned(),
        };
        let line = format!(
            "{:name_width$}  {}  {description}",
            r.name,
            style.dim(format!("{:source_width$}", r.source)),
        );
        out.push_str(line.trim_end());
        out.push('\n');
        // Which file wins, and what it hides: a project preset over a user one.
        if !r.shadows.is_empty() {
            let hidden: Vec<String> = r
                .shadows
                .iter()
                .map(|(source, file)| format!("{file} ({source})"))
                .collect();
            let note = format!(
                "{:name_width$}  uses {}, shadows {}",
                "",
                r.file,
                hidden.join(", ")
            );
            out.push_str(&style.dim(note).to_string());
            out.push('\n');
        }
    }
    out
}
