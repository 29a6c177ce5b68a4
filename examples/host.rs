//! A host program: the journey of `agent-presets run` with library calls only —
//! discover → validate → select → lock check → render → run — printing every diagnostic the
//! library returns (the same diagnostics the CLI reports; the CLI draws them with
//! source snippets).
//!
//! ```text
//! cargo run --example host -- [--preset-dir DIR]... [--base-url URL] PRESET [PROMPT]
//! ```
//!
//! Without a prompt it stops after rendering (no network, no key). With one it sends
//! the prompt to the preset's endpoint (or `--base-url`) and prints the answer; tools
//! that change files or run commands are refused (a host would ask its user). The key
//! comes from the variable the preset names (`model.apiKeyEnv`).
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::path::PathBuf;
use std::process::ExitCode;

use agent_presets::Diagnostic;
use agent_presets::endpoint::Overrides;
use agent_presets::project::lock::{self, LockFile};
use agent_presets::project::values::{ValueInputs, ValuesError, runtime_values};
use agent_presets::project::{Project, ProjectOptions, Refusal, endpoint};

struct Args {
    preset_dirs: Vec<PathBuf>,
    base_url: Option<String>,
    preset: String,
    prompt: Option<String>,
}

fn parse_args() -> Result<Args, String> {
    let mut args = std::env::args().skip(1);
    let mut out = Args {
        preset_dirs: Vec::new(),
        base_url: None,
        preset: String::new(),
        prompt: None,
    };
    let mut positional = Vec::new();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--preset-dir" => out
                .preset_dirs
                .push(args.next().ok_or("--preset-dir needs a directory")?.into()),
            "--base-url" => out.base_url = Some(args.next().ok_or("--base-url needs a URL")?),
            _ => positional.push(arg),
        }
    }
    let mut positional = positional.into_iter();
    out.preset = positional
        .next()
        .ok_or("usage: host [--preset-dir DIR]... [--base-url URL] PRESET [PROMPT]")?;
    out.prompt = positional.next();
    Ok(out)
}

fn print_all(list: &[Diagnostic]) {
    for d in list {
        eprintln!("{d}");
    }
}

fn main() -> ExitCode {
    match host() {
        Ok(code) => code,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
    }
}

fn host() -> Result<ExitCode, String> {
    let args = parse_args()?;
    // Discover: the presets on offer, and what discovery refused.
    let options = ProjectOptions {
        preset_dirs: args.preset_dirs.clone(),
        ..ProjectOptions::default()
    };
    let (mut project, unreadable) = Project::discover(&options).map_err(|e| e.to_string())?;
    if !unreadable.is_empty() {
        print_all(&unreadable);
        return Ok(ExitCode::from(2));
    }
    // Validate: every preset on offer, in family order, judged like `validate` does.
    let plan = project.plan(&[]);
    let outcomes = project.validate_batch(&plan.items, |_, _| ());
    let invalid = plan
        .items
        .iter()
        .zip(&outcomes)
        .filter(|(item, (v, ()))| !project.judge(item, &v.diagnostics, false))
        .count();
    eprintln!(
        "validated {} presets, {invalid} invalid",
        plan.items.len() + plan.refused_files.len()
    );
    // Select: the preset asked for, with the ambiguity policy.
    let chosen = match project.choose(&args.preset) {
        Ok(chosen) => chosen,
        Err(Refusal::Unusable(d)) => {
            print_all(&[d]);
            return Ok(ExitCode::from(2));
        }
        Err(Refusal::Invalid(list)) => {
            print_all(&list);
            return Ok(ExitCode::from(1));
        }
    };
    print_all(&chosen.warnings);
    let preset = chosen.preset;
    // Lock check: the cacheable prefix against `presets.lock`, when the project has one.
    let path = LockFile::path(&project);
    match LockFile::load(&path) {
        Ok(Some(locked)) => {
            let now = lock::entry(&preset).map_err(|e| e.to_string())?;
            let drift = match locked.get(preset.name()) {
                Some(entry) => lock::drift(&preset, entry, &now),
                None => Some(lock::not_locked(&preset)),
            };
            if let Some(drift) = drift {
                print_all(&[drift.diagnostic]);
                return Ok(ExitCode::from(1));
            }
        }
        Ok(None) => {}
        Err(e) => return Err(e.to_string()),
    }
    // The endpoint, with the provider lint run once.
    let overrides = Overrides {
        base_url: args.base_url.clone(),
        ..Overrides::default()
    };
    let settings =
        endpoint::settings(&preset, &overrides).map_err(|e| format!("{e} ({})", e.help()))?;
    let linted = settings
        .as_ref()
        .map(|s| endpoint::lint(&preset, s, &project.presets));
    if let Some(linted) = &linted {
        print_all(linted.diagnostics());
        if linted.refused() {
            return Ok(ExitCode::from(1));
        }
    }
    let cwd = std::env::current_dir()
        .map_err(|e| format!("cannot determine the current directory: {e}"))?;
    let Some(prompt) = args.prompt else {
        // Render step 1 with the machine's values: nothing is sent, so no gate.
        let cwd_text = cwd.to_string_lossy().into_owned();
        let values = match host_values(&preset, settings.as_ref(), cwd_text) {
            Ok(values) => values,
            Err(stop) => return stop.into_exit(),
        };
        // The approval policy of the approver `run` uses: the agent sets it on every
        // step it renders.
        #[cfg(feature = "client")]
        let values = values.with(
            agent_presets::agent::APPROVAL_VARIABLE,
            agent_presets::agent::ApprovalPolicy::Refuse.as_str(),
        );
        let step = match preset.assembler().assemble(&values) {
            Ok(step) => step,
            Err(ds) => {
                print_all(&agent_presets::project::values::explain_missing(ds));
                return Ok(ExitCode::from(1));
            }
        };
        println!("{}", step.system);
        println!("fingerprint: {}", step.fingerprint);
        return Ok(ExitCode::SUCCESS);
    };
    let (Some(settings), Some(linted)) = (settings, linted) else {
        return Err(format!("preset `{}` names no model to run", preset.name()));
    };
    run(&project, preset, settings, linted, cwd, &prompt)
}

