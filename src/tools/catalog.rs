//! [`ToolCatalog`]: every tool the host knows (built-in and library-registered). What a
//! preset may *see* is decided later by a [`ToolRestriction`](super::ToolRestriction);
//! "known" and "visible" are different sets on purpose, so a typo can be told apart from
//! a tool an ancestor already hid.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::external::{NoListings, ServerListings};
use super::name::ToolName;
use super::tool::{Tool, ToolDefinition};
use crate::diagnostic::{Diagnostic, DiagnosticKind};

/// Every known tool, by name.
#[derive(Clone, Default)]
pub struct ToolCatalog {
    tools: BTreeMap<ToolName, Arc<ToolDefinition>>,
    /// Where the tools of the MCP servers presets declare come from (the tool lock);
    /// none: every declared server is reported as not locked.
    listings: Option<Arc<dyn ServerListings>>,
    /// The MCP servers the preset this catalog was built for declares, and whether their
    /// tools are in it (listed by the lock): `mcp__<server>__…` patterns are checked
    /// against these.
    servers: BTreeMap<String, bool>,
}

impl std::fmt::Debug for ToolCatalog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolCatalog")
            .field("tools", &self.tools)
            .field("listings", &self.listings.is_some())
            .field("servers", &self.servers)
            .finish()
    }
}

impl ToolCatalog {
    /// An empty catalog.
    pub fn new() -> Self {
        ToolCatalog::default()
    }

    /// A catalog holding the built-in tools.
    pub fn builtin() -> Self {
        let mut catalog = ToolCatalog::new();
        super::builtin::register_all(&mut catalog);
        catalog
    }

    /// The same catalog, taking the tools of the MCP servers a preset declares from
    /// `listings` (the tool lock, or a live connection) when a preset is validated.
    pub fn with_listings(mut self, listings: Arc<dyn ServerListings>) -> Self {
        self.listings = Some(listings);
        self
    }

    /// Where MCP tool definitions come from ([`NoListings`] when none was given).
    pub fn listings(&self) -> &dyn ServerListings {
        match &self.listings {
            Some(l) => l.as_ref(),
            None => &NoListings,
        }
    }

    /// Record that the preset this catalog is for declares MCP server `server`, and
    /// whether its tools are in the catalog.
    pub(crate) fn declare_server(&mut self, server: &str, listed: bool) {
        self.servers.insert(server.to_owned(), listed);
    }

    /// The MCP servers the preset this catalog was built for declares, with whether
    /// their tools are in the catalog (the lock listed them). Empty for a host's catalog.
    pub fn declared_servers(&self) -> impl Iterator<Item = (&str, bool)> {
        self.servers.iter().map(|(k, v)| (k.as_str(), *v))
    }

    /// Register a typed tool. A duplicate or invalid name is an error.
    pub fn register<T: Tool>(&mut self, tool: T) -> Result<&mut Self, Diagnostic> {
        let definition = ToolDefinition::from_tool(tool)?;
        self.register_definition(definition)
    }

    /// Register an already erased tool.
    pub fn register_definition(
        &mut self,
        definition: ToolDefinition,
    ) -> Result<&mut Self, Diagnostic> {
        if let Some(g) = &definition.guidance
            && !(1000.0..=1999.0).contains(&g.order)
        {
            return Err(Diagnostic::new(
                DiagnosticKind::InvalidValue,
                format!(
                    "guidance of tool `{}` has order {}, outside the tool-guidance band",
                    definition.name, g.order
                ),
            )
            .help("tool guidance orders lie in 1000..=1999"));
        }
        if self.tools.contains_key(&definition.name) {
            return Err(Diagnostic::new(
                DiagnosticKind::DuplicateTool,
                format!("tool `{}` is already registered", definition.name),
            )
            .help("give the new tool another name, or build the catalog without the old one"));
        }
        self.tools
            .insert(definition.name.clone(), Arc::new(definition));
        Ok(self)
    }

    /// This catalog with the description and guidance of some tools replaced:
    /// `replacement(name)` gives the new description and guidance text of a tool
    /// (`None`: keep). A host's tool is replaced the same way as a built-in one.
    pub fn with_texts<'t, F, P>(&self, replacement: F, params: P) -> ToolCatalog
    where
        F: Fn(&str) -> (Option<&'t str>, Option<&'t str>),
        P: Fn(&str, &str) -> Option<String>,
    {
        let tools = self
            .tools
            .iter()
            .map(|(name, def)| {
                let mut def = match replacement(name.as_str()) {
                    (None, None) => Arc::clone(def),
                    (description, guidance) => Arc::new(def.with_texts(description, guidance)),
                };
                // Only the built-in tools' parameters have text ids.
                if matches!(def.origin(), super::ToolOrigin::Host) {
                    let replaced = def.with_param_texts(&|path| params(name.as_str(), path));
                    if !Arc::ptr_eq(&replaced.schemas_arc(), &def.schemas_arc()) {
                        def = Arc::new(replaced);
                    }
                }
                (name.clone(), def)
            })
            .collect();
        ToolCatalog {
            tools,
            listings: self.listings.clone(),
            servers: self.servers.clone(),
        }
    }

    /// Look a tool up by name.
    pub fn get(&self, name: &str) -> Option<&Arc<ToolDefinition>> {
        self.tools.get(name)
    }

    /// Is the tool known?
    pub fn contains(&self, name: &str) -> bool {
        self.tools.contains_key(name)
    }

    /// Known names, in byte order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.tools.keys().map(ToolName::as_str)
    }

    /// Known tools, in byte order of their names.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<ToolDefinition>> {
        self.tools.values()
    }

    /// How many tools are known.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// No tool known?
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_argument_validator_compiles() {
        // Validators are compiled lazily (on a tool's first call), so check them here.
        let catalog = ToolCatalog::builtin();
        assert_eq!(catalog.len(), 8);
        for def in catalog.iter() {
            assert!(
                def.validator().is_ok(),
                "{}: {:?}",
                def.name(),
                def.validator().err()
            );
        }
    }
}
