//! `trust [PRESET|DIR]`, `trust --list`, `trust --revoke PRESET|DIR`: record, show and
//! forget the user's trust in presets they did not write; and the gate `run` passes
//! before anything is sent or started ([`admit_run`]). The policy is the library's
//! ([`crate::trust`]); this module asks and prints.

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};

use clap::Args;
use serde_json::json;

use super::workspace::{Selected, Workspace};
use super::{CliError, Exit, GlobalArgs, Io};
use crate::diagnostic::DiagnosticKind;
use crate::endpoint::{EndpointError, ModelSettings, Transport};
use crate::preset::catalog::PROJECT_PRESET_DIR;
use crate::preset::validate::ValidPreset;
use crate::project::{Refusal, gate};
use crate::trust::display::{describe, items_text, shown};
use crate::trust::{PresetReach, ReachItem, TrustPolicy, TrustStatus, TrustStore};

/// Arguments of `trust`.
#[derive(Debug, Args)]
pub(crate) struct TrustArgs {
    /// A preset (name or file), or a directory: every preset in it [default: the
    /// project's `.agent-presets/`].
    #[arg(value_name = "PRESET|DIR", conflicts_with_all = ["list", "revoke"])]
    target: Option<String>,
    /// List the trusted presets and what each was trusted to reach.
    #[arg(long, conflicts_with = "revoke")]
    list: bool,
    /// Forget the trust in a preset (name or file) or in every preset under a directory.
    #[arg(long, value_name = "PRESET|DIR")]
    revoke: Option<String>,
}

pub(crate) fn run(
    global: &GlobalArgs,
    args: &TrustArgs,
    io: &mut Io<'_>,
) -> Result<Exit, CliError> {
    let policy = TrustPolicy::from_environment();
    let mut store = open_store(&policy)?;
    if args.list {
        return list(&store, io);
    }
    if let Some(target) = &args.revoke {
        let mut workspace = Workspace::discover(global)?;
        let path = file_of(&mut workspace, target)?;
        let gone = store.revoke(&path);
        if gone.is_empty() {
            writeln!(io.out, "nothing was trusted under `{}`", path.display())?;
            return Ok(Exit::Ok);
        }
        store.save().map_err(store_error)?;
        for file in gone {
            writeln!(io.out, "revoked trust in {file}")?;
        }
        return Ok(Exit::Ok);
    }
    let mut workspace = Workspace::discover(global)?;
    let selections = match &args.target {
        Some(t) if t == "-" => {
            return Err(CliError::usage_with(
                "a preset read from standard input cannot be trusted: trust is recorded for a file",
                Some("save the preset to a file and run `agent-presets trust FILE`".into()),
            ));
        }
        Some(t) if Path::new(t).is_dir() => directory(&mut workspace, Path::new(t))?,
        Some(t) => vec![select(&mut workspace, t)?],
        None => {
            let dir = workspace.project_dir.join(PROJECT_PRESET_DIR);
            directory(&mut workspace, &dir)?
        }
    };
    // Commands run in the current directory unless `run --cwd` says otherwise: the files
    // their argv names are bound as they are there.
    let cwd = crate::project::run_setup::working_directory(None)?;
    let mut exit = Exit::Ok;
    let mut changed = false;
    for selected in &selections {
        let validation = workspace.validate_selected(selected);
        let Some(preset) = validation.preset else {
            let sources = workspace.presets.source_files();
            let renderer =
                crate::report::HumanRenderer::new(io.err_style, &sources, &validation.diagnostics);
            io.err
                .write_all(renderer.render_all(&validation.diagnostics).as_bytes())?;
            // Say why nothing was trusted: what it reaches is known only once it builds.
            let errors = validation
                .diagnostics
                .iter()
                .filter(|d| d.is_error())
                .count();
            let name = match selected {
                Selected::Name(name) => format!("`{name}`"),
                Selected::Target(id) => workspace
                    .presets
                    .target(*id)
                    .map_or_else(|| "the preset".to_owned(), |e| format!("`{}`", e.display())),
            };
            writeln!(
                io.err,
                "{}: {name} was not trusted: it is invalid ({errors} error{} above), and what a preset reaches is known only once it validates",
                io.err_style.error("error"),
                if errors == 1 { "" } else { "s" },
            )?;
            writeln!(
                io.err,
                "  = {}: {}",
                io.err_style.bold("help"),
                crate::report::commands::with_flags(
                    "fix the errors, check them with `agent-presets validate`, then trust it again"
                )
            )?;
            exit = Exit::Invalid;
            continue;
        };
        let reach = PresetReach::of(&preset, &workspace.presets, &policy, None).with_digests(
            &preset,
            &cwd,
            workspace.tools.listings(),
        );
        if !reach.needs_trust() {
            writeln!(
                io.out,
                "{} ({}): nothing to trust; it reaches outside only through your own files and the providers' defaults",
                preset.name(),
                reach.display
            )?;
            continue;
        }
        let before = store.status(&reach);
        if before == TrustStatus::Trusted {
            writeln!(
                io.out,
                "{} ({}): already trusted for what it reaches now",
                preset.name(),
                reach.display
            )?;
            continue;
        }
        if !store.trust(&reach) {
            writeln!(
                io.err,
                "{}: `{}` has no file to record trust for",
                io.err_style.error("error"),
                reach.display
            )?;
            exit = Exit::Invalid;
            continue;
        }
        changed = true;
        match before {
            // A re-trust: what changed since, field by field.
            TrustStatus::Changed(changes) => {
                writeln!(
                    io.out,
                    "trusted {} ({}) again; what changed since you last trusted it:",
                    preset.name(),
                    reach.display
                )?;
                for change in &changes {
                    for line in describe(change) {
                        writeln!(io.out, "  {line}")?;
                    }
                }
            }
            _ => {
                writeln!(io.out, "trusted {} ({}):", preset.name(), reach.display)?;
                write_items(&reach.items, io)?;
            }
        }
    }
    if changed {
        store.save().map_err(store_error)?;
    }
    Ok(exit)
}

