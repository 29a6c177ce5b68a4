//! The two glob languages of permission rules, written down once (docs/format.md,
//! "Permission rules"):
//!
//! - a **text glob** (tool names, command lines, non-path arguments): `*` matches any run
//!   of characters, `/` and spaces included; `?` matches one character; `\` makes the next
//!   character literal. In a command pattern a trailing ` *` also matches nothing, so
//!   `git push *` matches `git push` as well as `git push origin main`.
//! - a **path glob** (the `path` argument of file tools), matched against the normalised
//!   path beneath the workspace (`src/main.rs`, no `./`, no `..`, no leading `/`): `*`
//!   matches any run of characters except `/`; `?` one character except `/`; a whole
//!   segment `**` matches zero or more segments, so `a/**` matches `a` itself and
//!   everything beneath it and `**/x` matches `x` at any depth; `\` escapes.
//!
//! Each glob compiles once to an anchored [`regex::Regex`]; [`reference_match`] is the
//! plain backtracking matcher the property tests compare it with.

use regex::Regex;

/// Which of the two languages a pattern is written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GlobKind {
    /// `*` crosses `/`.
    Text,
    /// `*` stays within one path segment; `**` spans segments.
    Path,
}

/// One compiled glob.
#[derive(Clone, Debug)]
pub struct Glob {
    source: String,
    kind: GlobKind,
    regex: Regex,
}

/// One element of a parsed glob.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Piece {
    Literal(char),
    /// `?`
    One,
    /// `*`
    Star,
    /// a whole-segment `**` (path globs only), with whether a `/` follows it
    Globstar {
        slash_after: bool,
    },
    /// a trailing ` *` of a command pattern: nothing, or a space and anything
    OptionalRest,
}

fn pieces(source: &str, kind: GlobKind, command: bool) -> Vec<Piece> {
    let chars: Vec<char> = source.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\\' if i + 1 < chars.len() => {
                out.push(Piece::Literal(chars[i + 1]));
                i += 2;
                continue;
            }
            '?' => out.push(Piece::One),
            '*' if kind == GlobKind::Path
                && chars.get(i + 1) == Some(&'*')
                && (i == 0 || chars[i - 1] == '/')
                && matches!(chars.get(i + 2), None | Some('/')) =>
            {
                let slash_after = chars.get(i + 2) == Some(&'/');
                out.push(Piece::Globstar { slash_after });
                i += if slash_after { 3 } else { 2 };
                continue;
            }
            '*' if command
                && kind == GlobKind::Text
                && i + 1 == chars.len()
                && i > 0
                && chars[i - 1] == ' ' =>
            {
                // The space before it belongs to the optional rest.
                if out.last() == Some(&Piece::Literal(' ')) {
                    out.pop();
                }
                out.push(Piece::OptionalRest);
            }
            '*' => out.push(Piece::Star),
            other => out.push(Piece::Literal(other)),
        }
        i += 1;
    }
    out
}

fn to_regex(pieces: &[Piece], kind: GlobKind) -> String {
    let mut re = String::from("(?s)\\A");
    let mut i = 0;
    while i < pieces.len() {
        match &pieces[i] {
            Piece::Literal(c) => re.push_str(&regex::escape(&c.to_string())),
            Piece::One => re.push_str(if kind == GlobKind::Path { "[^/]" } else { "." }),
            Piece::Star => re.push_str(if kind == GlobKind::Path {
                "[^/]*"
            } else {
                ".*"
            }),
            Piece::Globstar { slash_after: true } => re.push_str("(?:[^/]*/)*"),
            Piece::Globstar { slash_after: false } => {
                // `a/**`: `a` itself too (the `/` before it is optional), or anything below.
                if re.ends_with('/') {
                    re.pop();
                    re.push_str("(?:/.*)?");
                } else {
                    re.push_str(".*");
                }
            }
            Piece::OptionalRest => re.push_str("(?: .*)?"),
        }
        i += 1;
    }
    re.push_str("\\z");
    re
}

/// Why a glob cannot be used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the glob `{glob}` does not compile: {reason}")]
pub struct GlobError {
    /// The glob as written.
    pub glob: String,
    /// What went wrong.
    pub reason: String,
}

impl Glob {
    /// Compiles `source` as a glob of `kind`; `command` turns on the trailing ` *` rule
    /// of command patterns.
    pub fn new(source: &str, kind: GlobKind, command: bool) -> Result<Self, GlobError> {
        let pieces = pieces(source, kind, command);
        let regex = Regex::new(&to_regex(&pieces, kind)).map_err(|e| GlobError {
            glob: source.to_owned(),
            reason: e.to_string(),
        })?;
        Ok(Self {
            source: source.to_owned(),
            kind,
            regex,
        })
    }

    /// The glob as written.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// Which language it is written in.
    pub fn kind(&self) -> GlobKind {
        self.kind
    }

    /// Does `text` match the whole glob?
    pub fn is_match(&self, text: &str) -> bool {
        self.regex.is_match(text)
    }

    /// Has the glob no wildcard at all (it matches only its own text)?
    pub fn is_literal(&self) -> bool {
        let mut escaped = false;
        for c in self.source.chars() {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '*' || c == '?' {
                return false;
            }
        }
        true
    }
}

