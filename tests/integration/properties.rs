//! Properties of the assembler over generated inputs (proptest, bounded so `cargo test`
//! stays quick): the order sections are registered in never shows in the prompt;
//! intersecting tool restrictions is commutative; rendering arbitrary section text with
//! arbitrary values never panics and is deterministic.

use std::collections::BTreeSet;
use std::sync::OnceLock;

use agent_presets::prompt::{
    AssemblerBuilder, Layer, PromptContext, PromptSection, Values, VariableDecl,
};
use agent_presets::tools::{ToolCatalog, ToolRestriction, visible_tools};
use proptest::prelude::*;
use proptest::sample::subsequence;

fn tools() -> &'static ToolCatalog {
    static TOOLS: OnceLock<ToolCatalog> = OnceLock::new();
    TOOLS.get_or_init(ToolCatalog::builtin)
}

fn values(model: &str, x: &str) -> Values {
    Values::new()
        .with("model", model)
        .with("provider", "deepseek")
        .with("cwd", "/workspace/demo")
        .with("os", "linux")
        .with("shell", "bash")
        .with("date", "2030-01-01")
        .with("x", x)
}

// ---------------------------------------------------------------- registration order

const NAMES: &[&str] = &[
    "persona",
    "rules",
    "a",
    "b",
    "b.c",
    "b-c",
    "b_c",
    "tool:grep",
    "z:9",
    "closing",
];
const ORDERS: &[f64] = &[-1000.0, -1.5, 0.0, -0.0, 0.0, 1.0, 100.0, 100.0, 9000.0];
const TEXTS: &[&str] = &[
    "You are {{ model }}.",
    "Plain text, no template.",
    "{% if 'grep' in tools %}Use grep.{% endif %}",
    "",
    "  trailing blanks  \n\n",
    "{{ cwd }} on {{ os }}",
    "{% for t in tools %}{{ t }} {% endfor %}",
    "x is {{ x }}",
];
const WHENS: &[Option<&str>] = &[
    None,
    None,
    Some("true"),
    Some("false"),
    Some("'grep' in tools"),
    Some("model == 'model-a'"),
    Some("x != ''"),
];

#[derive(Clone, Debug)]
struct SectionInput {
    name: &'static str,
    order: f64,
    text: &'static str,
    when: Option<&'static str>,
    template: bool,
}

fn section_inputs() -> impl Strategy<Value = Vec<SectionInput>> {
    subsequence(NAMES, 1..=NAMES.len()).prop_flat_map(|names| {
        let n = names.len();
        (
            Just(names),
            prop::collection::vec(
                (
                    prop::sample::select(ORDERS),
                    prop::sample::select(TEXTS),
                    prop::sample::select(WHENS),
                    prop::bool::weighted(0.8),
                ),
                n,
            ),
        )
            .prop_map(|(names, rest)| {
                names
                    .into_iter()
                    .zip(rest)
                    .map(|(name, (order, text, when, template))| SectionInput {
                        name,
                        order,
                        text,
                        when,
                        template,
                    })
                    .collect::<Vec<_>>()
            })
    })
}

fn layer_of(sections: &[SectionInput]) -> Layer {
    let mut layer = Layer::new("host");
    for s in sections {
        let mut section = PromptSection::new(s.name, s.order, s.text)
            .unwrap()
            .template(s.template);
        if let Some(w) = s.when {
            section = section.when(w);
        }
        layer = layer.section(section);
    }
    layer
        .variables
        .push(VariableDecl::new("x", "a declared variable").unwrap());
    layer
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    /// The same sections registered in any order give the same prompt: sections sort by
    /// (order, name), ties by name bytewise, `-0` as `0`.
    #[test]
    fn a_section_set_renders_the_same_in_any_registration_order(
        (sections, shuffled) in section_inputs()
            .prop_flat_map(|s| (Just(s.clone()), Just(s).prop_shuffle())),
        model in prop::sample::select(&["model-a", "model-b"][..]),
    ) {
        let a = AssemblerBuilder::new(tools()).layer(layer_of(&sections)).build().unwrap();
        let b = AssemblerBuilder::new(tools()).layer(layer_of(&shuffled)).build().unwrap();
        prop_assert_eq!(a.section_names().collect::<Vec<_>>(), b.section_names().collect::<Vec<_>>());
        let v = values(model, "1");
        prop_assert_eq!(a.assemble(&v).unwrap(), b.assemble(&v).unwrap());
    }
}

// ---------------------------------------------------------------- restrictions

const PATTERNS: &[&str] = &[
    "bash",
    "grep",
    "glob",
    "read_file",
    "write_file",
    "edit_file",
    "list_dir",
    "todo_write",
    "read_*",
    "*_file",
    "g*",
    "*",
    "*_?ir",
    "[bg]*",
    "{bash,grep}",
];

