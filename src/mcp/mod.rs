//! MCP (Model Context Protocol) servers a preset declares: the types the tool lock stores.

mod types;

pub use types::{ListedTool, ServerListing, ToolAnnotations};
