//! Diagnostics: what every layer of the crate reports instead of a bare `String`.
//!
//! A [`Diagnostic`] carries a stable [`DiagnosticKind`] (with a stable code such as
//! `P0103` and a kebab-case name such as `unknown-tool`), a [`Severity`], a message, an
//! optional [`Span`] pointing into a preset file, and optional help text ("did you mean
//! `read_file`?"). The library never prints them; the CLI renders them.

use std::fmt;
use std::sync::Arc;

/// How bad a diagnostic is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// The preset is refused.
    Error,
    /// The preset is accepted, but something is probably wrong (e.g. a volatile variable
    /// in the cacheable prefix). `validate --deny-warnings` refuses these too.
    Warning,
}

impl Severity {
    /// `"error"` or `"warning"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

macro_rules! diagnostic_kinds {
    ($( $(#[$doc:meta])* $variant:ident = ($code:literal, $name:literal, $severity:ident), )*) => {
        /// The stable kind of a diagnostic. Codes and names never change meaning once
        /// released; new kinds get new codes.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[non_exhaustive]
        pub enum DiagnosticKind {
            $( $(#[$doc])* $variant, )*
        }

        impl DiagnosticKind {
            /// Every kind, in code order.
            pub const ALL: &'static [DiagnosticKind] = &[$(DiagnosticKind::$variant,)*];

            /// The stable code, e.g. `"P0103"`.
            pub fn code(self) -> &'static str {
                match self { $(DiagnosticKind::$variant => $code,)* }
            }

            /// The stable kebab-case name, e.g. `"unknown-tool"`.
            pub fn name(self) -> &'static str {
                match self { $(DiagnosticKind::$variant => $name,)* }
            }

            /// The severity a diagnostic of this kind has.
            pub fn severity(self) -> Severity {
                match self { $(DiagnosticKind::$variant => Severity::$severity,)* }
            }
        }
    };
}

diagnostic_kinds! {
    /// The file is not well-formed YAML.
    YamlSyntax = ("P0001", "yaml-syntax", Error),
    /// A mapping repeats a key (reported at the second occurrence).
    DuplicateKey = ("P0002", "duplicate-key", Error),
    /// A key the format does not define.
    UnknownKey = ("P0003", "unknown-key", Error),
    /// A value of the wrong type (e.g. a list where a string belongs).
    WrongType = ("P0004", "wrong-type", Error),
    /// A required key is absent.
    MissingField = ("P0005", "missing-field", Error),
    /// `version` is not a format version this build understands.
    UnsupportedVersion = ("P0006", "unsupported-version", Error),
    /// The file is not UTF-8 or holds a NUL byte.
    Encoding = ("P0007", "encoding", Error),
    /// A size, depth, alias or time budget was exceeded.
    LimitExceeded = ("P0008", "limit-exceeded", Error),
    /// A file or directory could not be read, or the command could not run as asked (an
    /// unknown preset name, a bad argument): exit code 2.
    Io = ("P0009", "io", Error),
    /// A value is out of its allowed set (e.g. `openai-compatible` without `baseUrl`).
    InvalidValue = ("P0010", "invalid-value", Error),
    /// A preset, section, context, variable or tool name breaks its pattern.
    InvalidName = ("P0011", "invalid-name", Error),
    /// A preset's `name` differs from its file stem.
    NameMismatch = ("P0012", "name-mismatch", Error),
    /// A custom preset takes the name of a built-in one.
    BuiltinShadow = ("P0013", "builtin-shadow", Error),
    /// Two files of one source (one directory) offer the same name.
    DuplicatePreset = ("P0014", "duplicate-preset", Error),
    /// `extends` names a preset nobody offers.
    MissingParent = ("P0020", "missing-parent", Error),
    /// `extends` leads back to a preset already in the chain.
    ExtendsCycle = ("P0021", "extends-cycle", Error),
    /// Two sections or contexts with one name in one layer.
    DuplicateSection = ("P0030", "duplicate-section", Error),
    /// An `order` that is NaN or infinite.
    NonFiniteOrder = ("P0031", "non-finite-order", Error),
    /// Two or more effective `complete: true` sections.
    MultipleComplete = ("P0032", "multiple-complete", Error),
    /// `remove` names neither an inherited section nor `tool:<known tool>`.
    RemoveUnknown = ("P0033", "remove-unknown", Error),
    /// Two or more `complete` sections whose `when` conditions can hold together.
    CompleteMayConflict = ("P0034", "complete-may-conflict", Warning),
    /// A section replacing an inherited one drops variables the original used.
    OverrideDropsPlaceholder = ("P0035", "override-drops-placeholder", Warning),
    /// A section an unconditional `complete` section of its own or an inherited preset
    /// keeps out of every request.
    SectionNeverSent = ("P0036", "section-never-sent", Warning),
    /// A section or context reuses an inherited name without `override: true`.
    ImplicitOverride = ("P0038", "implicit-override", Warning),
    /// `override: true` on a section or context that replaces nothing.
    OverrideNothing = ("P0039", "override-nothing", Warning),
    /// A template or `when` expression does not compile.
    TemplateSyntax = ("P0040", "template-syntax", Error),
    /// A template references a variable nobody declares.
    UnknownVariable = ("P0041", "unknown-variable", Error),
    /// A known variable has no value when a template needs it.
    MissingValue = ("P0042", "missing-value", Error),
    /// A template failed while rendering (bad filter argument, fuel exhausted, ...).
    TemplateRender = ("P0043", "template-render", Error),
    /// A volatile variable (e.g. `date`) in the cacheable system prompt.
    VolatileInPrefix = ("P0044", "volatile-in-prefix", Warning),
    /// A template applies a filter minijinja does not have.
    UnknownFilter = ("P0045", "unknown-filter", Error),
    /// A template performs a test minijinja does not have.
    UnknownTest = ("P0046", "unknown-test", Error),
    /// A template calls a function that is neither built in nor a macro it defines (or
    /// calls `debug()`).
    UnknownFunction = ("P0047", "unknown-function", Error),
    /// A `when` condition compares a variable with a value that is not one of its `enum`
    /// choices, or `tools` with a name no tool has: never true (or always true).
    ImpossibleCondition = ("P0048", "impossible-condition", Warning),
    /// A restriction with nothing in it (`tools: {}`).
    EmptyRestriction = ("P0101", "empty-restriction", Error),
    /// A glob that matches no known tool.
    GlobNoMatch = ("P0102", "glob-no-match", Error),
    /// A tool name no registry knows.
    UnknownTool = ("P0103", "unknown-tool", Error),
    /// A bad explicit tool order (`<rest>` missing or repeated, duplicates).
    BadToolOrder = ("P0104", "bad-tool-order", Error),
    /// Two tools registered under one name.
    DuplicateTool = ("P0105", "duplicate-tool", Error),
    /// An allow list whose entries all name tools that end up hidden.
    NoTools = ("P0106", "no-tools", Warning),
    /// A section's or context's rendered text names a known tool that is not visible.
    MentionsHiddenTool = ("P0107", "mentions-hidden-tool", Warning),
    /// A child's `allow` lists a tool a preset it extends removes with `deny` or leaves out
    /// of its `allow`.
    AllowDeniedByParent = ("P0108", "allow-denied-by-parent", Warning),
    /// A `texts:` entry or a locale pack entry whose id no text has.
    UnknownText = ("P0120", "unknown-text", Error),
    /// A replacement text that drops a placeholder or a protected token of the original.
    TextDropsToken = ("P0121", "text-drops-token", Error),
    /// A `locale` (or `--locale`) with no pack for it anywhere.
    MissingLocale = ("P0122", "missing-locale", Error),
    /// A project or user locale pack whose locale no preset names.
    UnusedLocalePack = ("P0123", "unused-locale-pack", Warning),
    /// A locale pack without a text for an id the preset uses: English is used.
    UntranslatedText = ("P0124", "untranslated-text", Warning),
    /// A project's (or `--preset-dir`'s) locale pack left out for a chain of only the
    /// user's own files.
    LocalePackNotApplied = ("P0410", "locale-pack-not-applied", Warning),
    /// A command tool or an MCP server a preset declares whose tools that preset hides.
    DeclaredToolHidden = ("P0109", "declared-tool-hidden", Warning),
    /// A command tool or MCP server that replaces an inherited one of its name without
    /// `override: true`.
    OwnToolReplaced = ("P0110", "own-tool-replaced", Warning),
    /// A per-tool key of an MCP server (`tools: {NAME: ...}`) that names none of the
    /// server's locked tools.
    UnknownServerTool = ("P0111", "unknown-server-tool", Warning),
    /// A value that looks like an API key.
    LiteralSecret = ("P0201", "literal-secret", Error),
    /// A plain `http://` `baseUrl` for a host other than loopback, without `allowInsecure`.
    InsecureEndpoint = ("P0202", "insecure-endpoint", Error),
    /// `allowInsecure: true` lets a plain `http://` `baseUrl` to another host through.
    InsecureAllowed = ("P0203", "insecure-allowed", Warning),
    /// The system prompt or the tools take more tokens than the preset's `budget` allows.
    BudgetExceeded = ("P0301", "budget-exceeded", Error),
    /// A preset's cacheable prefix differs from `presets.lock` (`validate --locked`).
    PrefixDrift = ("P0302", "prefix-drift", Error),
    /// A tool name the preset's provider refuses (pattern or length).
    ToolNameRejected = ("P0401", "tool-name-rejected", Error),
    /// A tool's parameter schema whose root is not one plain object schema.
    ToolSchemaRoot = ("P0402", "tool-schema-root", Error),
    /// A tool's parameter schema that is not valid JSON Schema (draft 2020-12).
    InvalidToolSchema = ("P0403", "invalid-tool-schema", Error),
    /// An object in a strict-mode tool schema that allows other properties.
    StrictOpenObject = ("P0404", "strict-open-object", Error),
    /// A property of a strict-mode tool schema that is not listed in `required`.
    StrictOptionalProperty = ("P0405", "strict-optional-property", Error),
    /// A keyword some provider's strict mode does not support.
    StrictUnsupportedKeyword = ("P0406", "strict-unsupported-keyword", Error),
    /// A declared MCP server whose tools the lock does not pin (`lock --connect`).
    McpNotLocked = ("P0501", "mcp-not-locked", Error),
    /// A tool name or glob `mcp__<server>__…` naming a server the preset does not declare.
    UnknownMcpServer = ("P0502", "unknown-mcp-server", Error),
    /// An MCP server that gives both `command` and `url`, neither, or a `url` it cannot use.
    ServerTransport = ("P0503", "server-transport", Error),
    /// A command (of an MCP server or a command tool) whose program is not on `PATH` here.
    ProgramNotFound = ("P0504", "program-not-found", Warning),
    /// A tool an MCP server lists now differs from what `presets.lock` pins (added,
    /// removed, changed): `validate --connect`.
    ToolDrift = ("P0505", "tool-drift", Error),
    /// `validate --connect` or `lock --connect` could not start or list an MCP server.
    ServerUnavailable = ("P0506", "server-unavailable", Error),
    /// An MCP server name that could make its tools' names alias another server's
    /// (`__` in it, a trailing `_`, longer than 48 characters).
    AmbiguousServerName = ("P0520", "ambiguous-server-name", Error),
    /// A replayed step's request differs from the recorded one (`agent-presets test`).
    BehaviourDrift = ("P0601", "behaviour-drift", Error),
    /// A recorded tool call that today's preset would refuse: the tool is hidden or
    /// unknown, or its arguments no longer pass its schema.
    RecordedCallHidden = ("P0602", "recorded-call-hidden", Error),
    /// A cassette that cannot be read: truncated, damaged, not a cassette.
    CassetteCorrupt = ("P0603", "cassette-corrupt", Error),
    /// A cassette of a format version this build does not read.
    CassetteVersion = ("P0604", "cassette-version", Error),
    /// A server's `headers.fromEnv` or a server's or command tool's `passEnv` naming a
    /// model provider's key variable (`DEEPSEEK_API_KEY`, …, or the preset's `apiKeyEnv`).
    ProviderKeyExposed = ("P0507", "provider-key-exposed", Error),
    /// An MCP server whose command, URL or program differs from what `presets.lock`
    /// recorded when it was locked.
    ServerChanged = ("P0508", "server-changed", Error),
    /// A test case runs a preset nobody offers (with "did you mean").
    CaseUnknownPreset = ("P0620", "case-unknown-preset", Error),
    /// A test case's `expect` names a tool its preset does not show (with "did you mean").
    CaseUnknownTool = ("P0621", "case-unknown-tool", Error),
    /// A test case's `answer.matches` regex or `output.schema` does not compile.
    CaseBadPattern = ("P0622", "case-bad-pattern", Error),
    /// A test case's `workspace` or `cassette` is absolute, leads outside the case's
    /// directory, or names no directory.
    CasePath = ("P0623", "case-path", Error),
    /// A test case's cassette does not exist: it was never recorded.
    MissingCassette = ("P0624", "missing-cassette", Error),
    /// A test case's `vars` sets a variable its preset does not know (with "did you mean").
    CaseUnknownVariable = ("P0625", "case-unknown-variable", Error),
    /// An assertion of a test case's `expect` failed (its name, expected and found).
    ExpectationFailed = ("P0630", "expectation-failed", Error),
    /// `test --live --repeat N`: a case passed in fewer runs than `--min-pass-rate` asks.
    PassRateBelow = ("P0631", "pass-rate-below", Error),
    /// A model parameter (`temperature`, `topP`, `stop`, `thinkingBudget`, …) outside the
    /// range the provider accepts.
    ModelParameterRange = ("P0700", "model-parameter-range", Error),
    /// A model parameter the provider (or the model family, with the other parameters
    /// set) refuses, such as a seed for Anthropic or a temperature with extended thinking.
    ModelParameterRefused = ("P0701", "model-parameter-refused", Error),
    /// A permission rule that cannot be read (`bash(ls`, `read_file(src/**)`).
    PermissionSyntax = ("P0740", "permission-syntax", Error),
    /// A permission rule on a tool no registry knows (with "did you mean").
    PermissionUnknownTool = ("P0741", "permission-unknown-tool", Error),
    /// A permission rule on a tool the preset hides: it never applies.
    PermissionHiddenTool = ("P0742", "permission-hidden-tool", Warning),
    /// A permission rule an earlier or broader rule always decides first.
    PermissionShadowed = ("P0743", "permission-shadowed", Warning),
    /// A permission rule whose pattern cannot match any call.
    PermissionNeverMatches = ("P0744", "permission-never-matches", Error),
    /// A child's allow or ask rule that a parent's deny always decides first: loosening
    /// an inherited deny needs `override: true`.
    PermissionLoosensDeny = ("P0745", "permission-loosens-deny", Error),
    /// A hook with an empty `run` (or an empty program name): nothing to run.
    HookEmptyRun = ("P0750", "hook-empty-run", Error),
    /// A hook's `match` names a tool no registry knows (with "did you mean").
    HookUnknownTool = ("P0751", "hook-unknown-tool", Error),
    /// A hook's `match` names only tools the preset hides: it never runs for them.
    HookHiddenTool = ("P0752", "hook-hidden-tool", Warning),
    /// A hook timeout that is not a duration of at most ten minutes.
    HookBadTimeout = ("P0753", "hook-bad-timeout", Error),
    /// A `match` on a `stop` or `userPromptSubmit` hook, which are about no tool call.
    HookMatchNotToolEvent = ("P0754", "hook-match-not-tool-event", Error),
    /// A hook's `match` that cannot be read (an empty alternative, a bad glob).
    HookBadMatch = ("P0755", "hook-bad-match", Error),
    /// An `output` schema that cannot be used: not an object schema, not valid JSON
    /// Schema, a `$ref` that leaves the document, too large or too deep, a `schemaFile`
    /// that is not JSON.
    InvalidOutputSchema = ("P0760", "invalid-output-schema", Error),
    /// An `output` schema a provider's structured-output mode receives in a looser
    /// form (keywords it does not support dropped, optional properties made nullable):
    /// what was dropped is checked locally only.
    OutputSchemaProjected = ("P0761", "output-schema-projected", Warning),
    /// An `output` schema the chosen provider's structured-output mode refuses (a
    /// composition at the root, more nesting or properties than it takes).
    OutputSchemaRefused = ("P0762", "output-schema-refused", Error),
    /// A success check with an empty `run` (or an empty program name): nothing to run.
    CheckEmptyRun = ("P0770", "check-empty-run", Error),
    /// A success check's timeout that is not a duration of at most an hour.
    CheckBadTimeout = ("P0771", "check-bad-timeout", Error),
    /// `agent-presets import`: a field of the other tool's file that the preset does not
    /// carry (located in that file).
    ImportNotCarried = ("P0780", "import-not-carried", Warning),
}

impl fmt::Display for DiagnosticKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A position in a source file: 1-based line and column (columns count characters).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Span {
    /// The file as shown to users (`presets/standard.yaml`, `<builtin>/minimal.yaml`).
    pub file: Arc<str>,
    /// 1-based line.
    pub line: u32,
    /// 1-based column, in characters.
    pub column: u32,
    /// How many characters the caret should cover (at least 1).
    pub len: u32,
}

impl Span {
    /// A span of one character.
    pub fn new(file: Arc<str>, line: u32, column: u32) -> Self {
        Span {
            file,
            line,
            column,
            len: 1,
        }
    }

    /// The same position, covering `len` characters.
    pub fn with_len(mut self, len: u32) -> Self {
        self.len = len.max(1);
        self
    }
}

impl fmt::Display for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.column)
    }
}