/// The reference matcher: the same semantics as [`Glob::is_match`], by plain recursive
/// backtracking over the parsed pieces (exponential in the worst case; the property tests
/// only).
pub fn reference_match(source: &str, kind: GlobKind, command: bool, text: &str) -> bool {
    let pieces = pieces(source, kind, command);
    let text: Vec<char> = text.chars().collect();
    fn go(p: &[Piece], t: &[char], kind: GlobKind) -> bool {
        let Some((first, rest)) = p.split_first() else {
            return t.is_empty();
        };
        match first {
            Piece::Literal(c) => t.first() == Some(c) && go(rest, &t[1..], kind),
            Piece::One => {
                t.first()
                    .is_some_and(|&c| kind == GlobKind::Text || c != '/')
                    && go(rest, &t[1..], kind)
            }
            Piece::Star => {
                for n in 0..=t.len() {
                    if kind == GlobKind::Path && t[..n].contains(&'/') {
                        break;
                    }
                    if go(rest, &t[n..], kind) {
                        return true;
                    }
                }
                false
            }
            Piece::Globstar { slash_after: true } => {
                // zero or more whole segments, each ending in `/`
                if go(rest, t, kind) {
                    return true;
                }
                (0..t.len())
                    .any(|n| t[n] == '/' && !t[..n].contains(&'/') && go(p, &t[n + 1..], kind))
            }
            Piece::Globstar { slash_after: false } => {
                // at the end only (a `**` not followed by `/` is the last piece): anything
                true
            }
            Piece::OptionalRest => {
                t.is_empty() || (t[0] == ' ' && go(&[Piece::Star], &t[1..], GlobKind::Text))
            }
        }
    }
    // `a/**` also matches `a`: the reference spells that as "the text, or the text with
    // a `/` appended".
    if matches!(pieces.last(), Some(Piece::Globstar { slash_after: false }))
        && pieces.len() >= 2
        && pieces[pieces.len() - 2] == Piece::Literal('/')
    {
        let mut with_slash = text.clone();
        with_slash.push('/');
        if go(&pieces, &with_slash, kind) {
            return true;
        }
    }
    go(&pieces, &text, kind)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn path(g: &str, t: &str) -> bool {
        Glob::new(g, GlobKind::Path, false).unwrap().is_match(t)
    }
    fn command(g: &str, t: &str) -> bool {
        Glob::new(g, GlobKind::Text, true).unwrap().is_match(t)
    }

    #[test]
    fn path_star_stays_in_a_segment() {
        assert!(path("src/*.rs", "src/main.rs"));
        assert!(!path("src/*.rs", "src/a/main.rs"));
        assert!(path("src/**/*.rs", "src/main.rs"));
        assert!(path("src/**/*.rs", "src/a/b/main.rs"));
        assert!(path(".github/**", ".github"));
        assert!(path(".github/**", ".github/workflows/ci.yml"));
        assert!(!path(".github/**", ".githubx/ci.yml"));
        assert!(path("**/secret*", "a/b/secret.txt"));
        assert!(path("**/secret*", "secret.txt"));
        assert!(!path("a?c", "a/c"));
    }

    #[test]
    fn command_star_crosses_slashes_and_trailing_star_matches_nothing() {
        assert!(command("rm -rf *", "rm -rf /"));
        assert!(command("rm -rf *", "rm -rf /home/user"));
        assert!(command("git push *", "git push"));
        assert!(command("git push *", "git push origin main"));
        assert!(!command("git push *", "git pushy"));
        assert!(!command("git status", "git status --short"));
        assert!(command(r"echo \*", "echo *"));
        assert!(!command(r"echo \*", "echo x"));
    }

    fn glob_strategy() -> impl Strategy<Value = String> {
        proptest::collection::vec(
            prop_oneof![
                Just("*"),
                Just("**"),
                Just("?"),
                Just("/"),
                Just("a"),
                Just("b"),
                Just(" "),
                Just("\\*")
            ],
            0..8,
        )
        .prop_map(|v| v.concat())
    }
    fn text_strategy() -> impl Strategy<Value = String> {
        proptest::collection::vec(
            prop_oneof![Just("/"), Just("a"), Just("b"), Just(" "), Just("*")],
            0..10,
        )
        .prop_map(|v| v.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]
        #[test]
        fn compiled_globs_agree_with_the_reference(g in glob_strategy(), t in text_strategy()) {
            for (kind, cmd) in [(GlobKind::Path, false), (GlobKind::Text, false), (GlobKind::Text, true)] {
                let compiled = Glob::new(&g, kind, cmd).unwrap().is_match(&t);
                prop_assert_eq!(compiled, reference_match(&g, kind, cmd, &t), "{:?} {:?} cmd={} on {:?}", g, kind, cmd, t);
            }
        }

        #[test]
        fn a_literal_glob_matches_only_itself(t in text_strategy()) {
            let escaped: String = t.chars().flat_map(|c| if c == '*' || c == '?' || c == '\\' { vec!['\\', c] } else { vec![c] }).collect();
            let g = Glob::new(&escaped, GlobKind::Path, false).unwrap();
            prop_assert!(g.is_match(&t));
        }
    }
}
