//! `render --explain`: the provenance of a rendered request as a table ([`text`]) or as
//! JSON ([`json()`]).

use serde_json::{Value, json};

use super::mask;
use super::{order_json, pretty};
use crate::diagnostic::Span;
use crate::preset::{PieceProvenance, Provenance, ToolAdmission};
use crate::prompt::Replaced;
use crate::tokens;

/// Right-aligned numeric columns, left-aligned text columns.
struct Table {
    rows: Vec<Vec<String>>,
    numeric: Vec<bool>,
}

impl Table {
    fn new(header: &[&str], numeric: &[bool]) -> Self {
        Table {
            rows: vec![header.iter().map(|h| (*h).to_owned()).collect()],
            numeric: numeric.to_vec(),
        }
    }

    fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    fn render(&self) -> String {
        let columns = self.numeric.len();
        let widths: Vec<usize> = (0..columns)
            .map(|c| {
                self.rows
                    .iter()
                    .map(|r| r.get(c).map_or(0, |s| s.chars().count()))
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let mut out = String::new();
        for row in &self.rows {
            let cells: Vec<String> = (0..columns)
                .map(|c| {
                    let cell = row.get(c).map(String::as_str).unwrap_or_default();
                    if self.numeric[c] {
                        format!("{cell:>width$}", width = widths[c])
                    } else {
                        format!("{cell:<width$}", width = widths[c])
                    }
                })
                .collect();
            out.push_str(cells.join("  ").trim_end());
            out.push('\n');
        }
        out
    }
}

fn order(value: f64) -> String {
    // Orders print as written: integers without a fraction.
    format!("{value}")
}

fn declared_at(piece: &PieceProvenance) -> String {
    match &piece.piece.declared_at {
        Some(span) => mask(&span.to_string()).into_owned(),
        None => match piece.piece.name.strip_prefix("tool:") {
            Some(tool) => format!("guidance of tool `{tool}`"),
            None => "(host)".to_owned(),
        },
    }
}

fn admission(admitted_by: &ToolAdmission) -> String {
    match admitted_by {
        ToolAdmission::Allow {
            preset,
            pattern,
            span,
        } => mask(&format!("`{pattern}` in {preset}'s allow ({span})")).into_owned(),
        ToolAdmission::NoAllowList => "no `allow` in the chain: every known tool".to_owned(),
    }
}

/// What the piece replaced, for the table: `` `standard` file:line ``, `tool bash`, or
/// nothing.
fn replaces(piece: &PieceProvenance) -> String {
    match &piece.piece.replaces {
        None => String::new(),
        Some(Replaced::Piece {
            layer,
            declared_at: Some(span),
        }) => mask(&format!("{layer} ({span})")).into_owned(),
        Some(Replaced::Piece { layer, .. }) => mask(layer).into_owned(),
        Some(Replaced::ToolGuidance { tool }) => format!("guidance of tool `{tool}`"),
    }
}

fn pieces_table(pieces: &[PieceProvenance], label: &str, total: (usize, usize)) -> String {
    let mut table = Table::new(
        &[
            "#",
            "order",
            label,
            "declared at",
            "replaces",
            "bytes",
            "tokens",
        ],
        &[true, true, false, false, false, true, true],
    );
    for (i, p) in pieces.iter().enumerate() {
        table.row(vec![
            (i + 1).to_string(),
            order(p.piece.order),
            mask(&p.piece.name).into_owned(),
            declared_at(p),
            replaces(p),
            p.size.bytes.to_string(),
            p.size.tokens.to_string(),
        ]);
    }
    table.row(vec![
        String::new(),
        String::new(),
        "total".to_owned(),
        String::new(),
        String::new(),
        total.0.to_string(),
        total.1.to_string(),
    ]);
    table.render()
}

/// The provenance as tables: sections, tools, contexts, then the prefix's total and
/// fingerprint.
pub fn text(p: &Provenance, fingerprint: &str) -> String {
    let mut out = String::new();
    out.push_str(&format!(
        "=== system prompt: {} sections, in the cacheable prefix (tokens: {}) ===\n",
        p.sections.len(),
        tokens::ENCODING
    ));
    if p.sections.is_empty() {
        out.push_str("(none)\n");
    } else {
        out.push_str(&pieces_table(
            &p.sections,
            "section",
            (p.system.bytes, p.system.tokens),
        ));
    }
    out.push_str(&format!(
        "\n=== tools: {} in wire order, in the cacheable prefix ===\n",
        p.tools.len()
    ));
    if p.tools.is_empty() {
        out.push_str("(none)\n");
    } else {
        let mut table = Table::new(
            &["#", "tool", "admitted by", "tokens"],
            &[true, false, false, true],
        );
        for (i, t) in p.tools.iter().enumerate() {
            table.row(vec![
                (i + 1).to_string(),
                t.name.clone(),
                admission(&t.admitted_by),
                t.tokens.to_string(),
            ]);
        }
        table.row(vec![
            String::new(),
            "total".to_owned(),
            String::new(),
            p.tool_tokens.to_string(),
        ]);
        out.push_str(&table.render());
    }
    out.push_str(&format!(
        "\n=== runtime context: {} contexts, after the history, not cached ===\n",
        p.contexts.len()
    ));
    if p.contexts.is_empty() {
        out.push_str("(none)\n");
    } else {
        out.push_str(&pieces_table(
            &p.contexts,
            "context",
            (p.context.bytes, p.context.tokens),
        ));
    }
    out.push_str(&format!(
        "\n=== cacheable prefix ===\ntokens: {} (system {} + tools {})\nfingerprint: {fingerprint}\n",
        p.system.tokens + p.tool_tokens,
        p.system.tokens,
        p.tool_tokens
    ));
    out
}

fn span_json(span: Option<&Span>) -> Value {
    match span {
        Some(s) => json!({ "file": mask(&s.file), "line": s.line, "column": s.column }),
        None => Value::Null,
    }
}

/// `null`, `{"preset", "declaredAt"}` or `{"toolGuidance": NAME}`.
fn replaces_json(replaced: Option<&Replaced>) -> Value {
    match replaced {
        None => Value::Null,
        Some(Replaced::Piece { layer, declared_at }) => {
            json!({ "preset": layer, "declaredAt": span_json(declared_at.as_ref()) })
        }
        Some(Replaced::ToolGuidance { tool }) => json!({ "toolGuidance": tool }),
    }
}

fn piece_json(p: &PieceProvenance) -> Value {
    json!({
        "name": p.piece.name,
        "order": order_json(p.piece.order),
        "inPrefix": p.in_prefix,
        "declaredAt": span_json(p.piece.declared_at.as_ref()),
        "replaces": replaces_json(p.piece.replaces.as_ref()),
        "bytes": p.size.bytes,
        "tokens": p.size.tokens,
    })
}

/// `{"preset", "encoding", "sections", "tools", "contexts", "totals", "fingerprint"}`.
pub fn json(preset: &str, p: &Provenance, fingerprint: &str) -> String {
    let tools: Vec<Value> = p
        .tools
        .iter()
        .map(|t| {
            let admitted = match &t.admitted_by {
                ToolAdmission::Allow {
                    preset,
                    pattern,
                    span,
                } => json!({
                    "preset": preset,
                    "pattern": pattern,
                    "file": mask(&span.file),
                    "line": span.line,
                    "column": span.column,
                }),
                ToolAdmission::NoAllowList => Value::Null,
            };
            json!({ "name": t.name, "admittedBy": admitted, "tokens": t.tokens })
        })
        .collect();
    pretty(&json!({
        "preset": preset,
        "encoding": tokens::ENCODING,
        "sections": p.sections.iter().map(piece_json).collect::<Vec<_>>(),
        "tools": tools,
        "contexts": p.contexts.iter().map(piece_json).collect::<Vec<_>>(),
        "totals": {
            "system": { "bytes": p.system.bytes, "tokens": p.system.tokens },
            "tools": { "tokens": p.tool_tokens },
            "prefixTokens": p.system.tokens + p.tool_tokens,
            "context": { "bytes": p.context.bytes, "tokens": p.context.tokens },
        },
        "fingerprint": fingerprint,
    }))
}