/// One finding: an error or a warning, with where and what to do about it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Diagnostic {
    /// The stable kind (and through it, the code and severity).
    pub kind: DiagnosticKind,
    /// Severity; normally `kind.severity()`.
    pub severity: Severity,
    /// What is wrong, in one sentence.
    pub message: String,
    /// Where, when known.
    pub span: Option<Span>,
    /// What to do about it, when we can say.
    pub help: Option<String>,
    /// The exact edit the help describes, when it is one ("did you mean `x`?": write `x`
    /// where the typo is), for editors to offer as a quick fix. Never rendered: every
    /// output format shows the help text only.
    pub fix: Option<Box<Fix>>,
}

/// A machine-readable replacement: the text `replace` written at `span` (the span's line,
/// from its column on; quoted values have the quote before it) is to become `with`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Fix {
    /// Where the text to replace starts (its `len` covers it, in characters).
    pub span: Span,
    /// The text there now.
    pub replace: String,
    /// What to write instead.
    pub with: String,
}

impl Diagnostic {
    /// A diagnostic of `kind` with its default severity.
    pub fn new(kind: DiagnosticKind, message: impl Into<String>) -> Self {
        Diagnostic {
            kind,
            severity: kind.severity(),
            message: message.into(),
            span: None,
            help: None,
            fix: None,
        }
    }

