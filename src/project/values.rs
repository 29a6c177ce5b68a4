//! The values a step is rendered with, from the machine and the caller's choices:
//! `cwd` (given), `os`, `shell` and `date` from the real environment; `model` and
//! `provider` from the preset's `model` block, overridden by the endpoint's; then each
//! values file in order, then single `key=value`s, so the last value given wins. Values
//! are read as the type the preset declares for them. `tools` and `runtime_context`
//! are derived and cannot be set.

use std::path::Path;
use std::sync::Arc;

use minijinja::Value;

use super::environment;
use crate::bounded::{BoundedReadError, byte_size, read_bounded_or_pipe, read_stream_bounded};
use crate::diagnostic::{Diagnostic, DiagnosticKind, Diagnostics, Span};
use crate::endpoint::Provider;
use crate::preset::ValidPreset;
use crate::preset::catalog::STDIN_DISPLAY;
use crate::preset::source::{MAX_PRESET_FILE_BYTES, SourceFile};
use crate::preset::values_file::{ValueEntry, ValuesFile};
use crate::prompt::{RUNTIME_CONTEXT_VARIABLE, TOOLS_VARIABLE, Values, is_derived_variable};
use crate::source_files::{SourceFiles, SourceText};
use crate::suggest::help_did_you_mean;

/// Where the values come from, besides the machine.
#[derive(Clone, Copy, Debug)]
pub struct ValueInputs<'a> {
    /// The working directory the agent is told about.
    pub cwd: &'a str,
    /// The model name, if it overrides the preset's.
    pub model: Option<&'a str>,
    /// The provider, if it overrides the preset's.
    pub provider: Option<Provider>,
    /// Values files, each read once with [`read_var_file`], in order.
    pub var_files: &'a [LoadedVarFile],
    /// Single `key=value`s, in order; they win over every file.
    pub vars: &'a [(String, String)],
}

/// Why there are no values.
#[derive(Debug)]
pub enum ValuesError {
    /// A variable that cannot be set, or that the preset does not know.
    Usage {
        /// What is wrong.
        message: String,
        /// How to fix it.
        help: Option<String>,
    },
    /// Values that do not fit (exit 1), or files that could not be read or name
    /// unknown variables (`usage`: exit 2), with the files they point into.
    Invalid {
        /// Every problem.
        diagnostics: Vec<Diagnostic>,
        /// A usage problem (an unreadable file, an unknown name) is among them.
        usage: bool,
        /// The values files' text.
        sources: SourceFiles,
    },
}

impl ValuesError {
    fn usage(message: impl Into<String>, help: impl Into<String>) -> Self {
        ValuesError::Usage {
            message: message.into(),
            help: Some(help.into()),
        }
    }
}

/// The values for `preset` with `inputs`.
pub fn runtime_values(
    preset: &ValidPreset,
    inputs: &ValueInputs<'_>,
) -> Result<Values, ValuesError> {
    let assembler = preset.assembler();
    let mut values = Values::new();
    values.set("cwd", inputs.cwd.to_owned());
    values.set("os", environment::os());
    values.set("shell", environment::shell());
    values.set("sandbox", preset.sandbox_mode().as_str());
    values.set("date", environment::today_utc());
    if let Some(model) = preset.model() {
        values.set("model", model.name.value.clone());
        values.set("provider", model.provider.value.as_str());
    }
    if let Some(model) = inputs.model {
        values.set("model", model.to_owned());
    }
    if let Some(provider) = inputs.provider {
        values.set("provider", provider.as_str());
    }
    let known: Vec<&str> = assembler
        .known_variables()
        .filter(|v| !is_derived_variable(v))
        .collect();
    // Files first, in order, then single values: the last value given wins.
    let mut sources = SourceFiles::new();
    let mut problems: Vec<Diagnostic> = Vec::new();
    let mut usage = false;
    for loaded in inputs.var_files {
        let file = match loaded {
            Ok(file) => file,
            Err((list, read)) => {
                if let Some((display, text)) = read {
                    sources.insert(display.clone(), text.clone());
                }
                problems.extend(list.iter().cloned());
                usage = true;
                continue;
            }
        };
        sources.insert(file.source.display.clone(), file.source.source_text());
        for entry in &file.entries {
            let key = entry.name.as_str();
            if is_derived_variable(key) || !known.contains(&key) {
                problems.push(unknown_in_file(key, &known, &file.source.display, entry));
                usage = true;
                continue;
            }
            match typed_value(preset, key, &entry.text) {
                Ok(value) => {
                    values.set(key, value);
                }
                Err(d) => problems.push(d.at(entry.span.clone())),
            }
        }
    }
    for (key, value) in inputs.vars {
        if key == TOOLS_VARIABLE {
            return Err(ValuesError::usage(
                "`tools` cannot be set: it is derived from the preset's visible tools",
                "narrow the tools in the preset (`tools: { allow: [...] }`) instead",
            ));
        }
        if key == RUNTIME_CONTEXT_VARIABLE {
            return Err(ValuesError::usage(
                "`runtime_context` cannot be set: it says whether the preset sends runtime context",
                "set `persona.includeRuntimeContext` in the preset instead",
            ));
        }
        if !known.contains(&key.as_str()) {
            let help = help_did_you_mean(key, known.iter().copied())
                .unwrap_or_else(|| format!("known variables: {}", known.join(", ")));
            return Err(ValuesError::usage(
                format!("unknown variable `{key}` in `--var {key}=…`"),
                help,
            ));
        }
        match typed_value(preset, key, value) {
            Ok(value) => {
                values.set(key.clone(), value);
            }
            Err(d) => problems.push(d),
        }
    }
    if !problems.is_empty() {
        return Err(ValuesError::Invalid {
            diagnostics: problems,
            usage,
            sources,
        });
    }
    Ok(values)
}

