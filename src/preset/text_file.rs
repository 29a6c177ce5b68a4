//! `textFile`: a section's or context's text read from a file next to the preset, when the
//! preset is loaded.
//!
//! The path is relative to the preset file and must stay inside the preset's directory
//! tree: an absolute path, a `..` that climbs out, or a symbolic link that leads out is
//! refused (`invalid-value`, at the `textFile` key) before anything is read. The file is
//! read like a preset file — bounded by [`MAX_PRESET_FILE_BYTES`], regular files only,
//! UTF-8 without NUL, BOM dropped, CRLF read as LF — and problems inside it point into it
//! with line and column.

use crate::confine::LexicalEscape;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::source::{MAX_PRESET_FILE_BYTES, ParsedPreset, SourceFile, TextFile};
use super::spec::Spanned;
use crate::bounded::{BoundedReadError, byte_size};
use crate::confine::{ReadBeneathError, read_beneath};
use crate::diagnostic::{Diagnostic, DiagnosticKind, Diagnostics, Span};
use crate::source_files::SourceText;

/// Read every `textFile` of `parsed` into its section's or context's `text`.
/// `preset_path` is the preset file on disk (`None` for built-ins, inline text and
/// standard input, which cannot use `textFile`). The texts read (also those refused for
/// their encoding) are added to `read` under their displayed names, for snippets.
pub(crate) fn load_text_files(
    parsed: &mut ParsedPreset,
    preset_path: Option<&Path>,
    read: &mut Vec<(Arc<str>, SourceText)>,
) -> Result<(), Diagnostics> {
    load_schema_file(parsed, preset_path, read).map_err(|d| Diagnostics::from_vec(vec![d]))?;
    let mut wanted: Vec<Spanned<String>> = Vec::new();
    let file = &parsed.file;
    let sections = file
        .persona
        .iter()
        .flat_map(|p| p.sections.iter().flatten())
        .filter_map(|s| s.text_file.clone());
    let contexts = file
        .contexts
        .iter()
        .flatten()
        .filter_map(|c| c.text_file.clone());
    wanted.extend(sections.chain(contexts));
    if wanted.is_empty() {
        return Ok(());
    }
    let mut problems = Vec::new();
    let mut loaded: Vec<(Spanned<String>, SourceFile)> = Vec::new();
    for value in wanted {
        match read_text_file("textFile", parsed, preset_path, &value, read) {
            Ok(source) => loaded.push((value, source)),
            Err(d) => problems.push(d),
        }
    }
    if !problems.is_empty() {
        return Err(Diagnostics::from_vec(problems));
    }
    let text_of = |value: &Spanned<String>| {
        loaded
            .iter()
            .find(|(v, _)| v.defined == value.defined && v.value == value.value)
            .map(|(_, source)| source)
    };
    let mut files = Vec::new();
    let file = Arc::make_mut(&mut parsed.file);
    let sections = file
        .persona
        .iter_mut()
        .flat_map(|p| p.sections.iter_mut().flatten())
        .map(|s| (&s.text_file, &mut s.text));
    let contexts = file
        .contexts
        .iter_mut()
        .flatten()
        .map(|c| (&c.text_file, &mut c.text));
    for (text_file, text) in sections.chain(contexts) {
        if let Some(value) = text_file
            && let Some(source) = text_of(value)
        {
            // The text is "written" where `textFile` is: spans of the text as a whole
            // point there; positions inside it go to the file (`text_origin`).
            *text = Spanned::new(source.text.to_string(), value.referenced, value.defined);
            files.push(TextFile::new(source, value.defined));
        }
    }
    for f in files {
        parsed.add_text_file(f);
    }
    Ok(())
}

