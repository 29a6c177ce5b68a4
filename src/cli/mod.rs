//! The `agent-presets` command line: argument parsing, one module per subcommand, and
//! choosing where output goes. The library never prints: the output formats live in
//! [`crate::report`], and the CLI writes what they return to stdout or stderr.
//!
//! Exit codes: `0` ok, `1` an invalid preset (or a failed render), `2` a usage or I/O
//! problem (unknown preset name, missing path, unreadable file, bad `--var`).

use std::ffi::OsString;
use std::io::{self, IsTerminal};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

use crate::diagnostic::{Diagnostic, DiagnosticKind};
use crate::source_files::SourceFiles;

mod connect;
mod explain;
mod import;
mod init;
mod list;
mod lock;
mod lsp;
mod render;
mod run;
mod schema;
mod show;
mod test;
mod test_live;
mod texts;
mod trust;
mod validate;
mod values;
mod waiting;
mod workspace;

use crate::report::{HumanRenderer, MachineFormat, Style};

// How a command ended; defined beside the reports, whose SARIF log records it.
pub use crate::report::Exit;

/// Turn declarative YAML presets into the exact request an LLM agent sends.
#[derive(Debug, Parser)]
#[command(name = "agent-presets", version, about, max_term_width = 100)]
struct Cli {
    #[command(flatten)]
    global: GlobalArgs,
    #[command(subcommand)]
    command: Command,
}

/// Options every subcommand takes.
#[derive(Clone, Debug, Args)]
struct GlobalArgs {
    /// Also offer the presets in DIR (repeatable). Precedence: the project's
    /// `.agent-presets/`, then each DIR in order, then the user directory.
    #[arg(long = "preset-dir", value_name = "DIR", global = true)]
    preset_dirs: Vec<PathBuf>,
    /// The project whose `.agent-presets/` directory holds project presets
    /// [default: the current directory].
    #[arg(long, value_name = "DIR", global = true)]
    project_dir: Option<PathBuf>,
    /// Leave the user's preset directory out (also: `AGENT_PRESETS_NO_USER=1`).
    #[arg(long, global = true)]
    no_user: bool,
    /// Do not read the project config (`agent-presets.yaml`, found from the current
    /// directory upward): its preset directories, lock file and locale.
    #[arg(long, global = true)]
    no_project_config: bool,
}

impl GlobalArgs {
    /// The global flags given, as words a POSIX shell reads back: what every command a
    /// message suggests repeats (see [`crate::report::commands`]).
    fn flag_words(&self) -> Vec<String> {
        let mut words = Vec::new();
        if let Some(dir) = &self.project_dir {
            words.push("--project-dir".into());
            words.push(shell_word(&dir.to_string_lossy()));
        }
        for dir in &self.preset_dirs {
            words.push("--preset-dir".into());
            words.push(shell_word(&dir.to_string_lossy()));
        }
        if self.no_user {
            words.push("--no-user".into());
        }
        if self.no_project_config {
            words.push("--no-project-config".into());
        }
        words
    }
}

/// A word as a POSIX shell reads it back.
pub(crate) fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=@%+,".contains(c));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[derive(Debug, Subcommand)]
enum Command {
    /// List every preset on offer: name, source and description.
    List(list::ListArgs),
    /// Show a preset resolved along its `extends` chain, annotated with where each piece
    /// comes from.
    Show(show::ShowArgs),
    /// Validate presets (by default every one on offer) with the full build.
    Validate(validate::ValidateArgs),
    /// Render the exact system prompt, tools and runtime context a preset sends.
    Render(render::RenderArgs),
    /// Run the preset's agent: send the prompt to its model, stream the answer, run the
    /// tools it calls.
    Run(run::RunArgs),
    /// Print the preset JSON Schema, or write / check the committed schema files.
    Schema(schema::SchemaArgs),
    /// Create a commented starter preset that validates.
    Init(init::InitArgs),
    /// Turn another tool's agent config (a Claude Code subagent, a Copilot custom agent,
    /// a goose recipe, an `.mcp.json`) into a preset, reporting every field not carried.
    Import(import::ImportArgs),
    /// Explain a diagnostic code: what it means, an example that triggers it, the fix.
    Explain(explain::ExplainArgs),
    /// Write presets.lock: each preset's cacheable prefix, for `validate --locked`.
    Lock(lock::LockArgs),
    /// Trust presets you did not write (a project's, a shared directory's) to reach
    /// outside the process on `run`; list or revoke that trust.
    Trust(trust::TrustArgs),
    /// List the texts the model reads by id, with where each comes from (built-in, a
    /// locale pack, a preset's `texts:`), or show one.
    Texts(texts::TextsArgs),
    /// Run the project's test cases (`.agent-presets/tests/*.yaml`) or recorded runs
    /// (`run --record` cassettes): replay each offline, check what the agent did against
    /// the case's `expect`, and report every drift from the recording.
    Test(test::TestArgs),
    /// The language server: diagnostics, hover, completion, definitions and quick fixes
    /// in your editor, over standard input and output (docs/editors.md).
    Lsp(lsp::LspArgs),
}

