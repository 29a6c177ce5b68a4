//! Tests that measure the peak memory of the processes they start: they need a test
//! binary of their own (see tests/integration/main.rs for the rest).

mod hostile_inputs;
#[path = "../integration/support/mcp_fixture.rs"]
mod mcp_fixture;
#[path = "../integration/support/mock_provider.rs"]
#[allow(dead_code)]
mod mock_provider;
#[cfg(feature = "client")]
mod stderr_flood;
mod template_budget;

/// Not a test: the MCP fixture server's entry point (see support/mcp_fixture.rs).
#[test]
fn mcp_fixture_server() {
    mcp_fixture::serve_stdio_if_asked();
}
