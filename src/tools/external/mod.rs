//! Tools a preset brings along rather than the host: command tools (`commands:`, a
//! program run with the arguments as JSON on stdin) and the tools of MCP servers
//! (`mcpServers:`), whose definitions come from what a server listed — pinned by the
//! tool lock, never fetched while validating or rendering ([`ServerListings`]).

mod command;
mod hook;
mod schema;

pub use command::{CommandTool, command_handler};
pub use hook::{run_check, run_hook};
pub use schema::{MAX_SCHEMA_BYTES, MAX_SCHEMA_DEPTH, check_meta_schema, normalize_schema};

use crate::mcp::ServerListing;

/// What the lock (or a live connection) says a server offers.
pub trait ServerListings: Send + Sync {
    /// The pinned listing of server `server` declared by preset `preset`, if any.
    fn listing(&self, preset: &str, server: &str) -> Option<&ServerListing>;

    /// What ran for that server when it was listed (its argv or URL, its program and
    /// scripts with their digests), as canonical JSON, if the source records it. Trust
    /// digests it with the listing, so a lock entry whose identity was edited asks again.
    fn identity_json(&self, _preset: &str, _server: &str) -> Option<Vec<u8>> {
        None
    }
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
    /// What ran for each server when it was listed, as canonical JSON (from a lock).
    identities: std::collections::BTreeMap<(String, String), Vec<u8>>,
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

    /// Record what ran for `server` of `preset` when it was listed (canonical JSON of
    /// the lock's identity: argv or URL, program and scripts with their digests).
    pub fn insert_identity(
        &mut self,
        preset: impl Into<String>,
        server: impl Into<String>,
        identity: Vec<u8>,
    ) -> &mut Self {
        self.identities
            .insert((preset.into(), server.into()), identity);
        self
    }
}

impl ServerListings for ListingMap {
    fn listing(&self, preset: &str, server: &str) -> Option<&ServerListing> {
        self.entries.get(&(preset.to_owned(), server.to_owned()))
    }

    fn identity_json(&self, preset: &str, server: &str) -> Option<Vec<u8>> {
        self.identities
            .get(&(preset.to_owned(), server.to_owned()))
            .cloned()
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
