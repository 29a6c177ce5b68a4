//! The test case file (`.agent-presets/tests/*.yaml`): what one case runs and what it
//! expects, validated like a preset file.
//!
//! Reading a case is the preset's journey with another schema: bounded read
//! ([`read_bounded`]), decoding ([`SourceFile`]), the shape check against the schema
//! generated from [`CaseFile`] (every unknown key, wrong type and missing key at once,
//! located, with "did you mean"), the typed pass from the same tree. Then the case's own
//! checks ([`load_case`]): `workspace` and `cassette` are relative paths that stay beside
//! the case (no absolute path, no `..` and no symbolic link that leads out), every
//! `answer.matches` regex and `output.schema` compiles, `tools.sequence` names exactly one
//! mode. What needs the preset — does it exist, which tools does it show — is
//! [`check_against_preset`]. The result is a [`TestCase`] whose expectations are
//! compiled ([`Expectation`]), each with the span it was written at.
//!
//! The JSON Schema for editors is [`case_json_schema`], committed as
//! `schemas/test-case.schema.json`.

use crate::confine::LexicalEscape;
use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use crate::bounded::{BoundedReadError, read_bounded};
use crate::confine::beneath::{ResolveError, WorkspaceRoot};
use crate::diagnostic::{Diagnostic, DiagnosticKind, Span};
use crate::preset::DocumentShape;
use crate::preset::source::{MAX_PRESET_FILE_BYTES, SourceFile, parse_document};
use crate::preset::spec::{NamedMap, Spanned};
use crate::suggest::help_did_you_mean;

/// Where a project keeps its test cases, relative to the project root.
pub const CASE_DIR: &str = ".agent-presets/tests";

/// `$id` of the generated JSON Schema of a case file.
pub const CASE_SCHEMA_ID: &str = "urn:agent-presets:test-case:v1";

/// Most bytes a case file may hold (as a preset file).
pub const MAX_CASE_FILE_BYTES: usize = MAX_PRESET_FILE_BYTES;

/// The help for an empty case file or one that is not a mapping.
const CASE_START: &str =
    "a test case starts with `preset: NAME` and `prompt: ...`, then an `expect:` mapping";

/// One test case file, as written.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CaseFile {
    /// The preset the case runs, by name.
    #[schemars(with = "String")]
    pub preset: Spanned<String>,
    /// The user's prompt.
    pub prompt: String,
    /// Values of the preset's variables (as `run --var NAME=VALUE` gives them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vars: Option<NamedMap<Spanned<String>>>,
    /// A directory beside the case (a relative path, staying inside the case's
    /// directory): the workspace the run's tools see, copied to a temporary directory when
    /// recording or with live tools. Default: an empty temporary directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>", length(min = 1))]
    pub workspace: Option<Spanned<String>>,
    /// The recording the case replays, beside the case (a relative path, staying inside
    /// the case's directory), written by `test --record`. Default: the case file's stem
    /// with `.jsonl`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>", length(min = 1))]
    pub cassette: Option<Spanned<String>>,
    /// What the run must have done; each key is one assertion, reported by name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expect: Option<ExpectSpec>,
}

/// `expect`: the assertions over what the run did.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ExpectSpec {
    /// Which tools were called, in which order, with which arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<ToolsExpect>,
    /// The run made at most this many model requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<u32>", range(min = 1))]
    pub max_steps: Option<Spanned<u32>>,
    /// How the run ended: `answered` (the default expectation of nothing), `stepLimit`
    /// or `error`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<OutcomeSpec>")]
    pub outcome: Option<Spanned<OutcomeSpec>>,
    /// The final answer's text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<AnswerExpect>,
    /// The validated output object, when the preset declares an output contract.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<OutputExpect>,
}

/// `expect.tools`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ToolsExpect {
    /// Each of these tools was called at least once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Vec<String>>")]
    pub used: Option<Vec<Spanned<String>>>,
    /// None of these tools was called.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Vec<String>>")]
    pub not_used: Option<Vec<Spanned<String>>>,
    /// The order of the calls: exactly one of `exact`, `inOrder`, `anyOrder`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<SequenceSpec>")]
    pub sequence: Option<Spanned<SequenceSpec>>,
    /// For each entry, some call to `tool` had arguments matching `match`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Vec<ArgsExpect>>")]
    pub args: Option<Vec<Spanned<ArgsExpect>>>,
}

