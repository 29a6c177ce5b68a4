//! The shape check: every structural problem of a file at once, YAML core-schema typing
//! (quoted scalars are text), merge keys, alias limits, and spans in large files.

use agent_presets::preset::source::{
    MAX_ALIAS_REPLAYED_BYTES, MAX_ALIAS_REPLAYED_EVENTS, MAX_YAML_ALIASES, MAX_YAML_DEPTH,
};
use agent_presets::preset::{ParsedPreset, parse_preset};
use agent_presets::{Diagnostic, DiagnosticKind, Diagnostics};

fn parse(text: &str) -> Result<ParsedPreset, Diagnostics> {
    parse_preset("p.yaml".into(), text.as_bytes())
}

fn errors(text: &str) -> Vec<Diagnostic> {
    match parse(text) {
        Ok(p) => panic!("expected errors, parsed {:?}", p.file),
        Err(d) => d.into_vec(),
    }
}

/// `(kind, line, column)` of every diagnostic.
fn found(text: &str) -> Vec<(DiagnosticKind, u32, u32)> {
    errors(text)
        .iter()
        .map(|d| {
            let s = d.span.as_ref().expect("a span");
            (d.kind, s.line, s.column)
        })
        .collect()
}

use DiagnosticKind::{
    DuplicateKey, InvalidValue, LimitExceeded, MissingField, UnknownKey, WrongType, YamlSyntax,
};

#[test]
fn every_problem_at_once() {
    let text = "\
version: 1
name: demo
descripton: x
model:
  provider: deepsek
  name: m
  maxTokens: \"4096\"
persona:
  sections:
    - name: a
      order: \"5\"
      text: hi
    - name: b
      order: 1
      order: 2
      txt: hi
tools: {allow: [reed_file], allowed-tools: [bash]}
";
    let ds = errors(text);
    let got: Vec<_> = ds
        .iter()
        .map(|d| {
            let s = d.span.as_ref().unwrap();
            (d.kind, s.line, s.column, d.message.as_str())
        })
        .collect();
    assert_eq!(
        got,
        [
            (
                UnknownKey,
                3,
                1,
                "unknown key `descripton` in the preset file"
            ),
            (InvalidValue, 5, 13, "unknown provider `deepsek`"),
            (
                WrongType,
                7,
                14,
                "expected a whole number (0 or more), found the text \"4096\""
            ),
            (WrongType, 11, 14, "expected a number, found the text \"5\""),
            (DuplicateKey, 15, 7, "duplicate key `order`"),
            (UnknownKey, 16, 7, "unknown key `txt` in a section"),
            (UnknownKey, 17, 29, "unknown key `allowed-tools` in `tools`"),
        ]
    );
    let help: Vec<_> = ds.iter().map(|d| d.help.as_deref().unwrap_or("")).collect();
    assert_eq!(help[0], "did you mean `description`?");
    assert_eq!(help[1], "did you mean `deepseek`?");
    assert_eq!(help[2], "write `maxTokens: 4096` without quotes");
    assert_eq!(help[3], "write `order: 5` without quotes");
    assert_eq!(
        help[4],
        "`order` is already set on line 14; keep one of the two"
    );
    // `txt` is probably `text`: that is said once, not again as a missing key.
    assert_eq!(help[5], "did you mean `text`?");
    // `allow` is already set, so it is not what `allowed-tools` meant.
    assert_eq!(help[6], "allowed keys here: `allow`, `deny`, `order`");
}

#[test]
fn missing_keys_are_each_reported() {
    assert_eq!(
        found("description: x\npersona:\n  sections:\n    - name: a\n"),
        [
            (MissingField, 1, 1),
            (MissingField, 1, 1),
            (MissingField, 4, 7),
            (MissingField, 4, 7),
        ]
    );
    let messages: Vec<String> = errors("description: x\n")
        .into_iter()
        .map(|d| d.message)
        .collect();
    assert_eq!(
        messages,
        [
            "missing required key `name`",
            "missing required key `version`"
        ]
    );
}

