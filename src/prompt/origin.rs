//! [`TextOrigin`]: where a scalar's text sits in its file, so an offset inside the parsed
//! text maps back to a file line and column (inside block scalars too).

// PLACEHOLDER (to be replaced by the real implementation): maps every offset to the
// scalar's start.
use std::sync::Arc;

use crate::diagnostic::Span;

/// Where a scalar's text starts in its file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TextOrigin {
    file: Arc<str>,
    line: u32,
    column: u32,
}

impl TextOrigin {
    /// Build from the file and where the scalar starts (1-based).
    pub fn locate(file: Arc<str>, _source: &str, line: u32, column: u32) -> TextOrigin {
        TextOrigin { file, line, column }
    }

    /// The span of byte `offset` of the parsed `text`.
    pub fn span_at(&self, _text: &str, _offset: usize) -> Span {
        self.span()
    }

    /// The start.
    pub fn span(&self) -> Span {
        Span::new(self.file.clone(), self.line, self.column)
    }
}