    /// Attach a location.
    pub fn at(mut self, span: impl Into<Option<Span>>) -> Self {
        self.span = span.into();
        self
    }

    /// Attach help text.
    pub fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    /// Attach the edit a "did you mean" help describes: `replace`, written at this
    /// diagnostic's span, becomes `with`. Without a span there is nothing to point at and
    /// no fix is attached.
    pub fn fix(mut self, replace: &str, with: &str) -> Self {
        if let Some(span) = &self.span {
            self.fix = Some(Box::new(Fix {
                span: span.clone().with_len(replace.chars().count() as u32),
                replace: replace.to_owned(),
                with: with.to_owned(),
            }));
        }
        self
    }

    /// Attach an edit somewhere else than the diagnostic's span: `replace`, written at
    /// `span`, becomes `with` (a line rewritten as the help says: "write it as …").
    pub fn fix_at(mut self, span: Span, replace: &str, with: &str) -> Self {
        self.fix = Some(Box::new(Fix {
            span: span.with_len(replace.chars().count() as u32),
            replace: replace.to_owned(),
            with: with.to_owned(),
        }));
        self
    }

    /// [`Diagnostic::fix`] when there is a suggestion.
    pub fn maybe_fix(self, replace: &str, with: Option<&str>) -> Self {
        match with {
            Some(with) => self.fix(replace, with),
            None => self,
        }
    }