/// `expect.tools.sequence`: exactly one of its keys.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SequenceSpec {
    /// The calls, all of them, were exactly these tools in this order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Vec<String>>")]
    pub exact: Option<Vec<Spanned<String>>>,
    /// These tools were called in this order, other calls before, between and after
    /// allowed (a subsequence).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Vec<String>>")]
    pub in_order: Option<Vec<Spanned<String>>>,
    /// The calls, all of them, were these tools in any order (the same multiset: a tool
    /// listed twice was called twice).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Vec<String>>")]
    pub any_order: Option<Vec<Spanned<String>>>,
}

/// One entry of `expect.tools.args`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ArgsExpect {
    /// The tool's wire name.
    #[schemars(with = "String")]
    pub tool: Spanned<String>,
    /// A JSON subset the arguments of at least one call to `tool` match (see
    /// docs/testing.md: objects by key, recursively; arrays item by item, same length;
    /// anything else equal).
    #[serde(rename = "match")]
    #[schemars(with = "Value")]
    pub pattern: Spanned<Value>,
}

/// `expect.outcome`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum OutcomeSpec {
    /// The model gave a final answer.
    Answered,
    /// The step limit was reached while the model still called tools.
    StepLimit,
    /// The final answer still broke the output contract after its retries.
    OutputInvalid,
    /// A success check still failed after its retries.
    CheckFailed,
    /// The run stopped with an error.
    Error,
}

impl OutcomeSpec {
    /// As written in a case file.
    pub fn as_str(self) -> &'static str {
        match self {
            OutcomeSpec::Answered => "answered",
            OutcomeSpec::StepLimit => "stepLimit",
            OutcomeSpec::OutputInvalid => "outputInvalid",
            OutcomeSpec::CheckFailed => "checkFailed",
            OutcomeSpec::Error => "error",
        }
    }
}

/// `expect.answer`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AnswerExpect {
    /// The answer holds each of these substrings (case-sensitive).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Vec<String>>")]
    pub contains: Option<Vec<Spanned<String>>>,
    /// The answer holds none of these substrings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Vec<String>>")]
    pub not_contains: Option<Vec<Spanned<String>>>,
    /// A regular expression (Rust `regex` syntax) that matches somewhere in the answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub matches: Option<Spanned<String>>,
    /// The whole answer, exactly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub equals: Option<Spanned<String>>,
}

/// `expect.output`: the validated output object.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct OutputExpect {
    /// A JSON subset the output object matches (as `tools.args[].match`).
    #[serde(default, rename = "match", skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Value>")]
    pub pattern: Option<Spanned<Value>>,
    /// A JSON Schema (draft 2020-12) the output object is valid against.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Value>")]
    pub schema: Option<Spanned<Value>>,
}

/// The JSON Schema (draft 2020-12) of a test case file, as committed in
/// `schemas/test-case.schema.json`.
pub fn case_json_schema() -> Value {
    let generator = schemars::generate::SchemaSettings::draft2020_12().into_generator();
    let schema = generator.into_root_schema_for::<CaseFile>();
    let mut value = schema.to_value();
    if let Some(root) = value.as_object_mut() {
        let mut ordered = serde_json::Map::new();
        if let Some(meta) = root.remove("$schema") {
            ordered.insert("$schema".into(), meta);
        }
        ordered.insert("$id".into(), CASE_SCHEMA_ID.into());
        ordered.insert("title".into(), "agent-presets test case file".into());
        ordered.insert(
            "description".into(),
            "One test case: the preset and prompt a recorded run replays, and what the run \
             must have done (`expect`)."
                .into(),
        );
        root.remove("title");
        root.remove("description");
        ordered.extend(std::mem::take(root));
        *root = ordered;
    }
    value
}

static CASE_SHAPE: DocumentShape =
    DocumentShape::new(case_json_schema, "a test case file", CASE_START);

/// How the calls' order is checked (`expect.tools.sequence`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SequenceMode {
    /// All calls, exactly these tools in this order.
    Exact,
    /// These tools in this order among the calls.
    InOrder,
    /// All calls, these tools in any order.
    AnyOrder,
}

impl SequenceMode {
    /// The key it is written under.
    pub fn key(self) -> &'static str {
        match self {
            SequenceMode::Exact => "exact",
            SequenceMode::InOrder => "inOrder",
            SequenceMode::AnyOrder => "anyOrder",
        }
    }
}

