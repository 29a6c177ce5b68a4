//! What is wrong with a glob or a regular expression, said in the tools' texts: globset's
//! and the regex crate's own messages are English only (`tools.glob-reason.*`,
//! `tools.regex-reason.*`).

use crate::texts::*;

/// Why `globset` refused a glob.
pub(crate) fn glob_reason(kind: &globset::ErrorKind, texts: &Texts) -> String {
    use globset::ErrorKind as K;
    let (text, values): (&BuiltinText, Vec<(&str, String)>) = match kind {
        K::UnclosedClass => (&TOOLS_GLOB_REASON_UNCLOSED_CLASS, vec![]),
        K::InvalidRange(from, to) => (
            &TOOLS_GLOB_REASON_RANGE,
            vec![("from", from.to_string()), ("to", to.to_string())],
        ),
        K::UnopenedAlternates => (&TOOLS_GLOB_REASON_UNOPENED_ALTERNATES, vec![]),
        K::UnclosedAlternates => (&TOOLS_GLOB_REASON_UNCLOSED_ALTERNATES, vec![]),
        K::TooManyNestedAlternates | K::NestedAlternates => {
            (&TOOLS_GLOB_REASON_NESTED_ALTERNATES, vec![])
        }
        K::DanglingEscape => (&TOOLS_GLOB_REASON_DANGLING_ESCAPE, vec![]),
        _ => (&TOOLS_GLOB_REASON_OTHER, vec![]),
    };
    let pairs: Vec<(&str, &str)> = values.iter().map(|(k, v)| (*k, v.as_str())).collect();
    texts.render(text, &pairs)
}

/// Why the regex crate refused `pattern` (`error`): the pattern is parsed again with
/// `regex-syntax`, whose errors have kinds and positions.
pub(crate) fn regex_reason(pattern: &str, error: &regex::Error, texts: &Texts) -> String {
    use regex_syntax::ast::ErrorKind as A;
    use regex_syntax::hir::ErrorKind as H;
    if let regex::Error::CompiledTooBig(_) = error {
        return texts.render(&TOOLS_REGEX_REASON_TOO_BIG, &[]);
    }
    let (text, column) = match regex_syntax::ast::parse::Parser::new().parse(pattern) {
        Err(e) => {
            let text = match e.kind() {
                A::GroupUnclosed => &TOOLS_REGEX_REASON_GROUP_UNCLOSED,
                A::GroupUnopened => &TOOLS_REGEX_REASON_GROUP_UNOPENED,
                A::ClassUnclosed => &TOOLS_REGEX_REASON_CLASS_UNCLOSED,
                A::ClassRangeInvalid | A::ClassRangeLiteral => &TOOLS_REGEX_REASON_CLASS_RANGE,
                A::RepetitionMissing => &TOOLS_REGEX_REASON_REPETITION_MISSING,
                A::RepetitionCountUnclosed
                | A::RepetitionCountInvalid
                | A::RepetitionCountDecimalEmpty
                | A::DecimalEmpty
                | A::DecimalInvalid => &TOOLS_REGEX_REASON_REPETITION_COUNT,
                A::EscapeUnrecognized
                | A::EscapeHexEmpty
                | A::EscapeHexInvalid
                | A::EscapeHexInvalidDigit
                | A::ClassEscapeInvalid => &TOOLS_REGEX_REASON_ESCAPE,
                A::EscapeUnexpectedEof => &TOOLS_REGEX_REASON_DANGLING_ESCAPE,
                A::UnsupportedBackreference => &TOOLS_REGEX_REASON_BACKREFERENCE,
                A::UnsupportedLookAround => &TOOLS_REGEX_REASON_LOOK_AROUND,
                A::GroupNameDuplicate { .. }
                | A::GroupNameEmpty
                | A::GroupNameInvalid
                | A::GroupNameUnexpectedEof => &TOOLS_REGEX_REASON_GROUP_NAME,
                A::FlagDanglingNegation
                | A::FlagDuplicate { .. }
                | A::FlagRepeatedNegation { .. }
                | A::FlagUnexpectedEof
                | A::FlagUnrecognized => &TOOLS_REGEX_REASON_FLAG,
                A::NestLimitExceeded(_) | A::CaptureLimitExceeded => &TOOLS_REGEX_REASON_TOO_BIG,
                _ => &TOOLS_REGEX_REASON_OTHER,
            };
            (text, e.span().start.column)
        }
        Ok(ast) => match regex_syntax::hir::translate::Translator::new().translate(pattern, &ast) {
            Err(e) => {
                let text = match e.kind() {
                    H::UnicodePropertyNotFound
                    | H::UnicodePropertyValueNotFound
                    | H::UnicodePerlClassNotFound => &TOOLS_REGEX_REASON_UNICODE_CLASS,
                    _ => &TOOLS_REGEX_REASON_OTHER,
                };
                (text, e.span().start.column)
            }
            Ok(_) => (&TOOLS_REGEX_REASON_OTHER, 1),
        },
    };
    let reason = texts.render(text, &[]);
    texts.render(
        &TOOLS_REGEX_REASON_AT,
        &[("reason", &reason), ("column", &column.to_string())],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn regex(pattern: &str) -> String {
        let e = regex::Regex::new(pattern).unwrap_err();
        regex_reason(pattern, &e, &Texts::english())
    }

    #[test]
    fn regex_problems_are_named_with_their_position() {
        assert_eq!(
            regex("a(bc"),
            "a group `(` is not closed with `)` (at character 2)"
        );
        assert_eq!(regex("ab)"), "a `)` has no `(` before it (at character 3)");
        assert_eq!(
            regex("*x"),
            "a repetition (`*`, `+`, `?`, `{n}`) has nothing before it to repeat (at character 1)"
        );
        assert_eq!(
            regex("\\p{Nope}"),
            "the Unicode class is not one the regex engine knows (at character 1)"
        );
        assert!(
            regex("(?<=a)b").starts_with("look-around"),
            "{}",
            regex("(?<=a)b")
        );
        assert!(
            regex("(a)\\1").starts_with("back-references"),
            "{}",
            regex("(a)\\1")
        );
    }

    #[test]
    fn glob_problems_are_named() {
        let kind = |g: &str| globset::Glob::new(g).unwrap_err().kind().clone();
        let english = Texts::english();
        assert_eq!(
            glob_reason(&kind("a[b"), &english),
            "a character class `[` is not closed with `]`"
        );
        assert_eq!(
            glob_reason(&kind("{a,b"), &english),
            "an alternation `{` is not closed with `}`"
        );
        assert_eq!(
            glob_reason(&kind("[z-a]"), &english),
            "the range `z-a` in a character class is backwards: its start comes after its end"
        );
    }
}