    /// Attach help text when there is some.
    pub fn maybe_help(mut self, help: Option<String>) -> Self {
        if help.is_some() {
            self.help = help;
        }
        self
    }

    /// The stable code, e.g. `P0103`.
    pub fn code(&self) -> &'static str {
        self.kind.code()
    }

    /// `true` for errors.
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}[{} {}]: {}",
            self.severity,
            self.kind.code(),
            self.kind.name(),
            self.message
        )?;
        if let Some(span) = &self.span {
            write!(f, " at {span}")?;
        }
        if let Some(help) = &self.help {
            write!(f, " (help: {help})")?;
        }
        Ok(())
    }
}

impl std::error::Error for Diagnostic {}

/// A non-empty list of diagnostics, at least one of them an error. Returned by every
/// fallible build step so callers see every problem at once, not the first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostics(Vec<Diagnostic>);

impl Diagnostics {
    /// Wrap a list (callers guarantee it holds at least one error).
    pub fn from_vec(list: Vec<Diagnostic>) -> Self {
        Diagnostics(list)
    }

    /// The diagnostics, in the order found.
    pub fn as_slice(&self) -> &[Diagnostic] {
        &self.0
    }

    /// Take the list.
    pub fn into_vec(self) -> Vec<Diagnostic> {
        self.0
    }