/// One compiled assertion.
#[derive(Clone, Debug)]
pub enum Check {
    /// `tools.used`: this tool was called.
    Used(String),
    /// `tools.notUsed`: this tool was not called.
    NotUsed(String),
    /// `tools.sequence`.
    Sequence {
        /// How the order is compared.
        mode: SequenceMode,
        /// The tools listed.
        tools: Vec<String>,
    },
    /// `tools.args`: some call to `tool` has arguments matching `pattern`.
    Args {
        /// The tool.
        tool: String,
        /// The JSON subset.
        pattern: Value,
    },
    /// `maxSteps`.
    MaxSteps(u32),
    /// `outcome`.
    Outcome(OutcomeSpec),
    /// `answer.contains`: one substring.
    AnswerContains(String),
    /// `answer.notContains`: one substring.
    AnswerLacks(String),
    /// `answer.matches`.
    AnswerMatches(regex::Regex),
    /// `answer.equals`.
    AnswerEquals(String),
    /// `output.match`.
    OutputMatch(Value),
    /// `output.schema` (compiled; the schema as written beside it).
    OutputSchema(Arc<jsonschema::Validator>, Value),
}

/// One assertion of a case, compiled, with its name and where it is written.
#[derive(Clone, Debug)]
pub struct Expectation {
    /// Its name, the path of its key under `expect` (`tools.used`, `answer.matches`).
    pub name: &'static str,
    /// Where it is written in the case file (the list item, or the value).
    pub span: Span,
    /// What it checks.
    pub check: Check,
}

/// A case file read and checked (everything but what needs the preset:
/// [`check_against_preset`]).
#[derive(Clone, Debug)]
pub struct TestCase {
    /// The case file.
    pub path: PathBuf,
    /// Its path relative to the project, `/`-separated: its identity (sharding, reports).
    pub id: String,
    /// Its text, for snippets and spans.
    pub source: SourceFile,
    /// The file as written.
    pub file: CaseFile,
    /// `vars`, by name.
    pub vars: BTreeMap<String, String>,
    /// The workspace directory (absolute), when the case names one.
    pub workspace: Option<PathBuf>,
    /// The cassette file (absolute), named or by default.
    pub cassette: PathBuf,
    /// The cassette as shown (relative to the project).
    pub cassette_shown: String,
    /// The assertions, in file order.
    pub expectations: Vec<Expectation>,
}

impl TestCase {
    /// The case's name: its file stem.
    pub fn name(&self) -> &str {
        Path::new(&self.id)
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or(&self.id)
    }

    /// The preset it runs.
    pub fn preset(&self) -> &str {
        &self.file.preset.value
    }

    /// Where the preset is named (for a problem with the preset).
    pub fn preset_span(&self) -> Span {
        self.source.span_of(&self.file.preset)
    }

    /// Where the cassette is named, or the file's start when it is the default.
    pub fn cassette_span(&self) -> Span {
        match &self.file.cassette {
            Some(c) => self.source.span_of(c),
            None => self.source.start(),
        }
    }
}

/// `path` relative to `project` with `/` separators, or as given when it is elsewhere.
pub fn case_id(project: &Path, path: &Path) -> String {
    let relative = path.strip_prefix(project).unwrap_or(path);
    let parts: Vec<String> = relative
        .components()
        .filter_map(|c| match c {
            Component::Normal(p) => Some(p.to_string_lossy().into_owned()),
            Component::RootDir => Some(String::new()),
            _ => None,
        })
        .collect();
    parts.join("/")
}

/// Read and check the case file at `path` (absolute, or relative to the current
/// directory); `project` is the project root (ids and shown paths are relative to it).
/// Every problem found is returned, located in the case file.
pub fn load_case(project: &Path, path: &Path) -> Result<TestCase, Vec<Diagnostic>> {
    let (case, problems) = read_case(project, path)?;
    if problems.is_empty() {
        Ok(case)
    } else {
        Err(problems)
    }
}

