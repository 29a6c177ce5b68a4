//! How model text and tool calls are shown on a terminal: the key and known secret
//! formats masked, characters that could drive or mislead the terminal escaped and
//! marked, long runs of spaces counted, lines cut ([`shown_line`]) or wrapped, never cut
//! ([`approval_lines`], what a user approves a tool call from).

use serde_json::Value;

use crate::redact::{DisplayContext, DisplayPiece, Redactor, display_pieces, escaped};
use crate::report::Style;
use crate::secrets::mask_secrets;

/// Arguments longer than this are refused for review unread: no screen shows them.
pub const MAX_REVIEW_BYTES: usize = 256 * 1024;

/// Runs of this many spaces or more are shown as `␠×N`.
const SPACE_RUN: usize = 4;

/// One shown unit of an approval line: text (possibly styled) and its width in columns,
/// or a forced line break (after an escaped newline).
enum Cell {
    Text(String, usize),
    Break,
}

/// The arguments of a call as the approval prompt shows them: each field of a JSON
/// object on its own (`  field:` then its value, string values as their text), else the
/// raw text; the key and known secret formats masked, control, bidirectional and
/// invisible characters escaped and marked, runs of `SPACE_RUN` or more spaces shown
/// as `␠×N`, every value wrapped to `columns` (indented by four), never cut.
pub fn approval_lines(
    redactor: &Redactor,
    arguments: &str,
    columns: usize,
    style: Style,
) -> Vec<String> {
    let width = columns.saturating_sub(4).max(8);
    let mut lines = Vec::new();
    match serde_json::from_str::<Value>(arguments) {
        Ok(Value::Object(fields)) => {
            for (key, value) in fields {
                lines.push(format!("  {}:", shown_line(redactor, &key, width, style)));
                let text = match value {
                    Value::String(s) => s,
                    other => other.to_string(),
                };
                lines.extend(wrapped(&visible_cells(redactor, &text, style), width));
            }
        }
        _ => lines.extend(wrapped(&visible_cells(redactor, arguments, style), width)),
    }
    lines
}

fn visible_cells(redactor: &Redactor, text: &str, style: Style) -> Vec<Cell> {
    let redacted = redactor.redact(text);
    let masked = mask_secrets(&redacted);
    let mut cells = Vec::new();
    let mut spaces = 0;
    let flush_spaces = |cells: &mut Vec<Cell>, spaces: &mut usize| {
        if *spaces >= SPACE_RUN {
            let marker = format!("␠×{spaces}");
            let width = marker.chars().count();
            cells.push(Cell::Text(style.warning(marker), width));
        } else {
            cells.extend((0..*spaces).map(|_| Cell::Text(" ".to_owned(), 1)));
        }
        *spaces = 0;
    };
    for piece in display_pieces(&masked, DisplayContext::Strict) {
        match piece {
            DisplayPiece::Plain(s) => {
                for c in s.chars() {
                    if c == ' ' {
                        spaces += 1;
                        continue;
                    }
                    flush_spaces(&mut cells, &mut spaces);
                    cells.push(Cell::Text(c.to_string(), char_width(c)));
                }
            }
            DisplayPiece::Escaped(c) => {
                flush_spaces(&mut cells, &mut spaces);
                let e = escaped(c);
                let width = e.len();
                cells.push(Cell::Text(style.warning(e), width));
                if c == '\n' {
                    cells.push(Cell::Break);
                }
            }
        }
    }
    flush_spaces(&mut cells, &mut spaces);
    cells
}

/// `cells` in lines of at most `width` columns, each indented by four spaces.
fn wrapped(cells: &[Cell], width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::from("    ");
    let mut used = 0;
    for cell in cells {
        match cell {
            Cell::Break => {
                lines.push(std::mem::replace(&mut line, String::from("    ")));
                used = 0;
            }
            Cell::Text(text, w) => {
                if used > 0 && used + w > width {
                    lines.push(std::mem::replace(&mut line, String::from("    ")));
                    used = 0;
                }
                line.push_str(text);
                used += w;
            }
        }
    }
    if used > 0 || lines.is_empty() {
        lines.push(line);
    }
    lines
}

