//! The vocabulary of the MCP client, free of `rmcp`: what a server offers (its listing, as
//! the tool lock stores it), how to reach it, what a call returns and how it fails.
//!
//! These types compile without the `client` feature, so validation and the lock can use a
//! pinned [`ServerListing`] without linking the protocol client.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What a server said about itself and its tools when it was listed: the unit the tool lock
/// pins per preset and server.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ServerListing {
    /// The server's own name (`serverInfo.name` of the handshake).
    pub server_name: String,
    /// The server's own version (`serverInfo.version`).
    pub server_version: String,
    /// The protocol revision the session agreed on, e.g. `2025-06-18`.
    pub protocol_version: String,
    /// The tools, in the order the server listed them (pages concatenated).
    pub tools: Vec<ListedTool>,
}

/// One tool as a server lists it (`tools/list`), before any renaming or projection.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ListedTool {
    /// The tool's name on the server (MCP allows `.` and up to 128 characters).
    pub name: String,
    /// A human-readable title, if the server gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The description the model reads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The JSON Schema of the arguments (`inputSchema`), as listed or normalised.
    pub input_schema: Value,
    /// The JSON Schema of `structuredContent` (`outputSchema`), if declared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    /// The server's hints about the tool. Hints, not trust: `readOnlyHint` never skips an
    /// approval by itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<ToolAnnotations>,
}

/// The hints MCP lets a server attach to a tool.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolAnnotations {
    /// A human-readable title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The tool does not change its environment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    /// The tool may destroy things (meaningful when not read-only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    /// Calling it twice with the same arguments has no further effect.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    /// The tool reaches an open world (the internet) rather than a closed domain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
}

/// A header value that may be a secret (a bearer token): kept out of `Debug` and errors.
#[derive(Clone, PartialEq, Eq)]
pub struct HeaderSecret(String);

impl HeaderSecret {
    /// Wraps a resolved header value.
    pub fn new(value: impl Into<String>) -> Self {
        HeaderSecret(value.into())
    }

    /// The value, for the one place that puts it on the wire.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for HeaderSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("HeaderSecret(<redacted>)")
    }
}

/// How to reach a server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ServerTransport {
    /// A child process speaking MCP on stdin/stdout (newline-delimited JSON-RPC).
    Stdio {
        /// The program and its arguments (never a shell string). Not empty.
        argv: Vec<String>,
        /// The child's complete environment, already filtered by the caller (allowlist +
        /// `passEnv` + literal `env`); nothing else is inherited.
        env: Vec<(String, String)>,
        /// The child's working directory (the workspace).
        cwd: PathBuf,
    },
    /// A Streamable HTTP endpoint (not the deprecated HTTP+SSE transport).
    Http {
        /// The endpoint URL, e.g. `https://mcp.example.com/mcp`.
        url: String,
        /// Extra request headers, values resolved by the caller.
        headers: Vec<(String, HeaderSecret)>,
    },
}

/// One declared server, ready to connect.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerConfig {
    /// The server's name in the preset (`^[a-z][a-z0-9_-]*$`), used in messages and the
    /// stderr prefix `[mcp <name>] `.
    pub name: String,
    /// How to reach it.
    pub transport: ServerTransport,
    /// How long starting, the handshake and listing the tools may take together.
    pub startup_timeout: Duration,
    /// How long one tool call may take before it is cancelled.
    pub tool_timeout: Duration,
}

/// What a tool call gave back, converted for the model.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CallOutput {
    /// Text content, `structuredContent` as JSON text, and a placeholder for each image,
    /// audio or resource left out; bounded like a built-in tool's output.
    pub text: String,
    /// The server flagged the result as a tool error (`isError: true`).
    pub is_error: bool,
}