/// Read `output.schemaFile` (JSON, confined like `textFile`) into `output.schema`, which
/// is then "written" where `schemaFile` is. Giving both is an error at `schemaFile`.
fn load_schema_file(
    parsed: &mut ParsedPreset,
    preset_path: Option<&Path>,
    read: &mut Vec<(Arc<str>, SourceText)>,
) -> Result<(), Diagnostic> {
    let Some(output) = &parsed.file.output else {
        return Ok(());
    };
    let Some(value) = output.schema_file.clone() else {
        return Ok(());
    };
    let at = key_span(parsed, &value, "schemaFile");
    if output.schema.is_some() {
        return Err(Diagnostic::new(
            DiagnosticKind::InvalidValue,
            "`output` gives both `schema` and `schemaFile`; it takes one",
        )
        .at(at)
        .help("keep the schema inline (`schema:`) or in the file (`schemaFile:`), not both"));
    }
    let source = read_text_file("schemaFile", parsed, preset_path, &value, read)?;
    let schema: serde_json::Value = serde_json::from_str(&source.text).map_err(|e| {
        Diagnostic::new(
            DiagnosticKind::InvalidOutputSchema,
            format!(
                "`schemaFile` `{}` is not JSON: {e}",
                value.value.escape_debug()
            ),
        )
        .at(at.clone())
        .help("write the schema as one JSON object, such as `{\"type\": \"object\", \"properties\": {}}`")
    })?;
    if let Some(output) = Arc::make_mut(&mut parsed.file).output.as_mut() {
        output.schema = Some(Spanned::new(schema, value.referenced, value.defined));
    }
    Ok(())
}

/// Read one `textFile`, checking where it leads first.
fn read_text_file(
    key: &str,
    parsed: &ParsedPreset,
    preset_path: Option<&Path>,
    value: &Spanned<String>,
    read: &mut Vec<(Arc<str>, SourceText)>,
) -> Result<SourceFile, Diagnostic> {
    let at = key_span(parsed, value, key);
    let relative = value.value.as_str();
    let Some(preset_path) = preset_path else {
        return Err(Diagnostic::new(
            DiagnosticKind::InvalidValue,
            format!(
                "`{key}` is read relative to the preset file, and `{}` is not a file on disk",
                parsed.source.display
            ),
        )
        .at(at)
        .help(
            "write the text inline with `text:`, or save the preset as a file next to the text",
        ));
    };
    let inside = match confined(relative) {
        Ok(inside) => inside,
        Err(why) => return Err(escape(at, key, relative, why)),
    };
    let dir = preset_path.parent().unwrap_or(Path::new(""));
    let display = display_of(&parsed.source.display, &inside);
    let limit = MAX_PRESET_FILE_BYTES as u64;
    // Resolved beneath the preset's directory: a symbolic link that leads out is refused
    // before anything is opened.
    let bytes = read_beneath(dir, &inside, limit).map_err(|e| match e {
        ReadBeneathError::Outside => escape(
            at.clone(),
            key,
            relative,
            "it is a symbolic link (or passes through one) that leads outside the preset's directory",
        ),
        ReadBeneathError::Read(BoundedReadError::TooLarge { size, .. }) => Diagnostic::new(
            DiagnosticKind::LimitExceeded,
            match size {
                Some(size) => format!(
                    "`{key}` `{relative}` is {size} bytes; a text file may be at most {}",
                    byte_size(limit)
                ),
                None => format!(
                    "`{key}` `{relative}` holds more than {}, the most a text file may hold",
                    byte_size(limit)
                ),
            },
        )
        .at(at.clone())
        .help("split the text into several sections, each with its own file"),
        // Nothing readable at the path is a mistake in the preset (exit 1, like any other
        // invalid preset); a read that fails (permissions, a failing disk) is I/O.
        ReadBeneathError::Read(
            other @ (BoundedReadError::NotFound
            | BoundedReadError::DanglingLink
            | BoundedReadError::Directory
            | BoundedReadError::NotRegular(_)),
        ) => Diagnostic::new(
            DiagnosticKind::InvalidValue,
            format!("`{key}` `{relative}` names no file to read (`{display}`: {other})"),
        )
        .at(at.clone())
        .help("the path is relative to the preset file's directory"),
        ReadBeneathError::Read(other) => Diagnostic::new(
            DiagnosticKind::Io,
            format!("cannot read `{key}` `{relative}` (`{display}`): {other}"),
        )
        .at(at.clone())
        .help("the path is relative to the preset file's directory"),
    })?;
    match SourceFile::decode(display.clone(), &bytes) {
        Ok(source) => {
            read.push((display, source.source_text()));
            Ok(source)
        }
        Err(d) => {
            read.push((display, SourceFile::lossy_text(&bytes)));
            Err(d)
        }
    }
}

