//! [`ToolRestriction`]: one layer's `allow` / `deny` / `order`, and how restrictions
//! along a chain combine (they intersect: a child can only narrow).

use std::collections::BTreeSet;

use super::catalog::ToolCatalog;
use super::name::ToolName;
use crate::diagnostic::{Diagnostic, DiagnosticKind, Span};
use crate::suggest::help_did_you_mean;

/// The `order` entry that stands for every visible tool not listed explicitly.
pub const REST: &str = "<rest>";

/// A tool name or a glob (`write_*`, `g?ep`, `{grep,glob}`) in `allow` or `deny`.
#[derive(Clone, Debug)]
pub struct ToolPattern {
    text: String,
    glob: Option<Glob>,
    span: Option<Span>,
}

/// A compiled glob.
#[derive(Clone, Debug)]
enum Glob {
    /// `prefix*suffix`: one `*` and no other glob syntax, the usual pattern (`write_*`,
    /// `*_file`). Matched as globset matches it (`^prefix.*suffix$`, `*` matching any
    /// bytes, `/` too) without compiling a regex: building one cost ~8,400 instructions a
    /// pattern, a third of deriving a preset's layer.
    Star {
        /// Byte offset of the `*` in the text.
        at: usize,
    },
    /// Anything else, by globset.
    Matcher(globset::GlobMatcher),
}

impl Glob {
    fn new(text: &str) -> Result<Glob, globset::Error> {
        if let Some(at) = single_star(text) {
            return Ok(Glob::Star { at });
        }
        let glob = globset::GlobBuilder::new(text)
            .literal_separator(false)
            .build()?;
        Ok(Glob::Matcher(glob.compile_matcher()))
    }

    fn is_match(&self, text: &str, name: &str) -> bool {
        match self {
            Glob::Star { at } => {
                let (prefix, suffix) = (&text[..*at], &text[at + 1..]);
                name.len() >= prefix.len() + suffix.len()
                    && name.starts_with(prefix)
                    && name.ends_with(suffix)
            }
            Glob::Matcher(m) => m.is_match(name),
        }
    }
}

/// Where the only `*` of `text` is, if `text` has exactly one and no other character
/// globset treats specially (`?`, `[`, `]`, `{`, `}`, `,`, `\`). On Unix only: elsewhere
/// globset also reads `\` in the name as a path separator.
fn single_star(text: &str) -> Option<usize> {
    if !cfg!(unix) {
        return None;
    }
    let mut star = None;
    for (i, b) in text.bytes().enumerate() {
        match b {
            b'*' if star.is_none() => star = Some(i),
            b'*' | b'?' | b'[' | b']' | b'{' | b'}' | b',' | b'\\' => return None,
            _ => {}
        }
    }
    star
}

impl ToolPattern {
    /// Parse a pattern. A string with `*`, `?`, `[` or `{` is a glob; anything else is a
    /// plain name.
    pub fn new(text: &str, span: Option<Span>) -> Result<Self, Diagnostic> {
        let is_glob = text.contains(['*', '?', '[', '{']);
        let glob = if is_glob {
            let glob = Glob::new(text).map_err(|e| {
                Diagnostic::new(
                    DiagnosticKind::InvalidValue,
                    format!("`{text}` is not a valid glob: {}", e.kind()),
                )
                .at(span.clone())
                .help("globs use `*`, `?`, `[abc]` and `{a,b}`")
            })?;
            Some(glob)
        } else {
            None
        };
        Ok(ToolPattern {
            text: text.to_owned(),
            glob,
            span,
        })
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Where it was written.
    pub fn span(&self) -> Option<&Span> {
        self.span.as_ref()
    }

    /// Is this a glob (as opposed to a plain name)?
    pub fn is_glob(&self) -> bool {
        self.glob.is_some()
    }

    /// Does the pattern select `name`?
    pub fn matches(&self, name: &str) -> bool {
        match &self.glob {
            Some(g) => g.is_match(&self.text, name),
            None => self.text == name,
        }
    }
}

/// One entry of an explicit wire order: a tool name or [`REST`].
#[derive(Clone, Debug)]
pub struct OrderEntry {
    /// The name (or `<rest>`).
    pub name: String,
    /// Where it was written.
    pub span: Option<Span>,
}

/// One layer's restriction of the visible tool set.
#[derive(Clone, Debug, Default)]
pub struct ToolRestriction {
    /// `None`: everything the parent chain leaves visible. `Some([])`: nothing.
    pub allow: Option<Vec<ToolPattern>>,
    /// Removed after `allow`.
    pub deny: Vec<ToolPattern>,
    /// Explicit wire order with exactly one `<rest>`; the nearest layer that sets it wins.
    pub order: Option<Vec<OrderEntry>>,
    /// Where the `tools` key was written (for `empty-restriction`).
    pub span: Option<Span>,
}

impl ToolRestriction {
    /// Allow only these patterns.
    pub fn allow<I, S>(patterns: I) -> Result<Self, Diagnostic>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let allow = patterns
            .into_iter()
            .map(|p| ToolPattern::new(p.as_ref(), None))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(ToolRestriction {
            allow: Some(allow),
            ..ToolRestriction::default()
        })
    }

