//! `glob` and `grep` against a real temporary workspace: matching, `.gitignore`, hidden
//! and binary files, symbolic links, caps and argument validation.

use crate::support::tool_workspace;

use std::os::unix::fs::symlink;

use agent_presets::tools::ToolCallError;
use agent_presets::tools::builtin::OutputLimits;
use serde_json::{Value, json};
use tool_workspace::ToolWorkspace;

/// This file's set-up and calls, on the shared workspace.
struct Fixture(ToolWorkspace);

impl std::ops::Deref for Fixture {
    type Target = ToolWorkspace;
    fn deref(&self) -> &ToolWorkspace {
        &self.0
    }
}

impl std::ops::DerefMut for Fixture {
    fn deref_mut(&mut self) -> &mut ToolWorkspace {
        &mut self.0
    }
}

impl Fixture {
    /// A small project: sources, a `.gitignore`d `target/`, a hidden dir, a binary file.
    fn new() -> Self {
        let f = Fixture(ToolWorkspace::empty());
        std::fs::write(f.outside.join("secret.rs"), "fn needle() {}\n").unwrap();
        f.write(".gitignore", "target/\n*.log\n");
        f.write("src/main.rs", "fn main() {\n    needle();\n}\n");
        f.write("src/lib.rs", "pub fn needle() {}\n// Needle in caps\n");
        f.write("src/util/mod.rs", "fn helper() {}\n");
        f.write("README.md", "A needle in a haystack.\n");
        f.write("target/debug/out.rs", "fn needle() {}\n");
        f.write("build.log", "needle\n");
        f.write(".github/workflows/ci.yml", "needle: true\n");
        std::fs::write(f.ws.join("data.bin"), b"needle\0\x01\x02").unwrap();
        f
    }

    async fn ok(&self, tool: &str, args: Value) -> String {
        match self.registry.call(tool, args.clone(), &self.ctx).await {
            Ok(out) => out.content,
            Err(e) => panic!("{tool} {args} failed: {}", e.to_output().content),
        }
    }

    async fn fail(&self, tool: &str, args: Value) -> String {
        match self.registry.call(tool, args.clone(), &self.ctx).await {
            Err(e @ ToolCallError::Failed { .. }) => {
                let text = e.to_output().content;
                assert!(text.contains("\nHint: "), "{text}");
                text
            }
            other => panic!("{tool} {args}: expected a handler failure, got {other:?}"),
        }
    }

    async fn invalid(&self, tool: &str, args: Value) {
        match self.registry.call(tool, args.clone(), &self.ctx).await {
            Err(ToolCallError::InvalidArguments { .. }) => {}
            other => panic!("{tool} {args}: expected InvalidArguments, got {other:?}"),
        }
    }
}

// ---------------------------------------------------------------- glob

#[tokio::test]
async fn glob_finds_files_recursively_and_skips_ignored_ones() {
    let f = Fixture::new();
    let out = f.ok("glob", json!({"pattern": "**/*.rs"})).await;
    assert_eq!(
        out,
        "3 files match `**/*.rs` in `.`:\nsrc/lib.rs\nsrc/main.rs\nsrc/util/mod.rs\n"
    );
}

#[tokio::test]
async fn glob_star_stays_in_one_directory_and_path_narrows() {
    let f = Fixture::new();
    let out = f
        .ok("glob", json!({"pattern": "*.rs", "path": "src"}))
        .await;
    assert_eq!(
        out,
        "2 files match `*.rs` in `src`:\nsrc/lib.rs\nsrc/main.rs\n"
    );
    let out = f.ok("glob", json!({"pattern": "*.md"})).await;
    assert_eq!(out, "1 file matches `*.md` in `.`:\nREADME.md\n");
    let out = f.ok("glob", json!({"pattern": "**/*.py"})).await;
    assert_eq!(out, "No files match `**/*.py` in `.`.\n");
}

#[tokio::test]
async fn glob_includes_hidden_directories_when_the_pattern_names_them() {
    let f = Fixture::new();
    let out = f.ok("glob", json!({"pattern": "**/*.yml"})).await;
    assert_eq!(out, "No files match `**/*.yml` in `.`.\n");
    let out = f.ok("glob", json!({"pattern": ".github/**/*.yml"})).await;
    assert_eq!(
        out,
        "1 file matches `.github/**/*.yml` in `.`:\n.github/workflows/ci.yml\n"
    );
}

