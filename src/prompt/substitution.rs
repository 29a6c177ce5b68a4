//! [`Substitution`]: a template that is text and `{{ name }}` only, rendered without the
//! template engine.
//!
//! Most sections are prose with a few variables (`Your working directory is
//! {{ cwd }}.`) or no template syntax at all. For those, the engine's work per render
//! (a lookup of the compiled template, a fresh state, an instruction loop) is most of a
//! step's cost; a substitution prints the same bytes by copying text and formatting each
//! value exactly as the engine does (`Display` of the value, with auto-escape off).
//!
//! [`Substitution::parse`] accepts only what it can print identically, and refuses
//! everything else (any `{%` or `{#`, whitespace control, expressions other than a bare
//! variable name, names the engine treats specially); refused text goes to the engine.

use std::collections::BTreeSet;
use std::fmt::{self, Write as _};
use std::ops::Range;

use minijinja::Value;

use super::template_scan::{self, TemplateScan};

/// Names that are not plain variables inside `{{ … }}` (literals, operators, names the
/// engine gives a meaning of its own): a template using them goes to the engine.
const SPECIAL_NAMES: &[&str] = &[
    "true", "false", "none", "True", "False", "None", "not", "and", "or", "in", "is", "if", "else",
    "loop", "self", "super", "caller", "varargs", "kwargs",
];

/// One part of a substitution.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Part {
    /// Text copied as it is (a byte range of the source).
    Text(Range<usize>),
    /// The value of a variable, and the offset of its name in the source.
    Variable(Box<str>, usize),
}

/// A template made of text and `{{ name }}` only.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Substitution {
    parts: Vec<Part>,
}

/// Why a substitution could not print.
#[derive(Debug)]
pub(crate) enum SubstitutionError {
    /// A variable has no value, or the undefined value: the engine reports it.
    Undefined,
    /// The output would exceed the room left.
    TooLong,
}

/// Writes into a string, refusing to grow past `room` bytes.
struct Bounded<'a> {
    out: &'a mut String,
    room: usize,
}

impl fmt::Write for Bounded<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        if s.len() > self.room {
            return Err(fmt::Error);
        }
        self.room -= s.len();
        self.out.push_str(s);
        Ok(())
    }
}

impl Substitution {
    /// `source` as a substitution, or `None` when it uses anything but text and
    /// `{{ name }}`. `is_global` tells the names the environment defines (functions such
    /// as `range`), which are not variables.
    pub(crate) fn parse(source: &str, is_global: impl Fn(&str) -> bool) -> Option<Substitution> {
        // Like the engine, drop one trailing newline (and a carriage return before it).
        let mut end = source.len();
        if source[..end].ends_with('\n') {
            end -= 1;
        }
        if source[..end].ends_with('\r') {
            end -= 1;
        }
        let bytes = source.as_bytes();
        let mut parts = Vec::new();
        let mut text_start = 0;
        let mut i = 0;
        // One pass over the `{`s: `{%` and `{#` (anywhere, the dropped newline aside)
        // end the fast path, `{{` starts a variable.
        while let Some(found) = source[i..].find('{') {
            let open = i + found;
            match bytes.get(open + 1) {
                Some(b'%' | b'#') => return None,
                Some(b'{') if open + 1 < end => {}
                _ => {
                    i = open + 1;
                    continue;
                }
            }
            let skip_space = |mut j: usize| {
                while j < end && matches!(bytes[j], b' ' | b'\t' | b'\n' | b'\r') {
                    j += 1;
                }
                j
            };
            let mut j = skip_space(open + 2);
            let name_start = j;
            if j < end && (bytes[j].is_ascii_alphabetic() || bytes[j] == b'_') {
                j += 1;
                while j < end && (bytes[j].is_ascii_alphanumeric() || bytes[j] == b'_') {
                    j += 1;
                }
            }
            let name = &source[name_start..j];
            // `{{-`, `{{+` and anything but a plain name end the fast path.
            if name.is_empty() || SPECIAL_NAMES.contains(&name) || is_global(name) {
                return None;
            }
            j = skip_space(j);
            if !source[j..end].starts_with("}}") {
                return None;
            }
            if open > text_start {
                parts.push(Part::Text(text_start..open));
            }
            parts.push(Part::Variable(name.into(), name_start));
            i = j + 2;
            text_start = i;
        }
        if end > text_start {
            parts.push(Part::Text(text_start..end));
        }
        Some(Substitution { parts })
    }