    /// Add deny patterns.
    pub fn with_deny<I, S>(mut self, patterns: I) -> Result<Self, Diagnostic>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        for p in patterns {
            self.deny.push(ToolPattern::new(p.as_ref(), None)?);
        }
        Ok(self)
    }

    /// Set an explicit order.
    pub fn with_order<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        self.order = Some(
            names
                .into_iter()
                .map(|n| OrderEntry {
                    name: n.as_ref().to_owned(),
                    span: None,
                })
                .collect(),
        );
        self
    }

    /// A restriction that restricts nothing (`tools: {}`) is almost certainly a mistake.
    pub fn is_empty(&self) -> bool {
        self.allow.is_none() && self.deny.is_empty() && self.order.is_none()
    }

    /// Is `name` left visible by this layer?
    pub fn permits(&self, name: &str) -> bool {
        let allowed = match &self.allow {
            None => true,
            Some(list) => list.iter().any(|p| p.matches(name)),
        };
        allowed && !self.deny.iter().any(|p| p.matches(name))
    }

    /// Check every name and glob against the catalog ("known", not "visible": a known
    /// name an ancestor already hid is fine; an unknown one is a typo).
    pub fn check(&self, catalog: &ToolCatalog) -> Vec<Diagnostic> {
        let mut out = Vec::new();
        if self.is_empty() {
            out.push(
                Diagnostic::new(
                    DiagnosticKind::EmptyRestriction,
                    "`tools` restricts nothing",
                )
                .at(self.span.clone())
                .help("remove `tools` to keep every tool, or use `allow: []` to hide them all"),
            );
        }
        for pattern in self.allow.iter().flatten().chain(&self.deny) {
            out.extend(check_pattern(pattern, catalog));
        }
        if let Some(order) = &self.order {
            out.extend(check_order(order, catalog, self.span.as_ref()));
        }
        out
    }
}

/// A name or glob `mcp__<server>__…` that matches nothing: about the server, when the
/// preset does not declare it (with "did you mean" among those it does), or nothing when
/// the server's tools are not locked (`mcp-not-locked` says so). `None`: judge it as any
/// other name.
fn check_mcp_server(
    text: &str,
    span: Option<&Span>,
    catalog: &ToolCatalog,
) -> Option<Option<Diagnostic>> {
    let server = super::name::mcp_server_of(text)?;
    let mut declared = catalog.declared_servers();
    if let Some((_, listed)) = declared.find(|(s, _)| *s == server) {
        return if listed { None } else { Some(None) };
    }
    let servers: Vec<&str> = catalog.declared_servers().map(|(s, _)| s).collect();
    let rest = &text["mcp__".len() + server.len()..];
    let help = match crate::suggest::did_you_mean(server, servers.iter().copied()) {
        Some(close) => format!("did you mean `mcp__{close}{rest}`?"),
        None if servers.is_empty() => format!(
            "declare the server under `mcpServers:` (e.g. `mcpServers: {{{server}: {{command: [program, arg]}}}}`), then run `agent-presets lock --connect`"
        ),
        None => format!(
            "declared servers: {}",
            crate::suggest::list_names(servers.iter().copied())
        ),
    };
    Some(Some(
        Diagnostic::new(
            DiagnosticKind::UnknownMcpServer,
            format!("`{text}` names MCP server `{server}`, which this preset does not declare"),
        )
        .at(span.cloned())
        .help(help),
    ))
}

