//! `grep`: search file contents with a regular expression, respecting `.gitignore`.

use std::borrow::Cow;
use std::future::Future;
use std::path::Path;
use std::time::Duration;

use globset::{GlobBuilder, GlobMatcher};
use regex::{Regex, RegexBuilder};
use rustix::fs::FileType;
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::Deserialize;

use super::glob::check_relative;
use super::limits::{cap_text, cut_line, cut_line_around, echo};
use super::walk::{Unread, depth_note, read_entry, run_blocking, stop_note, walk};
use super::workspace::{MAX_TEXT_FILE_BYTES, not_found, resolve, shown};
use crate::texts::*;
use crate::tools::{Tool, ToolContext, ToolError, ToolGuidance, vals};

/// `max_results` when the model sends none.
pub(crate) const DEFAULT_MAX_RESULTS: u32 = 200;
/// The largest `max_results` honoured.
pub(crate) const MAX_RESULTS: u32 = 2_000;
/// The most context lines honoured.
pub(crate) const MAX_CONTEXT: u32 = 10;
/// Longest matching line shown in full; a longer one is shown around its first match.
pub(crate) const MAX_MATCH_LINE_CHARS: usize = 500;

/// Arguments of `grep`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GrepArgs {
    /// Regular expression to search for (Rust regex syntax, like ripgrep: escape `(`, `[`, `.`, `*` etc. with `\` to match them literally). Matched against one line at a time.
    pub pattern: String,
    /// File or directory to search, relative to the workspace root. Defaults to the root.
    pub path: Option<String>,
    /// Only search files matching this glob: without `/` it matches file names (`*.rs`), with `/` paths relative to `path` (`src/**/*.ts`).
    pub glob: Option<String>,
    /// Ignore case when matching. Defaults to false.
    pub case_insensitive: Option<bool>,
    /// `content` (default): matching lines as `path:line:text`; `files_with_matches`: only the paths of files that match; `count`: matching lines per file as `path:count`.
    pub output_mode: Option<GrepOutputMode>,
    /// Lines of context to show before and after each match (`content` mode only, at most 10). Defaults to 0.
    #[schemars(range(max = 10))]
    pub context: Option<u32>,
    /// Most results (lines, files or counts) to return. Defaults to 200; at most 2000.
    #[schemars(range(min = 1, max = 2000))]
    pub max_results: Option<u32>,
}

/// What `grep` returns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GrepOutputMode {
    /// Matching lines with their paths and line numbers.
    #[default]
    Content,
    /// The paths of matching files.
    FilesWithMatches,
    /// The number of matching lines per file.
    Count,
}

// Written by hand: the derive would turn the documented variants into a `oneOf` of
// `const`s, longer on the wire than this plain string enum (the field says what each means).
impl JsonSchema for GrepOutputMode {
    fn schema_name() -> Cow<'static, str> {
        "GrepOutputMode".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "string",
            "enum": ["content", "files_with_matches", "count"]
        })
    }
}

/// The `grep` tool.
#[derive(Clone, Copy, Debug, Default)]
pub struct Grep;

impl Tool for Grep {
    type Args = GrepArgs;

    fn name(&self) -> &str {
        "grep"
    }

    fn description(&self) -> &str {
        TOOL_GREP_DESCRIPTION.text
    }

    fn read_only(&self) -> bool {
        true
    }

    fn guidance(&self) -> Option<ToolGuidance> {
        // Names no other tool (the file-pattern argument is described by the schema), so
        // it stays true whatever else is visible.
        Some(ToolGuidance::new(1030.0, TOOL_GREP_GUIDANCE.text))
    }

    fn timeout(&self) -> Option<Duration> {
        Some(Duration::from_secs(60))
    }

    fn call(
        &self,
        args: GrepArgs,
        ctx: ToolContext,
    ) -> impl Future<Output = Result<String, ToolError>> + Send + 'static {
        handle(args, ctx)
    }
}