    /// Does any diagnostic have this kind?
    pub fn has(&self, kind: DiagnosticKind) -> bool {
        self.0.iter().any(|d| d.kind == kind)
    }

    /// Iterate.
    pub fn iter(&self) -> std::slice::Iter<'_, Diagnostic> {
        self.0.iter()
    }
}

impl From<Diagnostic> for Diagnostics {
    fn from(d: Diagnostic) -> Self {
        Diagnostics(vec![d])
    }
}

impl IntoIterator for Diagnostics {
    type Item = Diagnostic;
    type IntoIter = std::vec::IntoIter<Diagnostic>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{d}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Diagnostics {}

/// Collects diagnostics during a build; turns into `Err` if any is an error.
#[derive(Debug, Default)]
pub(crate) struct DiagnosticSink {
    list: Vec<Diagnostic>,
}

impl DiagnosticSink {
    pub(crate) fn push(&mut self, d: Diagnostic) {
        self.list.push(d);
    }

    pub(crate) fn extend(&mut self, ds: impl IntoIterator<Item = Diagnostic>) {
        self.list.extend(ds);
    }

    pub(crate) fn has_errors(&self) -> bool {
        self.list.iter().any(Diagnostic::is_error)
    }

    /// Everything pushed, in order.
    pub(crate) fn into_vec(self) -> Vec<Diagnostic> {
        self.list
    }

