//! The built-in tools (one file per tool).

use super::ToolCatalog;

/// Register every built-in tool.
pub(crate) fn register_all(_catalog: &mut ToolCatalog) {}
