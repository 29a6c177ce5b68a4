//! The step cache is exact: over random sequences of values, a long-lived assembler
//! returns byte for byte what a fresh assembler returns for the same values.

use agent_presets::prompt::{
    AssemblerBuilder, Layer, PromptAssembler, PromptContext, PromptSection, Values, VariableDecl,
};
use agent_presets::tools::ToolCatalog;
use minijinja::Value;
use proptest::prelude::*;

fn assembler(catalog: &ToolCatalog) -> PromptAssembler {
    let section = |name: &str, order: f64, text: &str| {
        PromptSection::new(name, order, text).expect("valid section")
    };
    let layer = Layer::new("p")
        .section(section(
            "values",
            0.0,
            "a={{ a }} b={{ b }} model={{ model }}",
        ))
        .section(section(
            "types",
            1.0,
            "{{ a is integer }} {{ a is float }} {{ a is string }} {{ b | escape }} {{ a | string | length }}",
        ))
        .section(section("one", 2.0, "a is one").when("a == 1"))
        .section(section("truthy", 3.0, "b is truthy").when("b"))
        .context(PromptContext::new("facts", 0.0, "c={{ c }} {{ c is number }}").expect("valid"))
        // Context pieces on different values (each is reused while its own values stay),
        // one that renders nothing for some values, one verbatim.
        .context(
            PromptContext::new("both", 1.0, "{% if b %}b={{ b }}{% endif %} a={{ a }}")
                .expect("valid"),
        )
        .context(PromptContext::new("maybe", 2.0, "{% if c == 1 %}one{% endif %}").expect("valid"))
        .context(PromptContext::new("fixed", 3.0, "fixed").expect("valid"))
        .variable(VariableDecl::new("a", "a").expect("name").with_default("d"))
        .variable(VariableDecl::new("b", "b").expect("name").with_default("d"))
        .variable(VariableDecl::new("c", "c").expect("name").with_default("d"));
    AssemblerBuilder::new(catalog)
        .layer(layer)
        .build()
        .expect("builds")
}

/// Values that templates compare equal but print differently, and a few others.
fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::from(1)),
        Just(Value::from(1.0)),
        Just(Value::from(true)),
        Just(Value::from(false)),
        Just(Value::from(0)),
        Just(Value::from(0.0)),
        Just(Value::from(-0.0)),
        Just(Value::from(f64::NAN)),
        Just(Value::from(f64::INFINITY)),
        Just(Value::from("1")),
        Just(Value::from("1.0")),
        Just(Value::from("true")),
        Just(Value::from("<b>")),
        Just(Value::from_safe_string("<b>".to_owned())),
        Just(Value::from("")),
        Just(Value::from(())),
        Just(Value::from(9_007_199_254_740_993_i64)),
        Just(Value::from(9_007_199_254_740_992.0)),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        "[a-c1.<>]{0,3}".prop_map(Value::from),
    ]
}

fn value() -> impl Strategy<Value = Option<Value>> {
    let list = prop::collection::vec(scalar(), 0..3).prop_map(Value::from);
    let map = prop::collection::btree_map("[ab]", scalar(), 0..3).prop_map(Value::from);
    prop_oneof![
        4 => scalar().prop_map(Some),
        1 => list.prop_map(Some),
        1 => map.prop_map(Some),
        1 => Just(None),
    ]
}

