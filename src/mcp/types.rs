//! What an MCP server says it offers, as the tool lock stores it (serde, camelCase, field
//! order as written). Always available: validation reads them from the lock without the
//! protocol client.

use serde::{Deserialize, Serialize};

/// One tool of a server's `tools/list`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListedTool {
    /// The tool's name as the server spells it (MCP allows `.` and 128 characters).
    pub name: String,
    /// A display title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the tool does, for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The parameter schema.
    pub input_schema: serde_json::Value,
    /// The schema of `structuredContent`, if the server gives one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<serde_json::Value>,
    /// The server's hints about the tool (hints, not trust).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<ToolAnnotations>,
}

/// MCP tool annotations.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolAnnotations {
    /// A display title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The server says the tool changes nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    /// The server says the tool may destroy things.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    /// The server says calling it twice does no more than once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    /// The server says the tool reaches beyond a closed world.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
}

/// A server's identity and tool list, as listed once (by `lock --connect` or a live
/// connection).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerListing {
    /// The name the server reports (`serverInfo.name`).
    pub server_name: String,
    /// The version it reports.
    pub server_version: String,
    /// The protocol version agreed on.
    pub protocol_version: String,
    /// Its tools, in the order listed.
    pub tools: Vec<ListedTool>,
}