#[test]
fn quoted_scalars_are_text_not_numbers_or_booleans() {
    let cases = [
        (
            "version: \"1\"\nname: x\n",
            "\"1\"",
            "write `version: 1` without quotes",
        ),
        (
            "version: 1\nname: x\nmodel: {provider: openai, name: m, maxTokens: '4096'}\n",
            "'4096'",
            "write `maxTokens: 4096` without quotes",
        ),
        (
            "version: 1\nname: x\npersona:\n  includeRuntimeContext: 'false'\n",
            "'false'",
            "write `includeRuntimeContext: false` without quotes",
        ),
        (
            "version: 1\nname: x\npersona:\n  sections:\n    - {name: a, order: \"5\", text: t}\n",
            "\"5\"",
            "write `order: 5` without quotes",
        ),
        (
            "version: 1\nname: x\npersona:\n  sections:\n    - {name: a, order: 0, text: t, complete: \"true\"}\n",
            "\"true\"",
            "write `complete: true` without quotes",
        ),
        (
            "version: 1\nname: x\ncontexts:\n  - {name: a, order: 0, text: t, template: \"false\"}\n",
            "\"false\"",
            "write `template: false` without quotes",
        ),
        (
            "version: 1\nname: x\nvariables:\n  v: {description: d, required: 'true'}\n",
            "'true'",
            "write `required: true` without quotes",
        ),
        (
            "version: 1\nname: x\nvariables:\n  v: {description: d, volatile: !!str true}\n",
            "true}",
            "write `volatile: true` without quotes",
        ),
    ];
    for (text, needle, help) in cases {
        let (index, found_on) = text
            .lines()
            .enumerate()
            .find(|(_, l)| l.contains(needle))
            .unwrap();
        let line = index as u32 + 1;
        let column = found_on[..found_on.find(needle).unwrap()].chars().count() as u32 + 1;
        let ds = errors(text);
        assert_eq!(ds.len(), 1, "{text}: {ds:?}");
        let d = &ds[0];
        let s = d.span.as_ref().unwrap();
        assert_eq!(
            (d.kind, s.line, s.column),
            (WrongType, line, column),
            "{text}"
        );
        assert_eq!(d.help.as_deref(), Some(help), "{text}");
    }
    // Quoted text that is not a number anyway gets no "without quotes" advice.
    let ds = errors(
        "version: 1\nname: x\npersona:\n  sections:\n    - {name: a, order: 'first', text: t}\n",
    );
    assert_eq!(ds[0].message, "expected a number, found the text 'first'");
    assert_eq!(ds[0].help, None);
    // A block scalar is text too.
    let ds = errors(
        "version: 1\nname: x\npersona:\n  sections:\n    - name: a\n      text: t\n      order: |\n        5\n",
    );
    assert_eq!(ds[0].message, "expected a number, found a block of text");
}

