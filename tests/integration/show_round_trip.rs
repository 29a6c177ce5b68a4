//! `show NAME > flat.yaml` is an equivalent preset (issue 29): for every built-in, example
//! and test-suite preset that renders, its flattened form renders the same request, byte
//! for byte, and warns about nothing the original did not. Before `show` wrote
//! `commands:`, `mcpServers:`, `sandbox`, `permissions`, `limits` and removed tool
//! guidance, and marked the guidance it copies as `override: true`, most of them did not.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// One preset to try: its name, and (but for a built-in) the directory it is found in,
/// the flag that offers that directory and the preset's file inside it.
struct Subject {
    name: String,
    label: String,
    found: Option<Found>,
}

struct Found {
    flag: &'static str,
    dir: PathBuf,
    file: PathBuf,
}

fn run(args: &[String], config: &Path, cwd: &Path) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_agent-presets"))
        .args(args)
        .current_dir(cwd)
        .env("AGENT_PRESETS_CONFIG_DIR", config)
        .env("NO_COLOR", "1")
        .env("SHELL", "/bin/bash")
        .env_remove("CI")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

const PINNED: [&str; 8] = [
    "--var",
    "date=2030-01-01",
    "--format",
    "openai",
    "--prompt",
    "hi",
    "--var",
    "os=linux",
];

fn subjects() -> Vec<Subject> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    for name in ["standard", "minimal"] {
        out.push(Subject {
            name: name.into(),
            label: format!("<builtin>/{name}"),
            found: None,
        });
    }
    let examples = root.join("presets/examples");
    for file in yaml_files(&examples) {
        out.push(Subject {
            name: stem(&file),
            label: format!("presets/examples/{}", stem(&file)),
            found: Some(Found {
                flag: "--preset-dir",
                dir: examples.clone(),
                file: file.strip_prefix(&examples).unwrap().to_owned(),
            }),
        });
    }
    let cases = root.join("tests/cli");
    for group in sorted_dirs(&cases) {
        for case in sorted_dirs(&group) {
            for file in yaml_files(&case.join(".agent-presets")) {
                out.push(Subject {
                    name: stem(&file),
                    label: format!(
                        "{}/{}",
                        case.strip_prefix(root).unwrap().display(),
                        stem(&file)
                    ),
                    found: Some(Found {
                        flag: "--project-dir",
                        dir: case.clone(),
                        file: file.strip_prefix(&case).unwrap().to_owned(),
                    }),
                });
            }
        }
    }
    out
}

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), &target).unwrap();
        }
    }
}

fn sorted_dirs(dir: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = fs::read_dir(dir)
        .map(|r| {
            r.map(|e| e.unwrap().path())
                .filter(|p| p.is_dir())
                .collect()
        })
        .unwrap_or_default();
    dirs.sort();
    dirs
}

fn yaml_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(dir)
        .map(|r| {
            r.map(|e| e.unwrap().path())
                .filter(|p| p.extension().is_some_and(|e| e == "yaml" || e == "yml"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

fn stem(path: &Path) -> String {
    path.file_stem().unwrap().to_string_lossy().into_owned()
}

fn args_for(s: &Subject, dir: Option<&Path>, rest: &[String]) -> Vec<String> {
    let mut a = vec!["--no-user".to_owned()];
    if let (Some(found), Some(dir)) = (&s.found, dir) {
        a.extend([found.flag.to_owned(), dir.display().to_string()]);
    }
    a.extend(rest.iter().cloned());
    a
}

/// `Ok(true)`: round-tripped; `Ok(false)`: the original does not render (a bad-preset
/// case), nothing to compare. The flattened preset takes the original's place (its file,
/// its name, so the lock's server entries and a pack's ids still apply); a built-in's
/// name cannot be taken, so its copy is a file of its own name.
fn round_trip(s: &Subject, scratch: &Path) -> Result<bool, String> {
    let config = scratch.join("config");
    fs::create_dir_all(&config).unwrap();
    let source = s.found.as_ref().map(|f| f.dir.as_path());
    let mut pinned: Vec<String> = PINNED.iter().map(|x| x.to_string()).collect();
    let render = |dir: Option<&Path>, target: &str, pinned: &[String]| {
        let mut rest = vec!["render".to_owned(), target.to_owned()];
        rest.extend(pinned.iter().cloned());
        run(&args_for(s, dir, &rest), &config, scratch)
    };
    let (mut code, mut original, mut original_err) = render(source, &s.name, &pinned);
    if code != 0 && original_err.contains("no `model` block") {
        // A preset without a model (most test-suite presets) renders with one given.
        pinned.extend(["--provider", "openai", "--model", "m"].map(String::from));
        (code, original, original_err) = render(source, &s.name, &pinned);
    }
    if code != 0 {
        return Ok(false);
    }
    let show = ["show".to_owned(), s.name.clone()];
    let (code, flat, err) = run(&args_for(s, source, &show), &config, scratch);
    if code != 0 {
        return Err(format!("show failed ({code}):\n{err}"));
    }
    let (code, copy, copy_err) = match &s.found {
        Some(found) => {
            let copied = scratch.join("copy");
            copy_dir(&found.dir, &copied);
            fs::write(copied.join(&found.file), &flat).unwrap();
            render(Some(&copied), &s.name, &pinned)
        }
        None => {
            let renamed = format!("flat-{}", s.name);
            let text = flat.replacen(
                &format!("\nname: {}\n", s.name),
                &format!("\nname: {renamed}\n"),
                1,
            );
            let file = scratch.join(format!("{renamed}.yaml"));
            fs::write(&file, text).unwrap();
            render(None, &file.display().to_string(), &pinned)
        }
    };
    if code != 0 {
        return Err(format!(
            "the flattened preset does not render ({code}):\n{copy_err}\n--- flat:\n{flat}"
        ));
    }
    if copy != original {
        let first = original
            .lines()
            .zip(copy.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(0);
        return Err(format!(
            "renders differently from line {}:\n  original: {}\n  flattened: {}\n--- flat:\n{flat}",
            first + 1,
            original.lines().nth(first).unwrap_or(""),
            copy.lines().nth(first).unwrap_or("")
        ));
    }
    if !original_err.contains("warning[") && copy_err.contains("warning[") {
        return Err(format!(
            "the flattened preset warns:\n{copy_err}\n--- flat:\n{flat}"
        ));
    }
    Ok(true)
}

#[test]
fn every_shown_preset_renders_the_same_request() {
    let subjects = subjects();
    let threads = 8;
    let results: Vec<(String, Result<bool, String>)> = std::thread::scope(|scope| {
        let chunks: Vec<&[Subject]> = subjects.chunks(subjects.len().div_ceil(threads)).collect();
        let handles: Vec<_> = chunks
            .into_iter()
            .map(|chunk| {
                scope.spawn(move || {
                    chunk
                        .iter()
                        .map(|s| {
                            let scratch = tempfile::tempdir().unwrap();
                            (s.label.clone(), round_trip(s, scratch.path()))
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    let compared = results
        .iter()
        .filter(|(_, r)| matches!(r, Ok(true)))
        .count();
    let failures: Vec<String> = results
        .iter()
        .filter_map(|(label, r)| r.as_ref().err().map(|e| format!("{label}: {e}")))
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {compared} shown presets are not equivalent:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
    // Built-ins, examples and the valid test-suite presets: well over a hundred.
    assert!(compared >= 100, "only {compared} presets rendered");
}