fn step() -> impl Strategy<Value = Values> {
    (value(), value(), value(), value()).prop_map(|(a, b, c, model)| {
        let mut values = Values::new();
        for (name, v) in [("a", a), ("b", b), ("c", c), ("model", model)] {
            if let Some(v) = v {
                values.set(name, v);
            }
        }
        values
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn long_lived_assembler_equals_a_fresh_one(steps in prop::collection::vec(step(), 1..24)) {
        let catalog = ToolCatalog::new();
        let long_lived = assembler(&catalog);
        for values in &steps {
            let fresh = assembler(&catalog).assemble(values);
            let reused = long_lived.assemble(values);
            prop_assert_eq!(reused, fresh, "values {:?}", values);
        }
    }
}

/// The examples from the issue, spelled out.
#[test]
fn template_equal_values_render_exactly() {
    let catalog = ToolCatalog::new();
    let long_lived = assembler(&catalog);
    let sequence = [
        Value::from(1),
        Value::from(1.0),
        Value::from(true),
        Value::from(0.0),
        Value::from(-0.0),
        Value::from(1),
    ];
    for v in sequence {
        let values = Values::new()
            .with("a", v.clone())
            .with("c", v.clone())
            .with("model", "m");
        let reused = long_lived.assemble(&values).expect("renders");
        let fresh = assembler(&catalog).assemble(&values).expect("renders");
        assert_eq!(reused, fresh, "{v:?}");
        assert!(
            reused.system.contains(&format!("a={v}")),
            "{v:?}: {}",
            reused.system
        );
    }
}

/// One change to a value set that lives across steps.
fn change() -> impl Strategy<Value = (usize, Option<Value>)> {
    (0..4usize, value())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    /// A host that keeps one `Values` and changes it in place between steps (the same set
    /// again, a clone of it, or a changed one) still gets exactly what a fresh assembler
    /// renders: an unchanged set is answered by its stamp, a changed one never is.
    #[test]
    fn one_value_set_changed_in_place_equals_a_fresh_assembler(
        changes in prop::collection::vec(change(), 1..24),
    ) {
        let catalog = ToolCatalog::new();
        let long_lived = assembler(&catalog);
        let mut values = Values::new();
        for (which, v) in changes {
            let name = ["a", "b", "c", "model"][which];
            match v {
                Some(v) => values.set(name, v),
                None => {
                    values.unset(name);
                    &mut values
                }
            };
            let fresh = assembler(&catalog).assemble(&values);
            prop_assert_eq!(long_lived.assemble(&values), fresh.clone(), "values {:?}", values);
            prop_assert_eq!(long_lived.assemble(&values), fresh.clone(), "again {:?}", values);
            prop_assert_eq!(long_lived.assemble(&values.clone()), fresh, "clone {:?}", values);
        }
    }
}

/// An unchanged value set is answered with the same shared text, not a copy.
#[test]
fn an_unchanged_step_shares_the_text() {
    let catalog = ToolCatalog::new();
    let long_lived = assembler(&catalog);
    let values = Values::new().with("a", 1).with("model", "m");
    let first = long_lived.assemble(&values).expect("renders");
    let again = long_lived.assemble(&values).expect("renders");
    assert!(std::sync::Arc::ptr_eq(
        first.system.as_arc(),
        again.system.as_arc()
    ));
    // Equal values in a new set: still the same text (found by comparing the values).
    let equal = Values::new().with("a", 1).with("model", "m");
    let third = long_lived.assemble(&equal).expect("renders");
    assert!(std::sync::Arc::ptr_eq(
        first.system.as_arc(),
        third.system.as_arc()
    ));
}

/// A host object can change what it prints while the value set holding it does not
/// change: such a set is never answered by its stamp.
#[test]
fn a_host_object_that_changes_is_rendered_again() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[derive(Debug, Default)]
    struct Counter(AtomicUsize);
    impl minijinja::value::Object for Counter {
        fn repr(self: &Arc<Self>) -> minijinja::value::ObjectRepr {
            minijinja::value::ObjectRepr::Plain
        }

        fn render(self: &Arc<Self>, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "n{}", self.0.load(Ordering::Relaxed))
        }
    }

    let catalog = ToolCatalog::new();
    let long_lived = assembler(&catalog);
    let counter = Arc::new(Counter::default());
    let values = Values::new()
        .with("a", Value::from_dyn_object(Arc::clone(&counter)))
        .with("model", "m");
    let first = long_lived.assemble(&values).expect("renders");
    assert!(first.system.contains("a=n0"), "{}", first.system);
    counter.0.store(1, Ordering::Relaxed);
    let second = long_lived.assemble(&values).expect("renders");
    assert!(second.system.contains("a=n1"), "{}", second.system);
}

/// Two different byte strings are two keys: a step after a change of bytes renders
/// the new bytes, never the prompt of the old ones.
#[test]
fn different_bytes_are_different_keys() {
    let catalog = ToolCatalog::new();
    let long_lived = assembler(&catalog);
    let sequence = [
        Value::from_bytes(b"one".to_vec()),
        Value::from_bytes(b"two".to_vec()),
        Value::from_bytes(b"two".to_vec()),
        Value::from_bytes(Vec::new()),
        Value::from_bytes(b"one".to_vec()),
    ];
    for v in sequence {
        let values = Values::new()
            .with("a", v.clone())
            .with("c", v.clone())
            .with("model", "m");
        let reused = long_lived.assemble(&values).expect("renders");
        let fresh = assembler(&catalog).assemble(&values).expect("renders");
        assert_eq!(reused, fresh, "{v:?}");
    }
}
