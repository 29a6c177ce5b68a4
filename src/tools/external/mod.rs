//! Tools a preset brings along rather than the host: command tools (`commands:`, a
//! program run with the arguments as JSON on stdin) and the tools of MCP servers
//! (`mcpServers:`), whose definitions come from what a server listed — pinned by the
//! tool lock, never fetched while validating or rendering ([`ServerListings`]).

mod command;
mod schema;

pub use command::{CommandTool, command_handler};
pub use schema::{MAX_SCHEMA_BYTES, MAX_SCHEMA_DEPTH, check_meta_schema, normalize_schema};

use crate::mcp::ServerListing;

/// What the lock (or a live connection) says a server offers.
pub trait ServerListings: Send + Sync {
    /// The pinned listing of server `server` declared by preset `preset`, if any.
    fn listing(&self, preset: &str, server: &str) -> Option<&ServerListing>;
}

/// No listings at all: every declared MCP server is "not locked".
#[derive(Clone, Copy, Debug, Default)]
pub struct NoListings;

impl ServerListings for NoListings {
    fn listing(&self, _: &str, _: &str) -> Option<&ServerListing> {
        None
    }
}

/// Listings held in memory, by `(preset, server)` (tests, hosts, a live `--connect`).
#[derive(Clone, Debug, Default)]
pub struct ListingMap {
    entries: std::collections::BTreeMap<(String, String), ServerListing>,
}

impl ListingMap {
    /// No listings yet.
    pub fn new() -> Self {
        ListingMap::default()
    }

    /// Record the listing of `server` as declared by `preset` (replacing any earlier one).
    pub fn insert(
        &mut self,
        preset: impl Into<String>,
        server: impl Into<String>,
        listing: ServerListing,
    ) -> &mut Self {
        self.entries.insert((preset.into(), server.into()), listing);
        self
    }
}

impl ServerListings for ListingMap {
    fn listing(&self, preset: &str, server: &str) -> Option<&ServerListing> {
        self.entries.get(&(preset.to_owned(), server.to_owned()))
    }
}

/// Where a catalog entry came from.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ToolOrigin {
    /// A Rust tool: built in, or registered by the host.
    Host,
    /// A preset's command tool (`commands:`), by its name.
    Command {
        /// The key under `commands:`.
        name: String,
    },
    /// A tool of an MCP server a preset declares.
    Mcp {
        /// The key under `mcpServers:`.
        server: String,
        /// The tool's name as the server spells it (before [`mcp_tool_name`]).
        ///
        /// [`mcp_tool_name`]: crate::tools::mcp_tool_name
        tool: String,
    },
}