#[test]
fn plain_scalars_are_typed_by_the_core_schema() {
    // Where text is wanted, any plain scalar is its text.
    let p = parse(
        "version: 1\nname: x\ndescription: 1.5\npersona:\n  sections:\n    - {name: a, order: 1e3, text: 42, when: true}\nvariables:\n  v: {description: 400, default: 400}\n  w: {description: d, default: ~}\n",
    )
    .unwrap();
    assert_eq!(p.file.description.as_deref(), Some("1.5"));
    let s = &p.file.persona.as_ref().unwrap().sections.as_ref().unwrap()[0];
    assert_eq!(s.text.value, "42");
    assert_eq!(s.order.value, 1000.0);
    assert_eq!(s.when.as_ref().unwrap().value, "true");
    let vars = p.file.variables.as_ref().unwrap();
    assert_eq!(
        vars.get("v")
            .unwrap()
            .spec
            .default
            .as_ref()
            .map(|d| d.value.as_str()),
        Some("400")
    );
    assert_eq!(vars.get("w").unwrap().spec.default, None);

    // `name: 123` parses; the validator judges the name.
    let p = parse("version: 1\nname: 123\n").unwrap();
    assert_eq!(p.name(), "123");

    // Numbers in the forms serde-saphyr reads.
    let p = parse("version: 0x1\nname: x\nmodel: {provider: openai, name: m, maxTokens: 4_096}\n")
        .unwrap();
    assert_eq!(
        p.file.model.clone().unwrap().max_tokens.unwrap().value,
        4096
    );

    // Only `true`/`false` are booleans; YAML 1.1 spellings get a hint.
    let ds = errors("version: 1\nname: x\npersona:\n  includeRuntimeContext: off\n");
    assert_eq!(ds[0].message, "expected `true` or `false`, found `off`");
    assert!(ds[0].help.as_deref().unwrap().contains("YAML 1.1"));
    let p = parse("version: 1\nname: x\npersona:\n  includeRuntimeContext: False\n").unwrap();
    assert!(
        !p.file
            .persona
            .clone()
            .unwrap()
            .include_runtime_context
            .unwrap()
            .value
    );

    // A whole number must be one.
    for (value, message) in [
        ("1.5", "expected a whole number (0 or more), found `1.5`"),
        ("-1", "expected a whole number (0 or more), found `-1`"),
        ("007", "expected a whole number (0 or more), found `007`"),
    ] {
        let ds = errors(&format!(
            "version: 1\nname: x\nmodel: {{provider: openai, name: m, maxTokens: {value}}}\n"
        ));
        assert_eq!(ds[0].message, message);
    }
    let ds =
        errors("version: 1\nname: x\nmodel: {provider: openai, name: m, maxTokens: 5000000000}\n");
    assert_eq!(
        (ds[0].kind, ds[0].message.as_str()),
        (InvalidValue, "`maxTokens` is too large: at most 4294967295")
    );
}

#[test]
fn non_finite_orders_still_parse() {
    let p = parse(
        "version: 1\nname: x\npersona:\n  sections:\n    - {name: a, order: .inf, text: a}\n    - {name: b, order: -.Inf, text: b}\n    - {name: c, order: .NaN, text: c}\n",
    )
    .unwrap();
    let s = p.file.persona.clone().unwrap().sections.unwrap();
    assert_eq!(s[0].order.value, f64::INFINITY);
    assert_eq!(s[1].order.value, f64::NEG_INFINITY);
    assert!(s[2].order.value.is_nan());
    // Rust's spellings are not YAML's.
    let ds = errors(
        "version: 1\nname: x\npersona:\n  sections:\n    - {name: a, order: inf, text: a}\n",
    );
    assert_eq!(ds[0].message, "expected a number, found `inf`");
}

#[test]
fn max_tokens_has_its_own_span() {
    let p = parse("version: 1\nname: x\nmodel:\n  provider: openai\n  name: m\n  maxTokens: 0\n")
        .unwrap();
    let max = p.file.model.as_ref().unwrap().max_tokens.as_ref().unwrap();
    assert_eq!(max.value, 0);
    let span = p.span_of(max);
    assert_eq!((span.line, span.column, span.len), (6, 14, 1));
}

#[test]
fn merge_keys_are_checked_where_they_are_written() {
    let text = "\
version: 1
name: x
persona:
  sections:
    - &base {name: a, order: 1, text: hello}
    - <<: *base
      name: b
    - <<: [{name: c, order: 2}, {text: t, zzz: 1}]
";
    assert_eq!(found(text), [(UnknownKey, 8, 43)]);
    let ok = text.replace(", zzz: 1", "");
    let p = parse(&ok).unwrap();
    let s = p.file.persona.clone().unwrap().sections.unwrap();
    let names: Vec<_> = s.iter().map(|s| s.name.value.as_str()).collect();
    assert_eq!(names, ["a", "b", "c"]);
    assert_eq!(s[1].text.value, "hello");
    assert_eq!(s[2].text.value, "t");

    let ds = errors("version: 1\nname: x\nmodel:\n  <<: 5\n  provider: openai\n  name: m\n");
    assert_eq!(
        ds[0].message,
        "a merge (`<<`) takes a mapping or a list of mappings, found `5`"
    );
}