/// The work of `grep` (a free function, so the future borrows nothing from the tool).
async fn handle(args: GrepArgs, ctx: ToolContext) -> Result<String, ToolError> {
    let base = resolve(&ctx, args.path.as_deref().unwrap_or("."))?;
    if !base.exists() {
        return Err(not_found(&base, &TOOLS_FILE_NOT_FOUND_PATH));
    }
    let regex = RegexBuilder::new(&args.pattern)
        .case_insensitive(args.case_insensitive.unwrap_or(false))
        .size_limit(10 * 1024 * 1024)
        .build()
        .map_err(|e| {
            let (text, error) = regex_error(&args.pattern, &e, ctx.texts());
            ToolError::text(text, vals![error = error, pattern = echo(&args.pattern)])
                .hint_text(&TOOL_GREP_HINT_REGEX, vec![])
        })?;
    let filter = match &args.glob {
        None => None,
        Some(g) => Some(FileFilter::new(g, ctx.texts())?),
    };
    let mode = args.output_mode.unwrap_or_default();
    let search = Search {
        regex,
        filter,
        mode,
        context: args.context.unwrap_or(0).min(MAX_CONTEXT) as usize,
        max_results: args
            .max_results
            .unwrap_or(DEFAULT_MAX_RESULTS)
            .clamp(1, MAX_RESULTS) as usize,
        texts: std::sync::Arc::clone(ctx.texts()),
    };
    let start = base.resolved.clone();
    let base_rel = start.relative();
    let walk_ctx = ctx.clone();
    let report = run_blocking(move |control| {
        let mut report = Report::default();
        let mut entries = walk(walk_ctx.root(), start, false);
        for entry in entries.by_ref() {
            report.stop = control.stop();
            if report.stop.is_some() {
                break;
            }
            if entry.kind != FileType::RegularFile {
                continue;
            }
            // Relative to the search base; a file given as `path` is its own name.
            let rel = match entry.relative.strip_prefix(&base_rel) {
                Ok(rel) if !rel.as_os_str().is_empty() => rel,
                _ => Path::new(&entry.name),
            };
            if search.filter.as_ref().is_some_and(|f| !f.matches(rel)) {
                continue;
            }
            match read_entry(&entry, MAX_TEXT_FILE_BYTES) {
                Ok(bytes) => search.file(&bytes, &shown(&entry.relative), &mut report),
                Err(Unread::TooBig) => report.skipped += 1,
                // Not a regular file any more (a FIFO or a link swapped in): not searched.
                Err(Unread::NotRegular) => {}
            }
        }
        report.too_deep = entries.too_deep;
        report
    })
    .await?;

    let texts = ctx.texts();
    let mut out = String::new();
    if report.total == 0 {
        out.push_str(&texts.render(
            &TOOL_GREP_RESULT_NONE,
            &[
                ("pattern", &echo(&args.pattern).told(texts)),
                ("path", &base.shown.told(texts)),
            ],
        ));
        out.push('\n');
    } else {
        out.push_str(&report.lines);
        if report.total > report.shown {
            let what = match mode {
                GrepOutputMode::Content => &TOOL_GREP_RESULT_MORE_LINES,
                GrepOutputMode::FilesWithMatches | GrepOutputMode::Count => {
                    &TOOL_GREP_RESULT_MORE_FILES
                }
            };
            out.push_str(&texts.render(
                what,
                &[
                    ("shown", &report.shown.to_string()),
                    ("total", &report.total.to_string()),
                    ("max", &MAX_RESULTS.to_string()),
                ],
            ));
            out.push('\n');
        }
    }
    if report.skipped > 0 {
        let skipped = if report.skipped == 1 {
            &TOOL_GREP_RESULT_SKIPPED_ONE
        } else {
            &TOOL_GREP_RESULT_SKIPPED_MANY
        };
        out.push_str(&texts.render(skipped, &[("count", &report.skipped.to_string())]));
        out.push('\n');
    }
    out.push_str(&depth_note(texts, report.too_deep));
    out.push_str(&stop_note(texts, report.stop));
    Ok(cap_text(
        &out,
        ctx.limits(),
        texts,
        texts.get(&TOOL_GREP_RESULT_SEE_MORE),
    ))
}

/// The `glob` argument: a file-name glob, or a path glob when it has a `/`.
struct FileFilter {
    matcher: GlobMatcher,
    on_name: bool,
}