/// A name in a values file that the preset does not know (or a derived one): a usage error at
/// the name, with "did you mean".
fn unknown_in_file(key: &str, known: &[&str], file: &str, entry: &ValueEntry) -> Diagnostic {
    let (message, help) = if is_derived_variable(key) {
        (
            format!("`{key}` cannot be set (in `{file}`): it is derived from the preset"),
            if key == TOOLS_VARIABLE {
                "narrow the tools in the preset instead".to_owned()
            } else {
                "set `persona.includeRuntimeContext` in the preset instead".to_owned()
            },
        )
    } else {
        (
            format!("unknown variable `{key}` in `{file}`"),
            help_did_you_mean(key, known.iter().copied())
                .unwrap_or_else(|| format!("known variables: {}", known.join(", "))),
        )
    };
    Diagnostic::new(DiagnosticKind::UnknownVariable, message)
        .at(entry.name_span.clone())
        .help(help)
}

/// The argument of `--var-file` that means standard input.
pub const STDIN_ARG: &str = "-";

/// One `--var-file`, parsed; or the diagnostics and (when it was read) the text they
/// point into.
pub type LoadedVarFile = Result<ValuesFile, (Vec<Diagnostic>, Option<(Arc<str>, SourceText)>)>;

/// Read and parse one `--var-file`, bounded like a preset file: `-` is standard input
/// (shown as `<stdin>`), and a pipe the user names (`<(cmd)`, a FIFO) is read as it
/// comes, since they asked for it.
pub fn read_var_file(path: &Path) -> LoadedVarFile {
    let limit = MAX_PRESET_FILE_BYTES as u64;
    let (display, read): (Arc<str>, _) = if path.as_os_str() == STDIN_ARG {
        (
            STDIN_DISPLAY.into(),
            read_stream_bounded(std::io::stdin().lock(), limit),
        )
    } else {
        (
            path.to_string_lossy().into(),
            read_bounded_or_pipe(path, limit),
        )
    };
    let bytes = read.map_err(|e| {
        let what = if path.as_os_str() == STDIN_ARG {
            "standard input (`--var-file -`)".to_owned()
        } else {
            format!("`--var-file {display}`")
        };
        let d = match e {
            // A size limit, like a preset file's (docs/security.md: Limits).
            BoundedReadError::TooLarge { .. } => Diagnostic::new(
                DiagnosticKind::LimitExceeded,
                format!("cannot read {what}: {e}"),
            )
            .at(Span::new(display.clone(), 1, 1))
            .help(format!(
                "a values file may hold at most {}: values are short; long text belongs in a `textFile` of the preset",
                byte_size(limit)
            )),
            e => Diagnostic::new(DiagnosticKind::Io, format!("cannot read {what}: {e}")).help(
                "give a YAML or JSON file mapping variable names to values, e.g. `focus: security`",
            ),
        };
        (vec![d], None)
    })?;
    ValuesFile::parse(display.clone(), &bytes).map_err(|ds| {
        (
            ds.into_vec(),
            Some((display, SourceFile::lossy_text(&bytes))),
        )
    })
}

/// The value of `--var key=text`: typed as the preset declares `key` (`type`, `enum`);
/// a value that does not fit is an invalid render (exit 1) naming the variable and, for
/// an `enum`, the choices. Built-in variables take text.
fn typed_value(preset: &ValidPreset, key: &str, text: &str) -> Result<Value, Diagnostic> {
    match preset.assembler().declaration(key) {
        Some(decl) => decl.parse_value(text),
        None => Ok(Value::from(text)),
    }
}

/// A step that failed to render: a missing `model` or `provider` means the preset has
/// no `model` block, so say which flag supplies it.
pub fn explain_missing(ds: Diagnostics) -> Vec<Diagnostic> {
    ds.into_iter().map(explain_one).collect()
}

fn explain_one(d: Diagnostic) -> Diagnostic {
    if d.kind != DiagnosticKind::MissingValue {
        return d;
    }
    for (var, flag) in [("model", "--model NAME"), ("provider", "--provider NAME")] {
        if d.message.contains(&format!("variable `{var}`")) {
            return d.help(format!(
                "this preset has no `model` block: pass `{flag}` (or `--var {var}=…`)"
            ));
        }
    }
    d
}
