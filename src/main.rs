//! The `agent-presets` binary: everything lives in [`agent_presets::cli`].

/// Validation allocates many small, short-lived values (YAML nodes, template ASTs,
/// section maps) from several threads at once. With mimalloc, validating 1,000 presets
/// takes 2.86 instead of 3.28 billion instructions (malloc and free were 18% of them under
/// glibc), see BENCHMARKS.md.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    agent_presets::cli::run()
}
