//! `validate [NAME|PATH]...`: the full build of every preset asked for (by default, every
//! one on offer), reported as human text, JSON, GitHub workflow commands or SARIF.

use clap::{Args, ValueEnum};

use super::lock::lock_error;
use super::workspace::Workspace;
use super::{CliError, Exit, GlobalArgs, Io};
use crate::diagnostic::{Diagnostic, DiagnosticKind};
use crate::project::batch::refused_outcome;
use crate::project::connect;
use crate::project::lock::{self, LockFile};
use crate::report::HumanRenderer;
use crate::report::SarifRun;
use crate::report::{MachineFormat, PresetOutcome, ValidationReport, exit_code};

/// Arguments of `validate`.
#[derive(Debug, Args)]
pub(crate) struct ValidateArgs {
    /// Presets to validate: names, files (an argument containing `/` or ending in
    /// `.yaml`/`.yml`; a file's own directory is searched first for its `extends`), or
    /// `-` for one preset read from standard input. Default: every preset on offer,
    /// built-ins included.
    #[arg(value_name = "NAME|PATH|-")]
    targets: Vec<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ValidateFormat::Human)]
    format: ValidateFormat,
    /// Treat warnings as errors: a preset with a warning is invalid (exit 1).
    #[arg(long)]
    deny_warnings: bool,
    /// Also check each preset's cacheable prefix against `presets.lock` (written by
    /// `agent-presets lock`): a preset whose prefix changed, or that the lock does not
    /// know, is invalid (`prefix-drift`, with a diff of what changed).
    #[arg(long)]
    locked: bool,
    /// Also start the MCP servers the presets declare (in parallel), list their tools and
    /// compare them with what `presets.lock` pins: each tool added, removed or changed is
    /// a `tool-drift` error with a diff; a server that does not start is
    /// `server-unavailable`.
    #[arg(long)]
    connect: bool,
    /// With `--connect`: start servers declared in files you did not write without
    /// asking.
    #[arg(long, short = 'y', requires = "connect")]
    yes: bool,
}

/// How `validate` reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum ValidateFormat {
    /// rustc-style diagnostics with source snippets, then a summary line.
    Human,
    /// `{"diagnostics": [...], "presets": [...]}`.
    Json,
    /// GitHub Actions workflow commands (`::error file=...`).
    Github,
    /// SARIF 2.1.0 (code scanning).
    Sarif,
}

impl ValidateArgs {
    /// `--format json|github|sarif`.
    pub(crate) fn machine_format(&self) -> Option<MachineFormat> {
        match self.format {
            ValidateFormat::Human => None,
            ValidateFormat::Json => Some(MachineFormat::Json),
            ValidateFormat::Github => Some(MachineFormat::Github),
            ValidateFormat::Sarif => Some(MachineFormat::Sarif),
        }
    }
}

