//! The shared benchmark workload (`benches/fixtures/workload.json`) renders to exactly the
//! bytes the Python seed and jinja2 assemblers, the plain-JS one and DSH's npm package
//! produce, so the per-step figures in BENCHMARKS.md compare the same work.

#[path = "../../benches/support/workload.rs"]
mod workload;

use agent_presets::tools::builtin::BUILTIN_TOOL_NAMES;

#[test]
fn the_workload_renders_the_baselines_bytes() {
    let catalog = workload::catalog();
    let assembler = workload::assembler(&catalog);
    let assembly = assembler.assemble(&workload::values()).unwrap();
    assert_eq!(assembly.system.len(), 5_890);
    assert_eq!(assembly.tools.len(), 8);
    assert_eq!(assembly.context, None);
    let (system, tools) = workload::digests(&assembly);
    assert_eq!(system, workload::SYSTEM_SHA256);
    assert_eq!(tools, workload::TOOLS_SHA256);
    // Sorted by (order, name): the harness identity (-1000) first, closing (9000) last.
    assert!(assembly.system.starts_with(
        "You are an AI agent running in the agent-presets harness with the deepseek-v4-flash model."
    ));
    assert!(assembly.system.ends_with("session and saw them pass."));
    // The workload's tools carry the built-in tools' names; the wire sorts them by name.
    let names: Vec<&str> = assembly.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, BUILTIN_TOOL_NAMES);
}

/// Every step re-renders to the same bytes, whether the cache answers or not.
#[test]
fn a_changed_and_restored_model_gives_the_same_bytes_again() {
    let catalog = workload::catalog();
    let assembler = workload::assembler(&catalog);
    let values = workload::values();
    let first = assembler.assemble(&values).unwrap();
    let other = assembler
        .assemble(&values.clone().with("model", "deepseek-v4-pro"))
        .unwrap();
    assert_ne!(other.system, first.system);
    assert_ne!(other.fingerprint, first.fingerprint);
    let again = assembler.assemble(&values).unwrap();
    assert_eq!(again, first);
}
