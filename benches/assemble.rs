//! Per-step and set-up costs: assembling the system prompt + tools of a validated preset,
//! and validating presets (parse, resolve, compile, render once).
//!
//! Run: `cargo bench --bench assemble`.

#[path = "support/standard.rs"]
mod support;

use agent_presets::preset::{PresetCatalog, validate_in_catalog};
use agent_presets::prompt::Values;
use agent_presets::request::Fingerprint;
use agent_presets::tools::ToolCatalog;
use support::{standard, values};

fn main() {
    divan::main();
}

/// Assemble `standard`, alternating between two sets of values every step.
fn alternate(bencher: divan::Bencher, a: Values, b: Values) {
    let preset = standard();
    let assembler = preset.assembler();
    let mut flip = false;
    bencher.bench_local(|| {
        flip = !flip;
        assembler.assemble(divan::black_box(if flip { &a } else { &b }))
    });
}

/// One agent step on `standard`: system prompt + tool list + context.
#[divan::bench]
fn assemble_standard_step(bencher: divan::Bencher) {
    let preset = standard();
    let assembler = preset.assembler();
    let values = values();
    bencher.bench_local(|| assembler.assemble(divan::black_box(&values)));
}

/// One agent step on `standard` where a runtime fact (the date) changes every step: the
/// context is re-rendered, the system prompt is reused.
#[divan::bench]
fn assemble_standard_step_fact_changes(bencher: divan::Bencher) {
    alternate(
        bencher,
        values().with("date", "2030-01-01"),
        values().with("date", "2030-01-02"),
    );
}

/// One agent step where the model changes every step: everything is re-rendered.
#[divan::bench]
fn assemble_standard_step_uncached(bencher: divan::Bencher) {
    alternate(
        bencher,
        values().with("model", "model-a"),
        values().with("model", "model-b"),
    );
}

/// Fingerprinting the cacheable prefix of `standard` from scratch (an assembly carries a
/// fingerprint computed once per distinct system prompt).
#[divan::bench]
fn fingerprint_standard(bencher: divan::Bencher) {
    let a = standard()
        .assembler()
        .assemble(&values())
        .expect("assemble");
    bencher.bench_local(|| {
        Fingerprint::of(
            Some("deepseek"),
            Some("deepseek-v4-flash"),
            divan::black_box(&a.system),
            &a.tools,
        )
    });
}

/// Validating both built-ins from scratch (parse + resolve + full build + one render).
#[divan::bench]
fn validate_builtins(bencher: divan::Bencher) {
    let tools = ToolCatalog::builtin();
    bencher.bench_local(|| {
        let catalog = PresetCatalog::builtin();
        for name in ["standard", "minimal"] {
            divan::black_box(validate_in_catalog(&catalog, name, &tools).is_valid());
        }
    });
}

/// Building the built-in tool catalog (schema generation; argument validators are
/// compiled lazily, on a tool's first call).
#[divan::bench]
fn builtin_tool_catalog() -> ToolCatalog {
    ToolCatalog::builtin()
}
