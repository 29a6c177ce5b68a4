//! What confinement on descriptors costs: the file tools and the search walk on a
//! generated project (200 directories, 2,000 files, a `.gitignore`), each call through
//! the registry as a model makes it.
//!
//! Run: `cargo bench --bench tools`.

use std::path::Path;

use agent_presets::tools::sandbox::{SandboxMode, SandboxProfile};
use agent_presets::tools::{ToolCatalog, ToolContext, ToolRegistry};
use serde_json::{Value, json};

fn main() {
    divan::main();
}

/// A project `<tmp>/ws`: `src/mod{i}/sub{j}/file{k}.rs`, a big file, an ignored tree.
struct Project {
    _tmp: tempfile::TempDir,
    ctx: ToolContext,
    registry: ToolRegistry,
    runtime: tokio::runtime::Runtime,
}

impl Project {
    fn new() -> Self {
        let tmp = tempfile::tempdir().expect("tempdir");
        let ws = tmp.path().join("ws");
        let write = |rel: &str, text: &str| {
            let path = ws.join(rel);
            std::fs::create_dir_all(path.parent().unwrap_or(Path::new("."))).expect("mkdir");
            std::fs::write(path, text).expect("write");
        };
        write(".gitignore", "target/\n*.log\n");
        for i in 0..20 {
            for j in 0..10 {
                for k in 0..10 {
                    write(
                        &format!("src/mod{i}/sub{j}/file{k}.rs"),
                        &format!("// file {i}/{j}/{k}\npub fn item_{k}() -> u32 {{ {k} }}\n")
                            .repeat(20),
                    );
                }
            }
        }
        for k in 0..200 {
            write(&format!("target/debug/out{k}.rs"), "pub fn item_0() {}\n");
        }
        let big: String = (0..10_000)
            .map(|i| format!("line {i} of a big file\n"))
            .collect();
        write("big.txt", &big);
        for k in 0..1_000 {
            write(&format!("flat/entry{k:04}.txt"), "x");
        }
        Project {
            ctx: ToolContext::new(&ws).expect("workspace"),
            registry: ToolRegistry::unrestricted(&ToolCatalog::builtin()),
            runtime: tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .expect("runtime"),
            _tmp: tmp,
        }
    }

    fn call(&self, tool: &str, args: &Value) -> String {
        self.runtime.block_on(async {
            match self.registry.call(tool, args.clone(), &self.ctx).await {
                Ok(out) => out.content,
                Err(e) => e.to_output().content,
            }
        })
    }
}

fn bench(bencher: divan::Bencher, tool: &str, args: Value) {
    let project = Project::new();
    bencher.bench_local(|| project.call(tool, divan::black_box(&args)));
}

/// `read_file` of a 10,000-line file (the first 2,000 lines come back).
#[divan::bench]
fn read_file_big(bencher: divan::Bencher) {
    bench(bencher, "read_file", json!({"path": "big.txt"}));
}

/// `read_file` four directories deep.
#[divan::bench]
fn read_file_deep(bencher: divan::Bencher) {
    bench(
        bencher,
        "read_file",
        json!({"path": "src/mod7/sub3/file5.rs"}),
    );
}

/// `write_file` of a small file (atomic: temporary file, fsync, rename).
#[divan::bench]
fn write_file_small(bencher: divan::Bencher) {
    bench(
        bencher,
        "write_file",
        json!({"path": "src/mod7/sub3/new.rs", "content": "pub fn new() {}\n"}),
    );
}

/// `list_dir` of a directory of 1,000 files.
#[divan::bench]
fn list_dir_1000(bencher: divan::Bencher) {
    bench(bencher, "list_dir", json!({"path": "flat"}));
}

/// `grep` over the whole project (2,000 searched files, 200 ignored).
#[divan::bench]
fn grep_project(bencher: divan::Bencher) {
    bench(
        bencher,
        "grep",
        json!({"pattern": "item_7", "output_mode": "count"}),
    );
}

/// `glob` `**/*.rs` over the whole project.
#[divan::bench]
fn glob_project(bencher: divan::Bencher) {
    bench(bencher, "glob", json!({"pattern": "**/*.rs"}));
}

/// A small workspace for running commands, with the sandbox `mode`.
fn command_workspace(mode: SandboxMode) -> (tempfile::TempDir, ToolContext) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let ctx = ToolContext::new(tmp.path())
        .expect("workspace")
        .with_sandbox(SandboxProfile::new(mode));
    (tmp, ctx)
}

/// `bash` running `true`, without a sandbox and in each sandbox: the difference is what
/// setting the sandbox up costs per command (building the Landlock ruleset and the
/// seccomp programs in the agent, the private temporary directory, applying them in the
/// child).
#[divan::bench(args = ["full-access", "workspace-write", "read-only"], sample_count = 200)]
fn bash_true(bencher: divan::Bencher, mode: &str) {
    let mode: SandboxMode = mode.parse().expect("mode");
    let (_tmp, ctx) = command_workspace(mode);
    let registry = ToolRegistry::unrestricted(&ToolCatalog::builtin());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let args = json!({"command": "true"});
    bencher.bench_local(|| {
        runtime.block_on(async {
            match registry.call("bash", args.clone(), &ctx).await {
                Ok(out) => out.content,
                Err(e) => e.to_output().content,
            }
        })
    });
}

/// The agent's share alone: [`SandboxProfile::prepare`] (ruleset, seccomp programs,
/// temporary directory, dropped again).
#[divan::bench(sample_count = 200)]
fn sandbox_prepare(bencher: divan::Bencher) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let profile = SandboxProfile::new(SandboxMode::WorkspaceWrite);
    bencher.bench_local(|| profile.prepare(tmp.path()).map(|p| p.mode()));
}
