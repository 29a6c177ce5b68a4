//! [`Streams`]: where a command's output goes.

use std::io::Write;

use super::Style;

/// Where a command's output goes: the two writers (the answer or report, and messages
/// for the person running it) and the colours for each. The library writes only to the
/// writers it is handed; the CLI hands it stdout and stderr.
pub struct Streams<'a> {
    /// Standard output.
    pub out: &'a mut dyn Write,
    /// Standard error.
    pub err: &'a mut dyn Write,
    /// Colours for standard output.
    pub out_style: Style,
    /// Colours for standard error.
    pub err_style: Style,
}
