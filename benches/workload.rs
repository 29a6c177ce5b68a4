//! One agent step on the shared workload (`benches/fixtures/workload.json`): the same 12
//! sections, 4 variables and 8 tools the Python seed/jinja2 assemblers, the plain-JS one
//! and DSH's npm package assemble, producing the same bytes (system prompt sha256
//! `037f147f…7f06378`, tool list `23e9fe6a…17889fc`; checked before anything is timed).
//!
//! A step is `assemble(values)`: the system prompt, the tool list and the prefix
//! fingerprint (the baselines compute no fingerprint; ours is included anyway).
//!
//! Run:
//! - `cargo bench --bench workload` — divan;
//! - `cargo bench --bench workload -- --loop [--steps N] [--reps R] [--only KIND]` — the
//!   baselines' own method (median of R repetitions of N steps after N/10 warm-up steps),
//!   one JSON line, for `benches/compare.sh`. KIND (`unchanged`, `model`, `standard`, or
//!   `date`: only `standard`'s date-change loop) limits the run to one loop, e.g. for
//!   `valgrind --tool=callgrind`, where each loop is a function of its own
//!   (`workload::steps_*`) to pass to `--toggle-collect`.

#[path = "support/standard.rs"]
mod standard;
#[path = "support/workload.rs"]
mod workload;

use std::hint::black_box;
use std::time::Instant;

use agent_presets::prompt::{PromptAssembler, Values};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--loop") {
        std::process::exit(loop_mode(&args));
    }
    check_bytes();
    divan::main();
}

/// The step's values with another model: every part of the prefix re-renders.
fn other_model() -> Values {
    workload::values().with("model", "deepseek-v4-pro")
}

/// Refuse to time anything that does not produce the baselines' bytes.
fn check_bytes() {
    let catalog = workload::catalog();
    let assembly = workload::assembler(&catalog)
        .assemble(&workload::values())
        .expect("the workload assembles");
    let (system, tools) = workload::digests(&assembly);
    assert_eq!(
        system,
        workload::SYSTEM_SHA256,
        "system prompt bytes differ"
    );
    assert_eq!(tools, workload::TOOLS_SHA256, "tool list bytes differ");
}

/// An unchanged step: the values are those of the last step.
#[divan::bench]
fn step_unchanged(bencher: divan::Bencher) {
    let catalog = workload::catalog();
    let assembler = workload::assembler(&catalog);
    let values = workload::values();
    bencher.bench_local(|| assembler.assemble(black_box(&values)));
}

/// A step where the model changes every time: the system prompt is re-rendered and the
/// fingerprint recomputed (the per-step work of the baselines, which re-render always).
#[divan::bench]
fn step_model_changes(bencher: divan::Bencher) {
    let catalog = workload::catalog();
    let assembler = workload::assembler(&catalog);
    let (a, b) = (workload::values(), other_model());
    let mut flip = false;
    bencher.bench_local(|| {
        flip = !flip;
        assembler.assemble(black_box(if flip { &a } else { &b }))
    });
}

/// Set-up: register the 8 tools and compile the 12 sections (once per agent, not per step).
#[divan::bench(sample_count = 50)]
fn set_up() -> PromptAssembler {
    let catalog = workload::catalog();
    workload::assembler(&catalog)
}

// ---------------------------------------------------------------- loop mode

#[inline(never)]
fn steps_unchanged(assembler: &PromptAssembler, values: &Values, n: usize) {
    for _ in 0..n {
        black_box(assembler.assemble(black_box(values)).is_ok());
    }
}

#[inline(never)]
fn steps_model_changes(assembler: &PromptAssembler, a: &Values, b: &Values, n: usize) {
    for i in 0..n {
        let values = if i % 2 == 0 { a } else { b };
        black_box(assembler.assemble(black_box(values)).is_ok());
    }
}

/// Alternating between two value sets like [`steps_model_changes`], under its own name,
/// for `--only date` under callgrind (`--toggle-collect=*steps_date_changes*`): `standard`,
/// only the date changing. Written differently on purpose: with the same body the
/// compiler merges the two functions and one name counts nothing.
#[inline(never)]
fn steps_date_changes(assembler: &PromptAssembler, days: [&Values; 2], n: usize) {
    for i in 0..n {
        black_box(assembler.assemble(black_box(days[i & 1])).is_ok());
    }
}

/// ns per step of `f(n)`.
fn per_step(n: usize, f: impl Fn(usize)) -> f64 {
    let start = Instant::now();
    f(n);
    start.elapsed().as_nanos() as f64 / n as f64
}