/// Why a server could not be used or a call failed. `Display` says what happened and,
/// where there is one, what to do.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum McpError {
    /// The server process could not be started, or the HTTP endpoint not reached.
    #[error("MCP server `{server}` did not start: {reason}")]
    Start {
        /// The server's name in the preset.
        server: String,
        /// Why (the OS error, the HTTP failure).
        reason: String,
    },
    /// The server answered with something that is not MCP.
    #[error(
        "MCP server `{server}` does not speak MCP: {detail} (is `command` the server itself, \
         and does it print logs to stderr rather than stdout?)"
    )]
    NotMcp {
        /// The server's name in the preset.
        server: String,
        /// What was wrong, with the start of what it sent.
        detail: String,
    },
    /// Starting, the handshake and listing the tools took longer than `startupTimeout`.
    #[error(
        "MCP server `{server}` did not finish starting within {}: raise `startupTimeout` \
         if it is just slow", human_duration(*after)
    )]
    StartupTimeout {
        /// The server's name in the preset.
        server: String,
        /// The startup timeout.
        after: Duration,
    },
    /// A tool call took longer than `toolTimeout`; it was cancelled.
    #[error(
        "tool `{tool}` of MCP server `{server}` did not answer within {} and was cancelled \
         (`toolTimeout` sets the limit)", human_duration(*after)
    )]
    Timeout {
        /// The server's name in the preset.
        server: String,
        /// The tool's name on the server.
        tool: String,
        /// The tool timeout.
        after: Duration,
    },
    /// The server process exited or the connection closed; every later call fails too.
    #[error("MCP server `{server}` is gone: {detail}")]
    Crashed {
        /// The server's name in the preset.
        server: String,
        /// How it ended (exit status, closed connection).
        detail: String,
    },
    /// A tool call was answered with a JSON-RPC error.
    #[error("MCP server `{server}`: tool `{tool}` failed: {message} (JSON-RPC error {code})")]
    ToolFailed {
        /// The server's name in the preset.
        server: String,
        /// The tool's name on the server (cut).
        tool: String,
        /// The server's message (cut; its own words).
        message: String,
        /// The JSON-RPC error code.
        code: i32,
    },
    /// A tool call asked for something agent-presets does not do: input from the client
    /// (`input`), or a long-running task (`task`).
    #[error("MCP server `{server}`: tool `{tool}` {}", match what {
        Unsupported::Input => "asked the client for input, which agent-presets does not provide",
        Unsupported::Task => "answered with a long-running task, which agent-presets does not support",
    })]
    Unsupported {
        /// The server's name in the preset.
        server: String,
        /// The tool's name on the server (cut).
        tool: String,
        /// What it asked for.
        what: Unsupported,
    },
    /// The server broke the protocol or answered a request with a JSON-RPC error.
    #[error("MCP server `{server}`: {detail}")]
    Protocol {
        /// The server's name in the preset.
        server: String,
        /// The error.
        detail: String,
    },
    /// The server listed more tools than a preset can use.
    #[error(
        "MCP server `{server}` lists more than {limit} tools: too many to send a model; \
         use a server with fewer tools"
    )]
    TooManyTools {
        /// The server's name in the preset.
        server: String,
        /// The most tools accepted from one server.
        limit: usize,
    },
    /// A listed tool is larger than accepted (description or schema).
    #[error(
        "MCP server `{server}`: tool `{tool}` has a {what} of {bytes} bytes, more than the \
         {limit} accepted"
    )]
    ToolTooLarge {
        /// The server's name in the preset.
        server: String,
        /// The tool's name on the server (cut if it is itself long).
        tool: String,
        /// `description` or `input schema`.
        what: &'static str,
        /// Its size.
        bytes: usize,
        /// The limit.
        limit: usize,
    },
    /// The configuration cannot be used (an empty argv, a bad URL or header).
    #[error("MCP server `{server}`: {detail}")]
    Config {
        /// The server's name in the preset.
        server: String,
        /// What is wrong.
        detail: String,
    },
}

/// What an MCP tool call asked for that agent-presets does not do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unsupported {
    /// Input from the client (elicitation).
    Input,
    /// A long-running task.
    Task,
}

impl McpError {
    /// The name of the server the error is about.
    pub fn server(&self) -> &str {
        match self {
            McpError::Start { server, .. }
            | McpError::NotMcp { server, .. }
            | McpError::StartupTimeout { server, .. }
            | McpError::Timeout { server, .. }
            | McpError::Crashed { server, .. }
            | McpError::Protocol { server, .. }
            | McpError::ToolFailed { server, .. }
            | McpError::Unsupported { server, .. }
            | McpError::TooManyTools { server, .. }
            | McpError::ToolTooLarge { server, .. }
            | McpError::Config { server, .. } => server,
        }
    }