fn escape(at: Span, key: &str, relative: &str, why: &str) -> Diagnostic {
    Diagnostic::new(
        DiagnosticKind::InvalidValue,
        format!("`{key}` `{relative}` is refused: {why}"),
    )
    .at(at)
    .help("keep text files in the preset's directory or below it, and name them by a relative path such as `prompts/rules.md`")
}

/// `relative` with `.` and inner `..` resolved, if it names a file inside its base
/// directory; else why not (an absolute path, a drive prefix, a `..` that climbs out,
/// or no file at all).
fn confined(relative: &str) -> Result<PathBuf, &'static str> {
    crate::confine::lexically_beneath(relative).map_err(|e| match e {
        LexicalEscape::ClimbsOut => "`..` leads outside the preset's directory",
        LexicalEscape::Absolute => "an absolute path leads outside the preset's directory",
        LexicalEscape::NamesBase => "it names no file",
    })
}

/// How the text file is shown: next to the preset as the preset is shown
/// (`.agent-presets/x.yaml` + `prompts/a.md` → `.agent-presets/prompts/a.md`).
fn display_of(preset: &str, inside: &Path) -> Arc<str> {
    let dir = Path::new(preset).parent().unwrap_or(Path::new(""));
    dir.join(inside).to_string_lossy().into()
}

/// The span of the `textFile` key of `value` (the key is on the value's line, before
/// it); the value's own span when the key cannot be found there.
fn key_span(parsed: &ParsedPreset, value: &Spanned<String>, key: &str) -> Span {
    let span = parsed.span_of(value);
    let Some(line) = parsed.source.line(span.line) else {
        return span;
    };
    let before: String = line
        .chars()
        .take(usize::try_from(span.column.saturating_sub(1)).unwrap_or(usize::MAX))
        .collect();
    match before.rfind(key) {
        Some(byte) => {
            let column = u32::try_from(before[..byte].chars().count()).unwrap_or(0) + 1;
            let len = u32::try_from(key.chars().count()).unwrap_or(0);
            Span::new(span.file.clone(), span.line, column).with_len(len)
        }
        None => span,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn confinement_is_lexical_first() {
        assert_eq!(confined("a.md"), Ok(PathBuf::from("a.md")));
        assert_eq!(confined("./p/../a.md"), Ok(PathBuf::from("a.md")));
        assert_eq!(confined("p/q/../../a.md"), Ok(PathBuf::from("a.md")));
        assert!(confined("../a.md").unwrap_err().contains("`..`"));
        assert!(confined("p/../../a.md").is_err());
        assert!(confined("/etc/passwd").unwrap_err().contains("absolute"));
        assert_eq!(confined(""), Err("it names no file"));
        assert_eq!(confined("."), Err("it names no file"));
        assert_eq!(confined("p/.."), Err("it names no file"));
    }

    #[test]
    fn shown_next_to_the_preset() {
        assert_eq!(
            &*display_of(".agent-presets/x.yaml", Path::new("prompts/a.md")),
            ".agent-presets/prompts/a.md"
        );
        assert_eq!(&*display_of("x.yaml", Path::new("a.md")), "a.md");
    }
}
