//! The diagnostic reference: one page per code, saying what the code means, showing an
//! example that triggers it, and how to fix it.
//!
//! The pages are the Markdown files `docs/diagnostics/<CODE>.md`, compiled into the crate.
//! They are the one source of `agent-presets explain CODE`, of the table of diagnostics in
//! `docs/diagnostics.md` (a test keeps the two equal) and of the rule descriptions in SARIF output.
//! Each page is also a module here (`codes::P0103`), so the crate documentation shows it
//! at a stable address ([`CodePage::url`]).
//!
//! A page reads:
//!
//! ````markdown
//! # P0103 unknown-tool
//!
//! A tool name no registry knows (with "did you mean").
//!
//! ## What it means
//! …
//! ## Example
//! ```yaml
//! # file: .agent-presets/reviewer.yaml
//! …
//! ```
//! ## Fix
//! …
//! ````
//!
//! Adding a diagnostic kind means adding its page file and one line to the list below.

use crate::diagnostic::DiagnosticKind;

/// The page of one diagnostic code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CodePage {
    kind: DiagnosticKind,
    markdown: &'static str,
}

macro_rules! code_pages {
    ($( $code:ident => $kind:ident, )*) => {
        $(
            #[doc = include_str!(concat!("../docs/diagnostics/", stringify!($code), ".md"))]
            #[allow(non_snake_case)]
            pub mod $code {}
        )*

        /// Every page, in code order.
        const PAGES: &[CodePage] = &[$(
            CodePage {
                kind: DiagnosticKind::$kind,
                markdown: include_str!(concat!("../docs/diagnostics/", stringify!($code), ".md")),
            },
        )*];
    };
}

code_pages! {
    P0001 => YamlSyntax,
    P0002 => DuplicateKey,
    P0003 => UnknownKey,
    P0004 => WrongType,
    P0005 => MissingField,
    P0006 => UnsupportedVersion,
    P0007 => Encoding,
    P0008 => LimitExceeded,
    P0009 => Io,
    P0010 => InvalidValue,
    P0011 => InvalidName,
    P0012 => NameMismatch,
    P0013 => BuiltinShadow,
    P0014 => DuplicatePreset,
    P0020 => MissingParent,
    P0021 => ExtendsCycle,
    P0030 => DuplicateSection,
    P0031 => NonFiniteOrder,
    P0032 => MultipleComplete,
    P0033 => RemoveUnknown,
    P0034 => CompleteMayConflict,
    P0035 => OverrideDropsPlaceholder,
    P0036 => SectionNeverSent,
    P0038 => ImplicitOverride,
    P0039 => OverrideNothing,
    P0040 => TemplateSyntax,
    P0041 => UnknownVariable,
    P0042 => MissingValue,
    P0043 => TemplateRender,
    P0044 => VolatileInPrefix,
    P0045 => UnknownFilter,
    P0046 => UnknownTest,
    P0047 => UnknownFunction,
    P0048 => ImpossibleCondition,
    P0101 => EmptyRestriction,
    P0102 => GlobNoMatch,
    P0103 => UnknownTool,
    P0104 => BadToolOrder,
    P0105 => DuplicateTool,
    P0106 => NoTools,
    P0107 => MentionsHiddenTool,
    P0108 => AllowDeniedByParent,
    P0120 => UnknownText,
    P0121 => TextDropsToken,
    P0122 => MissingLocale,
    P0123 => UnusedLocalePack,
    P0124 => UntranslatedText,
    P0410 => LocalePackNotApplied,
    P0109 => DeclaredToolHidden,
    P0110 => OwnToolReplaced,
    P0111 => UnknownServerTool,
    P0201 => LiteralSecret,
    P0202 => InsecureEndpoint,
    P0203 => InsecureAllowed,
    P0301 => BudgetExceeded,
    P0302 => PrefixDrift,
    P0401 => ToolNameRejected,
    P0402 => ToolSchemaRoot,
    P0403 => InvalidToolSchema,
    P0404 => StrictOpenObject,
    P0405 => StrictOptionalProperty,
    P0406 => StrictUnsupportedKeyword,
    P0501 => McpNotLocked,
    P0502 => UnknownMcpServer,
    P0503 => ServerTransport,
    P0504 => ProgramNotFound,
    P0505 => ToolDrift,
    P0506 => ServerUnavailable,
    P0520 => AmbiguousServerName,
    P0601 => BehaviourDrift,
    P0602 => RecordedCallHidden,
    P0603 => CassetteCorrupt,
    P0604 => CassetteVersion,
    P0507 => ProviderKeyExposed,
    P0508 => ServerChanged,
    P0620 => CaseUnknownPreset,
    P0621 => CaseUnknownTool,
    P0622 => CaseBadPattern,
    P0623 => CasePath,
    P0624 => MissingCassette,
    P0625 => CaseUnknownVariable,
    P0630 => ExpectationFailed,
    P0631 => PassRateBelow,
    P0700 => ModelParameterRange,
    P0701 => ModelParameterRefused,
    P0740 => PermissionSyntax,
    P0741 => PermissionUnknownTool,
    P0742 => PermissionHiddenTool,
    P0743 => PermissionShadowed,
    P0744 => PermissionNeverMatches,
    P0745 => PermissionLoosensDeny,
    P0750 => HookEmptyRun,
    P0751 => HookUnknownTool,
    P0752 => HookHiddenTool,
    P0753 => HookBadTimeout,
    P0754 => HookMatchNotToolEvent,
    P0755 => HookBadMatch,
    P0760 => InvalidOutputSchema,
    P0761 => OutputSchemaProjected,
    P0762 => OutputSchemaRefused,
    P0770 => CheckEmptyRun,
    P0771 => CheckBadTimeout,
    P0780 => ImportNotCarried,
}