    /// The same error with every text the server could have put in it (reasons,
    /// details, a tool's name) masked by `redactor`.
    #[must_use]
    pub fn redacted(self, redactor: &crate::redact::Redactor) -> McpError {
        if redactor.is_empty() {
            return self;
        }
        let r = |s: String| redactor.redact(&s).into_owned();
        match self {
            McpError::Start { server, reason } => McpError::Start {
                server,
                reason: r(reason),
            },
            McpError::NotMcp { server, detail } => McpError::NotMcp {
                server,
                detail: r(detail),
            },
            McpError::Timeout {
                server,
                tool,
                after,
            } => McpError::Timeout {
                server,
                tool: r(tool),
                after,
            },
            McpError::Crashed { server, detail } => McpError::Crashed {
                server,
                detail: r(detail),
            },
            McpError::Protocol { server, detail } => McpError::Protocol {
                server,
                detail: r(detail),
            },
            McpError::ToolFailed {
                server,
                tool,
                message,
                code,
            } => McpError::ToolFailed {
                server,
                tool: r(tool),
                message: r(message),
                code,
            },
            McpError::Unsupported { server, tool, what } => McpError::Unsupported {
                server,
                tool: r(tool),
                what,
            },
            McpError::ToolTooLarge {
                server,
                tool,
                what,
                bytes,
                limit,
            } => McpError::ToolTooLarge {
                server,
                tool: r(tool),
                what,
                bytes,
                limit,
            },
            McpError::Config { server, detail } => McpError::Config {
                server,
                detail: r(detail),
            },
            other @ (McpError::StartupTimeout { .. } | McpError::TooManyTools { .. }) => other,
        }
    }
}

/// `10s`, `1.5s`, `250ms`: a duration as a preset would write it.
pub(crate) fn human_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if ms < 1000 {
        format!("{ms}ms")
    } else if ms.is_multiple_of(1000) {
        format!("{}s", ms / 1000)
    } else {
        format!("{:.1}s", d.as_secs_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listing_round_trips_in_camel_case_and_skips_absent_fields() {
        let listing = ServerListing {
            server_name: "time".into(),
            server_version: "1.0".into(),
            protocol_version: "2025-06-18".into(),
            tools: vec![ListedTool {
                name: "get_time".into(),
                title: None,
                description: Some("Now.".into()),
                input_schema: serde_json::json!({"type": "object"}),
                output_schema: None,
                annotations: Some(ToolAnnotations {
                    read_only_hint: Some(true),
                    ..ToolAnnotations::default()
                }),
            }],
        };
        let text = serde_json::to_string(&listing).unwrap();
        assert_eq!(
            text,
            r#"{"serverName":"time","serverVersion":"1.0","protocolVersion":"2025-06-18","tools":[{"name":"get_time","description":"Now.","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}]}"#
        );
        let back: ServerListing = serde_json::from_str(&text).unwrap();
        assert_eq!(back, listing);
    }

    #[test]
    fn header_values_stay_out_of_debug() {
        let transport = ServerTransport::Http {
            url: "https://mcp.example.com/mcp".into(),
            headers: vec![("Authorization".into(), HeaderSecret::new("Bearer sk-123"))],
        };
        let debug = format!("{transport:?}");
        assert!(!debug.contains("sk-123"), "{debug}");
        assert!(debug.contains("Authorization"));
    }

    #[test]
    fn timeouts_read_like_preset_durations() {
        let err = McpError::StartupTimeout {
            server: "time".into(),
            after: Duration::from_secs(10),
        };
        assert!(err.to_string().contains("within 10s"), "{err}");
        let err = McpError::Timeout {
            server: "time".into(),
            tool: "slow".into(),
            after: Duration::from_millis(250),
        };
        assert!(err.to_string().contains("within 250ms"), "{err}");
    }
}