#[tokio::test]
async fn glob_caps_results() {
    let f = Fixture::new();
    for i in 0..1010 {
        f.write(&format!("many/{i:04}.txt"), "");
    }
    let out = f.ok("glob", json!({"pattern": "many/*.txt"})).await;
    assert!(out.starts_with("1010 files match `many/*.txt` in `.`:\nmany/0000.txt\n"));
    assert!(out.contains("many/0999.txt\n"));
    assert!(!out.contains("many/1000.txt"));
    assert!(
        out.ends_with("[... 10 more paths not shown; use a narrower pattern or path]\n"),
        "{out}"
    );
}

#[tokio::test]
async fn glob_does_not_follow_symlinks_out_of_the_workspace() {
    let f = Fixture::new();
    symlink(&f.outside, f.ws.join("escape")).unwrap();
    let out = f.ok("glob", json!({"pattern": "**/secret.rs"})).await;
    assert_eq!(out, "No files match `**/secret.rs` in `.`.\n");
    let err = f
        .fail("glob", json!({"pattern": "*", "path": "../outside"}))
        .await;
    assert!(err.contains("is outside the workspace"), "{err}");
}

#[tokio::test]
async fn glob_reports_bad_patterns_and_paths() {
    let f = Fixture::new();
    let err = f.fail("glob", json!({"pattern": "src/[a"})).await;
    assert!(err.contains("invalid glob `src/[a`"), "{err}");
    let err = f
        .fail("glob", json!({"pattern": "*", "path": "README.md"}))
        .await;
    assert!(err.contains("is not a directory"), "{err}");
    let err = f
        .fail("glob", json!({"pattern": "*", "path": "nope"}))
        .await;
    assert!(err.contains("does not exist"), "{err}");
}

// ---------------------------------------------------------------- grep

#[tokio::test]
async fn grep_finds_lines_and_skips_ignored_hidden_and_binary_files() {
    let f = Fixture::new();
    let out = f.ok("grep", json!({"pattern": "needle"})).await;
    assert_eq!(
        out,
        "README.md:1:A needle in a haystack.\n\
         src/lib.rs:1:pub fn needle() {}\n\
         src/main.rs:2:    needle();\n\
         (1 binary or oversized file skipped)\n"
    );
}

#[tokio::test]
async fn grep_options_case_glob_path_and_modes() {
    let f = Fixture::new();
    let out = f
        .ok(
            "grep",
            json!({"pattern": "needle", "case_insensitive": true, "glob": "*.rs"}),
        )
        .await;
    assert_eq!(
        out,
        "src/lib.rs:1:pub fn needle() {}\nsrc/lib.rs:2:// Needle in caps\nsrc/main.rs:2:    needle();\n"
    );
    let out = f
        .ok(
            "grep",
            json!({"pattern": "needle", "path": "src", "output_mode": "files_with_matches"}),
        )
        .await;
    assert_eq!(out, "src/lib.rs\nsrc/main.rs\n");
    let out = f
        .ok(
            "grep",
            json!({"pattern": "(?i)needle", "path": "src", "output_mode": "count"}),
        )
        .await;
    assert_eq!(out, "src/lib.rs:2\nsrc/main.rs:1\n");
    let out = f
        .ok(
            "grep",
            json!({"pattern": "needle", "glob": "src/**/*.rs", "path": "."}),
        )
        .await;
    assert_eq!(
        out,
        "src/lib.rs:1:pub fn needle() {}\nsrc/main.rs:2:    needle();\n"
    );
    let out = f
        .ok(
            "grep",
            json!({"pattern": "needle", "glob": "src/**/*.rs", "path": "src"}),
        )
        .await;
    assert_eq!(
        out, "No matches for `needle` in `src`.\n",
        "a path glob is relative to `path`"
    );
    let out = f
        .ok("grep", json!({"pattern": "needle", "path": "src/main.rs"}))
        .await;
    assert_eq!(out, "src/main.rs:2:    needle();\n");
    let out = f
        .ok(
            "grep",
            json!({"pattern": "needle", "path": "src/main.rs", "glob": "*.rs"}),
        )
        .await;
    assert_eq!(
        out, "src/main.rs:2:    needle();\n",
        "a file given as path still matches a name glob"
    );
    // A file named explicitly is searched even though .gitignore lists it.
    let out = f
        .ok("grep", json!({"pattern": "needle", "path": "build.log"}))
        .await;
    assert_eq!(out, "build.log:1:needle\n");
}

#[tokio::test]
async fn grep_context_lines() {
    let f = Fixture::new();
    f.write("ctx.txt", "a\nb\nHIT1\nc\nd\ne\nf\nHIT2\nHIT3\ng\n");
    let out = f
        .ok(
            "grep",
            json!({"pattern": "HIT", "path": "ctx.txt", "context": 1}),
        )
        .await;
    assert_eq!(
        out,
        "ctx.txt-2-b\nctx.txt:3:HIT1\nctx.txt-4-c\n--\nctx.txt-7-f\nctx.txt:8:HIT2\nctx.txt:9:HIT3\nctx.txt-10-g\n"
    );
}

