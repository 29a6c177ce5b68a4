//! MCP servers as tool sources: the protocol client, the only place that uses `rmcp`
//! (its API changes every few months; everything else sees the types here).
//!
//! [`types`] is always available (the tool lock stores [`ServerListing`]s); the client
//! itself needs the `client` feature.

mod types;

pub use types::{
    CallOutput, HeaderSecret, ListedTool, McpError, ServerConfig, ServerListing, ServerTransport,
    ToolAnnotations,
};
