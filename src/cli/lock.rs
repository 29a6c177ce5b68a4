//! `lock [NAME]...`: write `presets.lock` (see [`crate::project::lock`] for the format
//! and the drift checks `validate --locked` runs).

use clap::Args;

use super::workspace::Workspace;
use super::{CliError, Exit, GlobalArgs, Io};
use crate::confine::write_confined;
use crate::diagnostic::Diagnostic;
use crate::project::LockEntriesError;
use std::sync::Arc;

pub(crate) use crate::project::lock::{LOCK_FILE, LockError, LockFile, stale_descendants};

/// Arguments of `lock`.
#[derive(Debug, Args)]
pub(crate) struct LockArgs {
    /// Presets to lock (their entries are replaced, the others kept). Default: every
    /// preset on offer, built-ins included, and entries of presets no longer on offer are
    /// dropped.
    #[arg(value_name = "NAME")]
    names: Vec<String>,
    /// Start the MCP servers the presets declare (in parallel), list their tools and pin
    /// them in the lock. Without it, the listings already in the lock are kept and no
    /// server is started.
    #[arg(long)]
    connect: bool,
    /// With `--connect`: start servers declared in files you did not write without
    /// asking.
    #[arg(long, short = 'y', requires = "connect")]
    yes: bool,
}

/// A lock that cannot be read, or an entry that cannot be rendered: a usage error
/// (exit 2).
pub(crate) fn lock_error(e: LockError) -> CliError {
    let help = e.help().map(str::to_owned);
    CliError::usage_with(e.to_string(), help)
}

pub(crate) fn run(global: &GlobalArgs, args: &LockArgs, io: &mut Io<'_>) -> Result<Exit, CliError> {
    let workspace = Workspace::discover(global)?;
    let path = LockFile::path(&workspace);
    let mut lock = if args.names.is_empty() {
        LockFile::default()
    } else {
        LockFile::load(&path)
            .map_err(lock_error)?
            .unwrap_or_default()
    };
    let names: Vec<String> = if args.names.is_empty() {
        workspace.presets.names().map(str::to_owned).collect()
    } else {
        for name in &args.names {
            workspace.require(name)?;
        }
        args.names.clone()
    };
    let mut workspace = workspace;
    let mut live_listed = None;
    if args.connect {
        super::connect::consent(&workspace, &names, args.yes, io)?;
        let live = super::connect::list_live(&workspace, &names)?;
        // A server that could not be listed: say why, and lock nothing (its preset
        // would only add "not locked").
        let unavailable: Vec<Diagnostic> = live.all_problems().cloned().collect();
        if !unavailable.is_empty() {
            return Err(CliError::Diagnostics {
                list: unavailable,
                exit: Exit::Invalid,
                sources: workspace.presets.source_files(),
            });
        }
        let base = LockFile::load(&path)
            .ok()
            .flatten()
            .map(|l| l.listings())
            .unwrap_or_default();
        let listings = live.over(base);
        workspace.tools = workspace.tools.clone().with_listings(Arc::new(listings));
        live_listed = Some(live);
    }
    let live = live_listed;
    let entries = match workspace.lock_entries(&names) {
        Ok(mut entries) => {
            // What ran for each server: as listed now, else as the lock recorded it
            // (`lock` without `--connect` keeps what `--connect` bound).
            let old = LockFile::load(&path).ok().flatten().unwrap_or_default();
            for (name, entry) in &mut entries {
                for server in entry.servers.keys() {
                    let id = live
                        .as_ref()
                        .and_then(|l| l.identity(name, server))
                        .or_else(|| old.get(name).and_then(|e| e.identities.get(server)));
                    if let Some(id) = id {
                        entry.identities.insert(server.clone(), id.clone());
                    }
                }
            }
            entries
        }
        Err(LockEntriesError::Lock(e)) => return Err(lock_error(e)),
        Err(LockEntriesError::Invalid(list)) => {
            return Err(CliError::Diagnostics {
                list,
                exit: Exit::Invalid,
                sources: workspace.presets.source_files(),
            });
        }
    };
    let before = LockFile::load(&path).ok().flatten().unwrap_or_default();
    let changed = entries
        .iter()
        .filter(|(name, e)| before.get(name) != Some(e))
        .count();
    let count = entries.len();
    for (name, e) in entries {
        lock.insert(name, e);
    }
    let noun = if count == 1 { "preset" } else { "presets" };
    // Relative to the current directory when inside it (`presets.lock` at the root).
    let shown = match std::env::current_dir() {
        Ok(cwd) => crate::project::shown(&cwd, &path),
        Err(_) => path.display().to_string(),
    };
    // Never through a link out of the project (a cloned repository may commit one);
    // with a project config, the project is the config's directory.
    let root = workspace
        .config
        .as_ref()
        .map_or(&workspace.project_dir, |c| &c.root);
    write_confined(root, &path, &shown, lock.to_text().as_bytes())?;
    writeln!(
        io.out,
        "locked {count} {noun} in {shown} ({changed} changed)"
    )?;
    if !args.names.is_empty() {
        let stale = stale_descendants(&workspace, &lock, &args.names);
        if !stale.is_empty() {
            let listed: Vec<String> = stale.iter().map(|n| format!("`{n}`")).collect();
            let note = format!(
                "note: {} extending what you locked now differ{} from {LOCK_FILE}: {}; run `agent-presets lock {}` too",
                if stale.len() == 1 {
                    "1 preset"
                } else {
                    "presets"
                },
                if stale.len() == 1 { "s" } else { "" },
                listed.join(", "),
                stale.join(" ")
            );
            writeln!(io.out, "{}", crate::report::commands::with_flags(&note))?;
        }
    }
    Ok(Exit::Ok)
}