/// What `run` was asked, as far as the gate cares.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RunGate<'a> {
    /// The preset as the user named it (for the command the message names).
    pub arg: &'a str,
    /// `--allow-insecure`.
    pub allow_insecure: bool,
    /// `--json`: a refusal ends the transcript with a `done` event.
    pub json: bool,
    /// The working directory commands run in: the files their argv names are bound.
    pub cwd: &'a Path,
}

/// The gate `run` passes after the endpoint is final and before anything is sent or
/// started: the endpoint must not be plain http off the loopback unless allowed, and a
/// preset that reaches outside through files the user did not write must be trusted (on
/// a terminal, outside CI, the user is asked). `Some(exit)` ends the run.
pub(crate) fn admit_run(
    global: &GlobalArgs,
    workspace: &Workspace,
    preset: &ValidPreset,
    settings: &ModelSettings,
    run: RunGate<'_>,
    io: &mut Io<'_>,
) -> Result<Option<Exit>, CliError> {
    let RunGate {
        arg,
        allow_insecure,
        json,
        cwd,
    } = run;
    match gate::check_transport(preset, settings, allow_insecure) {
        Ok(Transport::Cleartext) => writeln!(
            io.err,
            "{}: `{}` is plain http:// to another host: the API key and the conversation travel unencrypted",
            io.err_style.warning("warning"),
            settings.base_url
        )?,
        Ok(Transport::Tls | Transport::Loopback) => {}
        Err(e) => {
            let help = match &e {
                EndpointError::Insecure { .. } => e.help().to_owned(),
                EndpointError::NotHttp { .. } => {
                    "pass the server's API root, e.g. `--base-url https://api.deepseek.com`"
                        .to_owned()
                }
            };
            return refuse(&e.to_string(), &help, json, io);
        }
    }

    let policy = TrustPolicy::from_environment();
    let Some(reach) = gate::reach_to_trust(workspace, preset, settings, &policy, cwd) else {
        return Ok(None);
    };
    let command = trust_command(global, arg);
    let mut store = match open_store(&policy) {
        Ok(store) => store,
        Err(CliError::Usage { message, help }) => {
            return refuse(&message, help.as_deref().unwrap_or_default(), json, io);
        }
        Err(e) => return Err(e),
    };
    let changes = match store.status(&reach) {
        TrustStatus::NotNeeded | TrustStatus::Trusted => return Ok(None),
        TrustStatus::Untrusted => None,
        TrustStatus::Changed(changes) => Some(changes),
    };
    let style = io.err_style;
    match &changes {
        None => writeln!(
            io.err,
            "preset `{}` ({}) reaches outside this process with values from presets you have not trusted yet (a project's or a shared directory's):",
            reach.name,
            style.bold(&reach.display)
        )?,
        Some(_) => writeln!(
            io.err,
            "preset `{}` ({}) changed since you trusted it; it now reaches outside this process with:",
            reach.name,
            style.bold(&reach.display)
        )?,
    }
    write_items_to(&reach.items, style, &mut *io.err)?;
    if let Some(changes) = &changes {
        writeln!(io.err, "  what changed:")?;
        for change in changes {
            for line in describe(change) {
                writeln!(io.err, "    {line}")?;
            }
        }
    }
    let can_ask = reach.key.is_some()
        && std::io::stdin().is_terminal()
        && std::io::stderr().is_terminal()
        && !in_ci();
    if can_ask {
        write!(io.err, "trust and run? [y/N] ")?;
        io.err.flush()?;
        let mut answer = String::new();
        if std::io::stdin().lock().read_line(&mut answer).is_err() {
            answer.clear();
        }
        if matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes") {
            store.trust(&reach);
            if let Err(e) = store.save() {
                let help = e.help().unwrap_or_default();
                return refuse(&e.to_string(), &help, json, io);
            }
            writeln!(io.err, "trusted {} ({})", reach.name, reach.display)?;
            return Ok(None);
        }
    }
    let help = if reach.key.is_some() {
        format!("check the values above; if you trust them, run `{command}`, then run again")
    } else {
        "a preset from standard input cannot be trusted: save it to a file, check it and run `agent-presets trust FILE`".to_owned()
    };
    let message = match changes {
        None => format!(
            "preset `{}` is not trusted; nothing was sent or started",
            reach.name
        ),
        Some(_) => format!(
            "preset `{}` changed since it was trusted; nothing was sent or started",
            reach.name
        ),
    };
    refuse(&message, &help, json, io)
}

