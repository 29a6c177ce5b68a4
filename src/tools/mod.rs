//! The tool registry: typed tools with schemars-generated schemas, restriction by
//! allow/deny/globs, wire projection and confined execution.

pub mod builtin;
mod catalog;
mod context;
pub mod external;
pub(crate) mod foreign;
mod name;
mod registry;
mod restriction;
/// The command sandbox, now at [`crate::process::sandbox`] (re-exported here).
pub use crate::process::sandbox;
pub mod schema;
mod tool;

// MCP servers as tool sources: the protocol client (the one place that uses rmcp).
pub mod mcp;

pub use catalog::ToolCatalog;
pub use context::{SessionState, ToolContext, WorkspaceError};
pub use external::{ServerListings, ToolOrigin};
pub use name::{
    MAX_SERVER_NAME_LEN, MAX_TOOL_NAME_LEN, PORTABLE_TOOL_NAME_LEN, ToolName, mcp_server_of,
    mcp_tool_name, server_name_alias, unaliased_server_name,
};
pub use registry::{SchemaDialect, ToolCallError, ToolRegistry, WireTool};
pub(crate) use registry::{describe_problem, wire_json};
pub use restriction::{OrderEntry, REST, ToolPattern, ToolRestriction, visible_tools};
pub use schema::ToolSchemas;
pub(crate) use tool::vals;
pub use tool::{
    ExternalHandler, ExternalTool, TextRef, TextValue, Tool, ToolDefinition, ToolError, ToolFuture,
    ToolGuidance, ToolOutput,
};
