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

/// The longest MCP server name whose tools' names keep `mcp__<server>__` whole, even when
/// a long tool name is cut and hashed (the first 55 characters are kept).
pub const MAX_SERVER_NAME_LEN: usize = KEPT_PREFIX_LEN - "mcp__".len() - "__".len();

/// Why server name `server` (one that matches the name pattern) could make its tools'
/// names alias another server's: `None` when it cannot. A name with `__` (`a__b`'s tool
/// `x` and `a`'s tool `b__x` would both be `mcp__a__b__x`, and `mcp__a__*` would match
/// `a__b`'s tools), one ending in `_` (`a_`'s `x` and `a`'s `_x`), or one longer than
/// [`MAX_SERVER_NAME_LEN`] (a cut name would not keep the server whole). With none of
/// these, the server of a registry name is the text up to the first `__` after `mcp__`
/// ([`mcp_server_of`]), so a name or glob `mcp__a__…` selects server `a`'s tools only.
pub fn server_name_alias(server: &str) -> Option<&'static str> {
    if server.contains("__") {
        Some("it holds `__`, which separates the server from the tool in `mcp__<server>__<tool>`")
    } else if server.ends_with('_') {
        Some("it ends with `_`, which joins the `__` after it in `mcp__<server>__<tool>`")
    } else if server.len() > MAX_SERVER_NAME_LEN {
        Some(
            "it is longer than 48 characters, so a long tool name cut to 64 characters would not keep the server's name whole",
        )
    } else {
        None
    }
}

/// A name close to `server` that [`server_name_alias`] accepts: runs of `_` made one,
/// a trailing `_` dropped, cut to [`MAX_SERVER_NAME_LEN`].
pub fn unaliased_server_name(server: &str) -> String {
    let mut out = String::with_capacity(server.len());
    for c in server.chars() {
        if !(c == '_' && out.ends_with('_')) {
            out.push(c);
        }
    }
    let mut out: String = out.chars().take(MAX_SERVER_NAME_LEN).collect();
    while out.ends_with('_') {
        out.pop();
    }
    out
}

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
    fn names_of_servers_that_cannot_alias_keep_their_server() {
        // Today's aliases: `a` + `b__x` and `a__b` + `x`, `a` + `_x` and `a_` + `x`.
        assert_eq!(
            mcp_tool_name("a", "b__x").unwrap(),
            mcp_tool_name("a__b", "x").unwrap()
        );
        assert!(server_name_alias("a__b").is_some());
        assert!(server_name_alias("a_").is_some());
        assert!(server_name_alias(&"s".repeat(MAX_SERVER_NAME_LEN + 1)).is_some());
        assert_eq!(server_name_alias("a_b-c"), None);
        assert_eq!(unaliased_server_name("a__b_"), "a_b");
        assert_eq!(
            unaliased_server_name(&"s".repeat(60)),
            "s".repeat(MAX_SERVER_NAME_LEN)
        );
        for server in ["a", "a_b", "a-", "x-_y", &"s".repeat(MAX_SERVER_NAME_LEN)] {
            assert_eq!(server_name_alias(server), None, "{server}");
            for tool in ["x", "_x", "__x", "b__x", "a.b/c", &"t".repeat(200)] {
                let name = mcp_tool_name(server, tool).unwrap();
                assert_eq!(mcp_server_of(name.as_str()), Some(server), "{name}");
                assert!(name.as_str().starts_with(&format!("mcp__{server}__")));
            }
        }
    }

    #[test]
    fn server_of_a_name_or_pattern() {
        assert_eq!(mcp_server_of("mcp__time__now"), Some("time"));
        assert_eq!(mcp_server_of("mcp__tiem__*"), Some("tiem"));
        assert_eq!(mcp_server_of("mcp__time"), None);
        assert_eq!(mcp_server_of("read_file"), None);
    }
}
