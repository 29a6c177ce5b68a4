//! Replay against validate, side by side (issue 28): 100 presets, each with a cassette
//! of N steps (9 tool calls, then the answer), written once by recording the agent
//! against a scripted transport. Timed, in one process, alternating:
//!
//! - `validate`: discover the project and validate the 100 presets (the batch
//!   `agent-presets validate` runs);
//! - `replay`: what `agent-presets test` runs on the 100 test cases: each case read and
//!   checked against its preset (each preset validated once), then every cassette read
//!   and replayed over every core (each step assembled, its body built and compared with
//!   the recorded one; the recorded tool results fed back).
//!
//! Run: `cargo bench --bench replay -- [--steps N] [--reps R] [--only validate|replay]`
//! (release; `--keep DIR` writes the presets and cassettes to DIR and leaves them there).
//! Prints one line per measure; `--only replay` also prints the process's peak
//! RSS (VmHWM), so run it alone for that figure, and the peak the setup (recording the
//! cassettes) had already reached before anything was timed.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use agent_presets::agent::{
    Agent, ApproveAll, ModelTransport, RequestBody, ToolRunFuture, ToolRunner, TransportFuture,
};
use agent_presets::client::ClientEvent;
use agent_presets::endpoint::{ModelSettings, Overrides};
use agent_presets::preset::ValidPreset;
use agent_presets::project::{Project, ProjectOptions, endpoint, lock};
use agent_presets::prompt::ContextSnapshot;
use agent_presets::provider::{FinishReason, ModelTurn};
use agent_presets::redact::Redactor;
use agent_presets::request::ToolCall;
use agent_presets::testing::record::{RecordedRun, Recorder, cassette};
use agent_presets::testing::replay::{self, ReplayOptions};
use agent_presets::testing::suite::{CaseStatus, run_suite};
use agent_presets::tools::{ToolContext, ToolOutput, ToolRegistry};
use serde_json::Value;

const PRESETS: usize = 100;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let flag = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let steps: usize = flag("--steps").and_then(|s| s.parse().ok()).unwrap_or(10);
    let reps: usize = flag("--reps").and_then(|s| s.parse().ok()).unwrap_or(7);
    let only = flag("--only");
    let temp = tempfile::tempdir().expect("a temporary directory");
    // `--keep DIR`: write the presets and cassettes there (kept, to look at).
    let dir = flag("--keep").map_or_else(|| temp.path().to_owned(), PathBuf::from);
    let dir = dir.as_path();
    setup(dir, steps);
    // What recording the cassettes left (most of the peak below, whatever is timed).
    let setup_peak = peak_rss();
    let mut validate = Vec::new();
    let mut replays = Vec::new();
    for _ in 0..reps {
        if only.as_deref() != Some("replay") {
            validate.push(time(|| validate_all(dir)));
        }
        if only.as_deref() != Some("validate") {
            replays.push(time(|| replay_all(dir)));
        }
    }
    let median = |v: &mut Vec<Duration>| {
        v.sort();
        v.get(v.len() / 2).copied()
    };
    let (v, r) = (median(&mut validate), median(&mut replays));
    if let Some(v) = v {
        println!(
            "validate {PRESETS} presets: {:.1} ms (median of {reps})",
            ms(v)
        );
    }
    if let Some(r) = r {
        println!(
            "replay {PRESETS} cassettes of {steps} steps (validate included): {:.1} ms (median of {reps}), {:.1} µs per step replayed",
            ms(r),
            v.map_or(0.0, |v| (r.as_secs_f64() - v.as_secs_f64()) * 1e6
                / (PRESETS * steps) as f64)
        );
    }
    if let (Some(v), Some(r)) = (v, r) {
        println!(
            "ratio replay / validate: {:.2}x",
            r.as_secs_f64() / v.as_secs_f64()
        );
    }
    if only.is_some()
        && let Some(peak) = peak_rss()
    {
        println!(
            "peak RSS: {peak} (after the setup, before anything was timed: {})",
            setup_peak.as_deref().unwrap_or("?")
        );
    }
}

/// The process's peak resident set (VmHWM), as `/proc/self/status` writes it.
fn peak_rss() -> Option<String> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM"))?;
    Some(line.trim_start_matches("VmHWM:").trim().to_owned())
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn time(f: impl FnOnce()) -> Duration {
    let start = Instant::now();
    f();
    start.elapsed()
}

fn project(dir: &Path) -> Project {
    let options = ProjectOptions {
        project_dir: Some(dir.to_owned()),
        no_user: true,
        ..ProjectOptions::default()
    };
    Project::discover(&options).expect("the project").0
}

fn validated(dir: &Path) -> Vec<ValidPreset> {
    let mut project = project(dir);
    let plan = project.plan(&[]);
    project
        .validate_batch(&plan.items, |_, _| ())
        .into_iter()
        .filter_map(|(v, ())| v.preset)
        .filter(|p| p.name().starts_with("bench-"))
        .collect()
}

fn validate_all(dir: &Path) {
    assert_eq!(validated(dir).len(), PRESETS);
}

