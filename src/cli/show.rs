//! `show NAME`: the preset resolved along its `extends` chain, written as one flattened
//! preset in YAML, with comments saying which file and line each piece comes from.
//!
//! Sections are listed in prompt order (before `when` is evaluated), tool guidance
//! included; shadowed and removed sections are gone (removals are noted in comments).
//! Contexts and variables are the merged ones; `tools.allow` lists the visible tools and
//! `tools.order` their wire order when it is not the plain name order.

use clap::Args;

use super::workspace::Workspace;
use super::{CliError, Exit, GlobalArgs, Io};
use crate::report::show::{resolved_yaml, shadowed};

/// Arguments of `show`.
#[derive(Debug, Args)]
pub(crate) struct ShowArgs {
    /// The preset to show: a name, a file (an argument containing `/` or ending in
    /// `.yaml`/`.yml`), or `-` to read one preset from standard input.
    #[arg(value_name = "NAME|PATH|-")]
    name: String,
}

pub(crate) fn run(global: &GlobalArgs, args: &ShowArgs, io: &mut Io<'_>) -> Result<Exit, CliError> {
    let mut workspace = Workspace::discover(global)?;
    let preset = workspace.valid_preset(&args.name, io)?;
    io.out.write_all(
        resolved_yaml(
            &preset,
            &workspace.tools,
            &shadowed(&preset, &workspace.presets),
        )
        .as_bytes(),
    )?;
    Ok(Exit::Ok)
}
