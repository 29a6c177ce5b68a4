//! Path confinement: resolving a path beneath a directory so that no `..` and no
//! symbolic link leads outside it. One implementation for everything the crate opens on
//! someone else's say-so:
//!
//! - the tools' workspace (`beneath::WorkspaceRoot`, used by `tools/builtin/`),
//! - a `textFile` beside its preset (`read_beneath`, used by `preset/text_file.rs`),
//! - the project files `schema --write` and `lock` write ([`write_confined`],
//!   [`remove_confined`]).
//!
//! `beneath` walks a path one component at a time from an open directory descriptor,
//! reading every link and never letting the kernel follow one; [`file`](self) reads and
//! writes one file at the end of such a walk.

use std::path::PathBuf;

pub(crate) mod beneath;
mod file;

pub use file::{ProjectFileError, remove_confined, write_confined};
pub(crate) use file::{ReadBeneathError, read_beneath};

/// Why a relative path does not lexically name something beneath its base directory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LexicalEscape {
    /// A `..` climbs above the base.
    ClimbsOut,
    /// An absolute path or a drive prefix.
    Absolute,
    /// It names the base itself (`""`, `.`, `p/..`).
    NamesBase,
}

/// `relative` with `.` and inner `..` resolved, if it stays strictly beneath its base
/// directory (the lexical check before the walk of [`beneath`], which follows links).
pub(crate) fn lexically_beneath(relative: &str) -> Result<std::path::PathBuf, LexicalEscape> {
    use std::path::{Component, Path, PathBuf};
    let mut inside = PathBuf::new();
    let mut depth = 0usize;
    for component in Path::new(relative).components() {
        match component {
            Component::Normal(part) => {
                inside.push(part);
                depth += 1;
            }
            Component::CurDir => {}
            Component::ParentDir => {
                depth = depth.checked_sub(1).ok_or(LexicalEscape::ClimbsOut)?;
                inside.pop();
            }
            Component::RootDir | Component::Prefix(_) => return Err(LexicalEscape::Absolute),
        }
    }
    if depth == 0 {
        return Err(LexicalEscape::NamesBase);
    }
    Ok(inside)
}

/// Why [`ToolContext::new`](crate::tools::ToolContext::new) refused a workspace root.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WorkspaceError {
    /// The root is not an absolute path (`missing/..`, `.`, `src`): a relative root
    /// would depend on the process's current directory.
    #[error("the workspace root `{}` is not an absolute path", path.display())]
    NotAbsolute {
        /// The root as given.
        path: PathBuf,
    },
    /// The root does not exist or cannot be opened.
    #[error("the workspace root `{}` cannot be opened: {source}", path.display())]
    Inaccessible {
        /// The root as given.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The root exists but is not a directory.
    #[error("the workspace root `{}` is not a directory", path.display())]
    NotADirectory {
        /// The root as given.
        path: PathBuf,
    },
}
