//! The built-in tools, one file per tool: `read_file`, `write_file`, `edit_file`,
//! `list_dir`, `glob`, `grep`, `bash` and `todo_write`.
//!
//! Every path argument is confined to the workspace root ([`ToolContext::workspace`]);
//! results are capped by the context's [`OutputLimits`] with a visible marker saying
//! what was cut; failures are [`ToolError`](crate::tools::ToolError)s with a hint.
//!
//! The doc comment of an argument field is its description on the wire; each is one
//! line, because schemars keeps a doc comment's line breaks.
//!
//! [`ToolContext::workspace`]: crate::tools::ToolContext::workspace

mod bash;
pub(crate) mod beneath;
mod blocking;
mod edit_file;
mod glob;
mod grep;
pub(crate) mod limits;
mod list_dir;
mod pattern_errors;
mod read_file;
mod todo_write;
mod walk;
mod workspace;
mod write_file;

pub use crate::process::{BASE_COMMAND_ENV, CommandLimits, Containment};
pub(crate) use bash::describe_status;
pub use bash::{Bash, BashArgs};
pub use edit_file::{EditFile, EditFileArgs};
pub use glob::{Glob, GlobArgs};
pub use grep::{Grep, GrepArgs, GrepOutputMode};
pub use limits::OutputLimits;
pub(crate) use limits::echo;
pub use list_dir::{ListDir, ListDirArgs};
pub use read_file::{ReadFile, ReadFileArgs};
pub use todo_write::{TodoItem, TodoStatus, TodoWrite, TodoWriteArgs};
pub(crate) use workspace::io_reason_in;
pub use write_file::{WriteFile, WriteFileArgs};

use super::{ToolCatalog, ToolContext};
use crate::Diagnostic;

/// The path a permission rule's path glob is matched against (`crate::policy`): `raw`
/// resolved beneath the workspace exactly as the file tools resolve it (`..` applied, every
/// symbolic link followed, an absolute spelling inside the workspace made relative), as a
/// `/`-separated relative path (`.` for the root). `None` when it leads outside the
/// workspace or cannot be resolved: the tool refuses such a call anyway.
pub fn policy_path(ctx: &ToolContext, raw: &str) -> Option<String> {
    let resolved = workspace::resolve(ctx, raw).ok()?;
    let relative = resolved.resolved.relative();
    let text = relative.to_str()?.to_owned();
    Some(if text.is_empty() {
        ".".to_owned()
    } else {
        text
    })
}

/// The names of the built-in tools, in byte order.
pub const BUILTIN_TOOL_NAMES: [&str; 8] = [
    "bash",
    "edit_file",
    "glob",
    "grep",
    "list_dir",
    "read_file",
    "todo_write",
    "write_file",
];

/// Register every built-in tool.
///
/// The tools are fixed, so a failure here is a bug in this crate: it is reported in debug
/// builds (and by the tests, which check that [`ToolCatalog::builtin`] holds all of them),
/// and in release builds the catalog simply lacks the broken tool rather than panicking.
pub(crate) fn register_all(catalog: &mut ToolCatalog) {
    let results: [Result<(), Diagnostic>; 8] = [
        catalog.register(Bash).map(drop),
        catalog.register(EditFile).map(drop),
        catalog.register(Glob).map(drop),
        catalog.register(Grep).map(drop),
        catalog.register(ListDir).map(drop),
        catalog.register(ReadFile).map(drop),
        catalog.register(TodoWrite).map(drop),
        catalog.register(WriteFile).map(drop),
    ];
    for result in results {
        if let Err(diagnostic) = result {
            debug_assert!(false, "a built-in tool failed to register: {diagnostic:?}");
        }
    }
}
