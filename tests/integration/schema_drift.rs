//! The committed tool schemas (`schemas/tools/<name>.json` and `<name>.strict.json`) must
//! equal what the code generates, so a change to an argument struct shows up in review as
//! a diff of the wire schema.
//!
//! To regenerate the files after an intended change, run
//! `UPDATE_SCHEMAS=1 cargo test --test integration schema_drift` and commit the result.

use std::path::{Path, PathBuf};

use agent_presets::tools::schema::builtin_schema_files;

fn crate_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn committed_tool_schemas_match_the_generated_ones() {
    let root = crate_root();
    let files = builtin_schema_files();
    assert!(!files.is_empty(), "no built-in tool schemas were generated");

    if std::env::var_os("UPDATE_SCHEMAS").is_some_and(|v| v == "1") {
        for (relative, contents) in &files {
            let path = root.join(relative);
            std::fs::create_dir_all(path.parent().expect("schema files live in a directory"))
                .expect("create the schema directory");
            std::fs::write(&path, contents).expect("write a schema file");
        }
    }

    let mut problems = Vec::new();
    for (relative, expected) in &files {
        match std::fs::read_to_string(root.join(relative)) {
            Ok(actual) if &actual == expected => {}
            Ok(actual) => problems.push(format!(
                "{relative} has drifted from the generated schema{}",
                first_difference(&actual, expected)
            )),
            Err(e) => problems.push(format!("{relative} is missing ({e})")),
        }
    }

    // A schema file for a tool that no longer exists is drift too.
    let expected: Vec<&str> = files.iter().map(|(p, _)| p.as_str()).collect();
    let dir = root.join("schemas/tools");
    for entry in std::fs::read_dir(&dir).expect("read schemas/tools") {
        let name = entry.expect("read a directory entry").file_name();
        let relative = format!("schemas/tools/{}", name.to_string_lossy());
        if relative.ends_with(".json") && !expected.contains(&relative.as_str()) {
            problems.push(format!("{relative} belongs to no built-in tool; delete it"));
        }
    }

    assert!(
        problems.is_empty(),
        "tool schema drift:\n  {}\nRegenerate with `UPDATE_SCHEMAS=1 cargo test --test integration schema_drift` and review the diff.",
        problems.join("\n  ")
    );
}

/// `: line N: committed `..`, generated `..`` for the first differing line.
fn first_difference(actual: &str, expected: &str) -> String {
    let mut a = actual.lines();
    let mut e = expected.lines();
    let mut line = 1;
    loop {
        match (a.next(), e.next()) {
            (Some(x), Some(y)) if x == y => line += 1,
            (None, None) => return " (only the line endings differ)".to_owned(),
            (x, y) => {
                return format!(
                    ": line {line}: committed `{}`, generated `{}`",
                    x.unwrap_or("<end of file>").trim(),
                    y.unwrap_or("<end of file>").trim()
                );
            }
        }
    }
}

#[test]
fn schema_paths_are_relative_and_inside_schemas_tools() {
    for (relative, contents) in builtin_schema_files() {
        assert!(Path::new(&relative).is_relative(), "{relative}");
        assert!(relative.starts_with("schemas/tools/"), "{relative}");
        assert!(
            contents.ends_with("}\n"),
            "{relative} must end with a newline"
        );
        serde_json::from_str::<serde_json::Value>(&contents)
            .unwrap_or_else(|e| panic!("{relative} is not JSON: {e}"));
    }
}
