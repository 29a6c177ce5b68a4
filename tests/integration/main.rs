//! The integration tests, one crate: each file below was its own test binary, and
//! linking the library 34 times dominated CI. Run one file's tests with
//! `cargo test --test integration -- <file>::`.

mod support;

/// Not a test: the MCP fixture server's entry point, at the crate root so that
/// `--exact mcp_fixture_server` selects it (see support/mcp_fixture.rs).
#[test]
fn mcp_fixture_server() {
    support::mcp_fixture::serve_stdio_if_asked();
}

mod bounded_reads;
mod builtin_bash;
mod builtin_files;
mod builtin_hardening;
mod builtin_registry;
mod builtin_search;
mod builtin_text_truth;
mod ci_recipes;
mod cli;
mod cli_hooks;
mod cli_import;
mod cli_output;
mod cli_record;
mod cli_report_formats;
mod cli_run;
mod cli_test_live;
mod cli_validate_cases;
mod client_agent;
mod conformance_core;
mod conformance_permissions;
mod connect_sandbox;
mod core_registry;
mod core_session;
mod diagnostic_pages;
mod fuzz_regressions;
mod lock;
mod lsp;
mod mcp_client;
mod monorepo;
mod preset_catalog;
mod preset_parse;
mod preset_schema_drift;
mod preset_shape;
mod preset_validate;
mod prompt_step_cache;
mod prompt_substitution;
mod properties;
mod provider_lint;
mod render_explain;
mod run_journey;
mod schema_drift;
mod security_tools;
mod show_round_trip;
mod terminal;
mod testing_suite;
mod trust_gate;
mod trust_race;
mod workload_fixture;