#[test]
fn wrong_types_through_aliases_are_reported_at_the_alias() {
    let text = "version: 1\nname: x\ndescription: &d [a]\ntools:\n  allow: *d\n  deny: [*d]\n";
    assert_eq!(
        found(text),
        [
            (WrongType, 3, 17), // description: a list
            (WrongType, 6, 10)  // deny's entry: a list
        ]
    );
}

/// A file whose `tools.deny` holds `n` aliases of one anchored name.
fn aliases_of_one_anchor(n: usize) -> String {
    let mut text = String::from("version: 1\nname: x\ntools:\n  allow: [&t grep]\n  deny:\n");
    for _ in 0..n {
        text.push_str("    - *t\n");
    }
    text
}

#[test]
fn a_thousand_aliases_are_fine_one_more_is_refused_at_that_alias() {
    assert_eq!(MAX_YAML_ALIASES, 1_000);
    let p = parse(&aliases_of_one_anchor(MAX_YAML_ALIASES)).unwrap();
    let deny = p.file.tools.as_ref().unwrap().value.deny.as_ref().unwrap();
    assert_eq!(deny.len(), MAX_YAML_ALIASES);
    // Every alias is where it is used.
    assert_eq!(p.span_of(&deny[999]).line, 6 + 999);
    assert!(parse(&aliases_of_one_anchor(100)).is_ok());

    let ds = errors(&aliases_of_one_anchor(MAX_YAML_ALIASES + 1));
    assert_eq!(ds.len(), 1, "{ds:?}");
    let s = ds[0].span.as_ref().unwrap();
    assert_eq!((ds[0].kind, s.line, s.column), (LimitExceeded, 6 + 1000, 7));
    assert_eq!(
        ds[0].message,
        "the file uses more than 1000 aliases (`*name`)"
    );
}

#[test]
fn alias_expansion_is_limited_at_the_alias_that_crosses_it() {
    assert_eq!(MAX_ALIAS_REPLAYED_EVENTS, 100_000);
    // An anchored list of 998 names: 1,000 events per use.
    let names = vec!["grep"; 998].join(", ");
    let file = |uses: usize| {
        let mut text = format!("version: 1\nname: x\ntools:\n  allow: &l [{names}]\nzz:\n");
        for _ in 0..uses {
            text.push_str("  - *l\n");
        }
        text
    };
    // 100 uses expand to exactly 100,000 events: fine as far as limits go.
    assert_eq!(found(&file(100)), [(UnknownKey, 5, 1)]);
    let ds = errors(&file(101));
    let s = ds[0].span.as_ref().unwrap();
    assert_eq!((ds[0].kind, s.line, s.column), (LimitExceeded, 5 + 101, 5));
    assert!(
        ds[0].message.contains("100000 YAML events"),
        "{}",
        ds[0].message
    );

    // Text counts as well as events.
    assert_eq!(MAX_ALIAS_REPLAYED_BYTES, 4 * 1024 * 1024);
    let big = "x".repeat(8 * 1024);
    let mut text = format!("version: 1\nname: x\ndescription: &d {big}\nzz:\n");
    for _ in 0..600 {
        text.push_str("  - *d\n");
    }
    let ds = errors(&text);
    let s = ds[0].span.as_ref().unwrap();
    // 8 KiB × 513 > 4 MiB.
    assert_eq!((ds[0].kind, s.line), (LimitExceeded, 4 + 513));
    assert!(ds[0].message.contains("bytes of text"), "{}", ds[0].message);
}