/// [`load_case`], keeping a case whose file has the right shape even when some of its
/// values are refused (a bad regex, a path that leads out): the case (without the
/// refused expectations) and those problems, so that checks which need the case (its
/// preset, its tools) can report theirs in the same pass. `Err` when the file cannot be
/// read as a case at all.
pub fn read_case(
    project: &Path,
    path: &Path,
) -> Result<(TestCase, Vec<Diagnostic>), Vec<Diagnostic>> {
    let id = case_id(project, path);
    let display: Arc<str> = id.as_str().into();
    let bytes = read_bounded(path, MAX_CASE_FILE_BYTES as u64).map_err(|e| {
        let d = match e {
            BoundedReadError::TooLarge { .. } => Diagnostic::new(
                DiagnosticKind::LimitExceeded,
                format!("test case `{display}` is too large: {e}"),
            )
            .help("a test case is a small file: keep long texts in the cassette or the workspace"),
            other => Diagnostic::new(
                DiagnosticKind::Io,
                format!("cannot read test case `{display}`: {other}"),
            ),
        };
        vec![d.at(Span::new(display.clone(), 1, 1))]
    })?;
    let source = SourceFile::decode(display, &bytes).map_err(|d| vec![d])?;
    let file: CaseFile =
        parse_document(&source, &CASE_SHAPE, CASE_START).map_err(|d| d.into_vec())?;
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut problems = Vec::new();
    let workspace = file.workspace.as_ref().and_then(|w| {
        confined_path(&source, dir, w, "workspace", true)
            .map_err(|d| problems.push(d))
            .ok()
    });
    let (cassette, cassette_shown) = match &file.cassette {
        Some(c) => match confined_path(&source, dir, c, "cassette", false) {
            Ok(p) => {
                let shown = case_id(project, &p);
                (p, shown)
            }
            Err(d) => {
                problems.push(d);
                (PathBuf::new(), String::new())
            }
        },
        None => {
            let stem = path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let p = dir.join(format!("{stem}.jsonl"));
            let shown = case_id(project, &p);
            (p, shown)
        }
    };
    let vars = file
        .vars
        .iter()
        .flat_map(|v| v.iter())
        .map(|(k, v)| (k.value.clone(), v.value.clone()))
        .collect();
    let expectations = match &file.expect {
        Some(expect) => compile(&source, expect, &mut problems),
        None => Vec::new(),
    };
    let case = TestCase {
        path: path.to_owned(),
        id,
        source,
        file,
        vars,
        workspace,
        cassette,
        cassette_shown,
        expectations,
    };
    Ok((case, problems))
}

/// A path a case names (`workspace`, `cassette`): relative, lexically inside the case's
/// directory, and (when it exists) not leading out through a symbolic link. A workspace
/// must exist and be a directory; a cassette need not exist yet (`test --record`
/// writes it).
fn confined_path(
    source: &SourceFile,
    dir: &Path,
    value: &Spanned<String>,
    key: &str,
    must_be_dir: bool,
) -> Result<PathBuf, Diagnostic> {
    let at = source.span_of(value);
    let given = value.value.as_str();
    let refuse = |why: String| {
        Diagnostic::new(
            DiagnosticKind::CasePath,
            format!("`{key}: {given}` is refused: {why}"),
        )
        .at(at.clone())
        .help(format!(
            "keep the {key} beside the case file (in its directory or below) and name it by a \
             relative path such as `{}`",
            if must_be_dir {
                "fixtures/repo"
            } else {
                "review-typos.jsonl"
            }
        ))
    };
    let inside = lexically_inside(given).map_err(|why| refuse(why.to_owned()))?;
    let absolute_dir = dir
        .canonicalize()
        .map_err(|e| refuse(format!("the case's directory cannot be opened ({e})")))?;
    let root = WorkspaceRoot::open(&absolute_dir)
        .map_err(|e| refuse(format!("the case's directory cannot be opened ({e})")))?;
    let components = root
        .components_below(&inside)
        .ok_or_else(|| refuse("it leads outside the case's directory".to_owned()))?;
    match root.resolve(root.chain(), components, false) {
        Ok(resolved) => {
            if must_be_dir && !resolved.is_dir() {
                let why = if resolved.kind.is_none() {
                    "there is no such directory"
                } else {
                    "it is not a directory"
                };
                return Err(Diagnostic::new(
                    DiagnosticKind::CasePath,
                    format!("`{key}: {given}` names no directory beside the case: {why}"),
                )
                .at(at)
                .help("the path is relative to the case file's directory"));
            }
            Ok(absolute_dir.join(resolved.relative()))
        }
        Err(ResolveError::Outside { .. }) => Err(refuse(
            "it is a symbolic link (or passes through one) that leads outside the case's \
             directory"
                .to_owned(),
        )),
        Err(ResolveError::MissingDir { .. }) if !must_be_dir => {
            // The cassette's directory does not exist yet: `test --record` makes it.
            Ok(absolute_dir.join(&inside))
        }
        Err(ResolveError::MissingDir { .. }) => Err(Diagnostic::new(
            DiagnosticKind::CasePath,
            format!("`{key}: {given}` names no directory beside the case"),
        )
        .at(at)
        .help("the path is relative to the case file's directory")),
        Err(other) => Err(refuse(format!("it cannot be resolved ({other:?})"))),
    }
}

