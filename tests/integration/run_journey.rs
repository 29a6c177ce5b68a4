//! `agent_presets::run`, the run journey, from a host: a run recorded through it against
//! the host's own transport (no client, no key, no socket) gives a cassette that
//! `testing::replay` passes, and the same journey replays it with a `Player` as its
//! transport, the tools running live in the workspace.

#![cfg(feature = "client")]

use std::cell::Cell;
use std::path::Path;

use agent_presets::agent::{
    AgentError, ApprovalPolicy, ApproveAll, ModelTransport, Outcome, RequestBody, TransportFuture,
};
use agent_presets::client::ClientEvent;
use agent_presets::endpoint::{ModelSettings, Overrides};
use agent_presets::project::{Project, ProjectOptions, endpoint};
use agent_presets::provider::{FinishReason, ModelTurn};
use agent_presets::request::ToolCall;
use agent_presets::run::{Finished, Model, ServerOptions, Setup, prepare};
use agent_presets::testing::Cassette;
use agent_presets::testing::replay::{self, Player, ReplayOptions};

/// Step 1 reads `notes.txt`, step 2 answers.
#[derive(Debug)]
struct Scripted {
    settings: ModelSettings,
    sent: Cell<usize>,
}

impl ModelTransport for Scripted {
    fn settings(&self) -> &ModelSettings {
        &self.settings
    }
    fn stream(&self) -> bool {
        false
    }
    fn send<'a>(
        &'a self,
        _body: RequestBody,
        _on_event: &'a mut dyn FnMut(ClientEvent<'_>),
    ) -> TransportFuture<'a> {
        let n = self.sent.get() + 1;
        self.sent.set(n);
        let turn = if n == 1 {
            ModelTurn {
                text: "Reading.".into(),
                reasoning: None,
                tool_calls: vec![ToolCall {
                    id: "call_1".into(),
                    name: "read_file".into(),
                    arguments: "{\"path\":\"notes.txt\"}".into(),
                }],
                finish: FinishReason::ToolCalls,
                usage: None,
            }
        } else {
            ModelTurn {
                text: "The notes say hello.".into(),
                reasoning: None,
                tool_calls: Vec::new(),
                finish: FinishReason::Stop,
                usage: None,
            }
        };
        Box::pin(async move { Ok(turn) })
    }
}

fn project(dir: &Path) -> Project {
    std::fs::create_dir_all(dir.join(".agent-presets")).unwrap();
    std::fs::write(
        dir.join(".agent-presets/reader.yaml"),
        "version: 1\nname: reader\nextends: standard\ntools:\n  allow: [read_file]\n",
    )
    .unwrap();
    let options = ProjectOptions {
        project_dir: Some(dir.to_owned()),
        no_user: true,
        no_project_config: true,
        ..ProjectOptions::default()
    };
    Project::discover(&options).unwrap().0
}

/// One run of `reader` through the journey, talking to `transport`.
fn journey(
    project: &Project,
    cwd: &Path,
    transport: &dyn ModelTransport,
    record: bool,
) -> Finished {
    let preset = project.validate("reader").preset.unwrap();
    let settings = transport.settings().clone();
    let linted = endpoint::lint(&preset, &settings, &project.presets);
    let setup = Setup {
        project,
        preset,
        settings,
        linted,
        cwd: cwd.to_owned(),
        sandbox: None,
        approval: ApprovalPolicy::Yes,
        max_steps: None,
        max_tool_calls: None,
        pin_date: true,
        record,
    };
    let prepared = prepare(
        setup,
        |_, _, _| Ok::<_, String>(true),
        |preset, cwd| {
            Ok(preset
                .default_values()
                .with("cwd", cwd)
                .with("os", "linux")
                .with("shell", "bash")
                .with("date", "2030-01-01"))
        },
    )
    .unwrap()
    .unwrap();
    let connected = prepared.connect(Model::Given(transport)).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let sink: agent_presets::mcp::StderrSink = std::sync::Arc::new(|_: &str, _: &str| {});
    runtime.block_on(async {
        let mut started = connected
            .start(ServerOptions {
                allow_drift: false,
                stderr: &sink,
            })
            .await
            .unwrap();
        let finished = started
            .run("Read the notes.", &mut ApproveAll, &mut |_| {})
            .await;
        started.shutdown().await;
        finished
    })
}

fn answer(finished: &Finished) -> &str {
    match &finished.outcome {
        Ok(Outcome::Answered { text, .. }) => text,
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_host_records_and_replays_through_the_journey() {
    let dir = tempfile::tempdir().unwrap();
    let project = project(dir.path());
    let workspace = tempfile::tempdir().unwrap();
    let cwd = workspace.path().canonicalize().unwrap();
    std::fs::write(cwd.join("notes.txt"), "hello from the notes\n").unwrap();
    let preset = project.validate("reader").preset.unwrap();
    // The preset's own endpoint (standard's model block): what a replay rebuilds.
    let settings = endpoint::settings(&preset, &Overrides::default())
        .unwrap()
        .unwrap();

    let scripted = Scripted {
        settings: settings.clone(),
        sent: Cell::new(0),
    };
    let recorded = journey(&project, &cwd, &scripted, true);
    assert_eq!(answer(&recorded), "The notes say hello.");
    assert_eq!(scripted.sent.get(), 2);
    // The tool ran live, in the workspace.
    assert!(
        recorded
            .history
            .iter()
            .any(|m| m.content.contains("hello from the notes")),
        "{:?}",
        recorded.history
    );
    let mut cassette = recorded.cassette.expect("recorded");
    let cassette = Cassette::parse(&cassette.to_text()).unwrap();
    assert_eq!(cassette.steps.len(), 2);
    assert_eq!(cassette.header.runtime["date"], "2030-01-01");

    // `testing::replay` passes it, offline.
    let replayed = replay::replay(&preset, &cassette, "run.jsonl", &ReplayOptions::default());
    assert!(replayed.passed(), "{:?}", replayed.diagnostics);
    assert_eq!(
        replayed.observed.answer.as_deref(),
        Some("The notes say hello.")
    );

    // The journey itself replays it: a Player as the transport, each body compared.
    let player = Player::new(settings.clone(), &cassette);
    let again = journey(&project, &cwd, &player, false);
    assert_eq!(answer(&again), "The notes say hello.");
    assert!(again.cassette.is_none());

    // A workspace elsewhere changes the `cwd` the prompt names: the player refuses the
    // first request, and the run ends in an error instead of an answer.
    let elsewhere = tempfile::tempdir().unwrap();
    let player = Player::new(settings, &cassette);
    let drifted = journey(
        &project,
        &elsewhere.path().canonicalize().unwrap(),
        &player,
        false,
    );
    assert!(
        matches!(drifted.outcome, Err(AgentError::Client(_))),
        "{:?}",
        drifted.outcome
    );
}