fn check_pattern(pattern: &ToolPattern, catalog: &ToolCatalog) -> Option<Diagnostic> {
    let matches_any = if pattern.is_glob() {
        catalog.names().any(|n| pattern.matches(n))
    } else {
        catalog.contains(pattern.as_str())
    };
    if !matches_any
        && let Some(verdict) = check_mcp_server(pattern.as_str(), pattern.span.as_ref(), catalog)
    {
        return verdict;
    }
    if pattern.is_glob() {
        if catalog.names().any(|n| pattern.matches(n)) {
            return None;
        }
        return Some(
            Diagnostic::new(
                DiagnosticKind::GlobNoMatch,
                format!("glob `{}` matches no known tool", pattern.as_str()),
            )
            .at(pattern.span.clone())
            .help(format!(
                "known tools: {}",
                catalog.names().collect::<Vec<_>>().join(", ")
            )),
        );
    }
    if catalog.contains(pattern.as_str()) {
        return None;
    }
    Some(unknown_tool(
        pattern.as_str(),
        pattern.span.clone(),
        catalog,
    ))
}

fn unknown_tool(name: &str, span: Option<Span>, catalog: &ToolCatalog) -> Diagnostic {
    // Another agent's name for a tool (`Read`, `LS`, `WebFetch`): its equivalent, not a
    // near name (`Read` is not a typo of `grep`).
    if let Some(help) = crate::tools::foreign::tool_help(name) {
        let ours = crate::tools::foreign::tool_equivalent(name).flatten();
        return Diagnostic::new(
            DiagnosticKind::UnknownTool,
            format!("unknown tool `{name}`"),
        )
        .at(span)
        .help(help)
        .maybe_fix(name, ours);
    }
    let help = help_did_you_mean(name, catalog.names()).unwrap_or_else(|| {
        format!(
            "known tools: {}",
            catalog.names().collect::<Vec<_>>().join(", ")
        )
    });
    Diagnostic::new(
        DiagnosticKind::UnknownTool,
        format!("unknown tool `{name}`"),
    )
    .at(span)
    .help(help)
    .maybe_fix(name, crate::suggest::did_you_mean(name, catalog.names()))
}

fn check_order(
    order: &[OrderEntry],
    catalog: &ToolCatalog,
    restriction_span: Option<&Span>,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let mut seen = BTreeSet::new();
    let mut rest_count = 0;
    for entry in order {
        if entry.name == REST {
            rest_count += 1;
            if rest_count == 2 {
                out.push(
                    Diagnostic::new(
                        DiagnosticKind::BadToolOrder,
                        "`<rest>` appears twice in `order`",
                    )
                    .at(entry.span.clone())
                    .help("keep exactly one `<rest>`: it stands for every tool not listed"),
                );
            }
            continue;
        }
        if !seen.insert(entry.name.as_str()) {
            out.push(
                Diagnostic::new(
                    DiagnosticKind::BadToolOrder,
                    format!("tool `{}` is listed twice in `order`", entry.name),
                )
                .at(entry.span.clone())
                .help("list each tool at most once"),
            );
            continue;
        }
        if !catalog.contains(&entry.name) {
            match check_mcp_server(&entry.name, entry.span.as_ref(), catalog) {
                Some(verdict) => out.extend(verdict),
                None => out.push(unknown_tool(&entry.name, entry.span.clone(), catalog)),
            }
        }
    }
    if rest_count == 0 {
        let span = order
            .first()
            .and_then(|e| e.span.clone())
            .or_else(|| restriction_span.cloned());
        out.push(
            Diagnostic::new(DiagnosticKind::BadToolOrder, "`order` has no `<rest>` entry")
                .at(span)
                .help("add `<rest>` where the tools you did not list should go, e.g. `order: [read_file, <rest>]`"),
        );
    }
    out
}

