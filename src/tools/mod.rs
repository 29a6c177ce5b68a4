//! The tool registry: typed tools with schemars-generated schemas, restriction by
//! allow/deny/globs, wire projection and confined execution.

pub mod builtin;
mod catalog;
mod context;
mod name;
mod registry;
mod restriction;
pub mod sandbox;
pub mod schema;
mod tool;

// MCP servers as tool sources: the protocol client (the one place that uses rmcp).
pub mod mcp;

pub use catalog::ToolCatalog;
pub use context::{SessionState, ToolContext, WorkspaceError};
pub use name::{MAX_TOOL_NAME_LEN, ToolName};
pub(crate) use registry::wire_json;
pub use registry::{SchemaDialect, ToolCallError, ToolRegistry, WireTool};
pub use restriction::{OrderEntry, REST, ToolPattern, ToolRestriction, visible_tools};
pub use schema::ToolSchemas;
pub use tool::{Tool, ToolDefinition, ToolError, ToolFuture, ToolGuidance, ToolOutput};