fn restriction() -> impl Strategy<Value = ToolRestriction> {
    (
        prop::option::of(subsequence(PATTERNS, 0..=4)),
        subsequence(PATTERNS, 0..=3),
    )
        .prop_map(|(allow, deny)| {
            let r = match allow {
                Some(allow) => ToolRestriction::allow(allow).unwrap(),
                None => ToolRestriction::default(),
            };
            r.with_deny(deny).unwrap()
        })
}

fn names(restrictions: &[&ToolRestriction]) -> Vec<String> {
    visible_tools(tools(), restrictions.iter().copied())
        .iter()
        .map(|n| n.as_str().to_owned())
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Restrictions intersect: the visible tools (and, with no explicit `order`, their
    /// wire order) do not depend on which layer restricts first.
    #[test]
    fn restriction_intersection_is_commutative(
        a in restriction(),
        b in restriction(),
        c in restriction(),
    ) {
        let ab = names(&[&a, &b]);
        prop_assert_eq!(&ab, &names(&[&b, &a]));
        let abc = names(&[&a, &b, &c]);
        for perm in [[&a, &c, &b], [&b, &a, &c], [&b, &c, &a], [&c, &a, &b], [&c, &b, &a]] {
            prop_assert_eq!(&abc, &names(&perm));
        }
        // And it is the intersection: a tool is visible iff every layer permits it.
        let expected: Vec<String> = tools()
            .names()
            .filter(|n| [&a, &b, &c].iter().all(|r| r.permits(n)))
            .map(str::to_owned)
            .collect();
        prop_assert_eq!(abc, expected);
    }

    /// With an explicit `order` the visible *set* is still commutative (the order itself
    /// is the nearest layer's, by design).
    #[test]
    fn with_an_order_the_visible_set_is_commutative(
        a in restriction(),
        b in restriction(),
        order in subsequence(&["grep", "bash", "read_file", "glob"][..], 0..=3),
    ) {
        let mut order: Vec<&str> = order;
        order.push("<rest>");
        let a = a.with_order(order);
        let ab: BTreeSet<String> = names(&[&a, &b]).into_iter().collect();
        let ba: BTreeSet<String> = names(&[&b, &a]).into_iter().collect();
        prop_assert_eq!(ab, ba);
    }
}

// ---------------------------------------------------------------- render never panics

/// Template-ish text: fragments of minijinja syntax mixed with arbitrary text.
fn template_text() -> impl Strategy<Value = String> {
    let fragment = prop_oneof![
        4 => prop::sample::select(vec![
            "{{", "}}", "{%", "%}", "{#", "#}", "{{-", "-}}", " if ", " else ", " endif ",
            " for t in tools ", " endfor ", " set y = ", " macro m() ", " endmacro ",
            " raw ", " endraw ", "model", "x", "tools", "cwd", "date", "loop.index", "|",
            " upper", " join(', ')", " length", " default('d')", " tojson", "(", ")", "[",
            "]", "'", "\"", " ~ ", " + ", " * ", " / ", " // ", "0", "-1", "9999999999",
            "range(", " in ", " not ", " is defined", ".", ":", ",", "\n", " ", "\u{feff}",
            "é", "🎉", "\\", "\r\n", "\t",
        ]).prop_map(str::to_owned),
        1 => any::<String>().prop_map(|s| s.chars().take(6).collect()),
    ];
    prop::collection::vec(fragment, 0..24).prop_map(|parts| parts.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// Whatever the section text, `when` and context, and whatever the values: building
    /// either succeeds or reports diagnostics, rendering either succeeds or reports
    /// diagnostics, and the same values always give the same result.
    #[test]
    fn render_never_panics(
        text in template_text(),
        when in prop::option::of(template_text()),
        context in template_text(),
        template in prop::bool::weighted(0.9),
        model in any::<String>(),
        x in any::<String>(),
    ) {
        let Ok(mut section) = PromptSection::new("fuzzed", 10.0, text) else {
            return Ok(());
        };
        section = section.template(template);
        if let Some(w) = when {
            section = section.when(w);
        }
        let mut layer = Layer::new("host")
            .section(PromptSection::new("before", 0.0, "Model {{ model }}.").unwrap())
            .section(section);
        layer = layer.context(PromptContext::new("ctx", 0.0, context).unwrap());
        layer
            .variables
            .push(VariableDecl::new("x", "declared").unwrap().with_default("1"));
        let Ok(assembler) = AssemblerBuilder::new(tools()).layer(layer).build() else {
            return Ok(());
        };
        let v = values(&model, &x);
        let first = assembler.assemble(&v);
        let _ = assembler.assemble(&values("another", &x));
        let again = assembler.assemble(&v);
        match (first, again) {
            (Ok(p), Ok(q)) => prop_assert_eq!(p, q),
            (Err(p), Err(q)) => prop_assert_eq!(p.to_string(), q.to_string()),
            (p, q) => prop_assert!(false, "{p:?} then {q:?}"),
        }
    }
}
