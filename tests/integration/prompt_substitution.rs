//! Sections that are text and `{{ name }}` only are printed without the template engine:
//! the bytes and the errors are the engine's own.

use agent_presets::DiagnosticKind;
use agent_presets::prompt::{AssemblerBuilder, Layer, PromptAssembler, PromptSection, Values};
use agent_presets::tools::ToolCatalog;
use minijinja::Value;

fn assembler(text: &str) -> PromptAssembler {
    let layer = Layer::new("p")
        .section(PromptSection::new("s", 0.0, text).expect("valid section"))
        .variable(agent_presets::prompt::VariableDecl::new("v", "v").expect("name"));
    AssemblerBuilder::new(&ToolCatalog::new())
        .layer(layer)
        .build()
        .expect("builds")
}

#[test]
fn prints_every_kind_of_value_as_the_engine_does() {
    // `| string` sends the same text through the engine.
    let fast = assembler("a {{ v }} b\n{{v}}\n\n");
    let engine = assembler("a {{ v | string }} b\n{{v|string}}\n\n");
    for v in [
        Value::from("text with {{ braces }} and trailing spaces   "),
        Value::from(1),
        Value::from(1.0),
        Value::from(-0.0),
        Value::from(1e300),
        Value::from(true),
        Value::from(()),
        Value::from_safe_string("<b>&</b>".into()),
        Value::from(vec![Value::from("a"), Value::from(1.5)]),
        Value::from(std::collections::BTreeMap::from([("k", 1)])),
        Value::from(""),
    ] {
        let values = Values::new().with("v", v.clone());
        let a = fast.assemble(&values).expect("renders");
        let b = engine.assemble(&values).expect("renders");
        assert_eq!(a.system, b.system, "{v:?}");
    }
}

#[test]
fn an_undefined_value_is_the_engines_error() {
    let values = Values::new().with("v", Value::UNDEFINED);
    let err = assembler("a {{ v }} b")
        .assemble(&values)
        .expect_err("undefined");
    assert!(err.has(DiagnosticKind::MissingValue), "{err}");
    assert!(
        err.to_string()
            .contains("section `s` needs a value it does not have"),
        "{err}"
    );
}

#[test]
fn text_without_template_syntax_is_sent_as_written() {
    let a = assembler("  Plain text: } }} { {\n\n")
        .assemble(&Values::new())
        .expect("renders");
    assert_eq!(a.system, "  Plain text: } }} { {");
}