impl FileFilter {
    fn new(glob: &str, texts: &Texts) -> Result<Self, ToolError> {
        check_relative(glob)?;
        let matcher = GlobBuilder::new(glob)
            .literal_separator(true)
            .build()
            .map_err(|e| {
                ToolError::text(
                    &TOOL_GREP_ERROR_GLOB,
                    vals![
                        glob = echo(glob),
                        error = super::pattern_errors::glob_reason(e.kind(), texts)
                    ],
                )
                .hint_text(&TOOL_GREP_HINT_GLOB, vec![])
            })?
            .compile_matcher();
        Ok(FileFilter {
            matcher,
            on_name: !glob.contains('/'),
        })
    }

    fn matches(&self, rel: &Path) -> bool {
        if self.on_name {
            rel.file_name().is_some_and(|n| self.matcher.is_match(n))
        } else {
            self.matcher.is_match(rel)
        }
    }
}

struct Search {
    regex: Regex,
    filter: Option<FileFilter>,
    mode: GrepOutputMode,
    context: usize,
    max_results: usize,
    texts: std::sync::Arc<crate::texts::Texts>,
}

#[derive(Default)]
struct Report {
    lines: String,
    /// Results found (lines in content mode, files otherwise).
    total: usize,
    /// Results written to `lines`.
    shown: usize,
    skipped: usize,
    too_deep: usize,
    stop: Option<super::walk::Stop>,
}

impl Search {
    fn file(&self, bytes: &[u8], shown_path: &str, report: &mut Report) {
        if bytes.contains(&0) {
            report.skipped += 1;
            return;
        }
        let text = String::from_utf8_lossy(bytes);
        let lines: Vec<&str> = text.lines().collect();
        let all_hits: Vec<usize> = lines
            .iter()
            .enumerate()
            .filter(|(_, l)| self.regex.is_match(l))
            .map(|(i, _)| i)
            .collect();
        if all_hits.is_empty() {
            return;
        }
        match self.mode {
            GrepOutputMode::FilesWithMatches | GrepOutputMode::Count => {
                report.total += 1;
                if report.shown < self.max_results {
                    report.shown += 1;
                    report.lines.push_str(shown_path);
                    if self.mode == GrepOutputMode::Count {
                        report.lines.push_str(&format!(":{}", all_hits.len()));
                    }
                    report.lines.push('\n');
                }
            }
            GrepOutputMode::Content => {
                report.total += all_hits.len();
                let room = self.max_results.saturating_sub(report.shown);
                let hits = &all_hits[..all_hits.len().min(room)];
                if hits.is_empty() {
                    return;
                }
                report.shown += hits.len();
                let line = |i: usize, sep: char| {
                    // A long matching line is shown around its first match, which might
                    // lie past the first MAX_MATCH_LINE_CHARS characters.
                    let text = match self.regex.find(lines[i]) {
                        Some(m) if sep == ':' => {
                            cut_line_around(lines[i], m.range(), MAX_MATCH_LINE_CHARS, &self.texts)
                        }
                        _ => cut_line(lines[i], MAX_MATCH_LINE_CHARS, &self.texts),
                    };
                    format!("{shown_path}{sep}{}{sep}{text}\n", i + 1)
                };
                if self.context == 0 {
                    for &i in hits {
                        report.lines.push_str(&line(i, ':'));
                    }
                    return;
                }
                // Context lines use `-` and groups are separated by `--`, as in grep -C.
                let mut next_unprinted = 0usize;
                for (k, &i) in hits.iter().enumerate() {
                    let start = i.saturating_sub(self.context).max(next_unprinted);
                    if (k > 0 && start > next_unprinted) || (k == 0 && !report.lines.is_empty()) {
                        report.lines.push_str("--\n");
                    }
                    let end = (i + self.context).min(lines.len() - 1);
                    for j in start..=end {
                        // A context line after this match may be the next match.
                        let is_hit = all_hits.binary_search(&j).is_ok();
                        report
                            .lines
                            .push_str(&line(j, if is_hit { ':' } else { '-' }));
                    }
                    next_unprinted = end + 1;
                }
            }
        }
    }
}

/// What is wrong with the pattern, in the tools' texts (the regex crate's own message is
/// English only), with the pattern itself.
fn regex_error(pattern: &str, e: &regex::Error, texts: &Texts) -> (&'static BuiltinText, String) {
    (
        &TOOL_GREP_ERROR_REGEX_LONG,
        super::pattern_errors::regex_reason(pattern, e, texts),
    )
}
