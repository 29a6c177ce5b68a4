//! One permission rule as written in a preset (`bash(git push *)`,
//! `write_file(path=.github/**)`, `mcp__github__get_*`) and what it matches.

use super::pattern::{Glob, GlobKind};

/// The tool whose argument is a command line split with the shell parser.
pub const SHELL_TOOL: &str = "bash";

/// The argument of file tools matched with path globs against the normalised path
/// beneath the workspace.
pub const PATH_ARGUMENT: &str = "path";

/// A parsed rule.
#[derive(Clone, Debug)]
pub struct Rule {
    /// The rule as written.
    pub source: String,
    /// Which tools it applies to (a text glob: `mcp__github__get_*`).
    pub tool: Glob,
    /// What it asks of the call's arguments.
    pub arguments: Arguments,
}

/// The part of a rule in parentheses.
#[derive(Clone, Debug)]
pub enum Arguments {
    /// No parentheses: every call of the tool.
    Any,
    /// `bash(PATTERN)`: a text glob every simple command of the line is matched with.
    Command(Glob),
    /// `tool(key=glob, …)`: every condition must hold (repeated keys included).
    Conditions(Vec<Condition>),
}

/// `key=glob`: the argument at `pointer` matches `glob`.
#[derive(Clone, Debug)]
pub struct Condition {
    /// The key as written (`path`, `/options/mode`).
    pub key: String,
    /// The JSON pointer of the argument (`/path`).
    pub pointer: String,
    /// The glob (a path glob for [`PATH_ARGUMENT`], a text glob otherwise).
    pub glob: Glob,
}

/// Why a rule cannot be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RuleError {
    /// An empty string.
    #[error("the rule is empty")]
    Empty,
    /// `(` without `)` at the end, or text after it.
    #[error("`{0}` has an opening `(` without a closing `)` at its end")]
    Unbalanced(String),
    /// A tool name with characters a tool name never has.
    #[error(
        "`{0}` is not a tool name (letters, digits, `_`, `-`, `.`, and `*` or `?` as wildcards)"
    )]
    BadTool(String),
    /// `tool()`.
    #[error("`{0}()` has nothing in its parentheses: write `{0}` for every call")]
    EmptyArguments(String),
    /// A condition without `=`.
    #[error("the condition `{0}` has no `=`: write `key=glob`, e.g. `path=src/**`")]
    NoEquals(String),
    /// An unterminated quoted value.
    #[error("the condition `{0}` has an unterminated `\"`")]
    Unterminated(String),
    /// A glob that does not compile.
    #[error("{0}")]
    Glob(String),
}

impl Rule {
    /// Parses one rule.
    pub fn parse(source: &str) -> Result<Self, RuleError> {
        let trimmed = source.trim();
        if trimmed.is_empty() {
            return Err(RuleError::Empty);
        }
        let (tool, inside) = match trimmed.find('(') {
            None => (trimmed, None),
            Some(open) => {
                let Some(inner) = trimmed[open + 1..].strip_suffix(')') else {
                    return Err(RuleError::Unbalanced(trimmed.to_owned()));
                };
                (trimmed[..open].trim_end(), Some(inner))
            }
        };
        if tool.is_empty()
            || !tool
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '*' | '?'))
        {
            return Err(RuleError::BadTool(tool.to_owned()));
        }
        let tool_glob =
            Glob::new(tool, GlobKind::Text, false).map_err(|e| RuleError::Glob(e.to_string()))?;
        let arguments = match inside {
            None => Arguments::Any,
            Some(inner) if inner.trim().is_empty() => {
                return Err(RuleError::EmptyArguments(tool.to_owned()));
            }
            Some(inner) if tool == SHELL_TOOL => Arguments::Command(
                Glob::new(&normalise_spaces(inner), GlobKind::Text, true)
                    .map_err(|e| RuleError::Glob(e.to_string()))?,
            ),
            Some(inner) => Arguments::Conditions(conditions(inner)?),
        };
        Ok(Self {
            source: trimmed.to_owned(),
            tool: tool_glob,
            arguments,
        })
    }

    /// Does the rule name this tool?
    pub fn names_tool(&self, tool: &str) -> bool {
        self.tool.is_match(tool)
    }
}

