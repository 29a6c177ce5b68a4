//! [`SourceFiles`]: the text of every file a [`Diagnostic`](crate::Diagnostic) may point
//! into, kept from when it was read, by the name diagnostics show for it.
//!
//! A renderer prints the line a span points at from here, never by reading the file
//! again: a second read could see other bytes (the file changed, or was swapped for a
//! FIFO), costs memory and time twice, and is impossible for text that never was a
//! file (`add_text`, standard input). Whoever reads a text registers it once, under the
//! name its spans carry; [`PresetCatalog::source_files`](crate::PresetCatalog::source_files)
//! gives those of every preset file it read.

use std::collections::HashMap;
use std::sync::Arc;

use crate::prompt::origin::LineIndex;

/// One file's text as spans count it (UTF-8, lines split at `\n`), with its lines
/// indexed so any line is found without scanning from the start. Cheap to clone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceText {
    text: Arc<str>,
    lines: Arc<LineIndex>,
}

impl SourceText {
    /// Index `text` (one pass over it).
    pub fn new(text: impl Into<Arc<str>>) -> SourceText {
        let text: Arc<str> = text.into();
        let lines = Arc::new(LineIndex::new(&text));
        SourceText { text, lines }
    }

    /// From a text already indexed.
    pub(crate) fn from_parts(text: Arc<str>, lines: Arc<LineIndex>) -> SourceText {
        SourceText { text, lines }
    }

    /// The whole text.
    pub fn text(&self) -> &Arc<str> {
        &self.text
    }

    /// Line `line` (1-based), without its line end; `None` past the end.
    pub fn line(&self, line: u32) -> Option<&str> {
        let index = usize::try_from(line.checked_sub(1)?).ok()?;
        self.lines.line(&self.text, index)
    }
}

/// The texts diagnostics point into, by the file name their spans show
/// (`.agent-presets/reviewer.yaml`, `<builtin>/standard.yaml`, `<stdin>`).
#[derive(Clone, Debug, Default)]
pub struct SourceFiles {
    files: HashMap<Arc<str>, SourceText>,
}

impl SourceFiles {
    /// No texts.
    pub fn new() -> SourceFiles {
        SourceFiles::default()
    }

    /// Register the text shown as `file`. The first text registered under a name
    /// stays: a name is one file, read once.
    pub fn insert(&mut self, file: impl Into<Arc<str>>, text: SourceText) {
        self.files.entry(file.into()).or_insert(text);
    }

    /// Every text of `other` whose name is not registered yet.
    pub fn extend(&mut self, other: SourceFiles) {
        for (file, text) in other.files {
            self.insert(file, text);
        }
    }

    /// The text shown as `file`.
    pub fn get(&self, file: &str) -> Option<&SourceText> {
        self.files.get(file)
    }

    /// Line `line` (1-based) of `file`, without its line end.
    pub fn line(&self, file: &str, line: u32) -> Option<&str> {
        self.get(file)?.line(line)
    }

    /// How many texts.
    pub fn len(&self) -> usize {
        self.files.len()
    }

    /// No texts at all?
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_by_number_and_first_text_wins() {
        let mut files = SourceFiles::new();
        files.insert("a.yaml", SourceText::new("one\ntwo\r\n\nlast"));
        files.insert("a.yaml", SourceText::new("other"));
        assert_eq!(files.line("a.yaml", 1), Some("one"));
        assert_eq!(files.line("a.yaml", 2), Some("two"));
        assert_eq!(files.line("a.yaml", 3), Some(""));
        assert_eq!(files.line("a.yaml", 4), Some("last"));
        assert_eq!(files.line("a.yaml", 5), None);
        assert_eq!(files.line("a.yaml", 0), None);
        assert_eq!(files.line("b.yaml", 1), None);
        let mut more = SourceFiles::new();
        more.insert("b.yaml", SourceText::new("b"));
        more.insert("a.yaml", SourceText::new("not this"));
        files.extend(more);
        assert_eq!(files.len(), 2);
        assert_eq!(files.line("b.yaml", 1), Some("b"));
        assert_eq!(&**files.get("a.yaml").unwrap().text(), "one\ntwo\r\n\nlast");
    }
}
