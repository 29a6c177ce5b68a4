//! MCP servers as tool sources: the protocol client, the only place that uses `rmcp`
//! (its API changes every few months; everything else sees the types here).
//!
//! [`ServerListing`] and the other types are always available (the tool lock stores
//! listings); `McpSession`, the client itself, needs the `client` feature.

#[cfg(feature = "client")]
mod held;
#[cfg(feature = "client")]
mod session;
mod types;

#[cfg(feature = "client")]
pub use held::{HELD_BYTES_PER_SERVER, HELD_LINES_PER_SERVER, HeldStderr};
#[cfg(feature = "client")]
pub use session::{
    MAX_DESCRIPTION_BYTES, MAX_LIST_PAGES, MAX_MESSAGE_BYTES, MAX_SCHEMA_BYTES,
    MAX_TOOL_NAME_BYTES, MAX_TOOLS, McpSession, STDERR_LINE_BYTES, StderrSink,
};
#[cfg(feature = "client")]
pub(crate) use types::human_duration;
pub use types::{
    CallOutput, HeaderSecret, ListedTool, McpError, ServerConfig, ServerListing, ServerTransport,
    ToolAnnotations, Unsupported,
};
