//! The file tools (`read_file`, `write_file`, `edit_file`, `list_dir`) against a real
//! temporary workspace, called through the registry as a model would call them, including
//! every way out of the workspace they must refuse.

use crate::support::tool_workspace;

use std::os::unix::fs::symlink;
use std::path::Path;

use agent_presets::tools::builtin::OutputLimits;
use agent_presets::tools::{ToolCallError, ToolContext};
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
    fn new() -> Self {
        let f = Fixture(ToolWorkspace::empty());
        std::fs::write(f.outside.join("secret.txt"), "top secret\n").unwrap();
        f
    }

    async fn ok(&self, tool: &str, args: Value) -> String {
        match self.registry.call(tool, args.clone(), &self.ctx).await {
            Ok(out) => {
                assert!(!out.is_error, "{tool} {args}: {}", out.content);
                out.content
            }
            Err(e) => panic!("{tool} {args} failed: {}", e.to_output().content),
        }
    }

    /// The model-readable text of a handler failure.
    async fn fail(&self, tool: &str, args: Value) -> String {
        match self.registry.call(tool, args.clone(), &self.ctx).await {
            Err(e @ ToolCallError::Failed { .. }) => {
                let text = e.to_output().content;
                assert!(text.starts_with("Error: "), "{text}");
                assert!(
                    text.contains("\nHint: "),
                    "every failure says what to try: {text}"
                );
                assert!(
                    !text.contains("Os {") && !text.contains("kind:"),
                    "no Debug dumps: {text}"
                );
                text
            }
            other => panic!("{tool} {args}: expected a handler failure, got {other:?}"),
        }
    }

    async fn invalid(&self, tool: &str, args: Value) -> Vec<String> {
        match self.registry.call(tool, args.clone(), &self.ctx).await {
            Err(ToolCallError::InvalidArguments { problems, .. }) => problems,
            other => panic!("{tool} {args}: expected InvalidArguments, got {other:?}"),
        }
    }
}

fn abs(path: &Path) -> String {
    path.to_str().unwrap().to_owned()
}

// ---------------------------------------------------------------- read_file

#[tokio::test]
async fn read_file_numbers_lines_like_cat_n() {
    let f = Fixture::new();
    f.write("src/a.txt", "alpha\nbeta\n\ngamma");
    let out = f.ok("read_file", json!({"path": "src/a.txt"})).await;
    assert_eq!(
        out,
        "     1\talpha\n     2\tbeta\n     3\t\n     4\tgamma\n"
    );
}

#[tokio::test]
async fn read_file_pages_with_offset_and_limit() {
    let f = Fixture::new();
    let text: String = (1..=10).map(|i| format!("line {i}\n")).collect();
    f.write("ten.txt", &text);
    let out = f
        .ok(
            "read_file",
            json!({"path": "ten.txt", "offset": 4, "limit": 3}),
        )
        .await;
    assert_eq!(
        out,
        "     4\tline 4\n     5\tline 5\n     6\tline 6\n[... showing lines 4-6 of 10; call read_file with offset=7 to read on]\n"
    );
    let out = f
        .ok("read_file", json!({"path": "ten.txt", "offset": 9}))
        .await;
    assert_eq!(out, "     9\tline 9\n    10\tline 10\n");
    let err = f
        .fail("read_file", json!({"path": "ten.txt", "offset": 11}))
        .await;
    assert!(err.contains("offset 11 is past the end"), "{err}");
}

#[tokio::test]
async fn read_file_accepts_absolute_paths_inside_the_workspace() {
    let f = Fixture::new();
    f.write("a.txt", "hi\n");
    let out = f
        .ok("read_file", json!({"path": abs(&f.ws.join("a.txt"))}))
        .await;
    assert_eq!(out, "     1\thi\n");
    // `..` that climbs out and back in stays inside.
    let out = f.ok("read_file", json!({"path": "../ws/./a.txt"})).await;
    assert_eq!(out, "     1\thi\n");
}

#[tokio::test]
async fn read_file_truncates_long_files_with_a_marker_naming_the_next_offset() {
    let f = Fixture::new();
    let text: String = (1..=3000).map(|i| format!("{i}\n")).collect();
    f.write("long.txt", &text);
    let out = f.ok("read_file", json!({"path": "long.txt"})).await;
    assert!(out.starts_with("     1\t1\n"));
    assert!(out.contains("  2000\t2000\n"));
    assert!(!out.contains("  2001\t"));
    assert!(
        out.ends_with(
            "[... showing lines 1-2000 of 3000; call read_file with offset=2001 to read on]\n"
        ),
        "{}",
        &out[out.len() - 200..]
    );
}