    /// `Ok(warnings)` when there is no error, else every diagnostic.
    pub(crate) fn finish(self) -> Result<Vec<Diagnostic>, Diagnostics> {
        if self.has_errors() {
            Err(Diagnostics(self.list))
        } else {
            Ok(self.list)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_and_names_are_unique() {
        let mut codes: Vec<_> = DiagnosticKind::ALL.iter().map(|k| k.code()).collect();
        let mut names: Vec<_> = DiagnosticKind::ALL.iter().map(|k| k.name()).collect();
        codes.sort();
        names.sort();
        let n = codes.len();
        codes.dedup();
        names.dedup();
        assert_eq!(codes.len(), n);
        assert_eq!(names.len(), n);
    }

    #[test]
    fn warnings_are_the_advisory_kinds() {
        use DiagnosticKind as K;
        let warnings = [
            K::VolatileInPrefix,
            K::CompleteMayConflict,
            K::OverrideDropsPlaceholder,
            K::NoTools,
            K::MentionsHiddenTool,
            K::ImpossibleCondition,
            K::AllowDeniedByParent,
            K::DeclaredToolHidden,
            K::OwnToolReplaced,
            K::UnknownServerTool,
            K::SectionNeverSent,
            K::InsecureAllowed,
            K::ProgramNotFound,
            K::ImplicitOverride,
            K::OverrideNothing,
            K::UnusedLocalePack,
            K::UntranslatedText,
            K::LocalePackNotApplied,
            K::PermissionHiddenTool,
            K::PermissionShadowed,
            K::HookHiddenTool,
            K::OutputSchemaProjected,
            K::ImportNotCarried,
        ];
        for k in DiagnosticKind::ALL {
            let expected = if warnings.contains(k) {
                Severity::Warning
            } else {
                Severity::Error
            };
            assert_eq!(k.severity(), expected, "{k}");
        }
    }
}