/// Runs of whitespace as one space, trimmed: how command lines are joined too.
pub(crate) fn normalise_spaces(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `a=x, b="y, z"`: conditions separated by commas; a value in double quotes may hold
/// commas and parentheses (`\"` and `\\` inside).
fn conditions(inner: &str) -> Result<Vec<Condition>, RuleError> {
    let mut out = Vec::new();
    let mut rest = inner.trim();
    while !rest.is_empty() {
        let Some(eq) = rest.find('=') else {
            return Err(RuleError::NoEquals(
                rest.split(',').next().unwrap_or(rest).trim().to_owned(),
            ));
        };
        let key = rest[..eq].trim();
        if key.is_empty() || key.contains(',') {
            return Err(RuleError::NoEquals(rest[..eq].trim().to_owned()));
        }
        let after = rest[eq + 1..].trim_start();
        let (value, remaining) = if let Some(quoted) = after.strip_prefix('"') {
            let mut value = String::new();
            let mut chars = quoted.char_indices();
            let mut end = None;
            while let Some((i, c)) = chars.next() {
                match c {
                    '\\' => {
                        if let Some((_, next)) = chars.next() {
                            if next != '"' && next != '\\' {
                                value.push('\\');
                            }
                            value.push(next);
                        }
                    }
                    '"' => {
                        end = Some(i + 1);
                        break;
                    }
                    other => value.push(other),
                }
            }
            let Some(end) = end else {
                return Err(RuleError::Unterminated(format!("{key}={after}")));
            };
            let remaining = quoted[end..].trim_start();
            (value, remaining)
        } else {
            match after.find(',') {
                Some(comma) => (after[..comma].trim().to_owned(), &after[comma..]),
                None => (after.trim().to_owned(), ""),
            }
        };
        let remaining = match remaining.strip_prefix(',') {
            Some(r) => r.trim_start(),
            None if remaining.is_empty() => remaining,
            None => return Err(RuleError::NoEquals(remaining.to_owned())),
        };
        let pointer = if key.starts_with('/') {
            key.to_owned()
        } else {
            format!("/{key}")
        };
        let kind = if pointer == format!("/{PATH_ARGUMENT}") {
            GlobKind::Path
        } else {
            GlobKind::Text
        };
        let value = if kind == GlobKind::Path {
            value.trim_start_matches("./").to_owned()
        } else {
            value
        };
        let glob = Glob::new(&value, kind, false).map_err(|e| RuleError::Glob(e.to_string()))?;
        out.push(Condition {
            key: key.to_owned(),
            pointer,
            glob,
        });
        rest = remaining;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_parse() {
        let r = Rule::parse("bash(git  push *)").unwrap();
        assert!(matches!(&r.arguments, Arguments::Command(g) if g.as_str() == "git push *"));
        let r = Rule::parse("write_file(path=.github/**)").unwrap();
        let Arguments::Conditions(c) = &r.arguments else {
            panic!()
        };
        assert_eq!(c[0].pointer, "/path");
        assert_eq!(c[0].glob.kind(), GlobKind::Path);
        let r = Rule::parse(r#"edit_file(path=src/**, /old_string="a, (b)", path=*.rs)"#).unwrap();
        let Arguments::Conditions(c) = &r.arguments else {
            panic!()
        };
        assert_eq!(c.len(), 3);
        assert_eq!(c[1].glob.as_str(), "a, (b)");
        assert!(matches!(
            Rule::parse("mcp__github__get_*").unwrap().arguments,
            Arguments::Any
        ));
    }

    #[test]
    fn bad_rules_say_why() {
        assert_eq!(Rule::parse(" ").unwrap_err(), RuleError::Empty);
        assert!(matches!(
            Rule::parse("bash(ls").unwrap_err(),
            RuleError::Unbalanced(_)
        ));
        assert!(matches!(
            Rule::parse("bash()").unwrap_err(),
            RuleError::EmptyArguments(_)
        ));
        assert!(matches!(
            Rule::parse("read_file(src/**)").unwrap_err(),
            RuleError::NoEquals(_)
        ));
        assert!(matches!(
            Rule::parse("read file").unwrap_err(),
            RuleError::BadTool(_)
        ));
        assert!(matches!(
            Rule::parse(r#"read_file(path="x)"#).unwrap_err(),
            RuleError::Unterminated(_)
        ));
    }
}