/// `relative` with `.` and inner `..` resolved, if it stays inside its base directory.
fn lexically_inside(relative: &str) -> Result<PathBuf, &'static str> {
    crate::confine::lexically_beneath(relative).map_err(|e| match e {
        LexicalEscape::ClimbsOut => "`..` leads outside the case's directory",
        LexicalEscape::Absolute => "it is an absolute path",
        LexicalEscape::NamesBase => "it names the case's directory itself, not something in it",
    })
}

/// Compile `expect` into assertions; problems (a bad regex or schema, a sequence with
/// no mode or two) go to `problems`.
fn compile(
    source: &SourceFile,
    expect: &ExpectSpec,
    problems: &mut Vec<Diagnostic>,
) -> Vec<Expectation> {
    let mut out = Vec::new();
    let mut push = |name: &'static str, span: Span, check: Check| {
        out.push(Expectation { name, span, check });
    };
    if let Some(tools) = &expect.tools {
        for t in tools.used.iter().flatten() {
            push(
                "tools.used",
                source.span_of(t),
                Check::Used(t.value.clone()),
            );
        }
        for t in tools.not_used.iter().flatten() {
            push(
                "tools.notUsed",
                source.span_of(t),
                Check::NotUsed(t.value.clone()),
            );
        }
        if let Some(sequence) = &tools.sequence {
            let s = &sequence.value;
            let given: Vec<(SequenceMode, &Vec<Spanned<String>>)> = [
                (SequenceMode::Exact, &s.exact),
                (SequenceMode::InOrder, &s.in_order),
                (SequenceMode::AnyOrder, &s.any_order),
            ]
            .into_iter()
            .filter_map(|(m, v)| v.as_ref().map(|v| (m, v)))
            .collect();
            match given.as_slice() {
                [(mode, tools)] => push(
                    "tools.sequence",
                    source.span_of(sequence),
                    Check::Sequence {
                        mode: *mode,
                        tools: tools.iter().map(|t| t.value.clone()).collect(),
                    },
                ),
                [] => problems.push(
                    Diagnostic::new(
                        DiagnosticKind::InvalidValue,
                        "`tools.sequence` names no order",
                    )
                    .at(source.span_of(sequence))
                    .help("give exactly one of `exact`, `inOrder`, `anyOrder`, each a list of tool names"),
                ),
                several => problems.push(
                    Diagnostic::new(
                        DiagnosticKind::InvalidValue,
                        format!(
                            "`tools.sequence` names {} orders ({}); it takes one",
                            several.len(),
                            several
                                .iter()
                                .map(|(m, _)| format!("`{}`", m.key()))
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    )
                    .at(source.span_of(sequence))
                    .help("keep one of `exact`, `inOrder`, `anyOrder`; write a second case for another order"),
                ),
            }
        }
        for a in tools.args.iter().flatten() {
            push(
                "tools.args",
                source.span_of(a),
                Check::Args {
                    tool: a.value.tool.value.clone(),
                    pattern: a.value.pattern.value.clone(),
                },
            );
        }
    }
    if let Some(max) = &expect.max_steps {
        push("maxSteps", source.span_of(max), Check::MaxSteps(max.value));
    }
    if let Some(outcome) = &expect.outcome {
        push(
            "outcome",
            source.span_of(outcome),
            Check::Outcome(outcome.value),
        );
    }
    if let Some(answer) = &expect.answer {
        for c in answer.contains.iter().flatten() {
            push(
                "answer.contains",
                source.span_of(c),
                Check::AnswerContains(c.value.clone()),
            );
        }
        for c in answer.not_contains.iter().flatten() {
            push(
                "answer.notContains",
                source.span_of(c),
                Check::AnswerLacks(c.value.clone()),
            );
        }
        if let Some(pattern) = &answer.matches {
            match regex::RegexBuilder::new(&pattern.value)
                .size_limit(1 << 20)
                .build()
            {
                Ok(re) => push(
                    "answer.matches",
                    source.span_of(pattern),
                    Check::AnswerMatches(re),
                ),
                Err(e) => problems.push(
                    Diagnostic::new(
                        DiagnosticKind::CaseBadPattern,
                        format!(
                            "`answer.matches` is not a valid regular expression: {}",
                            one_line(&e.to_string())
                        ),
                    )
                    .at(source.span_of(pattern))
                    .help(
                        "the syntax is Rust's `regex` crate's (no look-around, no \
                         backreferences); in YAML, single-quote the pattern so `\\` stays \
                         as written: 'line \\d+'",
                    ),
                ),
            }
        }
        if let Some(equals) = &answer.equals {
            push(
                "answer.equals",
                source.span_of(equals),
                Check::AnswerEquals(equals.value.clone()),
            );
        }
    }
    if let Some(output) = &expect.output {
        if let Some(pattern) = &output.pattern {
            push(
                "output.match",
                source.span_of(pattern),
                Check::OutputMatch(pattern.value.clone()),
            );
        }
        if let Some(schema) = &output.schema {
            match jsonschema::draft202012::new(&schema.value) {
                Ok(validator) => push(
                    "output.schema",
                    source.span_of(schema),
                    Check::OutputSchema(Arc::new(validator), schema.value.clone()),
                ),
                Err(e) => problems.push(
                    Diagnostic::new(
                        DiagnosticKind::CaseBadPattern,
                        format!(
                            "`output.schema` is not a valid JSON Schema: {}",
                            one_line(&e.to_string())
                        ),
                    )
                    .at(source.span_of(schema))
                    .help("write a JSON Schema (draft 2020-12) as YAML, e.g. `{type: object, required: [verdict]}`"),
                ),
            }
        }
    }
    out
}

