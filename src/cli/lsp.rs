//! `lsp`: the language server on standard input and output (see [`crate::lsp`]).

use clap::Args;

use super::{CliError, Exit, GlobalArgs, Io};
use crate::project::ProjectOptions;

/// Arguments of `lsp`.
#[derive(Debug, Args)]
pub(crate) struct LspArgs {
    /// Accepted for editors that pass it (the server only speaks over stdio).
    #[arg(long)]
    stdio: bool,
}

pub(crate) fn run(global: &GlobalArgs, _args: &LspArgs, io: &mut Io<'_>) -> Result<Exit, CliError> {
    let options = ProjectOptions {
        project_dir: global.project_dir.clone(),
        preset_dirs: global.preset_dirs.clone(),
        no_user: global.no_user,
        no_project_config: global.no_project_config,
    };
    let input = std::io::BufReader::new(std::io::stdin());
    crate::lsp::serve(input, &mut *io.out, options)?;
    Ok(Exit::Ok)
}
