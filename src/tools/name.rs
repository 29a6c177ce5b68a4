//! [`ToolName`]: a name that matched `^[a-zA-Z0-9_-]{1,128}$`, what at least one provider
//! accepts (Anthropic). OpenAI-dialect endpoints take at most 64 characters; validation
//! checks the name against the preset's provider (`tool-name-rejected`).

use std::fmt;

use crate::diagnostic::{Diagnostic, DiagnosticKind};

/// The longest tool name any provider accepts (Anthropic's limit).
pub const MAX_TOOL_NAME_LEN: usize = 128;

/// A validated tool name.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(transparent)]
pub struct ToolName(String);

impl ToolName {
    /// Check and wrap a name.
    pub fn new(name: &str) -> Result<Self, Diagnostic> {
        if Self::is_valid(name) {
            Ok(ToolName(name.to_owned()))
        } else {
            Err(Diagnostic::new(
                DiagnosticKind::InvalidName,
                format!("invalid tool name `{name}`"),
            )
            .help("tool names are 1 to 128 characters of a-z, A-Z, 0-9, `_` and `-` (at most 64 for OpenAI-dialect providers)"))
        }
    }

    /// Does `name` match `^[a-zA-Z0-9_-]{1,128}$`?
    pub fn is_valid(name: &str) -> bool {
        (1..=MAX_TOOL_NAME_LEN).contains(&name.len())
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ToolName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for ToolName {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl std::borrow::Borrow<str> for ToolName {
    fn borrow(&self) -> &str {
        &self.0
    }
}
