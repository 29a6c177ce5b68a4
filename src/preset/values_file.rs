//! [`ValuesFile`]: a file of template values (`--var-file`), YAML or JSON — a mapping
//! from variable names to single values, read as each variable's type later (like
//! `--var name=text`).

use std::fmt;
use std::sync::Arc;

use serde::de::{MapAccess, Visitor};
use serde::{Deserialize, Deserializer};

use super::source::{SourceFile, diagnostic_from_yaml, options};
use super::spec::Spanned;
use crate::diagnostic::{Diagnostic, DiagnosticKind, Diagnostics, Span};

/// One `name: value` of a values file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValueEntry {
    /// The variable's name.
    pub name: String,
    /// Where the name is written.
    pub name_span: Span,
    /// The value as written (quotes removed): typed by the variable's declaration.
    pub text: String,
    /// Where the value is written.
    pub span: Span,
}

/// A parsed values file: its text (for snippets) and its entries in file order.
#[derive(Clone, Debug)]
pub struct ValuesFile {
    /// The decoded text.
    pub source: SourceFile,
    /// `name: value` entries, in file order.
    pub entries: Vec<ValueEntry>,
}

/// The raw mapping: names and values with their positions.
struct RawEntries(Vec<(Spanned<String>, Option<Spanned<String>>)>);

impl<'de> Deserialize<'de> for RawEntries {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct MapVisitor;

        impl<'de> Visitor<'de> for MapVisitor {
            type Value = RawEntries;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a mapping from variable names to values")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawEntries, A::Error> {
                let mut entries = Vec::new();
                while let Some(name) = map.next_key::<Spanned<String>>()? {
                    let value = map.next_value::<Option<Spanned<String>>>()?;
                    entries.push((name, value));
                }
                Ok(RawEntries(entries))
            }
        }

        deserializer.deserialize_map(MapVisitor)
    }
}

impl ValuesFile {
    /// Decode and parse `bytes` (UTF-8, at most as large as a preset file), shown as
    /// `display`. Each value must be one scalar: a list, a mapping or nothing (`~`) is
    /// an error at its line and column, and so are YAML syntax errors and duplicate
    /// names. A file holding no document has no values.
    pub fn parse(display: Arc<str>, bytes: &[u8]) -> Result<ValuesFile, Diagnostics> {
        let source = SourceFile::decode(display, bytes)?;
        if source
            .text
            .lines()
            .all(|l| l.trim().is_empty() || l.trim_start().starts_with('#'))
        {
            return Ok(ValuesFile {
                source,
                entries: Vec::new(),
            });
        }
        let raw = match serde_saphyr::from_str_with_options::<RawEntries>(&source.text, options()) {
            Ok(raw) => raw,
            Err(e) => {
                let d = diagnostic_from_yaml(&source, &e);
                let d = match d.kind {
                    DiagnosticKind::WrongType => Diagnostic {
                        message: format!(
                            "{}: a values file maps variable names to single values",
                            d.message
                        ),
                        help: Some(
                            "write one `name: value` per line, e.g. `focus: security`".into(),
                        ),
                        ..d
                    },
                    _ => d,
                };
                return Err(d.into());
            }
        };
        let mut entries = Vec::with_capacity(raw.0.len());
        let mut problems = Vec::new();
        for (name, value) in raw.0 {
            let name_span = source.span_of(&name);
            match value {
                Some(value) => entries.push(ValueEntry {
                    name: name.value,
                    name_span,
                    text: value.value.clone(),
                    span: source.span_of(&value),
                }),
                None => problems.push(
                    Diagnostic::new(
                        DiagnosticKind::WrongType,
                        format!("variable `{}` has no value", name.value),
                    )
                    .at(name_span)
                    .help("write a value after the colon, or remove the line"),
                ),
            }
        }
        if problems.is_empty() {
            Ok(ValuesFile { source, entries })
        } else {
            Err(Diagnostics::from_vec(problems))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<ValuesFile, Diagnostics> {
        ValuesFile::parse("v.yaml".into(), text.as_bytes())
    }

    #[test]
    fn yaml_and_json_keep_the_text_as_written() {
        let f = parse("port: 0x10\nversion: 1.10\nname: \"x y\"\nflag: true\n").unwrap();
        let got: Vec<(&str, &str, u32)> = f
            .entries
            .iter()
            .map(|e| (e.name.as_str(), e.text.as_str(), e.span.line))
            .collect();
        assert_eq!(
            got,
            [
                ("port", "0x10", 1),
                ("version", "1.10", 2),
                ("name", "x y", 3),
                ("flag", "true", 4)
            ]
        );
        let f = parse("{\"port\": 8080, \"name\": \"shop\"}").unwrap();
        assert_eq!(f.entries[0].text, "8080");
        assert_eq!(f.entries[1].text, "shop");
        assert!(parse("# nothing\n").unwrap().entries.is_empty());
    }

    #[test]
    fn problems_are_located() {
        let e = parse("a: [1, 2]\n").unwrap_err();
        let d = &e.as_slice()[0];
        assert_eq!(d.kind, DiagnosticKind::WrongType);
        assert_eq!(d.span.as_ref().map(|s| (s.line, s.column)), Some((1, 4)));
        let e = parse("a: 1\na: 2\n").unwrap_err();
        assert_eq!(e.as_slice()[0].kind, DiagnosticKind::DuplicateKey);
        let e = parse("a:\nb: 1\n").unwrap_err();
        assert_eq!(e.as_slice()[0].message, "variable `a` has no value");
        let e = parse("- a\n- b\n").unwrap_err();
        assert_eq!(e.as_slice()[0].kind, DiagnosticKind::WrongType);
        let e = parse("a: \"unclosed\n").unwrap_err();
        assert_eq!(e.as_slice()[0].kind, DiagnosticKind::YamlSyntax);
    }
}
