//! Colour for human output: on only when the stream is a terminal and `NO_COLOR` is unset.

use std::fmt::Display;

/// Whether (and how) to colour one output stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Style {
    enabled: bool,
}

impl Style {
    /// Colour iff `is_terminal` and `NO_COLOR` is not set.
    pub(crate) fn detect(is_terminal: bool) -> Self {
        Style {
            enabled: is_terminal && std::env::var_os("NO_COLOR").is_none(),
        }
    }

    /// No colour.
    #[cfg(test)]
    pub(crate) fn plain() -> Self {
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
    pub(crate) fn error(self, text: impl Display) -> String {
        self.paint("1;31", text)
    }

    /// Bold yellow, for `warning`.
    pub(crate) fn warning(self, text: impl Display) -> String {
        self.paint("1;33", text)
    }

    /// Bold blue, for gutters and carets' frame.
    pub(crate) fn gutter(self, text: impl Display) -> String {
        self.paint("1;34", text)
    }

    /// Bold.
    pub(crate) fn bold(self, text: impl Display) -> String {
        self.paint("1", text)
    }

    /// Dim, for secondary columns.
    pub(crate) fn dim(self, text: impl Display) -> String {
        self.paint("2", text)
    }
}