/// A failure a command reports instead of its normal output.
#[derive(Debug)]
pub(crate) enum CliError {
    /// Bad arguments or a missing/unreadable file: exit 2.
    Usage {
        /// What is wrong.
        message: String,
        /// What to do about it.
        help: Option<String>,
    },
    /// Diagnostics to print on stderr, and the exit code they mean.
    Diagnostics {
        /// The diagnostics.
        list: Vec<Diagnostic>,
        /// `Invalid` or `Usage`.
        exit: Exit,
        /// The text of the files they point into (for snippets).
        sources: SourceFiles,
    },
    /// Writing the output failed.
    Output(io::Error),
}

impl CliError {
    /// A usage error without help.
    pub(crate) fn usage(message: impl Into<String>) -> Self {
        CliError::Usage {
            message: message.into(),
            help: None,
        }
    }

    /// A usage error with (optional) help.
    pub(crate) fn usage_with(message: impl Into<String>, help: Option<String>) -> Self {
        CliError::Usage {
            message: message.into(),
            help,
        }
    }
}

impl From<crate::project::UsageError> for CliError {
    fn from(e: crate::project::UsageError) -> Self {
        CliError::usage_with(e.message, e.help)
    }
}

impl From<crate::confine::ProjectFileError> for CliError {
    fn from(e: crate::confine::ProjectFileError) -> Self {
        CliError::usage_with(e.message, e.help)
    }
}

impl From<io::Error> for CliError {
    fn from(e: io::Error) -> Self {
        CliError::Output(e)
    }
}

/// What a command needs to write its output (see [`crate::report::Streams`]).
pub(crate) use crate::report::Streams as Io;

/// Run the CLI with the process's arguments and streams; returns the exit code.
pub fn run() -> ExitCode {
    let stdout = io::stdout();
    let stderr = io::stderr();
    let out_style = Style::detect(stdout.is_terminal());
    let err_style = Style::detect(stderr.is_terminal());
    let mut out = stdout.lock();
    let mut err = stderr.lock();
    let exit = run_with(
        std::env::args_os(),
        &mut Io {
            out: &mut out,
            err: &mut err,
            out_style,
            err_style,
        },
    );
    ExitCode::from(exit.code())
}

/// Run the CLI with explicit arguments (the first is the program name) and streams.
pub(crate) fn run_with<I, T>(args: I, io: &mut Io<'_>) -> Exit
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    let cli = match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(e) => {
            let text = e.render().to_string();
            let (stream, exit) = if e.use_stderr() {
                (&mut *io.err, Exit::Usage)
            } else {
                (&mut *io.out, Exit::Ok)
            };
            // Nothing more useful to do if even this write fails.
            let _ = stream.write_all(text.as_bytes());
            // A pipeline that asked for a machine format gets the error in it, too.
            if exit == Exit::Usage
                && let Some((command, format)) = requested_machine_format(&args)
            {
                let d = Diagnostic::new(DiagnosticKind::Io, clap_message(&text)).help(format!(
                    "run `agent-presets {command} --help` for the usage"
                ));
                let _ = io.out.write_all(
                    format
                        .error_report(vec![d], current_dir().as_deref())
                        .as_bytes(),
                );
            }
            return exit;
        }
    };
    let format = cli.command.machine_format();
    // Every command a message suggests repeats this one's global flags.
    let _flags = crate::report::commands::repeat_flags(&cli.global.flag_words().join(" "));
    let result = match &cli.command {
        Command::List(args) => list::run(&cli.global, args, io),
        Command::Show(args) => show::run(&cli.global, args, io),
        Command::Validate(args) => validate::run(&cli.global, args, io),
        Command::Render(args) => render::run(&cli.global, args, io),
        Command::Run(args) => run::run(&cli.global, args, io),
        Command::Schema(args) => schema::run(&cli.global, args, io),
        Command::Init(args) => init::run(&cli.global, args, io),
        Command::Import(args) => import::run(&cli.global, args, io),
        Command::Explain(args) => explain::run(&cli.global, args, io),
        Command::Lock(args) => lock::run(&cli.global, args, io),
        Command::Trust(args) => trust::run(&cli.global, args, io),
        Command::Texts(args) => texts::run(&cli.global, args, io),
        Command::Test(args) => test::run(&cli.global, args, io),
        Command::Lsp(args) => lsp::run(&cli.global, args, io),
    };
    let flushed = io.out.flush();
    match (result, flushed) {
        (Ok(exit), Ok(())) => exit,
        (Err(e), _) => report_error(e, format, io),
        (Ok(_), Err(e)) => report_error(CliError::Output(e), None, io),
    }
}

impl Command {
    /// The machine-readable format the command was asked for, if any: errors are then
    /// reported in it on stdout as well as for humans on stderr.
    fn machine_format(&self) -> Option<MachineFormat> {
        match self {
            Command::Validate(args) => args.machine_format(),
            Command::List(args) => args.machine_format(),
            Command::Render(args) => args.machine_format(),
            Command::Test(args) => args.machine_format(),
            Command::Import(args) => args.machine_format(),
            _ => None,
        }
    }
}