/// The headings a page has, in this order.
pub const PAGE_SECTIONS: [&str; 3] = ["What it means", "Example", "Fix"];

impl CodePage {
    /// Every page, in code order.
    pub fn all() -> &'static [CodePage] {
        PAGES
    }

    /// The page of `kind` (every kind has one; a test checks it).
    pub fn of(kind: DiagnosticKind) -> Option<&'static CodePage> {
        PAGES.iter().find(|p| p.kind == kind)
    }

    /// The page a user asked for: a code (`P0103`, `p0103`) or a kind name
    /// (`unknown-tool`, any case).
    pub fn lookup(query: &str) -> Option<&'static CodePage> {
        let query = query.trim();
        PAGES.iter().find(|p| {
            p.kind.code().eq_ignore_ascii_case(query) || p.kind.name().eq_ignore_ascii_case(query)
        })
    }

    /// The diagnostic kind.
    pub fn kind(&self) -> DiagnosticKind {
        self.kind
    }

    /// The whole page, Markdown.
    pub fn markdown(&self) -> &'static str {
        self.markdown
    }

    /// The first line, `# P0103 unknown-tool`, without its `# `.
    pub fn title(&self) -> &'static str {
        let first = self.markdown.lines().next().unwrap_or_default();
        first.strip_prefix("# ").unwrap_or(first).trim()
    }

    /// What the code means, in one sentence (the paragraph under the title).
    pub fn summary(&self) -> &'static str {
        let body = self.intro();
        let end = body.find("\n\n").unwrap_or(body.len());
        body[..end].trim()
    }

    /// The section under `## What it means`.
    pub fn meaning(&self) -> &'static str {
        self.section("What it means").unwrap_or_default()
    }

    /// The section under `## Example`: a preset (or command) that triggers the code.
    pub fn example(&self) -> &'static str {
        self.section("Example").unwrap_or_default()
    }

    /// The section under `## Fix`.
    pub fn fix(&self) -> &'static str {
        self.section("Fix").unwrap_or_default()
    }

    /// The text of the section headed `## heading`, trimmed; `None` when the page has no
    /// such section.
    pub fn section(&self, heading: &str) -> Option<&'static str> {
        let marker = format!("\n## {heading}\n");
        let start = self.markdown.find(&marker)? + marker.len();
        let rest = &self.markdown[start..];
        let end = next_heading(rest).unwrap_or(rest.len());
        Some(rest[..end].trim())
    }

    /// The page in the crate documentation on docs.rs, for this version of the crate.
    pub fn url(&self) -> String {
        format!(
            "https://docs.rs/{}/{}/{}/codes/{}/index.html",
            env!("CARGO_PKG_NAME"),
            env!("CARGO_PKG_VERSION"),
            env!("CARGO_PKG_NAME").replace('-', "_"),
            self.kind.code()
        )
    }

    /// The text between the title and the first `## ` heading.
    fn intro(&self) -> &'static str {
        let after_title = self
            .markdown
            .find('\n')
            .map_or("", |i| &self.markdown[i + 1..]);
        let end = next_heading(after_title).unwrap_or(after_title.len());
        after_title[..end].trim()
    }
}

