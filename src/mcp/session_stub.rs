//! TEMPORARY stub of mcp-client's McpSession (not committed): lets tool-lock compile
//! until the real one is merged.
#![allow(missing_docs, dead_code)]
use super::{CallOutput, McpError, ServerConfig, ServerListing};
use crate::tools::ToolContext;

#[derive(Clone, Debug)]
pub struct McpSession {
    listing: std::sync::Arc<ServerListing>,
}

impl McpSession {
    pub async fn connect(
        config: &ServerConfig,
        _ctx: &ToolContext,
    ) -> Result<McpSession, McpError> {
        Err(McpError::Start {
            server: config.name.clone(),
            reason: "stub".into(),
        })
    }
    pub fn listing(&self) -> &ServerListing {
        &self.listing
    }
    pub async fn call(
        &self,
        _tool: &str,
        _arguments: serde_json::Map<String, serde_json::Value>,
    ) -> Result<CallOutput, McpError> {
        Err(McpError::Start {
            server: String::new(),
            reason: "stub".into(),
        })
    }
    pub async fn shutdown(self) {}
}
