//! The `agent-presets` binary: everything lives in [`agent_presets::cli`].

fn main() -> std::process::ExitCode {
    agent_presets::cli::run()
}