fn replay_all(dir: &Path) {
    let project = project(dir);
    let options = ReplayOptions::default();
    // What `agent-presets test` runs: every case read and checked, each preset validated
    // once, the cases replayed over every core.
    let report = run_suite(&project, &[], None, |case, preset| {
        replay::replay_case(case, preset, &options)
    });
    assert_eq!(report.results.len(), PRESETS);
    assert_eq!(
        report.count(CaseStatus::Passed),
        PRESETS,
        "{:?}",
        report.diagnostics()
    );
}

/// A scripted model: `steps - 1` turns that call `read_file`, then an answer.
#[derive(Debug)]
struct Scripted {
    settings: ModelSettings,
    steps: usize,
    sent: std::cell::Cell<usize>,
}

impl ModelTransport for Scripted {
    fn settings(&self) -> &ModelSettings {
        &self.settings
    }
    fn stream(&self) -> bool {
        true
    }
    fn send<'a>(
        &'a self,
        _body: RequestBody,
        _on_event: &'a mut dyn FnMut(ClientEvent<'_>),
    ) -> TransportFuture<'a> {
        let n = self.sent.get() + 1;
        self.sent.set(n);
        let turn = if n < self.steps {
            ModelTurn {
                text: format!("Step {n}: reading."),
                reasoning: None,
                tool_calls: vec![ToolCall {
                    id: format!("call_{n}"),
                    name: "read_file".into(),
                    arguments: format!("{{\"path\":\"src/file{n}.rs\"}}"),
                }],
                finish: FinishReason::ToolCalls,
                usage: None,
            }
        } else {
            ModelTurn {
                text: "Done.".into(),
                reasoning: None,
                tool_calls: Vec::new(),
                finish: FinishReason::Stop,
                usage: None,
            }
        };
        Box::pin(async move { Ok(turn) })
    }
}

/// Every call answers with a small file's text.
#[derive(Debug)]
struct FakeTools;

impl ToolRunner for FakeTools {
    fn run<'a>(
        &'a self,
        step: usize,
        _call: &'a ToolCall,
        _args: Value,
        _registry: &'a ToolRegistry,
        _ctx: &'a ToolContext,
    ) -> ToolRunFuture<'a> {
        Box::pin(async move { ToolOutput::ok(format!("fn step_{step}() {{}}\n").repeat(20)) })
    }
}

/// Write the presets, and a test case for each with its recorded cassette.
fn setup(dir: &Path, steps: usize) {
    let presets = dir.join(".agent-presets");
    std::fs::create_dir_all(&presets).expect("the presets directory");
    for i in 0..PRESETS {
        std::fs::write(
            presets.join(format!("bench-{i}.yaml")),
            format!(
                "version: 1\nname: bench-{i}\nextends: standard\nmodel:\n  provider: deepseek\n  name: deepseek-chat\n  baseUrl: http://127.0.0.1:9\npersona:\n  sections:\n    - name: focus\n      order: 15\n      text: Preset {i} reviews module {i} for typos.\n"
            ),
        )
        .expect("a preset");
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let cases = presets.join("tests");
    std::fs::create_dir_all(&cases).expect("the test cases' directory");
    for preset in validated(dir) {
        let settings = endpoint::settings(&preset, &Overrides::default())
            .expect("settings")
            .expect("a model");
        let scripted = Scripted {
            settings: settings.clone(),
            steps,
            sent: std::cell::Cell::new(0),
        };
        let recorder = Recorder::new(&scripted);
        let values = preset
            .default_values()
            .with("cwd", "/work/project")
            .with("os", "linux")
            .with("shell", "bash")
            .with("date", "2026-12-02")
            .with("approval", "yes");
        let ctx = ToolContext::new(dir)
            .expect("a tool context")
            .with_sandbox(preset.sandbox_profile(preset.sandbox_mode(), dir));
        let mut history = Vec::new();
        let outcome = {
            let mut agent = Agent::new(preset.assembler(), &recorder, ctx)
                .with_max_steps(steps)
                .with_tool_runner(&FakeTools);
            runtime.block_on(agent.run(
                "Review the project.",
                &mut history,
                &mut ContextSnapshot::new(),
                &mut |_| values.clone(),
                &mut ApproveAll,
                &mut |_| {},
            ))
        };
        let entry = lock::entry(&preset).expect("a lock entry");
        let run = RecordedRun {
            preset: preset.name(),
            entry: &entry,
            registry: preset.assembler().registry(),
            settings: &settings,
            prompt: "Review the project.",
            values: &values,
            max_steps: steps,
            checks: &[],
            hooks: &[],
        };
        let mut c = cassette(run, &recorder, &history, &outcome, &Redactor::none());
        assert_eq!(c.steps.len(), steps);
        let name = preset.name();
        std::fs::write(cases.join(format!("{name}.jsonl")), c.to_text()).expect("a cassette");
        std::fs::write(
            cases.join(format!("{name}.yaml")),
            format!("preset: {name}\nprompt: Review the project.\ncassette: {name}.jsonl\n"),
        )
        .expect("a test case");
    }
}
