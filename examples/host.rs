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
    // The run gate: no plain http off the loopback, nothing untrusted reaches out.
    if let Some(settings) = &settings {
        endpoint_gate(&project, &preset, settings)?;
    }
    // Render step 1 with the machine's values.
    let cwd = std::env::current_dir()
        .map_err(|e| format!("cannot determine the current directory: {e}"))?
        .to_string_lossy()
        .into_owned();
    let inputs = ValueInputs {
        cwd: &cwd,
        model: settings.as_ref().map(|s| s.name.as_str()),
        provider: settings.as_ref().map(|s| s.provider),
        var_files: &[],
        vars: &[],
    };
    let values = match runtime_values(&preset, &inputs) {
        Ok(values) => values,
        Err(ValuesError::Usage { message, help }) => {
            return Err(format!("{message} ({})", help.unwrap_or_default()));
        }
        Err(ValuesError::Invalid { diagnostics, .. }) => {
            print_all(&diagnostics);
            return Ok(ExitCode::from(1));
        }
    };
    // The approval policy of the approver `run` below uses: the agent sets it on every
    // step it renders, and step 1 is rendered here.
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
    let Some(prompt) = args.prompt else {
        return Ok(ExitCode::SUCCESS);
    };
    let (Some(settings), Some(linted)) = (settings, linted) else {
        return Err(format!("preset `{}` names no model to run", preset.name()));
    };
    run(&preset, settings, &linted, step, values, &cwd, &prompt)
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

#[cfg(feature = "client")]
fn run(
    preset: &agent_presets::ValidPreset,
    settings: agent_presets::endpoint::ModelSettings,
    linted: &agent_presets::provider::lint::LintedTools,
    step: agent_presets::Assembly,
    values: agent_presets::Values,
    cwd: &str,
    prompt: &str,
) -> Result<ExitCode, String> {
    use agent_presets::agent::{Agent, AgentError, Outcome, RefuseChanges};
    use agent_presets::client::{ClientOptions, ModelClient};

    let client =
        ModelClient::from_env(settings, ClientOptions::default()).map_err(|e| e.to_string())?;
    // passEnv and the sandbox the preset declares (the one its prompt tells the model
    // about), as `agent-presets run` without `--sandbox`.
    let tools = preset
        .tool_context(cwd)
        .map_err(|e| e.to_string())?
        .with_hidden_env(agent_presets::preset::chain_settings::withheld_env(
            client.settings().api_key_env.as_deref(),
        ));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let mut agent = Agent::new(preset.assembler(), &client, tools)
        .with_linted_tools(linted)
        .with_first_step(step);
    let mut refuse = RefuseChanges::new("this host does not ask before changes", preset.texts());
    let outcome = runtime.block_on(agent.run(
        prompt,
        &mut Vec::new(),
        &mut agent_presets::ContextSnapshot::new(),
        &mut |_| values.clone(),
        &mut refuse,
        &mut |_| {},
    ));
    match outcome {
        Ok(Outcome::Answered { text, .. }) => {
            println!("{text}");
            Ok(ExitCode::SUCCESS)
        }
        Ok(Outcome::StepLimit { steps }) => Err(format!("stopped after {steps} steps")),
        Err(AgentError::Assemble(ds)) | Err(AgentError::ToolsRefused(ds)) => {
            print_all(ds.as_slice());
            Ok(ExitCode::from(1))
        }
        Err(e) => Err(e.to_string()),
    }
}

#[cfg(not(feature = "client"))]
fn run(
    _: &agent_presets::ValidPreset,
    _: agent_presets::endpoint::ModelSettings,
    _: &agent_presets::provider::lint::LintedTools,
    _: agent_presets::Assembly,
    _: agent_presets::Values,
    _: &str,
    _: &str,
) -> Result<ExitCode, String> {
    Err("running needs the `client` feature".into())
}
