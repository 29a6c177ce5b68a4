//! A workspace for calling the built-in tools: a temporary directory holding `ws/` (the
//! workspace root of `ctx`) and `outside/` next to it (what no tool may reach), and the
//! unrestricted built-in registry. Each test file wraps it in a `Fixture` of its own
//! (dereferencing to it) with its own set-up and calls.
#![allow(dead_code)]

use std::path::PathBuf;

use agent_presets::tools::{ToolCatalog, ToolContext, ToolRegistry};
use tempfile::TempDir;

/// The two directories, the context confined to `ws` and the registry.
pub struct ToolWorkspace {
    _tmp: TempDir,
    /// The workspace root (canonical).
    pub ws: PathBuf,
    /// A directory next to the workspace.
    pub outside: PathBuf,
    /// The tool context confined to `ws`.
    pub ctx: ToolContext,
    /// Every built-in tool.
    pub registry: ToolRegistry,
}

impl ToolWorkspace {
    /// Both directories, empty.
    pub fn empty() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let ws = root.join("ws");
        let outside = root.join("outside");
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        ToolWorkspace {
            ctx: ToolContext::new(&ws).unwrap(),
            registry: ToolRegistry::unrestricted(&ToolCatalog::builtin()),
            _tmp: tmp,
            ws,
            outside,
        }
    }

    /// Write `contents` to `rel` inside the workspace, creating its directories.
    pub fn write(&self, rel: &str, contents: &str) {
        let path = self.ws.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, contents).unwrap();
    }

    /// The text of `rel` inside the workspace.
    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.ws.join(rel)).unwrap()
    }
}