pub(crate) fn run(
    global: &GlobalArgs,
    args: &ValidateArgs,
    io: &mut Io<'_>,
) -> Result<Exit, CliError> {
    let (mut workspace, unreadable) = Workspace::discover_partly(global)?;
    let mut report = ValidationReport::default();
    let lock = if args.locked {
        let path = LockFile::path(&workspace);
        let lock = LockFile::load(&path).map_err(lock_error)?.ok_or_else(|| {
            CliError::usage_with(
                format!("`--locked`, but there is no `{}`", path.display()),
                Some("run `agent-presets lock` and commit the file it writes".into()),
            )
        })?;
        Some(lock)
    } else {
        None
    };
    // An unreadable `--preset-dir` is reported (exit 2); what could be found is still
    // validated.
    report.add_diagnostics(unreadable);
    let plan = workspace.plan(&args.targets);
    // Unknown names and unreadable paths are reported in the chosen format too (JSON
    // consumers need it on stdout); the `io` kind makes the exit code 2.
    report.add_diagnostics(plan.diagnostics);
    for file in &plan.refused_files {
        report.add_preset(refused_outcome(file));
    }
    // `--connect`: every declared server listed live, before validating (in parallel).
    let live = if args.connect {
        let names: Vec<String> = plan.items.iter().map(|i| i.name.clone()).collect();
        super::connect::consent(&workspace, &names, args.yes, io)?;
        Some(super::connect::list_live(&workspace, &names)?)
    } else {
        None
    };
    // Presets are independent: validate them (and check them against the lock) on
    // every core, report them in order. Each assembler goes as soon as its preset is
    // checked.
    // `--locked` also compares what each locked server would start now with what the
    // lock recorded (`server-changed`): the program is looked up as `run` would.
    let vars: Vec<_> = std::env::vars_os().collect();
    let cwd = crate::project::run_setup::working_directory(None)?;
    let outcomes = workspace.validate_batch(&plan.items, |item, validation| {
        match (&lock, validation.preset.take()) {
            (Some(lock), Some(preset)) => match lock.get(&item.name) {
                Some(locked) => {
                    let changed = lock::server_changes(&preset, locked, &vars, &cwd, None);
                    validation.diagnostics.extend(changed);
                    // Each hook's script as `lock` read it, beneath the project.
                    let scripts = lock::hook_changes(&preset, locked, &workspace.project_dir);
                    validation.diagnostics.extend(scripts);
                    lock::entry_with_listings(&preset, workspace.tools.listings())
                        .map(|now| lock::drift(&preset, locked, &now))
                }
                None => Ok(Some(lock::not_locked(&preset))),
            },
            _ => Ok(None),
        }
    });
    let mut outcomes: Vec<_> = outcomes
        .into_iter()
        .map(|(validation, drift)| drift.map(|drift| (validation, drift)))
        .collect::<Result<_, _>>()
        .map_err(lock_error)?;
    // A bare `lock` (for many names) drops the entries of presets this run does not see:
    // printed only when it sees them all.
    let relock = lock::Relock {
        all_seen: workspace.config.is_some()
            || lock
                .as_ref()
                .is_some_and(|l| l.names().all(|n| workspace.presets.contains(n))),
    };
    // Presets that drifted through one edit (of a parent, say) are re-locked together.
    lock::relate(
        &mut outcomes
            .iter_mut()
            .filter_map(|(_, d)| d.as_mut())
            .collect::<Vec<_>>(),
        relock,
    );
    // One edit that drifted several presets: reported once, at the line that changed.
    let shared = lock::collapse(
        &outcomes
            .iter()
            .filter_map(|(_, d)| d.as_ref())
            .collect::<Vec<_>>(),
        relock,
    );
    for (item, (mut validation, drift)) in plan.items.iter().zip(outcomes) {
        let drift = drift.map(|d| {
            validation.diagnostics.push(d.diagnostic.clone());
            (d.diagnostic, d.changes)
        });
        if let Some(live) = &live {
            let listings = workspace.tools.listings();
            let drift = connect::live_drift(&workspace, &item.name, listings, live);
            validation.diagnostics.extend(drift);
        }
        let valid = workspace.judge(item, &validation.diagnostics, args.deny_warnings);
        let outcome = PresetOutcome::judged(
            item.name.clone(),
            item.file.clone(),
            valid,
            &validation.diagnostics,
            || workspace.ancestors(&item.selected),
        );
        report.add_diagnostics(validation.diagnostics);
        if let Some((whole, changes)) = drift {
            report.add_drift_changes(whole, changes);
        }
        report.add_preset(outcome);
    }

    for s in shared {
        report.add_shared_drift((s.diagnostic, s.annotation), s.covers, s.replaces, s.of);
    }

    if let Some(lock) = &lock
        && args.targets.is_empty()
    {
        let gone: Vec<_> = lock
            .names()
            .filter(|n| !workspace.presets.contains(n))
            .map(|n| lock::gone(&workspace, n))
            .collect();
        report.add_diagnostics(gone);
    }

    // Every locale pack found is checked, used or not.
    report.add_diagnostics(workspace.presets.pack_diagnostics());
    report.sort_in_file_order();
    let exit = exit_code(&report, args.deny_warnings);
    let sources = workspace.presets.source_files();
    let text = match args.format {
        ValidateFormat::Human => report.human(io.out_style, &sources),
        ValidateFormat::Json => {
            // Streamed: a thousand presets' report is megabytes.
            report.write_json(io.out)?;
            String::new()
        }
        ValidateFormat::Github => report.github(args.deny_warnings),
        ValidateFormat::Sarif => {
            let cwd = std::env::current_dir().ok();
            report.sarif(&SarifRun {
                exit,
                deny_warnings: args.deny_warnings,
                srcroot: cwd.as_deref(),
                sources: &sources,
            })
        }
    };
    io.out.write_all(text.as_bytes())?;
    // What kept the command from doing its job goes to the person reading the log too.
    if args.format != ValidateFormat::Human {
        let failures: Vec<Diagnostic> = report
            .diagnostics()
            .iter()
            .filter(|d| d.kind == DiagnosticKind::Io)
            .cloned()
            .collect();
        if !failures.is_empty() {
            let renderer = HumanRenderer::new(io.err_style, &sources, &failures);
            io.err
                .write_all(renderer.render_all(&failures).as_bytes())?;
        }
    }
    // `validate` is the last thing the process does: the catalog (every parsed preset and
    // its layer) and the report are left to the OS, not freed one allocation at a time
    // (0.7% of validating 1,000 presets, all of it after the output).
    drop(sources);
    std::mem::forget(report);
    std::mem::forget(workspace);
    Ok(exit)
}