#[tokio::test]
async fn grep_caps_results_and_output() {
    let f = Fixture::new();
    let text: String = (0..500).map(|i| format!("match {i}\n")).collect();
    f.write("big.txt", &text);
    let out = f
        .ok("grep", json!({"pattern": "match", "path": "big.txt"}))
        .await;
    assert_eq!(out.lines().count(), 201);
    assert!(out.ends_with(
        "[... showing 200 of 500 matching lines; narrow the pattern, path or glob, or raise max_results (at most 2000)]\n"
    ));
    let out = f
        .ok(
            "grep",
            json!({"pattern": "match", "path": "big.txt", "max_results": 3}),
        )
        .await;
    assert!(out.starts_with(
        "big.txt:1:match 0\nbig.txt:2:match 1\nbig.txt:3:match 2\n[... showing 3 of 500"
    ));

    let small = f.ctx.clone().with_limits(OutputLimits {
        max_bytes: 200,
        max_lines: 100,
        max_line_chars: 100,
    });
    let out = f
        .registry
        .call(
            "grep",
            json!({"pattern": "match", "path": "big.txt"}),
            &small,
        )
        .await
        .unwrap()
        .content;
    assert!(out.len() < 400, "{out}");
    assert!(out.contains("[... output truncated:"), "{out}");
    assert!(out.contains("use output_mode files_with_matches"), "{out}");

    f.write(
        "wide.txt",
        &format!("{}needle{}\n", "x".repeat(600), "y".repeat(600)),
    );
    let out = f
        .ok("grep", json!({"pattern": "needle", "path": "wide.txt"}))
        .await;
    // A long line is shown around its match, cut on both sides.
    assert!(
        out.starts_with("wide.txt:1:[line cut: 353 characters before] …xxx"),
        "{out}"
    );
    assert!(out.contains("xneedley"), "{out}");
    assert!(
        out.ends_with("yyy… [line cut: 353 more characters]\n"),
        "{out}"
    );
}

#[tokio::test]
async fn grep_refuses_bad_regexes_and_escapes() {
    let f = Fixture::new();
    let err = f.fail("grep", json!({"pattern": "fn main("})).await;
    assert!(err.contains("invalid regular expression"), "{err}");
    assert!(err.contains("escape"), "{err}");
    let err = f
        .fail("grep", json!({"pattern": "x", "path": "../outside"}))
        .await;
    assert!(err.contains("is outside the workspace"), "{err}");
    let err = f
        .fail("grep", json!({"pattern": "x", "path": "missing"}))
        .await;
    assert!(err.contains("does not exist"), "{err}");
    symlink(f.outside.join("secret.rs"), f.ws.join("src/linked.rs")).unwrap();
    let out = f
        .ok("grep", json!({"pattern": "needle", "glob": "*.rs"}))
        .await;
    assert!(
        !out.contains("linked.rs"),
        "walks never follow links: {out}"
    );
    let err = f
        .fail(
            "grep",
            json!({"pattern": "needle", "path": "src/linked.rs"}),
        )
        .await;
    assert!(err.contains("leads outside the workspace"), "{err}");
}

#[tokio::test]
async fn search_tools_validate_arguments() {
    let f = Fixture::new();
    f.invalid("grep", json!({})).await;
    f.invalid("grep", json!({"pattern": 1})).await;
    f.invalid("grep", json!({"pattern": "x", "regex": true}))
        .await;
    f.invalid("grep", json!({"pattern": "x", "output_mode": "lines"}))
        .await;
    f.invalid("grep", json!({"pattern": "x", "context": 11}))
        .await;
    f.invalid("grep", json!({"pattern": "x", "max_results": 0}))
        .await;
    f.invalid("glob", json!({"path": "."})).await;
    f.invalid("glob", json!({"pattern": ["*.rs"]})).await;
    f.invalid("glob", json!({"pattern": "*", "recursive": true}))
        .await;
}

#[tokio::test]
async fn strict_mode_calls_with_null_optionals_pass_validation() {
    let f = Fixture::new();
    let out = f
        .ok(
            "grep",
            json!({
                "pattern": "needle", "path": null, "glob": null, "case_insensitive": null,
                "output_mode": null, "context": null, "max_results": null
            }),
        )
        .await;
    assert!(out.starts_with("README.md:1:"), "{out}");
    let out = f.ok("glob", json!({"pattern": "*.md", "path": null})).await;
    assert!(out.contains("README.md"), "{out}");
}
