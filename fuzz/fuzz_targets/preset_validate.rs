//! Preset parsing + full validation (resolve `extends`, build, render once) of arbitrary
//! bytes, alone and in `extends` chains of up to four files.
//!
//! Input: the first file (preset `fuzz`), then optionally more files, each introduced by a
//! line `#>> NAME` (a YAML comment, so a seed that is one preset file stays valid YAML).
//!
//! Checks: nothing panics; every diagnostic that points into a fuzzed file points at a
//! line and column that exist in it; a preset that validates assembles with its default
//! values plus the built-in examples to the same result before and after another model.

#![no_main]

use std::sync::OnceLock;

use agent_presets::preset::{PresetCatalog, parse_preset, validate_in_catalog};
use agent_presets::prompt::{BUILTIN_VARIABLES, Values};
use agent_presets::tools::ToolCatalog;
use agent_presets::{Diagnostic, Span};
use libfuzzer_sys::fuzz_target;

const SEPARATOR: &[u8] = b"\n#>> ";
const MAX_FILES: usize = 4;

fn tools() -> &'static ToolCatalog {
    static TOOLS: OnceLock<ToolCatalog> = OnceLock::new();
    TOOLS.get_or_init(ToolCatalog::builtin)
}

/// Split the input into (name, bytes) files.
fn files(data: &[u8]) -> Vec<(String, &[u8])> {
    let mut out = Vec::new();
    let mut name = "fuzz".to_owned();
    let mut rest = data;
    loop {
        let cut = if out.len() + 1 < MAX_FILES {
            rest.windows(SEPARATOR.len()).position(|w| w == SEPARATOR)
        } else {
            None
        };
        match cut {
            None => {
                out.push((name, rest));
                return out;
            }
            Some(at) => {
                out.push((name, &rest[..=at]));
                let after = &rest[at + SEPARATOR.len()..];
                let end = after
                    .iter()
                    .position(|&b| b == b'\n')
                    .unwrap_or(after.len());
                name = String::from_utf8_lossy(&after[..end]).trim().to_owned();
                rest = &after[(end + 1).min(after.len())..];
            }
        }
    }
}

/// Lines of `text` as YAML counts them (`\r\n`, `\n` and a lone `\r` break lines), with
/// their length in characters.
fn line_lengths(text: &str) -> Vec<usize> {
    let mut lines = Vec::new();
    let mut len = 0;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\n' => {
                lines.push(len);
                len = 0;
            }
            '\r' => {
                if chars.peek() == Some(&'\n') {
                    chars.next();
                }
                lines.push(len);
                len = 0;
            }
            _ => len += 1,
        }
    }
    lines.push(len);
    lines
}

/// A span into one of the fuzzed files must name a line and column that exist (a column
/// one past the end of its line is the end of the line).
fn check_span(span: &Span, texts: &[(String, String)], d: &Diagnostic) {
    let Some((_, text)) = texts.iter().find(|(display, _)| **display == *span.file) else {
        return;
    };
    let lines = line_lengths(text);
    let line = span.line as usize;
    assert!(
        line >= 1 && line <= lines.len(),
        "line {line} of a {}-line file: {d}",
        lines.len()
    );
    let column = span.column as usize;
    assert!(
        column >= 1 && column <= lines[line - 1] + 1,
        "column {column} of a {}-character line {line}: {d}",
        lines[line - 1]
    );
}

fn values() -> Values {
    BUILTIN_VARIABLES
        .iter()
        .filter(|b| !b.example.is_empty())
        .map(|b| (b.name, b.example))
        .collect()
}

fuzz_target!(|data: &[u8]| {
    let files = files(data);
    // The raw bytes (invalid UTF-8, NUL, BOM …) through the parser.
    for (name, bytes) in &files {
        let _ = parse_preset(format!("{name}.yaml").into(), bytes);
    }
    let mut catalog = PresetCatalog::builtin();
    let mut texts = Vec::new();
    let mut names = Vec::new();
    for (name, bytes) in &files {
        let text = String::from_utf8_lossy(bytes).into_owned();
        let display = format!("{name}.yaml");
        if catalog
            .add_text(name, display.as_str(), text.clone())
            .is_ok()
        {
            texts.push((display, text));
            names.push(name.clone());
        }
    }
    for name in &names {
        let validation = validate_in_catalog(&catalog, name, tools());
        for d in &validation.diagnostics {
            let _ = d.to_string();
            if let Some(span) = &d.span {
                check_span(span, &texts, d);
            }
        }
        if let Some(preset) = validation.preset {
            let mut values = values();
            for (k, v) in preset.default_values().iter() {
                values.set(k, v.clone());
            }
            let assembler = preset.assembler();
            let first = assembler.assemble(&values);
            let _ = assembler.assemble(&values.clone().with("model", "another-model"));
            let again = assembler.assemble(&values);
            match (&first, &again) {
                (Ok(a), Ok(b)) => assert_eq!(a, b, "the same values assembled differently"),
                (Err(_), Err(_)) => {}
                _ => panic!("the same values assembled once and failed once"),
            }
        }
    }
});
