//! Tool patterns (`allow` / `deny` globs) against globset, which matched every pattern
//! before one-star patterns got their prefix-and-suffix fast path (8dbaa8c).
//!
//! Input: `PATTERN \0 NAME` (lossy UTF-8; without a NUL the name is the pattern itself).
//!
//! Checks: nothing panics; a pattern is refused exactly when globset refuses it (plain
//! names never are); a glob matches a name exactly when globset's matcher, built the way
//! `ToolPattern` builds it (`literal_separator(false)`), says so; a plain name matches
//! only itself.

#![no_main]

use agent_presets::tools::ToolPattern;
use libfuzzer_sys::fuzz_target;

fn globset(pattern: &str) -> Result<globset::GlobMatcher, globset::Error> {
    Ok(globset::GlobBuilder::new(pattern)
        .literal_separator(false)
        .build()?
        .compile_matcher())
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (pattern, name) = text.split_once('\0').unwrap_or((&text, &text));
    let reference = globset(pattern);
    let Ok(p) = ToolPattern::new(pattern, None) else {
        assert!(
            p_is_glob(pattern),
            "the plain name `{pattern:?}` was refused"
        );
        assert!(
            reference.is_err(),
            "`{pattern:?}` refused, globset takes it"
        );
        return;
    };
    assert_eq!(p.is_glob(), p_is_glob(pattern), "{pattern:?}");
    let expected = if p.is_glob() {
        match &reference {
            Ok(m) => m.is_match(name),
            Err(e) => panic!("`{pattern:?}` taken, globset refuses it: {e}"),
        }
    } else {
        pattern == name
    };
    assert_eq!(
        p.matches(name),
        expected,
        "`{pattern:?}` ~ `{name:?}`: ToolPattern and globset disagree"
    );
});

/// What `ToolPattern::new` documents as a glob: a string with `*`, `?`, `[` or `{`.
fn p_is_glob(pattern: &str) -> bool {
    pattern.contains(['*', '?', '[', '{'])
}