/// (median, min, max) of `reps` timings of `n` steps after `n / 10` warm-up steps.
fn timed(n: usize, reps: usize, f: impl Fn(usize)) -> (f64, f64, f64) {
    f((n / 10).max(1));
    let mut xs: Vec<f64> = (0..reps).map(|_| per_step(n, &f)).collect();
    xs.sort_by(f64::total_cmp);
    let mid = xs.len() / 2;
    let median = if xs.len() % 2 == 1 {
        xs[mid]
    } else {
        (xs[mid - 1] + xs[mid]) / 2.0
    };
    (median, xs[0], xs[xs.len() - 1])
}

fn flag<'a>(args: &'a [String], name: &str) -> Option<&'a str> {
    let i = args.iter().position(|a| a == name)?;
    args.get(i + 1).map(String::as_str)
}

fn peak_rss_kib() -> i64 {
    // SAFETY: getrusage writes into the zeroed struct we own.
    unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        if libc::getrusage(libc::RUSAGE_SELF, &mut usage) == 0 {
            usage.ru_maxrss
        } else {
            -1
        }
    }
}

fn json_timing(name: &str, (median, min, max): (f64, f64, f64)) -> String {
    format!(
        "\"{name}_ns_median\":{},\"{name}_ns_min\":{},\"{name}_ns_max\":{}",
        median.round(),
        min.round(),
        max.round()
    )
}

/// `--loop`: time like the baselines do and print one JSON line. Exit 1 if the bytes differ.
fn loop_mode(args: &[String]) -> i32 {
    let steps: usize = flag(args, "--steps")
        .and_then(|s| s.parse().ok())
        .unwrap_or(20_000);
    let reps: usize = flag(args, "--reps")
        .and_then(|s| s.parse().ok())
        .unwrap_or(5);
    let only = flag(args, "--only");
    let run = |kind: &str| only.is_none_or(|o| o == kind);

    let catalog = workload::catalog();
    let assembler = workload::assembler(&catalog);
    let values = workload::values();
    let first = match assembler.assemble(&values) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("the workload does not assemble: {e:?}");
            return 1;
        }
    };
    let (system_sha, tools_sha) = workload::digests(&first);
    let same = system_sha == workload::SYSTEM_SHA256 && tools_sha == workload::TOOLS_SHA256;
    let mut fields = vec![
        "\"baseline\":\"rust-agent-presets\"".to_owned(),
        format!("\"sections\":{}", assembler.section_names().count()),
        format!("\"tools\":{}", first.tools.len()),
        format!("\"system_bytes\":{}", first.system.len()),
        format!("\"system_sha256\":\"{system_sha}\""),
        format!("\"tools_sha256\":\"{tools_sha}\""),
        format!("\"same_bytes_as_baselines\":{same}"),
        format!("\"steps_per_rep\":{steps}"),
        format!("\"reps\":{reps}"),
    ];
    if run("unchanged") {
        let t = timed(steps, reps, |n| steps_unchanged(&assembler, &values, n));
        fields.push(json_timing("step", t));
    }
    if run("model") {
        let other = other_model();
        let t = timed(steps, reps, |n| {
            steps_model_changes(&assembler, &values, &other, n)
        });
        fields.push(json_timing("model_change", t));
    }
    if only == Some("date") {
        let preset = standard::standard();
        let base = standard::values();
        let next_day = base.clone().with("date", "2030-01-02");
        let t = timed(steps, reps, |n| {
            steps_date_changes(preset.assembler(), [&base, &next_day], n)
        });
        fields.push(json_timing("standard_date_change", t));
    }
    if run("standard") {
        // The built-in `standard` (the original rows): unchanged, only the
        // date changes (context re-rendered), the model changes (everything re-rendered).
        let preset = standard::standard();
        let a = preset.assembler();
        let base = standard::values();
        let t = timed(steps, reps, |n| steps_unchanged(a, &base, n));
        fields.push(json_timing("standard_step", t));
        let next_day = base.clone().with("date", "2030-01-02");
        let t = timed(steps, reps, |n| steps_model_changes(a, &base, &next_day, n));
        fields.push(json_timing("standard_date_change", t));
        let other = base.clone().with("model", "deepseek-v4-pro");
        let t = timed(steps, reps, |n| steps_model_changes(a, &base, &other, n));
        fields.push(json_timing("standard_model_change", t));
    }
    fields.push(format!("\"peak_rss_kib\":{}", peak_rss_kib()));
    println!("{{{}}}", fields.join(","));
    if same {
        0
    } else {
        eprintln!(
            "bytes differ from the baselines: system {system_sha} (want {}), tools {tools_sha} (want {})",
            workload::SYSTEM_SHA256,
            workload::TOOLS_SHA256
        );
        1
    }
}
