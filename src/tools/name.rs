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

/// The longest name every provider accepts (OpenAI-dialect endpoints): the length
/// [`mcp_tool_name`] keeps registry names within.
pub const PORTABLE_TOOL_NAME_LEN: usize = 64;

/// How many characters of a too-long MCP name are kept before the hash suffix.
const KEPT_PREFIX_LEN: usize = PORTABLE_TOOL_NAME_LEN - 1 - 8;

/// The registry name of tool `tool` of MCP server `server`: `mcp__<server>__<tool>`,
/// every character outside `[a-zA-Z0-9_-]` replaced by `_` (MCP allows `.`, `/` and up to
/// 128 characters; providers do not), and, when that is longer than 64 characters, its
/// first 55 characters, `_` and the first 8 hex digits of the SHA-256 of the unsanitised
/// `mcp__<server>__<tool>` — deterministic, so the lock and every run agree.
///
/// Fails on an empty server or tool name. Two MCP tools can still end up with one name
/// (`a.b` and `a_b`): the per-preset catalog reports that collision
/// ([`DiagnosticKind::DuplicateTool`]).
pub fn mcp_tool_name(server: &str, tool: &str) -> Result<ToolName, Diagnostic> {
    if server.is_empty() || tool.is_empty() {
        return Err(Diagnostic::new(
            DiagnosticKind::InvalidName,
            format!(
                "an MCP tool needs a server and a tool name (got server `{}`, tool `{}`)",
                crate::tools::builtin::echo(server),
                crate::tools::builtin::echo(tool)
            ),
        ));
    }
    let original = format!("mcp__{server}__{tool}");
    let sanitised: String = original
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let name = if sanitised.len() <= PORTABLE_TOOL_NAME_LEN {
        sanitised
    } else {
        use sha2::{Digest, Sha256};
        let digest = Sha256::digest(original.as_bytes());
        let hex: String = digest.iter().take(4).map(|b| format!("{b:02x}")).collect();
        // ASCII after sanitising, so byte slicing is on character boundaries.
        format!("{}_{hex}", &sanitised[..KEPT_PREFIX_LEN])
    };
    ToolName::new(&name)
}

/// The server part of a registry name made by [`mcp_tool_name`] (`mcp__time__now` →
/// `time`), or of a pattern written like one (`mcp__time__*`). `None` for names that do
/// not start with `mcp__` or have no `__` after the server.
pub fn mcp_server_of(name: &str) -> Option<&str> {
    let rest = name.strip_prefix("mcp__")?;
    let end = rest.find("__")?;
    Some(&rest[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mcp_names_are_sanitised_and_bounded() {
        assert_eq!(
            mcp_tool_name("time", "now").unwrap().as_str(),
            "mcp__time__now"
        );
        assert_eq!(
            mcp_tool_name("gh", "issues.list/all").unwrap().as_str(),
            "mcp__gh__issues_list_all"
        );
        assert_eq!(mcp_tool_name("gh", "zäh").unwrap().as_str(), "mcp__gh__z_h");
        let long = "t".repeat(100);
        let a = mcp_tool_name("srv", &long).unwrap();
        assert_eq!(a.as_str().len(), 64);
        assert!(a.as_str().starts_with("mcp__srv__ttt"));
        // Deterministic, and different originals that share the prefix stay apart.
        assert_eq!(a, mcp_tool_name("srv", &long).unwrap());
        let b = mcp_tool_name("srv", &format!("{long}x")).unwrap();
        assert_ne!(a, b);
        assert_eq!(a.as_str()[..55], b.as_str()[..55]);
        // Exactly 64 is kept as is.
        let fits = "u".repeat(64 - "mcp__srv__".len());
        assert_eq!(mcp_tool_name("srv", &fits).unwrap().as_str().len(), 64);
        assert!(
            !mcp_tool_name("srv", &fits)
                .unwrap()
                .as_str()
                .contains(|c: char| c.is_ascii_digit())
        );
        assert!(mcp_tool_name("", "x").is_err());
        assert!(mcp_tool_name("x", "").is_err());
    }

    #[test]
    fn server_of_a_name_or_pattern() {
        assert_eq!(mcp_server_of("mcp__time__now"), Some("time"));
        assert_eq!(mcp_server_of("mcp__tiem__*"), Some("tiem"));
        assert_eq!(mcp_server_of("mcp__time"), None);
        assert_eq!(mcp_server_of("read_file"), None);
    }
}