#[tokio::test]
async fn read_file_caps_bytes_and_long_lines() {
    let f = Fixture::new();
    let ctx = ToolContext::new(&f.ws).unwrap().with_limits(OutputLimits {
        max_bytes: 120,
        max_lines: 2000,
        max_line_chars: 10,
    });
    let text: String = (1..=50).map(|i| format!("{i:0>20}\n")).collect();
    f.write("wide.txt", &text);
    let out = f
        .registry
        .call("read_file", json!({"path": "wide.txt"}), &ctx)
        .await
        .unwrap()
        .content;
    assert!(
        out.starts_with("     1\t0000000000… [line cut: 10 more characters]\n"),
        "{out}"
    );
    assert!(
        out.contains("[... output truncated at the size limit: showing lines 1-2 of 50; call read_file with offset=3 to read on]"),
        "{out}"
    );
}

#[tokio::test]
async fn read_file_refuses_missing_files_with_a_suggestion() {
    let f = Fixture::new();
    f.write("src/main.rs", "fn main() {}\n");
    let err = f.fail("read_file", json!({"path": "src/mian.rs"})).await;
    assert!(err.contains("file `src/mian.rs` does not exist"), "{err}");
    assert!(err.contains("did you mean `src/main.rs`?"), "{err}");
    let err = f.fail("read_file", json!({"path": "nowhere/x.rs"})).await;
    assert!(err.contains("does not exist"), "{err}");
}