/// An error of the `regex` or `jsonschema` crate in one line: the `error: ...` line of a
/// regex's caret diagram, or the whole text with its white space collapsed.
fn one_line(text: &str) -> String {
    match text.lines().find_map(|l| l.trim().strip_prefix("error: ")) {
        Some(reason) => reason.to_owned(),
        None => text.split_whitespace().collect::<Vec<_>>().join(" "),
    }
}

/// The checks that need the case's preset: it is on offer (`names`, with "did you
/// mean"), and every tool `expect` names is one it shows (`visible`, in wire order).
/// `facts` are the preset's visible tools and known variables (`vars` is checked against
/// them too); `None` when the preset is on offer but invalid (its own diagnostics say
/// why; nothing else is checked).
pub fn check_against_preset(
    case: &TestCase,
    names: &[&str],
    facts: Option<&PresetFacts>,
) -> Vec<Diagnostic> {
    let preset = case.preset();
    if !names.contains(&preset) {
        let help = help_did_you_mean(preset, names.iter().copied()).unwrap_or_else(|| {
            "the presets on offer are listed by `agent-presets list`".to_owned()
        });
        return vec![
            Diagnostic::new(
                DiagnosticKind::CaseUnknownPreset,
                format!(
                    "test case `{}` runs preset `{preset}`, which nobody offers",
                    case.id
                ),
            )
            .at(case.preset_span())
            .help(help),
        ];
    }
    let Some(facts) = facts else {
        return Vec::new();
    };
    let visible: Vec<&str> = facts.tools.iter().map(String::as_str).collect();
    let variables: Vec<&str> = facts.variables.iter().map(String::as_str).collect();
    let mut unknown_vars = Vec::new();
    for (name, _) in case.file.vars.iter().flat_map(|v| v.iter()) {
        if variables.contains(&name.value.as_str()) {
            continue;
        }
        let help = help_did_you_mean(&name.value, variables.iter().copied()).unwrap_or_else(|| {
            if variables.is_empty() {
                format!("`{preset}` has no variables a case can set")
            } else {
                format!("`{preset}` knows these variables: {}", variables.join(", "))
            }
        });
        unknown_vars.push(
            Diagnostic::new(
                DiagnosticKind::CaseUnknownVariable,
                format!(
                    "`vars` sets `{}`, a variable preset `{preset}` does not know",
                    name.value
                ),
            )
            .at(case.source.span_of(name))
            .help(help),
        );
    }
    let mut out = Vec::new();
    let mut seen: Vec<(&str, u32, u32)> = Vec::new();
    for (tool, span) in named_tools(case) {
        if visible.contains(&tool) || seen.contains(&(tool, span.line, span.column)) {
            continue;
        }
        seen.push((tool, span.line, span.column));
        let help = help_did_you_mean(tool, visible.iter().copied()).unwrap_or_else(|| {
            format!(
                "`{preset}` shows these tools: {}",
                if visible.is_empty() {
                    "none".to_owned()
                } else {
                    visible.join(", ")
                }
            )
        });
        out.push(
            Diagnostic::new(
                DiagnosticKind::CaseUnknownTool,
                format!("`expect` names tool `{tool}`, which preset `{preset}` does not show"),
            )
            .at(span)
            .help(help),
        );
    }
    out.append(&mut unknown_vars);
    out
}

