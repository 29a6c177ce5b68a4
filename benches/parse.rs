//! Parsing and validating large preset files: the cost must grow linearly with the file
//! (a span or text origin never rescans the file from the start).
//!
//! Run: `cargo bench --bench parse`. Each benchmark runs at two sizes, 4× apart; linear
//! code takes about 4× as long for the larger one.

use agent_presets::preset::{PresetCatalog, parse_preset, validate_in_catalog};
use agent_presets::tools::ToolCatalog;

fn main() {
    divan::main();
}

/// A valid preset whose `tools.allow` lists `entries` names (one per line).
fn list_entries(entries: usize) -> String {
    let mut text = String::from("version: 1\nname: big\ntools:\n  allow:\n");
    for _ in 0..entries {
        text.push_str("    - grep\n");
    }
    text
}

/// A valid preset with `sections` one-line sections.
fn sections(sections: usize) -> String {
    let mut text = String::from("version: 1\nname: big\npersona:\n  sections:\n");
    for i in 0..sections {
        text.push_str(&format!(
            "    - {{name: s{i}, order: {i}, text: \"Section {i} of the prompt.\"}}\n"
        ));
    }
    text
}

/// Parse only (shape check + typed deserialization).
#[divan::bench(args = [10_000, 40_000])]
fn parse_list_entries(bencher: divan::Bencher, n: usize) {
    let text = list_entries(n);
    bencher.bench(|| parse_preset("big.yaml".into(), divan::black_box(text.as_bytes())).is_ok());
}

/// Parse only, sections.
#[divan::bench(args = [2_500, 10_000])]
fn parse_sections(bencher: divan::Bencher, n: usize) {
    let text = sections(n);
    bencher.bench(|| parse_preset("big.yaml".into(), divan::black_box(text.as_bytes())).is_ok());
}

/// Full validation (parse, resolve, compile, render once) of a file of list entries.
#[divan::bench(args = [10_000, 40_000], sample_count = 10)]
fn validate_list_entries(bencher: divan::Bencher, n: usize) {
    let text = list_entries(n);
    let tools = ToolCatalog::builtin();
    bencher.bench(|| {
        let mut catalog = PresetCatalog::builtin();
        catalog
            .add_text("big", "big.yaml", text.clone())
            .expect("added");
        validate_in_catalog(&catalog, "big", &tools).is_valid()
    });
}

/// Full validation of a file of sections.
#[divan::bench(args = [2_500, 10_000], sample_count = 10)]
fn validate_sections(bencher: divan::Bencher, n: usize) {
    let text = sections(n);
    let tools = ToolCatalog::builtin();
    bencher.bench(|| {
        let mut catalog = PresetCatalog::builtin();
        catalog
            .add_text("big", "big.yaml", text.clone())
            .expect("added");
        validate_in_catalog(&catalog, "big", &tools).is_valid()
    });
}
