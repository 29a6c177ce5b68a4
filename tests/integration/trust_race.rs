//! Trust decides on the bytes it read (issue 27): a symbolic link in `.agent-presets/`
//! that another process flips between a file of the user's and a file of anyone's while
//! `run` starts cannot get the foreign file past the trust gate. Bounded: a fixed number
//! of runs against a flipper thread; nothing is timed.
#![cfg(all(feature = "cli", unix))]

use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::support::mock_provider::{self as mock, MockProvider, Reply};

/// How many `run`s start while the link flips.
const RUNS: usize = 250;

fn preset(url: &str) -> String {
    format!(
        "version: 1\nname: helper\nextends: minimal\nmodel:\n  provider: openai-compatible\n  name: m\n  baseUrl: {url}\n  apiKeyEnv: TEST_MODEL_KEY\n"
    )
}

#[test]
fn a_link_flipped_during_startup_never_gets_a_foreign_file_past_the_gate() {
    let replies = (0..RUNS)
        .map(|_| Reply::json(mock::openai_text("ok")))
        .collect();
    let server = MockProvider::start(replies);
    let project = tempfile::tempdir().unwrap();
    let config = tempfile::tempdir().unwrap();
    // The user's own file (under the configuration directory, not in its `presets/`) and
    // anyone's file, both `helper`; the project's link points at one or the other.
    let own = config.path().join("mine/helper.yaml");
    let foreign = project.path().join("elsewhere/helper.yaml");
    for (file, url) in [
        (&own, server.url("/own")),
        (&foreign, server.url("/foreign")),
    ] {
        fs::create_dir_all(file.parent().unwrap()).unwrap();
        fs::write(file, preset(&url)).unwrap();
    }
    let presets = project.path().join(".agent-presets");
    fs::create_dir_all(&presets).unwrap();
    let link = presets.join("helper.yaml");
    symlink(&own, &link).unwrap();

    let stop = Arc::new(AtomicBool::new(false));
    let flipper = {
        let stop = Arc::clone(&stop);
        let (own, foreign, presets) = (own.clone(), foreign.clone(), presets.clone());
        std::thread::spawn(move || flip(&stop, &presets, &own, &foreign))
    };
    let mut passed = 0;
    for _ in 0..RUNS {
        let status = Command::new(env!("CARGO_BIN_EXE_agent-presets"))
            .args(["run", "helper", "hi"])
            .current_dir(project.path())
            .env("AGENT_PRESETS_CONFIG_DIR", config.path())
            .env("NO_COLOR", "1")
            .env("CI", "true")
            .env("TEST_MODEL_KEY", "sk-race-0123456789abcdefghij")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .unwrap();
        passed += usize::from(status.success());
    }
    stop.store(true, Ordering::Relaxed);
    flipper.join().unwrap();
    let foreign_requests = server
        .requests()
        .iter()
        .filter(|r| r.path.starts_with("/foreign"))
        .count();
    assert_eq!(
        foreign_requests, 0,
        "{foreign_requests} of {RUNS} runs sent the foreign file's request ({passed} passed the gate)"
    );
}

/// Point `presets/helper.yaml` at `own`, then at `foreign`, and so on, each flip one
/// atomic rename of a fresh link over it, until told to stop.
fn flip(stop: &AtomicBool, presets: &Path, own: &Path, foreign: &Path) {
    let temp = presets.join(".flip");
    let link = presets.join("helper.yaml");
    let mut to_foreign = true;
    while !stop.load(Ordering::Relaxed) {
        let _ = fs::remove_file(&temp);
        symlink(if to_foreign { foreign } else { own }, &temp).unwrap();
        fs::rename(&temp, &link).unwrap();
        to_foreign = !to_foreign;
    }
}