#[test]
fn nesting_through_aliases_is_limited() {
    let deep = format!("{}x{}", "[".repeat(25), "]".repeat(25));
    let text = format!(
        "version: 1\nname: x\nzz: &d {deep}\nyy:\n  a:\n    b:\n      c:\n        d:\n          e:\n            f:\n              g:\n                h:\n                  i:\n                    j:\n                      k: *d\n"
    );
    let ds = errors(&text);
    let s = ds[0].span.as_ref().unwrap();
    assert_eq!((ds[0].kind, s.line, s.column), (LimitExceeded, 15, 26));
    assert!(
        ds[0]
            .message
            .contains(&format!("more than {MAX_YAML_DEPTH} deep"))
    );
}

#[test]
fn recursive_and_unknown_aliases_are_syntax_errors() {
    let ds = errors("version: 1\nname: x\nzz: &a [1, *a]\n");
    let s = ds[0].span.as_ref().unwrap();
    assert_eq!((ds[0].kind, s.line, s.column), (YamlSyntax, 3, 12));
    assert!(ds[0].message.contains("recursive alias"));
}

#[test]
fn spans_stay_right_in_large_files() {
    let n = 20_000;
    let mut text = String::from("version: 1\nname: big\ntools:\n  allow:\n");
    for i in 0..n {
        text.push_str(&format!("    - tool{i}\n"));
    }
    text.push_str("persona:\n  sections:\n");
    for i in 0..2_000 {
        text.push_str(&format!(
            "    - name: s{i}\n      order: {i}\n      text: |\n        line one\n        line {{{{ two }}}}\n"
        ));
    }
    let p = parse(&text).unwrap();
    let allow = p.file.tools.as_ref().unwrap().value.allow.as_ref().unwrap();
    let last = p.span_of(&allow[n - 1]);
    assert_eq!((last.line, last.column, last.len), (4 + n as u32, 7, 9));
    let sections = p.file.persona.as_ref().unwrap().sections.as_ref().unwrap();
    let s = &sections[1_999];
    let origin = p.text_origin(&s.text);
    let offset = s.text.value.find("two").unwrap();
    let at = origin.span_at(&s.text.value, offset);
    let first = 4 + n as u32 + 2 + 1_999 * 5 + 1;
    assert_eq!((at.line, at.column), (first + 4, 17));

    // A problem at the end of a large file is found at its line.
    let bad = format!("{text}bogus: 1\n");
    let last_line = bad.lines().count() as u32;
    assert_eq!(found(&bad), [(UnknownKey, last_line, 1)]);
}

/// Duplicate keys in a large mapping (past the keys compared one by one, into the ones
/// indexed): each reported at its second occurrence with the line of the first, through
/// aliases, with `<<` a merge only when plain.
#[test]
fn duplicate_keys_in_a_large_mapping() {
    let mut keys: Vec<String> = ["v0", "v1", "v2", "&k v3", "v4", "v1", "'<<'", "\"<<\""]
        .map(String::from)
        .to_vec();
    keys.extend((5..17).map(|i| format!("v{i}")));
    keys.extend(["v2", "v17", "v17", "*k ", "<<", "<<", "v18", "v0", "v3"].map(String::from));
    let mut text = String::from("version: 1\nname: p\nvariables:\n");
    for key in &keys {
        if key == "<<" {
            text.push_str("  <<: {}\n");
        } else {
            text.push_str(&format!("  {key}: {{description: x}}\n"));
        }
    }
    let got: Vec<(u32, String, String)> = errors(&text)
        .into_iter()
        .filter(|d| d.kind == DuplicateKey)
        .map(|d| {
            let line = d.span.as_ref().map_or(0, |s| s.line);
            (line, d.message, d.help.unwrap_or_default())
        })
        .collect();
    let dup = |line: u32, key: &str, first: u32| {
        (
            line,
            format!("duplicate key `{key}`"),
            format!("`{key}` is already set on line {first}; keep one of the two"),
        )
    };
    assert_eq!(
        got,
        [
            dup(9, "v1", 5),
            dup(11, "<<", 10),
            dup(24, "v2", 6),
            dup(26, "v17", 25),
            dup(27, "v3", 7),
            dup(31, "v0", 4),
            dup(32, "v3", 7),
        ]
    );
}
