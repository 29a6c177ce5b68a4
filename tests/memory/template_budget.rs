//! One template budget per assembly: fuel and output bytes are shared by every `when`,
//! section and context of one assembly, so many sections cannot add up to more than one
//! may. Exceeding it is a located `limit-exceeded`, never an abort (issue 9's attack:
//! sections that each double a string to 16 MiB).

use std::fmt::Write as _;

use agent_presets::DiagnosticKind;
use agent_presets::prompt::{
    AssemblerBuilder, Layer, PromptAssembler, PromptContext, PromptSection, TEMPLATE_OUTPUT_BYTES,
    Values,
};
use agent_presets::tools::ToolCatalog;

/// A template that doubles a string `times` times and prints `what` of it.
fn doubling(times: u32, what: &str) -> String {
    format!(
        "{{% set ns = namespace(s='x') %}}{{% for i in range({times}) %}}{{% set ns.s = ns.s ~ ns.s %}}{{% endfor %}}{what}"
    )
}

fn build(layer: Layer) -> PromptAssembler {
    AssemblerBuilder::new(&ToolCatalog::new())
        .layer(layer)
        .build()
        .expect("builds")
}

fn sections(n: usize, text: &str) -> Layer {
    let mut layer = Layer::new("p");
    for i in 0..n {
        layer = layer.section(
            PromptSection::new(&format!("s{i:03}"), i as f64, text).expect("valid section"),
        );
    }
    layer
}

#[test]
fn fuel_is_shared_by_the_sections_of_one_assembly() {
    // One section building 8 MiB uses a bit under half the fuel: two fit, three do not.
    let text = doubling(23, "{{ ns.s | length }}");
    let two = build(sections(2, &text)).assemble(&Values::new());
    assert!(two.is_ok(), "{two:?}");
    let err = build(sections(3, &text))
        .assemble(&Values::new())
        .expect_err("the third section runs out of fuel");
    assert!(err.has(DiagnosticKind::LimitExceeded), "{err}");
    assert!(err.to_string().contains("section `s002`"), "{err}");
}

#[test]
fn output_bytes_are_shared_by_sections_and_contexts() {
    let mib = (TEMPLATE_OUTPUT_BYTES / 4) as usize;
    let text = "{{ 'x' * n }}";
    let values = Values::new().with("n", mib - 16);
    let mut layer = sections(3, text);
    let ok = build(
        layer
            .clone()
            .variable(agent_presets::prompt::VariableDecl::new("n", "n").expect("name")),
    )
    .assemble(&values);
    assert!(ok.is_ok(), "{ok:?}");
    // Three quarters in the system prompt, two more quarters in the context: too much.
    layer = layer
        .context(PromptContext::new("c1", 0.0, text).expect("valid"))
        .context(PromptContext::new("c2", 1.0, text).expect("valid"))
        .variable(agent_presets::prompt::VariableDecl::new("n", "n").expect("name"));
    let err = build(layer)
        .assemble(&values)
        .expect_err("the context does not fit");
    assert!(err.has(DiagnosticKind::LimitExceeded), "{err}");
    assert!(err.to_string().contains("context `c2`"), "{err}");
}

#[test]
fn the_budget_is_per_assembly_not_per_assembler() {
    // Each step starts with the whole budget again.
    let text = doubling(23, "{{ ns.s | length }}");
    let assembler = build(sections(2, &text));
    for _ in 0..3 {
        assert!(assembler.assemble(&Values::new()).is_ok());
    }
}

#[test]
fn doubling_attack_is_refused_quickly_at_the_first_section() {
    for n in [50, 200] {
        let err = build(sections(n, &doubling(24, "{{ ns.s }}")))
            .assemble(&Values::new())
            .expect_err("refused");
        assert_eq!(err.iter().count(), 1, "{err}");
        assert!(err.has(DiagnosticKind::LimitExceeded), "{err}");
        assert!(err.to_string().contains("section `s000`"), "{err}");
    }
}

/// The attack through the CLI: `validate` and `render` of 50 and 200 doubling sections
/// are refused with a located `limit-exceeded`, and the process stays small (measured as
/// the children's peak resident set, which this test binary runs alone).
#[cfg(all(feature = "cli", target_os = "linux"))]
#[test]
fn doubling_attack_through_the_cli_has_bounded_memory() {
    use std::process::Command;

    let project = tempfile::tempdir().expect("tempdir");
    let config = tempfile::tempdir().expect("tempdir");
    let dir = project.path().join(".agent-presets");
    std::fs::create_dir_all(&dir).expect("mkdir");
    for n in [50, 200] {
        let mut yaml = format!("version: 1\nname: double{n}\npersona:\n  sections:\n");
        for i in 0..n {
            let _ = write!(
                yaml,
                "    - name: s{i:03}\n      order: {i}\n      text: \"{}\"\n",
                doubling(24, "{{ ns.s }}")
            );
        }
        std::fs::write(dir.join(format!("double{n}.yaml")), yaml).expect("write");
        for args in [
            vec![
                "validate".to_owned(),
                format!("double{n}"),
                "--format".into(),
                "json".into(),
            ],
            vec!["render".to_owned(), format!("double{n}")],
        ] {
            let out = Command::new(env!("CARGO_BIN_EXE_agent-presets"))
                .args(&args)
                .current_dir(project.path())
                .env("AGENT_PRESETS_CONFIG_DIR", config.path())
                .env("NO_COLOR", "1")
                .output()
                .expect("runs");
            assert_eq!(out.status.code(), Some(1), "{args:?}: {out:?}");
            let text = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(text.contains("P0008"), "{args:?}: {text}");
            assert!(text.contains("s000"), "{args:?}: {text}");
            assert!(
                text.len() < 10_000,
                "{args:?}: {} bytes of output",
                text.len()
            );
        }
    }
    // SAFETY: getrusage only writes into the struct we pass.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) };
    assert_eq!(rc, 0);
    let peak_mib = usage.ru_maxrss / 1024; // KiB on Linux
    assert!(peak_mib < 256, "a child peaked at {peak_mib} MiB");
}

/// Sections that only print variables are printed without the template engine; their
/// output still counts against the same byte budget, with the same error.
#[test]
fn plain_substitutions_share_the_byte_budget_too() {
    let mib = (TEMPLATE_OUTPUT_BYTES / 4) as usize;
    let values = Values::new().with("v", "x".repeat(mib));
    let decl = || agent_presets::prompt::VariableDecl::new("v", "v").expect("name");
    let ok = build(sections(3, "{{ v }}").variable(decl())).assemble(&values);
    assert!(ok.is_ok(), "{ok:?}");
    let err = build(sections(5, "{{ v }}").variable(decl()))
        .assemble(&values)
        .expect_err("the fifth section does not fit");
    assert!(err.has(DiagnosticKind::LimitExceeded), "{err}");
    assert!(err.to_string().contains("section `s004`"), "{err}");
    // The same through the engine (a filter forces it): the same outcome.
    let err = build(sections(5, "{{ v | string }}").variable(decl()))
        .assemble(&values)
        .expect_err("the fifth section does not fit");
    assert!(err.to_string().contains("section `s004`"), "{err}");
}