/// What [`check_against_preset`] needs of a valid preset.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PresetFacts {
    /// The tools it shows the model, in wire order.
    pub tools: Vec<String>,
    /// The variables a value may be given for (declared and built-in, not derived).
    pub variables: Vec<String>,
}

impl PresetFacts {
    /// The facts of `preset`.
    pub fn of(preset: &crate::preset::validate::ValidPreset) -> PresetFacts {
        let assembler = preset.assembler();
        PresetFacts {
            tools: assembler
                .registry()
                .names()
                .map(|n| n.to_string())
                .collect(),
            variables: assembler
                .known_variables()
                .filter(|v| !crate::prompt::is_derived_variable(v))
                .map(str::to_owned)
                .collect(),
        }
    }
}

/// Every tool name `expect` writes, with where it is written.
fn named_tools(case: &TestCase) -> Vec<(&str, Span)> {
    let mut out = Vec::new();
    let Some(tools) = case.file.expect.as_ref().and_then(|e| e.tools.as_ref()) else {
        return out;
    };
    let source = &case.source;
    let lists = [tools.used.as_ref(), tools.not_used.as_ref()];
    for t in lists.into_iter().flatten().flatten() {
        out.push((t.value.as_str(), source.span_of(t)));
    }
    if let Some(s) = &tools.sequence {
        let s = &s.value;
        for t in [&s.exact, &s.in_order, &s.any_order]
            .into_iter()
            .flatten()
            .flatten()
        {
            out.push((t.value.as_str(), source.span_of(t)));
        }
    }
    for a in tools.args.iter().flatten() {
        out.push((a.value.tool.value.as_str(), source.span_of(&a.value.tool)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn case_in(dir: &Path, name: &str, text: &str) -> Result<TestCase, Vec<Diagnostic>> {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        load_case(dir, &path)
    }

    fn codes(list: &[Diagnostic]) -> Vec<(&'static str, u32, u32)> {
        list.iter()
            .map(|d| {
                let s = d.span.as_ref().unwrap();
                (d.code(), s.line, s.column)
            })
            .collect()
    }

    #[test]
    fn a_full_case_compiles_every_expectation_in_file_order() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("fixtures/repo")).unwrap();
        let case = case_in(
            dir.path(),
            "review.yaml",
            "preset: reviewer\nprompt: Review it.\nvars: {focus: security}\n\
             workspace: fixtures/repo\nexpect:\n  tools:\n    used: [read_file]\n\
             \x20   notUsed: [bash, write_file]\n    sequence: {inOrder: [read_file, grep]}\n\
             \x20   args: [{tool: read_file, match: {path: src/lib.rs}}]\n  maxSteps: 4\n\
             \x20 answer: {contains: [typo], matches: 'line \\d+'}\n",
        )
        .unwrap();
        let names: Vec<&str> = case.expectations.iter().map(|e| e.name).collect();
        assert_eq!(
            names,
            [
                "tools.used",
                "tools.notUsed",
                "tools.notUsed",
                "tools.sequence",
                "tools.args",
                "maxSteps",
                "answer.contains",
                "answer.matches"
            ]
        );
        assert_eq!(case.expectations[1].span.line, 8);
        assert_eq!(case.vars["focus"], "security");
        assert!(case.cassette.ends_with("review.jsonl"));
        assert_eq!(case.cassette_shown, "review.jsonl");
        assert!(case.workspace.unwrap().ends_with("fixtures/repo"));
    }

    #[test]
    fn unknown_keys_get_did_you_mean_at_their_line() {
        let dir = tempfile::tempdir().unwrap();
        let err = case_in(
            dir.path(),
            "c.yaml",
            "preset: x\nprompt: p\nexpect:\n  tools:\n    usd: [a]\n  maxStep: 3\n",
        )
        .unwrap_err();
        assert_eq!(codes(&err), [("P0003", 5, 5), ("P0003", 6, 3)]);
        assert_eq!(err[0].help.as_deref(), Some("did you mean `used`?"));
        assert_eq!(err[1].help.as_deref(), Some("did you mean `maxSteps`?"));
    }

    #[test]
    fn a_bad_regex_and_a_bad_schema_are_located() {
        let dir = tempfile::tempdir().unwrap();
        let err = case_in(
            dir.path(),
            "c.yaml",
            "preset: x\nprompt: p\nexpect:\n  answer:\n    matches: 'line (\\d+'\n\
             \x20 output:\n    schema: {type: 12}\n",
        )
        .unwrap_err();
        assert_eq!(codes(&err), [("P0622", 5, 14), ("P0622", 7, 13)]);
    }

    #[test]
    fn paths_stay_beside_the_case() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("tests");
        std::fs::create_dir_all(&sub).unwrap();
        for (value, why) in [
            ("../x.jsonl", "`..` leads outside"),
            ("/etc/passwd", "absolute"),
            ("a/../..", "`..` leads outside"),
            (".", "directory itself"),
        ] {
            let err = case_in(
                &sub,
                "c.yaml",
                &format!("preset: x\nprompt: p\ncassette: '{value}'\n"),
            )
            .unwrap_err();
            assert_eq!(codes(&err), [("P0623", 3, 11)], "{value}");
            assert!(err[0].message.contains(why), "{value}: {}", err[0].message);
        }
        std::os::unix::fs::symlink(dir.path(), sub.join("up")).unwrap();
        let err = case_in(&sub, "c.yaml", "preset: x\nprompt: p\nworkspace: up\n").unwrap_err();
        assert!(err[0].message.contains("symbolic link"), "{err:?}");
        let err =
            case_in(&sub, "c.yaml", "preset: x\nprompt: p\nworkspace: missing\n").unwrap_err();
        assert!(err[0].message.contains("names no directory"), "{err:?}");
        // A cassette in a directory that does not exist yet is fine (record writes it).
        let case = case_in(
            &sub,
            "c.yaml",
            "preset: x\nprompt: p\ncassette: rec/c.jsonl\n",
        )
        .unwrap();
        assert!(case.cassette.ends_with("tests/rec/c.jsonl"));
    }

    #[test]
    fn a_sequence_takes_exactly_one_order() {
        let dir = tempfile::tempdir().unwrap();
        for body in ["{}", "{exact: [a], anyOrder: [a]}"] {
            let err = case_in(
                dir.path(),
                "c.yaml",
                &format!("preset: x\nprompt: p\nexpect:\n  tools:\n    sequence: {body}\n"),
            )
            .unwrap_err();
            assert_eq!(codes(&err), [("P0010", 5, 15)], "{body}");
        }
    }

    #[test]
    fn tools_are_checked_against_the_preset() {
        let dir = tempfile::tempdir().unwrap();
        let case = case_in(
            dir.path(),
            "c.yaml",
            "preset: reviewer\nprompt: p\nexpect:\n  tools:\n    used: [read_fiel]\n\
             \x20   args: [{tool: bash, match: {}}]\nvars: {focsu: x, cwd: /w}\n",
        )
        .unwrap();
        let facts = PresetFacts {
            tools: vec!["read_file".into(), "grep".into()],
            variables: vec!["focus".into(), "cwd".into()],
        };
        let d = check_against_preset(&case, &["reviewer"], Some(&facts));
        assert_eq!(codes(&d[..2]), [("P0621", 5, 12), ("P0621", 6, 19)]);
        assert_eq!(d[0].help.as_deref(), Some("did you mean `read_file`?"));
        assert!(d[1].help.as_deref().unwrap().contains("read_file, grep"));
        assert_eq!(codes(&d[2..]), [("P0625", 7, 8)]);
        assert_eq!(d[2].help.as_deref(), Some("did you mean `focus`?"));
        let d = check_against_preset(&case, &["reviewr", "other"], None);
        assert_eq!(codes(&d), [("P0620", 1, 9)]);
        assert_eq!(d[0].help.as_deref(), Some("did you mean `reviewr`?"));
    }

    #[test]
    fn the_schema_is_valid_and_refuses_unknown_keys() {
        let schema = case_json_schema();
        let validator = jsonschema::validator_for(&schema).unwrap();
        assert!(validator.is_valid(&serde_json::json!({"preset": "a", "prompt": "b"})));
        assert!(!validator.is_valid(&serde_json::json!({"preset": "a", "prompt": "b", "x": 1})));
        assert!(!validator.is_valid(&serde_json::json!({"preset": "a"})));
    }
}