    /// The variables it prints, in order (a repeated one each time).
    pub(crate) fn variables(&self) -> impl Iterator<Item = &str> {
        self.parts.iter().filter_map(|p| match p {
            Part::Variable(name, _) => Some(&**name),
            Part::Text(_) => None,
        })
    }

    /// What [`template_scan::scan`](super::template_scan::scan) finds in the source:
    /// each variable an unguarded reference at the offset of its name, or a guarded one
    /// when `outer_guards` (what a `when` condition proves defined) holds it. Nothing
    /// else: a substitution has no filters, tests, calls, statements or locals.
    pub(crate) fn scan(&self, outer_guards: &BTreeSet<String>) -> TemplateScan {
        let mut scan = TemplateScan::default();
        for part in &self.parts {
            let Part::Variable(name, at) = part else {
                continue;
            };
            // Names the scan treats as keywords are not variables there either.
            if template_scan::is_keyword(name) {
                continue;
            }
            if outer_guards.contains(&**name) {
                *scan.guarded.entry(name.to_string()).or_default() += 1;
            } else {
                scan.unguarded
                    .entry(name.to_string())
                    .or_default()
                    .push(*at);
            }
        }
        scan
    }

    /// Append the rendering of `source` (the text this was parsed from) to `out`, taking
    /// each variable's value from `value`, writing at most `room` bytes.
    pub(crate) fn render_into<'v>(
        &self,
        source: &str,
        value: impl Fn(&str) -> Option<&'v Value>,
        out: &mut String,
        room: usize,
    ) -> Result<(), SubstitutionError> {
        let mut w = Bounded { out, room };
        for part in &self.parts {
            match part {
                Part::Text(range) => w
                    .write_str(&source[range.clone()])
                    .map_err(|_| SubstitutionError::TooLong)?,
                Part::Variable(name, _) => {
                    let v = value(name).ok_or(SubstitutionError::Undefined)?;
                    if v.is_undefined() {
                        return Err(SubstitutionError::Undefined);
                    }
                    // Safe strings print as they are, everything else through `Display`:
                    // what the engine's default formatter does with auto-escape off.
                    match v.as_str() {
                        Some(s) => w.write_str(s),
                        None => write!(w, "{v}"),
                    }
                    .map_err(|_| SubstitutionError::TooLong)?;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::prompt::template::TemplateSet;

    fn parse(source: &str) -> Option<Substitution> {
        Substitution::parse(source, |n| n == "range")
    }

    /// What the engine prints for `source` with `vars` (trailing whitespace kept).
    fn engine(source: &str, vars: &BTreeMap<&str, Value>) -> String {
        let mut set = TemplateSet::new();
        let (id, _) = set.add_template("t", source).expect("compiles");
        set.render(&id, &Value::from(vars.clone()))
            .expect("renders")
    }

    fn fast(source: &str, vars: &BTreeMap<&str, Value>) -> String {
        let s = parse(source).expect("a substitution");
        let mut out = String::new();
        s.render_into(source, |n| vars.get(n), &mut out, usize::MAX)
            .expect("renders");
        out
    }

    #[test]
    fn prints_what_the_engine_prints() {
        let vars = BTreeMap::from([
            ("s", Value::from("text {{ not a template }}")),
            ("i", Value::from(1)),
            ("f", Value::from(1.0)),
            ("z", Value::from(-0.0)),
            ("b", Value::from(true)),
            ("n", Value::from(())),
            ("safe", Value::from_safe_string("<b>".into())),
            ("list", Value::from(vec![Value::from("a"), Value::from(2)])),
            ("big", Value::from(1u64 << 60)),
            ("tiny", Value::from(1e-7)),
        ]);
        for source in [
            "plain text",
            "plain text\n",
            "plain text\r\n",
            "ends in blank lines\n\n",
            "",
            "\n",
            "{{ s }}",
            "{{s}} and {{  i  }}\n",
            "{{\ts\n}}",
            "a {{ f }} b {{ z }} c {{ b }} d {{ n }} e {{ safe }} f {{ list }}",
            "{{ big }} {{ tiny }}",
            "} }} { {",
            "{ {{ i }} }",
            "x}}{{ i }}}}",
        ] {
            assert_eq!(fast(source, &vars), engine(source, &vars), "{source:?}");
        }
    }

    #[test]
    fn refuses_what_only_the_engine_can_do() {
        for source in [
            "{% if x %}y{% endif %}",
            "{# comment #}",
            "{{- x }}",
            "{{ x -}}",
            "{{+ x }}",
            "{{ x.y }}",
            "{{ x | upper }}",
            "{{ x ~ y }}",
            "{{ 'x' }}",
            "{{ x() }}",
            "{{ true }}",
            "{{ None }}",
            "{{ loop }}",
            "{{ range }}",
            "{{ x",
            "{{ }}",
            "{{{ x }}}",
            "{{ é }}",
        ] {
            assert!(parse(source).is_none(), "{source:?}");
        }
    }

    /// The scan of a substitution is the template scan of its text, offsets included.
    fn assert_scans_agree(source: &str, guards: &BTreeSet<String>) {
        let Some(s) = parse(source) else {
            return;
        };
        let fast = s.scan(guards);
        let slow = template_scan::scan(source, false, guards);
        assert_eq!(fast.unguarded, slow.unguarded, "{source:?}");
        assert_eq!(fast.guarded, slow.guarded, "{source:?}");
        assert!(slow.filters.is_empty() && slow.tests.is_empty() && slow.calls.is_empty());
        assert!(
            slow.locals.is_empty() && slow.includes.is_empty(),
            "{source:?}"
        );
    }

    #[test]
    fn scans_as_the_template_scan_does() {
        let guards = BTreeSet::from(["g".to_owned()]);
        for source in [
            "",
            "plain",
            "{{ a }} and {{a}} {{ g }}\n",
            "{{\tb\n}} x}} {{ elif }} {{ recursive }} {{ c_1 }}",
            "{ {{ a }} }{{ g }}{{ g }}",
        ] {
            assert_scans_agree(source, &guards);
            assert_scans_agree(source, &BTreeSet::new());
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

        #[test]
        fn scans_agree_on_any_substitution(
            source in "([a-z .\n{}]|\\{\\{ ?(a|b|g|elif|in_x|_y) ?\\}\\}){0,12}",
            guard in proptest::option::of("(a|g|elif)"),
        ) {
            let guards: BTreeSet<String> = guard.into_iter().collect();
            assert_scans_agree(&source, &guards);
        }
    }

    #[test]
    fn lists_its_variables_and_stops_at_the_room_left() {
        let s = parse("{{ a }}{{ b }} {{ a }}").expect("a substitution");
        assert_eq!(s.variables().collect::<Vec<_>>(), ["a", "b", "a"]);
        assert_eq!(parse("no variables").expect("text").variables().count(), 0);
        let vars = BTreeMap::from([("a", Value::from("xx")), ("b", Value::from("yy"))]);
        let mut out = String::new();
        let source = "{{ a }}{{ b }} {{ a }}";
        assert!(matches!(
            s.render_into(source, |n| vars.get(n), &mut out, 6),
            Err(SubstitutionError::TooLong)
        ));
        let mut out = String::new();
        assert!(matches!(
            s.render_into(source, |_| None, &mut out, 100),
            Err(SubstitutionError::Undefined)
        ));
    }
}