/// End the run before it started: the message and help on stderr, and with `--json` a
/// `done` event that says why.
fn refuse(
    message: &str,
    help: &str,
    json: bool,
    io: &mut Io<'_>,
) -> Result<Option<Exit>, CliError> {
    let message = &*crate::report::mask(message);
    writeln!(io.err, "{}: {message}", io.err_style.error("error"))?;
    if !help.is_empty() {
        writeln!(io.err, "  = {}: {help}", io.err_style.bold("help"))?;
    }
    if json {
        let error = if help.is_empty() {
            message.to_owned()
        } else {
            format!("{message} ({help})")
        };
        let line = json!({"type": "done", "outcome": "error", "steps": null, "error": error});
        writeln!(io.out, "{line}")?;
        io.out.flush()?;
    }
    Ok(Some(Exit::Invalid))
}

/// Is this a CI run (`CI` set to anything but empty, `0`, `false` or `no`)?
fn in_ci() -> bool {
    crate::preset::catalog::env_flag("CI")
}

/// `agent-presets [the global flags given] trust ARG`: the command that trusts what `run
/// ARG` runs.
fn trust_command(global: &GlobalArgs, arg: &str) -> String {
    let mut words = vec!["agent-presets".to_owned()];
    words.extend(global.flag_words());
    words.push("trust".into());
    words.push(super::shell_word(arg));
    words.join(" ")
}

fn open_store(policy: &TrustPolicy) -> Result<TrustStore, CliError> {
    TrustStore::open(policy.config_dir()).map_err(store_error)
}

fn store_error(e: crate::trust::TrustStoreError) -> CliError {
    let help = e.help();
    CliError::usage_with(e.to_string(), help)
}

fn list(store: &TrustStore, io: &mut Io<'_>) -> Result<Exit, CliError> {
    let mut any = false;
    for (file, record) in store.records() {
        any = true;
        writeln!(io.out, "{} ({}) {}", file, record.name, record.hash)?;
        for item in &record.items {
            let from = if item.file == file {
                String::new()
            } else {
                format!("  (from {})", item.file)
            };
            writeln!(io.out, "  {}: {}{from}", item.field, shown(&item.value))?;
        }
    }
    if !any {
        writeln!(
            io.out,
            "no presets are trusted (store: {})",
            store.path().display()
        )?;
    }
    Ok(Exit::Ok)
}

/// One preset `arg` names, as a selection; a problem is a usage error.
fn select(workspace: &mut Workspace, arg: &str) -> Result<Selected, CliError> {
    workspace.select(arg).map_err(|d| {
        if d.kind == DiagnosticKind::Io {
            CliError::usage_with(d.message, d.help)
        } else {
            CliError::Diagnostics {
                list: vec![d],
                exit: Exit::Invalid,
                sources: workspace.presets.source_files(),
            }
        }
    })
}

/// Every preset file in `dir` ([`Project::select_directory`](crate::project::Project::select_directory)).
fn directory(workspace: &mut Workspace, dir: &Path) -> Result<Vec<Selected>, CliError> {
    let selections = workspace.select_directory(dir);
    selections.map_err(|r| refusal(r, workspace))
}

/// The file (or directory) `--revoke` names ([`Project::trust_file`](crate::project::Project::trust_file)).
fn file_of(workspace: &mut Workspace, arg: &str) -> Result<PathBuf, CliError> {
    let file = workspace.trust_file(arg);
    file.map_err(|r| refusal(r, workspace))
}

/// An unusable argument is a usage error; an invalid file exit 1 with its diagnostics.
fn refusal(refusal: Refusal, workspace: &Workspace) -> CliError {
    match refusal {
        Refusal::Unusable(d) => CliError::usage_with(d.message, d.help),
        Refusal::Invalid(list) => CliError::Diagnostics {
            list,
            exit: Exit::Invalid,
            sources: workspace.presets.source_files(),
        },
    }
}

fn write_items(items: &[ReachItem], io: &mut Io<'_>) -> Result<(), CliError> {
    let style = io.out_style;
    write_items_to(items, style, &mut *io.out)
}

/// `  field  value  file:line`, aligned ([`items_text`]).
fn write_items_to(
    items: &[ReachItem],
    style: crate::report::Style,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    out.write_all(items_text(items, style).as_bytes())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_trust_command_repeats_the_global_flags() {
        let global = GlobalArgs {
            preset_dirs: vec![PathBuf::from("shared presets")],
            project_dir: None,
            no_user: true,
            no_project_config: true,
        };
        assert_eq!(
            trust_command(&global, "helper"),
            "agent-presets --preset-dir 'shared presets' --no-user --no-project-config trust helper"
        );
    }
}
