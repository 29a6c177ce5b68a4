//! The language server's costs on a project of 1,000 generated presets
//! (`gen_presets.py 1000 DIR --roots gen-standard,gen-minimal` from the shared bench
//! folder; BENCHMARKS.md), in one warm process, side by side with what they are held to:
//!
//! - diagnostics after an edit (the buffer's preset and every preset extending it, as the
//!   server publishes them, debounce not counted) against validating that preset's
//!   `extends` family after the same edit: target ≤ 1.5x;
//! - opening the project (discovery and the first buffer's diagnostics) against
//!   `validate` of all 1,000 (discovery and every preset validated): target ≤ 1.2x;
//! - the process's peak memory with the project open and edited (measured before the
//!   baselines run): target < 128 MiB.
//!
//! Run: `cargo bench --bench lsp [-- DIR]` (DIR: presets already generated; without it the
//! generator is looked for in `BENCH_DIR`, `../shared/bench` or `../../shared/bench`).
//! Prints one line per measurement (the median of the runs).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use agent_presets::lsp::{Checker, Encoding};
use agent_presets::project::ProjectOptions;

const RUNS: usize = 11;

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let generated;
    let dir = match args.first() {
        Some(dir) => PathBuf::from(dir),
        None => {
            let Some(script) = generator() else {
                println!(
                    "lsp bench: SKIPPED (no gen_presets.py; set BENCH_DIR to the shared bench folder)"
                );
                return;
            };
            generated = tempdir();
            let status = Command::new("python3")
                .arg(&script)
                .args(["1000"])
                .arg(&generated)
                .args(["--roots", "gen-standard,gen-minimal"])
                .stdout(std::process::Stdio::null())
                .status();
            if !status.is_ok_and(|s| s.success()) {
                println!("lsp bench: SKIPPED (gen_presets.py failed; it needs PyYAML)");
                return;
            }
            generated.clone()
        }
    };
    let options = ProjectOptions {
        project_dir: Some(dir.clone()),
        preset_dirs: vec![dir.clone()],
        no_user: true,
        no_project_config: true,
    };

    // Opening: discovery and the first buffer's diagnostics, against `validate` of all.
    let mut checker = Checker::new(options.clone()).expect("the project");
    let names: Vec<String> = checker
        .project()
        .presets
        .names()
        .map(str::to_owned)
        .collect();
    // The preset with the most descendants among the generated ones: the costliest edit.
    let (edited, family) = names
        .iter()
        .filter(|n| {
            !n.starts_with("gen-")
                && checker
                    .project()
                    .presets
                    .get(n)
                    .and_then(|e| e.path())
                    .is_some()
        })
        .map(|n| (n.clone(), checker.descendants(n)))
        .max_by_key(|(_, d)| d.len())
        .expect("generated presets");
    let path = dir.join(format!("{edited}.yaml"));
    let original = std::fs::read_to_string(&path).expect("the edited preset");
    // An edit: a comment line more each time (new text, same diagnostics).
    let mut n = 0u64;
    checker.check(&path, &original, Encoding::Utf16);
    let lsp_edit = median(|| {
        n += 1;
        let text = format!("{original}# edit {n}\n");
        let published = checker
            .check(&path, &text, Encoding::Utf16)
            .expect("a preset");
        std::hint::black_box(published);
    });
    // The server's memory: one project open, edited many times (before anything else
    // this process does).
    let peak = peak_rss_kib();
    let open = median(|| {
        let mut c = Checker::new(options.clone()).expect("the project");
        c.check(&path, &original, Encoding::Utf16);
    });
    let validate_all = median(|| {
        let (mut project, _) =
            agent_presets::project::Project::discover(&options).expect("the project");
        let plan = project.plan(&[]);
        let outcomes = project.validate_batch(&plan.items, |_, _| ());
        assert_eq!(outcomes.len(), plan.items.len());
    });

    let mut baseline = Checker::new(options.clone()).expect("the project");
    baseline.check(&path, &original, Encoding::Utf16);
    let family_validate = median(|| {
        n += 1;
        let text = format!("{original}# edit {n}\n");
        baseline.overlay(&path, &text);
        for name in std::iter::once(&edited).chain(&family) {
            std::hint::black_box(baseline.project().validate(name));
        }
    });

    println!(
        "lsp bench: {} presets; edited `{edited}` (family of {})",
        names.len(),
        family.len() + 1
    );
    println!(
        "diagnostics after an edit: {:.2} ms; validate of its family: {:.2} ms; ratio {:.2}x (target <= 1.5x)",
        ms(lsp_edit),
        ms(family_validate),
        ratio(lsp_edit, family_validate)
    );
    println!(
        "opening the project: {:.2} ms; validate of all: {:.2} ms; ratio {:.2}x (target <= 1.2x)",
        ms(open),
        ms(validate_all),
        ratio(open, validate_all)
    );
    println!(
        "peak memory of this process: {:.1} MiB (target < 128 MiB)",
        peak as f64 / 1024.0
    );
    if args.is_empty() {
        let _ = std::fs::remove_dir_all(&dir);
    }
}

fn median(mut f: impl FnMut()) -> Duration {
    f();
    let mut times: Vec<Duration> = (0..RUNS)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .collect();
    times.sort();
    times[RUNS / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn ratio(a: Duration, b: Duration) -> f64 {
    a.as_secs_f64() / b.as_secs_f64()
}

fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

fn generator() -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    std::env::var_os("BENCH_DIR")
        .map(PathBuf::from)
        .into_iter()
        .chain([
            root.join("../shared/bench"),
            root.join("../../shared/bench"),
        ])
        .map(|d| d.join("gen_presets.py"))
        .find(|p| p.is_file())
}

fn tempdir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("agent-presets-lsp-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    dir
}
