//! `validate [NAME|PATH]...`: the full build of every preset asked for (by default, every
//! one on offer), reported as human text, JSON, GitHub workflow commands or SARIF.

use std::collections::BTreeSet;
use std::path::Path;

use clap::{Args, ValueEnum};
use rayon::prelude::*;

use super::lock::{self, LockFile};
use super::workspace::{Selected, Workspace, is_path};
use super::{CliError, Exit, GlobalArgs, Io};
use crate::diagnostic::{Diagnostic, DiagnosticKind, Severity};
use crate::report::HumanRenderer;
use crate::report::SarifRun;
use crate::report::{MachineFormat, PresetOutcome, ValidationReport};

/// From how many presets `validate` spreads the work over the cores (below it, starting
/// the threads costs more than it saves).
const PARALLEL_FROM: usize = 8;

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
        let lock = LockFile::load(&path)?.ok_or_else(|| {
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

    let mut selected: Vec<Selected> = Vec::new();
    if args.targets.is_empty() {
        selected.extend(
            workspace
                .presets
                .names()
                .map(|n| Selected::Name(n.to_owned())),
        );
        // Files that could not be offered at all (a built-in's name, a duplicate).
        let offered: BTreeSet<&str> = workspace
            .presets
            .entries()
            .map(|e| &**e.display())
            .collect();
        let mut refused = Vec::new();
        for d in &workspace.problems {
            if let Some(span) = &d.span
                && !offered.contains(&*span.file)
            {
                refused.push(refused_outcome(&span.file));
            }
        }
        report.add_diagnostics(workspace.problems.iter().cloned());
        for outcome in refused {
            if !report.presets().contains(&outcome) {
                report.add_preset(outcome);
            }
        }
    } else {
        for target in &args.targets {
            match workspace.select(target) {
                Ok(Selected::Name(name)) => {
                    report.add_diagnostics(workspace.problems_about(&name));
                    selected.push(Selected::Name(name));
                }
                Ok(chosen) => selected.push(chosen),
                // An unknown name or an unreadable path is reported in the chosen
                // format too (JSON consumers need it on stdout); the `io` kind makes the
                // exit code 2.
                Err(d) => {
                    let is_file = target == "-" || is_path(target);
                    report.add_diagnostics([d]);
                    if is_file {
                        report.add_preset(refused_outcome(target));
                    }
                }
            }
        }
    }

    // One file named twice (by name and by path, say) is validated once.
    let mut seen = BTreeSet::new();
    let jobs: Vec<(Selected, String, String)> = selected
        .into_iter()
        .filter_map(|chosen| {
            let e = workspace.entry(&chosen)?;
            let (name, file) = (e.name().to_owned(), e.display().to_string());
            seen.insert(file.clone()).then_some((chosen, name, file))
        })
        .collect();
    // Presets are independent: validate them (and check them against the lock) on
    // every core, report them in order. Each assembler goes as soon as its preset is
    // checked.
    let validate = |(chosen, name, _): &(Selected, String, String)| {
        let mut validation = workspace.validate_selected(chosen);
        let drift = match (&lock, validation.preset.take()) {
            (Some(lock), Some(preset)) => match lock.get(name) {
                Some(locked) => lock::entry(&preset).map(|now| lock::drift(&preset, locked, &now)),
                None => Ok(Some(lock::not_locked(&preset))),
            },
            _ => Ok(None),
        };
        (validation, drift)
    };
    let outcomes: Vec<_> = if jobs.len() >= PARALLEL_FROM {
        // Families together: presets that extend the same files are validated one after
        // another (each thread takes a run of the order), so the files they share are
        // compiled once while they are still in the template cache. Reported in the
        // original order all the same.
        let order = family_order(&workspace, &jobs);
        let mut done: Vec<(usize, _)> =
            order.par_iter().map(|&i| (i, validate(&jobs[i]))).collect();
        done.sort_by_key(|(i, _)| *i);
        done.into_iter().map(|(_, outcome)| outcome).collect()
    } else {
        jobs.iter().map(validate).collect()
    };
    let mut outcomes: Vec<_> = outcomes
        .into_iter()
        .map(|(validation, drift)| drift.map(|drift| (validation, drift)))
        .collect::<Result<_, _>>()?;
    // Presets that drifted through one edit (of a parent, say) are re-locked together.
    lock::relate(
        &mut outcomes
            .iter_mut()
            .filter_map(|(_, d)| d.as_mut())
            .collect::<Vec<_>>(),
    );
    for ((chosen, name, file), (mut validation, drift)) in jobs.into_iter().zip(outcomes) {
        let drift = drift.map(|d| {
            validation.diagnostics.push(d.diagnostic.clone());
            (d.diagnostic, d.changes)
        });
        // Two files of one source offer this name: the name is ambiguous, so the preset
        // is not valid whatever its content.
        let refused = matches!(&chosen, Selected::Name(n) if workspace.is_ambiguous(n));
        let valid = !refused
            && !validation.diagnostics.iter().any(|d| {
                d.severity == Severity::Error
                    || (args.deny_warnings && d.severity == Severity::Warning)
            });
        let outcome = PresetOutcome::judged(name, file, valid, &validation.diagnostics, || {
            ancestors(&workspace, &chosen)
        });
        report.add_diagnostics(validation.diagnostics);
        if let Some((whole, changes)) = drift {
            report.add_drift_changes(whole, changes);
        }
        report.add_preset(outcome);
    }

    if let Some(lock) = &lock
        && args.targets.is_empty()
    {
        let gone: Vec<_> = lock
            .names()
            .filter(|n| !workspace.presets.contains(n))
            .map(lock::gone)
            .collect();
        report.add_diagnostics(gone);
    }

    report.sort_in_file_order();
    let exit = exit_code(&report, args.deny_warnings);
    let sources = workspace.presets.source_files();
    let text = match args.format {
        ValidateFormat::Human => report.human(io.out_style, &sources),
        ValidateFormat::Json => report.json(),
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
    Ok(exit)
}

fn refused_outcome(file: &str) -> PresetOutcome {
    let name = Path::new(file)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    PresetOutcome {
        name,
        file: file.to_owned(),
        valid: false,
        blamed_parents: Vec::new(),
    }
}

/// The presets `chosen` extends, nearest first: name and file as shown (for the note
/// on a preset invalid because of them).
fn ancestors(workspace: &Workspace, chosen: &Selected) -> Vec<(String, String)> {
    const MOST: usize = 16;
    let mut out: Vec<(String, String)> = Vec::new();
    let mut next = workspace
        .entry(chosen)
        .and_then(|e| e.parsed().ok())
        .and_then(|p| p.file.extends.as_ref())
        .map(|e| e.value.clone());
    while let Some(parent) = next {
        if out.len() >= MOST || out.iter().any(|(n, _)| *n == parent) {
            break;
        }
        let Some(entry) = workspace.presets.get(&parent) else {
            break;
        };
        next = entry
            .parsed()
            .ok()
            .and_then(|p| p.file.extends.as_ref())
            .map(|e| e.value.clone());
        out.push((parent, entry.display().to_string()));
    }
    out
}

fn exit_code(report: &ValidationReport, deny_warnings: bool) -> Exit {
    let diagnostics: &[Diagnostic] = report.diagnostics();
    if diagnostics.iter().any(|d| d.kind == DiagnosticKind::Io) {
        Exit::Usage
    } else if report.presets().iter().any(|p| !p.valid)
        || diagnostics.iter().any(Diagnostic::is_error)
        || (deny_warnings && !diagnostics.is_empty())
    {
        Exit::Invalid
    } else {
        Exit::Ok
    }
}

/// The jobs' indices ordered by family: by the names along each preset's `extends` chain
/// from its root to itself, so presets that share ancestors are adjacent. Reading the
/// files is work validation does anyway (each file is parsed once); an unknown parent or
/// a cycle only ends the path here, validation reports it.
fn family_order(workspace: &Workspace, jobs: &[(Selected, String, String)]) -> Vec<usize> {
    const MOST: usize = 16;
    let paths: Vec<Vec<&str>> = jobs
        .par_iter()
        .map(|(chosen, name, _)| {
            let mut path = vec![name.as_str()];
            let mut next = workspace
                .entry(chosen)
                .and_then(|e| e.parsed().ok())
                .and_then(|p| p.file.extends.as_ref())
                .map(|e| e.value.as_str());
            while let Some(parent) = next {
                if path.len() >= MOST || path.contains(&parent) {
                    break;
                }
                path.push(parent);
                next = workspace
                    .presets
                    .parsed(parent)
                    .and_then(Result::ok)
                    .and_then(|p| p.file.extends.as_ref())
                    .map(|e| e.value.as_str());
            }
            path.reverse();
            path
        })
        .collect();
    let mut order: Vec<usize> = (0..jobs.len()).collect();
    order.sort_by(|&a, &b| paths[a].cmp(&paths[b]));
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_and_names() {
        assert!(is_path("presets/examples/reviewer.yaml"));
        assert!(is_path("reviewer.yaml"));
        assert!(is_path("x.yml"));
        assert!(is_path("./reviewer"));
        assert!(!is_path("reviewer"));
        assert!(!is_path("my-preset-2"));
    }
}