/// Why the host stops: a message (exit 2), or diagnostics already printed.
enum Stop {
    Message(String),
    Exit(u8),
}

impl Stop {
    fn into_exit(self) -> Result<ExitCode, String> {
        match self {
            Stop::Message(m) => Err(m),
            Stop::Exit(code) => Ok(ExitCode::from(code)),
        }
    }
}

/// The values `run` would use with no `--var`: the machine's cwd, os, shell, date.
fn host_values(
    preset: &agent_presets::ValidPreset,
    settings: Option<&agent_presets::endpoint::ModelSettings>,
    cwd: String,
) -> Result<agent_presets::Values, Stop> {
    let inputs = ValueInputs {
        cwd: &cwd,
        model: settings.map(|s| s.name.as_str()),
        provider: settings.map(|s| s.provider),
        var_files: &[],
        vars: &[],
    };
    match runtime_values(preset, &inputs) {
        Ok(values) => Ok(values),
        Err(ValuesError::Usage { message, help }) => Err(Stop::Message(format!(
            "{message} ({})",
            help.unwrap_or_default()
        ))),
        Err(ValuesError::Invalid { diagnostics, .. }) => {
            print_all(&diagnostics);
            Err(Stop::Exit(1))
        }
    }
}

/// The checks `run` makes before anything is sent; a host that can ask its user would
/// offer to trust the preset here (`TrustStore::trust`, `save`).
fn endpoint_gate(
    project: &Project,
    preset: &agent_presets::ValidPreset,
    settings: &agent_presets::endpoint::ModelSettings,
) -> Result<(), String> {
    use agent_presets::project::gate;
    use agent_presets::trust::{TrustPolicy, TrustStatus, TrustStore};

    gate::check_transport(preset, settings, false).map_err(|e| format!("{e} ({})", e.help()))?;
    let policy = TrustPolicy::from_environment();
    if let Some(reach) =
        gate::reach_to_trust(project, preset, settings, &policy, &project.project_dir)
    {
        let store = TrustStore::open(policy.config_dir()).map_err(|e| e.to_string())?;
        if !matches!(
            store.status(&reach),
            TrustStatus::NotNeeded | TrustStatus::Trusted
        ) {
            return Err(format!(
                "preset `{}` is not trusted; nothing was sent or started (run `agent-presets trust`)",
                reach.name
            ));
        }
    }
    Ok(())
}