/// `--format json|github|sarif` of `validate`, `list` or `render` in arguments clap
/// refused, found by looking at them directly.
fn requested_machine_format(args: &[OsString]) -> Option<(&'static str, MachineFormat)> {
    let args: Vec<&str> = args.iter().skip(1).filter_map(|a| a.to_str()).collect();
    let command = args
        .iter()
        .position(|a| matches!(*a, "validate" | "list" | "render"))?;
    let mut value = None;
    let mut rest = args[command + 1..].iter();
    while let Some(arg) = rest.next() {
        if *arg == "--" {
            break;
        }
        if *arg == "--format" {
            value = rest.next().copied();
        } else if let Some(v) = arg.strip_prefix("--format=") {
            value = Some(v);
        }
    }
    let command = match args[command] {
        "validate" => "validate",
        "list" => "list",
        _ => "render",
    };
    let format = match (command, value?) {
        (_, "json") => MachineFormat::Json,
        ("validate", "github") => MachineFormat::Github,
        ("validate", "sarif") => MachineFormat::Sarif,
        _ => return None,
    };
    Some((command, format))
}

/// The first line of a clap error, without its `error: ` label.
fn clap_message(rendered: &str) -> String {
    let first = rendered.lines().next().unwrap_or_default();
    first
        .strip_prefix("error: ")
        .unwrap_or(first)
        .trim()
        .to_owned()
}

/// The directory SARIF paths are relative to: the one the command ran in.
fn current_dir() -> Option<PathBuf> {
    std::env::current_dir().ok()
}

fn report_error(error: CliError, format: Option<MachineFormat>, io: &mut Io<'_>) -> Exit {
    let style = io.err_style;
    if let Some(format) = format {
        let list = match &error {
            CliError::Usage { message, help } => {
                vec![Diagnostic::new(DiagnosticKind::Io, message.clone()).maybe_help(help.clone())]
            }
            CliError::Diagnostics { list, .. } => list.clone(),
            CliError::Output(_) => Vec::new(),
        };
        if !list.is_empty() {
            let _ = io.out.write_all(
                format
                    .error_report(list, current_dir().as_deref())
                    .as_bytes(),
            );
            let _ = io.out.flush();
        }
    }
    match error {
        CliError::Usage { message, help } => {
            let message = crate::report::commands::with_flags(&message);
            let _ = writeln!(io.err, "{}: {message}", style.error("error"));
            if let Some(help) = help {
                let help = crate::report::commands::with_flags(&help);
                let _ = writeln!(io.err, "  = {}: {help}", style.bold("help"));
            }
            Exit::Usage
        }
        CliError::Diagnostics {
            list,
            exit,
            sources,
        } => {
            let renderer = HumanRenderer::new(style, &sources, &list);
            let _ = io.err.write_all(renderer.render_all(&list).as_bytes());
            exit
        }
        // A closed pipe (`agent-presets render x | head`) is not an error worth a message.
        CliError::Output(e) if e.kind() == io::ErrorKind::BrokenPipe => Exit::Ok,
        CliError::Output(e) => {
            let _ = writeln!(io.err, "{}: cannot write output: {e}", style.error("error"));
            Exit::Usage
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_args(args: &[&str]) -> (Exit, String, String) {
        let mut out = Vec::new();
        let mut err = Vec::new();
        let exit = run_with(
            std::iter::once("agent-presets").chain(args.iter().copied()),
            &mut Io {
                out: &mut out,
                err: &mut err,
                out_style: Style::plain(),
                err_style: Style::plain(),
            },
        );
        (
            exit,
            String::from_utf8(out).unwrap(),
            String::from_utf8(err).unwrap(),
        )
    }

    #[test]
    fn clap_definition_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }

    #[test]
    fn help_goes_to_stdout_with_exit_0() {
        let (exit, out, err) = run_args(&["--help"]);
        assert_eq!(exit, Exit::Ok);
        assert!(out.contains("validate"), "{out}");
        assert!(err.is_empty());
    }

    #[test]
    fn machine_formats_are_found_in_refused_arguments() {
        let find = |args: &[&str]| {
            let args: Vec<OsString> = std::iter::once("agent-presets")
                .chain(args.iter().copied())
                .map(OsString::from)
                .collect();
            requested_machine_format(&args)
        };
        assert_eq!(
            find(&["validate", "--format", "sarif", "--bogus"]),
            Some(("validate", MachineFormat::Sarif))
        );
        assert_eq!(
            find(&["--preset-dir", "x", "list", "--format=json"]),
            Some(("list", MachineFormat::Json))
        );
        assert_eq!(find(&["render", "--format", "github"]), None);
        assert_eq!(find(&["render", "x", "--", "--format", "json"]), None);
        assert_eq!(find(&["show", "--format", "json"]), None);
        assert_eq!(find(&["validate", "--bogus"]), None);
    }

    #[test]
    fn unknown_subcommand_is_a_usage_error() {
        let (exit, out, err) = run_args(&["frobnicate"]);
        assert_eq!(exit, Exit::Usage);
        assert!(out.is_empty());
        assert!(err.contains("frobnicate"), "{err}");
    }
}
