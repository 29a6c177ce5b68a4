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