/// Where the next `## ` heading starts in `text` (outside fenced code blocks, where a
/// YAML comment could start with `## `).
fn next_heading(text: &str) -> Option<usize> {
    let mut offset = 0;
    let mut fenced = false;
    for line in text.split_inclusive('\n') {
        if line.starts_with("```") {
            fenced = !fenced;
        } else if !fenced && line.starts_with("## ") {
            return Some(offset);
        }
        offset += line.len();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_exactly_one_page_in_code_order() {
        let kinds: Vec<DiagnosticKind> = PAGES.iter().map(|p| p.kind).collect();
        assert_eq!(
            kinds,
            DiagnosticKind::ALL,
            "docs/diagnostics/<CODE>.md and the list in src/codes.rs must cover every \
             DiagnosticKind, once, in code order"
        );
    }

    #[test]
    fn every_page_has_its_title_summary_and_sections() {
        for page in CodePage::all() {
            let kind = page.kind();
            assert_eq!(
                page.title(),
                format!("{} {}", kind.code(), kind.name()),
                "the first line of {}.md",
                kind.code()
            );
            let summary = page.summary();
            assert!(
                !summary.is_empty() && !summary.contains('\n') && summary.ends_with('.'),
                "{}: the summary is one line ending in a full stop: {summary:?}",
                kind.code()
            );
            let headings: Vec<&str> = page
                .markdown()
                .lines()
                .filter_map(|l| l.strip_prefix("## "))
                .collect();
            assert_eq!(headings, PAGE_SECTIONS, "{}", kind.code());
            for heading in PAGE_SECTIONS {
                assert!(
                    !page.section(heading).unwrap_or_default().is_empty(),
                    "{}: `## {heading}` is empty",
                    kind.code()
                );
            }
            assert!(page.example().contains("```"), "{}", kind.code());
        }
    }

    #[test]
    fn lookup_by_code_or_name_in_any_case() {
        let by_code = CodePage::lookup("P0103").unwrap();
        assert_eq!(by_code.kind(), DiagnosticKind::UnknownTool);
        assert_eq!(CodePage::lookup("p0103"), Some(by_code));
        assert_eq!(CodePage::lookup(" unknown-tool "), Some(by_code));
        assert_eq!(CodePage::lookup("Unknown-Tool"), Some(by_code));
        assert_eq!(CodePage::lookup("P9999"), None);
        assert_eq!(CodePage::lookup(""), None);
    }

    #[test]
    fn sections_ignore_headings_inside_code_blocks() {
        let page = CodePage {
            kind: DiagnosticKind::UnknownTool,
            markdown: "# P0103 unknown-tool\n\nOne line.\n\nMore.\n\n## Example\n\n```yaml\n## not a heading\n```\n\n## Fix\n\nDo it.\n",
        };
        assert_eq!(page.summary(), "One line.");
        assert_eq!(page.example(), "```yaml\n## not a heading\n```");
        assert_eq!(page.fix(), "Do it.");
        assert_eq!(page.meaning(), "");
        assert!(
            page.url()
                .ends_with("/agent_presets/codes/P0103/index.html")
        );
    }
}