#[tokio::test]
async fn read_file_refuses_binary_files_and_directories() {
    let f = Fixture::new();
    std::fs::write(f.ws.join("image.png"), b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR").unwrap();
    let err = f.fail("read_file", json!({"path": "image.png"})).await;
    assert!(err.contains("looks like a binary file"), "{err}");
    std::fs::write(f.ws.join("latin1.txt"), b"caf\xe9\n").unwrap();
    let err = f.fail("read_file", json!({"path": "latin1.txt"})).await;
    assert!(err.contains("is not UTF-8 text"), "{err}");
    std::fs::create_dir(f.ws.join("dir")).unwrap();
    let err = f.fail("read_file", json!({"path": "dir"})).await;
    assert!(err.contains("is a directory"), "{err}");
}

#[tokio::test]
async fn read_file_empty_file() {
    let f = Fixture::new();
    f.write("empty.txt", "");
    let out = f.ok("read_file", json!({"path": "empty.txt"})).await;
    assert_eq!(out, "(`empty.txt` is empty)");
}

// ---------------------------------------------------------------- confinement

#[tokio::test]
async fn paths_that_escape_by_dot_dot_are_refused() {
    let f = Fixture::new();
    for path in ["../outside/secret.txt", "a/../../outside/secret.txt", ".."] {
        let err = f.fail("read_file", json!({"path": path})).await;
        assert!(err.contains("is outside the workspace"), "{path}: {err}");
    }
    let err = f
        .fail(
            "write_file",
            json!({"path": "../outside/new.txt", "content": "x"}),
        )
        .await;
    assert!(err.contains("is outside the workspace"), "{err}");
    assert!(!f.outside.join("new.txt").exists());
    let err = f.fail("list_dir", json!({"path": "../outside"})).await;
    assert!(err.contains("is outside the workspace"), "{err}");
}

#[tokio::test]
async fn absolute_paths_outside_the_workspace_are_refused() {
    let f = Fixture::new();
    let secret = abs(&f.outside.join("secret.txt"));
    let err = f.fail("read_file", json!({"path": secret})).await;
    assert!(err.contains("is outside the workspace"), "{err}");
    let err = f
        .fail(
            "write_file",
            json!({"path": abs(&f.outside.join("new.txt")), "content": "x"}),
        )
        .await;
    assert!(err.contains("is outside the workspace"), "{err}");
    assert!(!f.outside.join("new.txt").exists());
    let err = f
        .fail(
            "edit_file",
            json!({"path": secret, "old_string": "top", "new_string": "no"}),
        )
        .await;
    assert!(err.contains("is outside the workspace"), "{err}");
    assert_eq!(
        std::fs::read_to_string(f.outside.join("secret.txt")).unwrap(),
        "top secret\n"
    );
    let err = f.fail("list_dir", json!({"path": "/"})).await;
    assert!(err.contains("is outside the workspace"), "{err}");
}

#[tokio::test]
async fn a_symlinked_file_pointing_outside_is_refused() {
    let f = Fixture::new();
    symlink(f.outside.join("secret.txt"), f.ws.join("link.txt")).unwrap();
    let err = f.fail("read_file", json!({"path": "link.txt"})).await;
    assert!(
        err.contains("leads outside the workspace through the symbolic link `link.txt`"),
        "{err}"
    );
    let err = f
        .fail(
            "write_file",
            json!({"path": "link.txt", "content": "pwned"}),
        )
        .await;
    assert!(err.contains("leads outside the workspace"), "{err}");
    let err = f
        .fail(
            "edit_file",
            json!({"path": "link.txt", "old_string": "top", "new_string": "no"}),
        )
        .await;
    assert!(err.contains("leads outside the workspace"), "{err}");
    assert_eq!(
        std::fs::read_to_string(f.outside.join("secret.txt")).unwrap(),
        "top secret\n"
    );
}

#[tokio::test]
async fn a_symlinked_directory_pointing_outside_is_refused_even_for_new_files() {
    let f = Fixture::new();
    symlink(&f.outside, f.ws.join("linkdir")).unwrap();
    let err = f
        .fail("read_file", json!({"path": "linkdir/secret.txt"}))
        .await;
    assert!(err.contains("through the symbolic link `linkdir`"), "{err}");
    // The file does not exist yet: the check must still see where the directory leads.
    let err = f
        .fail(
            "write_file",
            json!({"path": "linkdir/new.txt", "content": "x"}),
        )
        .await;
    assert!(err.contains("leads outside the workspace"), "{err}");
    let err = f
        .fail(
            "write_file",
            json!({"path": "linkdir/deeper/new.txt", "content": "x"}),
        )
        .await;
    assert!(err.contains("leads outside the workspace"), "{err}");
    assert!(!f.outside.join("new.txt").exists());
    assert!(!f.outside.join("deeper").exists());
    let err = f.fail("list_dir", json!({"path": "linkdir"})).await;
    assert!(err.contains("leads outside the workspace"), "{err}");
    let err = f
        .fail("grep", json!({"pattern": "secret", "path": "linkdir"}))
        .await;
    assert!(err.contains("leads outside the workspace"), "{err}");
    let err = f
        .fail("glob", json!({"pattern": "*", "path": "linkdir"}))
        .await;
    assert!(err.contains("leads outside the workspace"), "{err}");
}

#[tokio::test]
async fn a_dangling_symlink_is_not_written_through() {
    let f = Fixture::new();
    symlink(f.outside.join("planted.txt"), f.ws.join("dangling.txt")).unwrap();
    let err = f
        .fail(
            "write_file",
            json!({"path": "dangling.txt", "content": "x"}),
        )
        .await;
    assert!(err.contains("whose target does not exist"), "{err}");
    assert!(!f.outside.join("planted.txt").exists());
}

#[tokio::test]
async fn symlinks_that_stay_inside_the_workspace_are_followed() {
    let f = Fixture::new();
    f.write("real/file.txt", "inside\n");
    symlink(f.ws.join("real"), f.ws.join("alias")).unwrap();
    let out = f.ok("read_file", json!({"path": "alias/file.txt"})).await;
    assert_eq!(out, "     1\tinside\n");
    f.ok(
        "write_file",
        json!({"path": "alias/new.txt", "content": "n"}),
    )
    .await;
    assert_eq!(f.read("real/new.txt"), "n");
}

// ---------------------------------------------------------------- write_file

#[tokio::test]
async fn write_file_creates_parents_and_overwrites() {
    let f = Fixture::new();
    let out = f
        .ok(
            "write_file",
            json!({"path": "deep/er/notes.md", "content": "a\nb\n"}),
        )
        .await;
    assert_eq!(out, "Created `deep/er/notes.md`: 4 bytes, 2 lines.");
    assert_eq!(f.read("deep/er/notes.md"), "a\nb\n");
    let out = f
        .ok(
            "write_file",
            json!({"path": "deep/er/notes.md", "content": "c"}),
        )
        .await;
    assert_eq!(out, "Overwrote `deep/er/notes.md`: 1 bytes, 1 line.");
    assert_eq!(f.read("deep/er/notes.md"), "c");
    // No temporary file is left next to it.
    let names: Vec<_> = std::fs::read_dir(f.ws.join("deep/er"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["notes.md"]);
}

#[tokio::test]
async fn write_file_keeps_the_mode_of_the_file_it_replaces() {
    use std::os::unix::fs::PermissionsExt;
    let f = Fixture::new();
    f.write("run.sh", "#!/bin/sh\n");
    std::fs::set_permissions(f.ws.join("run.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    f.ok(
        "write_file",
        json!({"path": "run.sh", "content": "#!/bin/sh\necho hi\n"}),
    )
    .await;
    let mode = std::fs::metadata(f.ws.join("run.sh"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o755);
}

#[tokio::test]
async fn write_file_refuses_a_directory_and_leaves_nothing_behind_on_failure() {
    let f = Fixture::new();
    std::fs::create_dir(f.ws.join("dir")).unwrap();
    let err = f
        .fail("write_file", json!({"path": "dir", "content": "x"}))
        .await;
    assert!(err.contains("is a directory"), "{err}");
    // A parent that is a file cannot hold a new file.
    f.write("plain.txt", "p");
    let err = f
        .fail(
            "write_file",
            json!({"path": "plain.txt/child.txt", "content": "x"}),
        )
        .await;
    assert!(err.contains("plain.txt"), "{err}");
    assert_eq!(f.read("plain.txt"), "p");
    let names: Vec<_> = std::fs::read_dir(&f.ws)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    assert_eq!(names, ["dir", "plain.txt"]);
}

// ---------------------------------------------------------------- edit_file

#[tokio::test]
async fn edit_file_replaces_exactly_one_occurrence() {
    let f = Fixture::new();
    f.write("lib.rs", "fn a() {}\nfn b() {}\nfn c() {}\n");
    let out = f
        .ok(
            "edit_file",
            json!({"path": "lib.rs", "old_string": "fn b() {}", "new_string": "fn b() { todo!() }"}),
        )
        .await;
    assert_eq!(out, "Edited `lib.rs`: replaced 1 occurrence at line 2.");
    assert_eq!(
        f.read("lib.rs"),
        "fn a() {}\nfn b() { todo!() }\nfn c() {}\n"
    );
}

#[tokio::test]
async fn edit_file_refuses_ambiguous_text_unless_replace_all() {
    let f = Fixture::new();
    f.write("x.txt", "foo\nbar\nfoo\nbaz\nfoo\n");
    let err = f
        .fail(
            "edit_file",
            json!({"path": "x.txt", "old_string": "foo", "new_string": "qux"}),
        )
        .await;
    assert!(
        err.contains("old_string occurs 3 times in `x.txt` (at lines 1, 3, 5)"),
        "{err}"
    );
    assert!(err.contains("include more surrounding context"), "{err}");
    assert!(err.contains("replace_all"), "{err}");
    assert_eq!(f.read("x.txt"), "foo\nbar\nfoo\nbaz\nfoo\n");
    let out = f
        .ok(
            "edit_file",
            json!({"path": "x.txt", "old_string": "foo", "new_string": "qux", "replace_all": true}),
        )
        .await;
    assert_eq!(
        out,
        "Edited `x.txt`: replaced 3 occurrences (first at line 1)."
    );
    assert_eq!(f.read("x.txt"), "qux\nbar\nqux\nbaz\nqux\n");
}

#[tokio::test]
async fn edit_file_refuses_absent_text_and_missing_files() {
    let f = Fixture::new();
    f.write("x.txt", "hello\n");
    let err = f
        .fail(
            "edit_file",
            json!({"path": "x.txt", "old_string": "goodbye", "new_string": "x"}),
        )
        .await;
    assert!(err.contains("old_string was not found in `x.txt`"), "{err}");
    assert_eq!(f.read("x.txt"), "hello\n");
    let err = f
        .fail(
            "edit_file",
            json!({"path": "y.txt", "old_string": "a", "new_string": "b"}),
        )
        .await;
    assert!(err.contains("does not exist"), "{err}");
    let err = f
        .fail(
            "edit_file",
            json!({"path": "x.txt", "old_string": "", "new_string": "b"}),
        )
        .await;
    assert!(err.contains("old_string is empty"), "{err}");
    let err = f
        .fail(
            "edit_file",
            json!({"path": "x.txt", "old_string": "hello", "new_string": "hello"}),
        )
        .await;
    assert!(err.contains("identical"), "{err}");
}

#[tokio::test]
async fn edit_file_matches_lf_text_in_a_crlf_file_and_keeps_crlf() {
    let f = Fixture::new();
    f.write("win.txt", "one\r\ntwo\r\nthree\r\n");
    f.ok(
        "edit_file",
        json!({"path": "win.txt", "old_string": "one\ntwo", "new_string": "uno\ndos"}),
    )
    .await;
    assert_eq!(f.read("win.txt"), "uno\r\ndos\r\nthree\r\n");
}

#[tokio::test]
async fn edit_file_refuses_binary_files() {
    let f = Fixture::new();
    std::fs::write(f.ws.join("blob.bin"), b"ab\0cd").unwrap();
    let err = f
        .fail(
            "edit_file",
            json!({"path": "blob.bin", "old_string": "ab", "new_string": "x"}),
        )
        .await;
    assert!(err.contains("binary"), "{err}");
    assert_eq!(std::fs::read(f.ws.join("blob.bin")).unwrap(), b"ab\0cd");
}

// ---------------------------------------------------------------- list_dir

#[tokio::test]
async fn list_dir_shows_dirs_files_and_links() {
    let f = Fixture::new();
    f.write("b.txt", "12345");
    f.write("a/inner.txt", "");
    f.write(".hidden", "");
    symlink("b.txt", f.ws.join("c")).unwrap();
    let out = f.ok("list_dir", json!({})).await;
    assert_eq!(
        out,
        "`.` (4 entries):\n.hidden  (0 bytes)\na/\nb.txt  (5 bytes)\nc -> b.txt\n"
    );
    let out = f.ok("list_dir", json!({"path": "a"})).await;
    assert_eq!(out, "`a` (1 entry):\ninner.txt  (0 bytes)\n");
    std::fs::create_dir(f.ws.join("empty")).unwrap();
    assert_eq!(
        f.ok("list_dir", json!({"path": "empty"})).await,
        "`empty` is empty."
    );
}

#[tokio::test]
async fn list_dir_refuses_files_and_missing_directories() {
    let f = Fixture::new();
    f.write("file.txt", "");
    let err = f.fail("list_dir", json!({"path": "file.txt"})).await;
    assert!(err.contains("is a file, not a directory"), "{err}");
    let err = f.fail("list_dir", json!({"path": "nope"})).await;
    assert!(err.contains("directory `nope` does not exist"), "{err}");
}

#[tokio::test]
async fn list_dir_caps_long_listings() {
    let f = Fixture::new();
    for i in 0..1005 {
        f.write(&format!("many/f{i:04}"), "");
    }
    let out = f.ok("list_dir", json!({"path": "many"})).await;
    assert!(
        out.starts_with("`many` (1005 entries):\nf0000  (0 bytes)\n"),
        "{}",
        &out[..100]
    );
    assert!(out.contains("f0999"));
    assert!(!out.contains("f1000"));
    assert!(out.ends_with(
        "[... 5 more entries not shown; use glob with a pattern to find what you need]\n"
    ));
}

// ---------------------------------------------------------------- argument validation

#[tokio::test]
async fn file_tools_validate_arguments_before_running() {
    let f = Fixture::new();
    // Wrong type.
    let problems = f
        .invalid("write_file", json!({"path": "w.txt", "content": 42}))
        .await;
    assert!(
        problems.iter().any(|p| p.contains("/content")),
        "{problems:?}"
    );
    // Unknown field.
    f.invalid(
        "write_file",
        json!({"path": "w.txt", "content": "x", "mode": "0644"}),
    )
    .await;
    // Missing required field.
    f.invalid("write_file", json!({"path": "w.txt"})).await;
    assert!(
        !f.ws.join("w.txt").exists(),
        "the handler must not have run"
    );

    f.write("e.txt", "abc");
    f.invalid(
        "edit_file",
        json!({"path": "e.txt", "old_string": "abc", "new_string": "x", "replace_all": "yes"}),
    )
    .await;
    f.invalid(
        "edit_file",
        json!({"path": "e.txt", "old_string": "abc", "new_string": "x", "count": 1}),
    )
    .await;
    f.invalid("edit_file", json!({"path": "e.txt", "old_string": "abc"}))
        .await;
    assert_eq!(f.read("e.txt"), "abc", "the handler must not have run");

    f.invalid("read_file", json!({"path": ["e.txt"]})).await;
    f.invalid("read_file", json!({"path": "e.txt", "offset": 0}))
        .await;
    f.invalid("read_file", json!({"path": "e.txt", "lines": 3}))
        .await;
    f.invalid("read_file", json!({})).await;
    f.invalid("list_dir", json!({"path": 1})).await;
    f.invalid("list_dir", json!({"recursive": true})).await;
}

#[tokio::test]
async fn strict_mode_calls_with_null_optionals_pass_validation() {
    let f = Fixture::new();
    f.write("a.txt", "one\ntwo\n");
    let out = f
        .ok(
            "read_file",
            json!({"path": "a.txt", "offset": null, "limit": null}),
        )
        .await;
    assert_eq!(out, "     1\tone\n     2\ttwo\n");
    f.ok(
        "edit_file",
        json!({"path": "a.txt", "old_string": "one", "new_string": "1", "replace_all": null}),
    )
    .await;
    assert_eq!(f.read("a.txt"), "1\ntwo\n");
    f.ok("list_dir", json!({"path": null})).await;
}