/// Apply restrictions (outermost first) to the catalog: the visible tools, in wire order.
///
/// Assumes `check` passed for each restriction. The wire order is bytewise by name, or
/// the nearest layer's explicit `order` (hidden tools listed there are skipped; the
/// unlisted visible tools go at `<rest>`, sorted).
pub fn visible_tools<'a, I>(catalog: &ToolCatalog, restrictions: I) -> Vec<ToolName>
where
    I: IntoIterator<Item = &'a ToolRestriction>,
{
    let mut visible: BTreeSet<&str> = catalog.names().collect();
    let mut order: Option<&[OrderEntry]> = None;
    for r in restrictions {
        visible.retain(|name| r.permits(name));
        if let Some(o) = &r.order {
            order = Some(o);
        }
    }
    let to_name = |n: &str| catalog.get(n).map(|d| d.name().clone());
    let Some(order) = order else {
        return visible.iter().filter_map(|n| to_name(n)).collect();
    };
    let listed: BTreeSet<&str> = order.iter().map(|e| e.name.as_str()).collect();
    let mut out = Vec::with_capacity(visible.len());
    for entry in order {
        if entry.name == REST {
            out.extend(
                visible
                    .iter()
                    .filter(|n| !listed.contains(**n))
                    .filter_map(|n| to_name(n)),
            );
        } else if visible.contains(entry.name.as_str()) {
            out.extend(to_name(&entry.name));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn a_pattern_keeps_where_it_was_written() {
        let span = Span::new("p.yaml".into(), 3, 7);
        let pattern = ToolPattern::new("read_*", Some(span.clone())).unwrap();
        assert_eq!(pattern.span(), Some(&span));
        assert_eq!(ToolPattern::new("grep", None).unwrap().span(), None);
    }

    /// What globset alone says (the matcher every pattern used before `Glob::Star`).
    fn globset_matches(pattern: &str, name: &str) -> bool {
        globset::GlobBuilder::new(pattern)
            .literal_separator(false)
            .build()
            .is_ok_and(|g| g.compile_matcher().is_match(name))
    }

    fn is_star(pattern: &str) -> bool {
        let p = ToolPattern::new(pattern, None).expect("a valid pattern");
        matches!(p.glob, Some(Glob::Star { .. }))
    }

    #[test]
    fn a_single_star_is_matched_without_globset() {
        for pattern in ["write_*", "*_file", "g*p", "*", "a/*.b"] {
            assert!(is_star(pattern), "{pattern}");
        }
        for pattern in ["a**", "a*b*", "g?ep", "{a,b}*", "[ab]*", "a\\**", "a*]"] {
            assert!(!is_star(pattern), "{pattern}");
        }
        let p = ToolPattern::new("ab*ba", None).expect("a valid pattern");
        // The prefix and the suffix may not overlap.
        assert!(!p.matches("aba"));
        assert!(p.matches("abba"));
        assert!(p.matches("ab/x.ba"));
        assert!(!p.matches("abb"));
        // The name must hold the prefix and the suffix side by side: `a*a` needs two
        // `a`s, and `*` may match nothing.
        let p = ToolPattern::new("a*a", None).expect("a valid pattern");
        assert!(!p.matches("a"));
        assert!(p.matches("aa"));
        assert!(p.matches("aXa"));
        assert!(!p.matches(""));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2048))]

        /// Every pattern matches exactly what globset matches.
        #[test]
        fn patterns_match_as_globset_matches(
            pattern in "[ab_*/.é?]{0,6}",
            name in "[ab_/.é]{0,8}",
        ) {
            let Ok(p) = ToolPattern::new(&pattern, None) else {
                return Ok(());
            };
            let expected = if p.is_glob() { globset_matches(&pattern, &name) } else { pattern == name };
            prop_assert_eq!(p.matches(&name), expected, "{} ~ {}", pattern, name);
        }
    }
}
