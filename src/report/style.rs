//! Colour for human output. The library never looks at a stream: the host says whether
//! to colour ([`Style::new`]), or lets [`Style::detect`] apply the usual rule (a terminal,
//! and `NO_COLOR` unset) to what it found out about its stream.

use std::fmt::Display;

/// Whether (and how) to colour one output stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Style {
    enabled: bool,
}

impl Style {
    /// Colour (ANSI escapes) when `enabled`.
    pub fn new(enabled: bool) -> Self {
        Style { enabled }
    }

    /// Colour iff `is_terminal` (the host's finding about its stream) and `NO_COLOR`
    /// is not set.
    pub fn detect(is_terminal: bool) -> Self {
        Style {
            enabled: is_terminal && std::env::var_os("NO_COLOR").is_none(),
        }
    }

    /// No colour.
    pub fn plain() -> Self {
        Style { enabled: false }
    }

    fn paint(self, code: &str, text: impl Display) -> String {
        if self.enabled {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }

    /// Bold red, for `error`.
    pub fn error(self, text: impl Display) -> String {
        self.paint("1;31", text)
    }

    /// Bold yellow, for `warning`.
    pub fn warning(self, text: impl Display) -> String {
        self.paint("1;33", text)
    }

    /// Bold blue, for gutters and carets' frame.
    pub fn gutter(self, text: impl Display) -> String {
        self.paint("1;34", text)
    }

    /// Bold.
    pub fn bold(self, text: impl Display) -> String {
        self.paint("1", text)
    }

    /// Dim, for secondary columns.
    pub fn dim(self, text: impl Display) -> String {
        self.paint("2", text)
    }
}