/// The run journey (`agent_presets::run`), as `agent-presets run` makes it: the gate,
/// the values, step 1 rendered (printed here), the live client, the servers, the agent.
/// Tools that change files or run commands are refused: this host does not ask.
#[cfg(feature = "client")]
fn run(
    project: &Project,
    preset: agent_presets::ValidPreset,
    settings: agent_presets::endpoint::ModelSettings,
    linted: agent_presets::provider::lint::LintedTools,
    cwd: PathBuf,
    prompt: &str,
) -> Result<ExitCode, String> {
    use agent_presets::agent::{AgentError, ApprovalPolicy, Outcome, RefuseChanges};
    use agent_presets::client::ClientOptions;
    use agent_presets::run::{Model, PrepareError, RunError, ServerOptions, Setup, prepare};

    let setup = Setup {
        project,
        preset,
        settings,
        linted,
        cwd,
        // The sandbox the preset declares (the one its prompt tells the model about).
        sandbox: None,
        approval: ApprovalPolicy::Refuse,
        max_steps: None,
        max_tool_calls: None,
        pin_date: false,
        record: false,
    };
    let prepared = prepare(
        setup,
        // The run gate: no plain http off the loopback, nothing untrusted reaches out.
        |preset, settings, _cwd| {
            endpoint_gate(project, preset, settings)
                .map(|()| true)
                .map_err(Stop::Message)
        },
        |preset, cwd| host_values(preset, None, cwd),
    );
    let prepared = match prepared {
        Ok(Some(prepared)) => prepared,
        Ok(None) => return Ok(ExitCode::from(2)),
        Err(PrepareError::Caller(stop)) => return stop.into_exit(),
        Err(PrepareError::Run(RunError::Render(ds))) => {
            print_all(&agent_presets::project::values::explain_missing(ds));
            return Ok(ExitCode::from(1));
        }
        Err(PrepareError::Run(e)) => return Err(format!("{e:?}")),
    };
    println!("{}", prepared.first_step().system);
    println!("fingerprint: {}", prepared.first_step().fingerprint);
    let connected = prepared
        .connect(Model::Live(ClientOptions::default()))
        .map_err(|e| match e {
            RunError::Client(e) => e.to_string(),
            other => format!("{other:?}"),
        })?;
    let mut refuse = RefuseChanges::new(
        "this host does not ask before changes",
        connected.preset().texts(),
    );
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let stderr: agent_presets::mcp::StderrSink =
        std::sync::Arc::new(|server: &str, line: &str| eprintln!("[{server}] {line}"));
    let finished = runtime.block_on(async {
        let mut started = connected
            .start(ServerOptions {
                allow_drift: false,
                stderr: &stderr,
            })
            .await?;
        let finished = started.run(prompt, &mut refuse, &mut |_| {}).await;
        started.shutdown().await;
        Ok::<_, RunError>(finished)
    });
    let finished = match finished {
        Ok(finished) => finished,
        Err(RunError::Invalid(list)) => {
            print_all(&list);
            return Ok(ExitCode::from(1));
        }
        Err(e) => return Err(format!("{e:?}")),
    };
    match finished.outcome {
        // Under an output contract the validated object is what the host wants.
        Ok(Outcome::Answered {
            output: Some(object),
            ..
        }) => {
            println!("{object}");
            Ok(ExitCode::SUCCESS)
        }
        Ok(Outcome::Answered { text, .. }) => {
            println!("{text}");
            Ok(ExitCode::SUCCESS)
        }
        Ok(Outcome::StepLimit { steps }) => Err(format!("stopped after {steps} steps")),
        Ok(Outcome::OutputInvalid { problems, .. }) => Err(format!(
            "the answer broke the output contract: {}",
            problems
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; ")
        )),
        Ok(Outcome::CheckFailed { check, ending, .. }) => {
            Err(format!("the check `{check}` still fails: {ending}"))
        }
        Err(AgentError::Assemble(ds)) | Err(AgentError::ToolsRefused(ds)) => {
            print_all(ds.as_slice());
            Ok(ExitCode::from(1))
        }
        Err(e) => Err(e.to_string()),
    }
}

#[cfg(not(feature = "client"))]
fn run(
    _: &Project,
    _: agent_presets::ValidPreset,
    _: agent_presets::endpoint::ModelSettings,
    _: agent_presets::provider::lint::LintedTools,
    _: PathBuf,
    _: &str,
) -> Result<ExitCode, String> {
    Err("running needs the `client` feature".into())
}