/// Columns a character takes: two for East Asian wide and emoji blocks, else one (an
/// overestimate for combining marks, which only makes a prompt look longer).
fn char_width(c: char) -> usize {
    match u32::from(c) {
        0x1100..=0x115F
        | 0x2E80..=0x303E
        | 0x3041..=0x33FF
        | 0x3400..=0x4DBF
        | 0x4E00..=0x9FFF
        | 0xA000..=0xA4CF
        | 0xAC00..=0xD7A3
        | 0xF900..=0xFAFF
        | 0xFE30..=0xFE4F
        | 0xFF00..=0xFF60
        | 0xFFE0..=0xFFE6
        | 0x1F300..=0x1F64F
        | 0x1F900..=0x1F9FF
        | 0x20000..=0x3FFFD => 2,
        _ => 1,
    }
}

/// Model text for a terminal: the key masked, known secret formats masked (as
/// [`mask_secrets`] always did for what `run` prints), and characters that could drive or
/// mislead the terminal escaped and marked.
pub fn shown(text: &str, context: DisplayContext, style: Style) -> String {
    let masked = mask_secrets(text);
    let mut out = String::with_capacity(masked.len());
    for piece in display_pieces(&masked, context) {
        match piece {
            DisplayPiece::Plain(s) => out.push_str(s),
            DisplayPiece::Escaped(c) => out.push_str(&style.warning(escaped(c))),
        }
    }
    out
}

/// `text` redacted, escaped and on one line (runs of spaces counted as in the approval
/// prompt), at most `max` columns, then `…`. Only a prefix is looked at, long enough that
/// a secret crossing the cut is still recognised.
pub fn shown_line(redactor: &Redactor, text: &str, max: usize, style: Style) -> String {
    // A run of spaces counts as one character here: it is shown as one `␠×N`.
    let mut budget = max + redactor.longest_pattern() + 64;
    let mut cut = text.len();
    let mut after_space = false;
    for (i, c) in text.char_indices() {
        if c == ' ' && after_space {
            continue;
        }
        after_space = c == ' ';
        if budget == 0 {
            cut = i;
            break;
        }
        budget -= 1;
    }
    let (text, more) = (&text[..cut], cut < text.len());
    let mut out = String::new();
    let mut used = 0;
    for cell in visible_cells(redactor, text, style) {
        if let Cell::Text(shown, width) = cell {
            if used + width > max {
                out.push('…');
                return out;
            }
            out.push_str(&shown);
            used += width;
        }
    }
    if more {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const KEY: &str = "sk-unit-0123456789abcdefghijkl";

    #[test]
    fn the_approval_lines_show_everything_wrapped() {
        let r = Redactor::new([KEY]);
        let command = format!(
            "printf '%s' {}{}; rm -rf x\u{2067}\n  next {KEY}",
            "a".repeat(100),
            " ".repeat(300)
        );
        let args = json!({"command": command, "timeout": 5}).to_string();
        let lines = approval_lines(&r, &args, 40, Style::plain());
        let text = lines.join("\n");
        assert!(lines.iter().all(|l| l.chars().count() <= 40), "{text}");
        assert_eq!(lines[0], "  command:");
        // Every character is there, in order, once the wrapping is undone.
        let joined: String = lines[1..]
            .iter()
            .take_while(|l| l.starts_with("    "))
            .map(|l| &l[4..])
            .collect();
        assert_eq!(
            joined,
            format!(
                "printf '%s' {}␠×300; rm -rf x\\u{{2067}}\\n  next {}",
                "a".repeat(100),
                "*".repeat(KEY.len())
            ),
            "{text}"
        );
        // The escaped newline also breaks the line.
        assert!(lines.iter().any(|l| l.ends_with("\\n")), "{text}");
        assert!(text.contains("  timeout:\n    5"), "{text}");
        // Arguments that are not an object are shown as they are.
        let lines = approval_lines(&r, "not json\u{1b}[2J", 80, Style::plain());
        assert_eq!(lines, ["    not json\\u{1b}[2J"]);
    }

    #[test]
    fn a_shown_line_is_cut_but_counts_a_run_of_spaces_whole() {
        let r = Redactor::none();
        let text = format!("echo{}; touch x", " ".repeat(5000));
        assert_eq!(
            shown_line(&r, &text, 200, Style::plain()),
            "echo␠×5000; touch x"
        );
        let long = "y".repeat(1000);
        let line = shown_line(&r, &long, 10, Style::plain());
        assert_eq!(line, format!("{}…", "y".repeat(10)));
        let name = format!("a\u{202e}b{KEY}");
        assert_eq!(
            shown_line(&Redactor::new([KEY]), &name, 64, Style::plain()),
            format!("a\\u{{202e}}b{}", "*".repeat(KEY.len()))
        );
    }
}
