//! Template rendering through the assembler: an arbitrary section text, `when`
//! expression and runtime-context text are compiled, checked and rendered.
//!
//! Input: `TEXT [\0 WHEN [\0 CONTEXT [\0 VALUE]]]` (lossy UTF-8). The section sits between
//! two fixed ones; `x` is a declared variable (default `1`, or VALUE); every built-in
//! variable has a value.
//!
//! Checks: nothing panics, hangs or blows up (minijinja's fuel and recursion limits);
//! a build error or render error is a diagnostic; rendering the same values again, after
//! other values, gives the same assembly (the step cache never answers for other values).

#![no_main]

use std::sync::OnceLock;

use agent_presets::prompt::{
    AssemblerBuilder, Layer, PromptContext, PromptSection, Values, VariableDecl,
};
use agent_presets::tools::ToolCatalog;
use libfuzzer_sys::fuzz_target;

fn tools() -> &'static ToolCatalog {
    static TOOLS: OnceLock<ToolCatalog> = OnceLock::new();
    TOOLS.get_or_init(ToolCatalog::builtin)
}

fn values(x: &str, model: &str) -> Values {
    Values::new()
        .with("model", model)
        .with("provider", "deepseek")
        .with("cwd", "/workspace/example")
        .with("os", "linux")
        .with("shell", "bash")
        .with("date", "2030-01-01")
        .with("x", x)
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut parts = text.splitn(4, '\0');
    let body = parts.next().unwrap_or_default();
    let when = parts.next().filter(|w| !w.is_empty());
    let context = parts.next();
    let x = parts.next().unwrap_or("1");

    let Ok(mut section) = PromptSection::new("fuzzed", 10.0, body) else {
        return;
    };
    if let Some(when) = when {
        section = section.when(when);
    }
    let mut layer = Layer::new("fuzz")
        .section(PromptSection::new("before", 0.0, "Model {{ model }}.").expect("valid"))
        .section(section)
        .section(
            PromptSection::new("after", 20.0, "Tools: {{ tools | join(', ') }}").expect("valid"),
        );
    if let Some(context) = context
        && let Ok(c) = PromptContext::new("fuzzed", 0.0, context)
    {
        layer = layer.context(c);
    }
    layer.variables.push(
        VariableDecl::new("x", "a declared variable")
            .expect("valid")
            .with_default("1"),
    );
    let Ok(assembler) = AssemblerBuilder::new(tools()).layer(layer).build() else {
        return;
    };
    let a = values(x, "model-a");
    let first = assembler.assemble(&a);
    let _ = assembler.assemble(&values(x, "model-b"));
    let _ = assembler.assemble(&a.clone().with("date", "2030-01-02"));
    let again = assembler.assemble(&a);
    match (&first, &again) {
        (Ok(p), Ok(q)) => assert_eq!(p, q, "the same values assembled differently"),
        (Err(_), Err(_)) => {}
        _ => panic!("the same values assembled once and failed once"),
    }
});
