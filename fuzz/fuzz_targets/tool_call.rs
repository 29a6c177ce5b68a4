//! `ToolRegistry::call` with arbitrary argument bytes for each built-in tool, in a
//! temporary workspace rebuilt before every input. `bash` is denied in the registry, so
//! the fuzzer never runs a shell command.
//!
//! Input: one byte choosing the tool name (the seven file and todo tools, `bash`, or an
//! unknown name), then the arguments: JSON if they parse, else the bytes as one JSON
//! string (never a valid argument object).
//!
//! Checks: nothing panics or hangs; `bash` and unknown names are `UnknownTool`; arguments
//! that are not an object, or that serde cannot read into the tool's argument type, are
//! `InvalidArguments` (the handler never ran); nothing is created, changed or removed
//! outside the workspace (a sibling directory holds a secret, reachable from the
//! workspace by `..` and by a symbolic link), and no result ever shows the secret.

#![no_main]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use agent_presets::tools::builtin::{
    EditFileArgs, GlobArgs, GrepArgs, ListDirArgs, ReadFileArgs, TodoWriteArgs, WriteFileArgs,
};
use agent_presets::tools::{
    ToolCallError, ToolCatalog, ToolContext, ToolRegistry, ToolRestriction,
};
use libfuzzer_sys::fuzz_target;
use serde::de::DeserializeOwned;
use serde_json::Value;

const NAMES: [&str; 10] = [
    "read_file",
    "write_file",
    "edit_file",
    "grep",
    "glob",
    "list_dir",
    "todo_write",
    "bash",
    "read_files",
    "",
];
const SECRET: &str = "outside-secret-9d1c4e";

struct Setup {
    root: PathBuf,
    registry: ToolRegistry,
    runtime: tokio::runtime::Runtime,
}

fn setup() -> &'static Setup {
    static SETUP: OnceLock<Setup> = OnceLock::new();
    SETUP.get_or_init(|| {
        let root = std::env::temp_dir().join(format!(
            "agent-presets-fuzz-tool-call-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("outside")).expect("temporary directory");
        let root = root.canonicalize().expect("temporary directory");
        std::fs::write(root.join("outside/secret.txt"), SECRET).expect("outside file");
        let no_bash = ToolRestriction::default()
            .with_deny(["bash"])
            .expect("a valid pattern");
        let registry = ToolRegistry::restricted(&ToolCatalog::builtin(), [&no_bash]);
        assert!(!registry.is_visible("bash"));
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("a runtime");
        Setup {
            root,
            registry,
            runtime,
        }
    })
}

/// The workspace as every input finds it.
fn fresh_workspace(root: &Path) -> PathBuf {
    let ws = root.join("ws");
    let _ = std::fs::remove_dir_all(&ws);
    for (rel, text) in [
        ("a.txt", "hello\nworld\n"),
        (
            "src/lib.rs",
            "pub fn add(a: u32, b: u32) -> u32 {\n    a + b\n}\n",
        ),
        ("src/notes.md", "# Notes\n\n- one\n- two\n"),
        ("deep/er/still/x.json", "{\"k\": [1, 2, 3]}\n"),
        ("empty", ""),
    ] {
        let path = ws.join(rel);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).expect("workspace");
        }
        std::fs::write(path, text).expect("workspace file");
    }
    std::os::unix::fs::symlink("../outside", ws.join("link-out")).expect("symlink");
    std::os::unix::fs::symlink("a.txt", ws.join("link-in")).expect("symlink");
    ws
}

/// Outside the workspace, exactly what `setup` put there.
fn check_outside(root: &Path) {
    let mut top: Vec<_> = std::fs::read_dir(root)
        .expect("root")
        .map(|e| e.expect("entry").file_name())
        .collect();
    top.sort();
    assert_eq!(
        top,
        ["outside", "ws"],
        "something appeared next to the workspace"
    );
    let outside: Vec<_> = std::fs::read_dir(root.join("outside"))
        .expect("outside")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(
        outside,
        ["secret.txt"],
        "something appeared outside the workspace"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("outside/secret.txt")).expect("secret"),
        SECRET,
        "the file outside the workspace changed"
    );
}

/// Would serde read `args` into the tool's argument type?
fn readable(name: &str, args: &Value) -> bool {
    fn de<T: DeserializeOwned>(args: &Value) -> bool {
        serde_json::from_value::<T>(args.clone()).is_ok()
    }
    match name {
        "read_file" => de::<ReadFileArgs>(args),
        "write_file" => de::<WriteFileArgs>(args),
        "edit_file" => de::<EditFileArgs>(args),
        "grep" => de::<GrepArgs>(args),
        "glob" => de::<GlobArgs>(args),
        "list_dir" => de::<ListDirArgs>(args),
        "todo_write" => de::<TodoWriteArgs>(args),
        _ => false,
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    let name = NAMES[usize::from(selector) % NAMES.len()];
    let args: Value = serde_json::from_slice(rest)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(rest).into_owned()));
    let s = setup();
    let ws = fresh_workspace(&s.root);
    let ctx = ToolContext::new(&ws).expect("the workspace opens");

    let result = s
        .runtime
        .block_on(s.registry.call(name, args.clone(), &ctx));

    check_outside(&s.root);
    let text = match &result {
        Ok(out) => out.content.clone(),
        Err(e) => format!("{e}\n{}", e.to_output().content),
    };
    if !serde_json::to_string(&args).is_ok_and(|a| a.contains(SECRET)) {
        assert!(
            !text.contains(SECRET),
            "a result showed the file outside: {text}"
        );
    }
    if !matches!(
        name,
        "read_file" | "write_file" | "edit_file" | "grep" | "glob" | "list_dir" | "todo_write"
    ) {
        assert!(
            matches!(result, Err(ToolCallError::UnknownTool { .. })),
            "`{name}` is not a visible tool: {result:?}"
        );
        return;
    }
    if !args.is_object() || !readable(name, &args) {
        assert!(
            matches!(result, Err(ToolCallError::InvalidArguments { .. })),
            "invalid arguments for `{name}` were not refused: {args} -> {result:?}"
        );
    }
});
