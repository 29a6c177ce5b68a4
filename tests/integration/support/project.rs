//! A temporary project to run the built binary in: its own directory (the current
//! directory of every run) and an empty user configuration (`AGENT_PRESETS_CONFIG_DIR`),
//! so the machine's presets never leak in; `NO_COLOR=1`. Include with
//! `#[path = "support/project.rs"] mod project;`.
#![allow(dead_code)]

use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use tempfile::TempDir;

/// How a run ended.
pub struct Run {
    /// The exit code (`-1` when a signal ended the process).
    pub code: i32,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

impl fmt::Debug for Run {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "exit {}\n--- stdout\n{}\n--- stderr\n{}",
            self.code, self.stdout, self.stderr
        )
    }
}

/// A temporary project directory and an empty user configuration.
pub struct Project {
    dir: TempDir,
    config: TempDir,
}

impl Project {
    /// An empty project.
    pub fn new() -> Self {
        Project {
            dir: tempfile::tempdir().unwrap(),
            config: tempfile::tempdir().unwrap(),
        }
    }

    /// A project holding a copy of this repository's directory `from` (relative to the
    /// crate root), file by file and recursively.
    pub fn copy_of(from: &str) -> Self {
        let project = Project::new();
        copy_dir(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join(from),
            project.path(),
        );
        project
    }

    /// The project directory.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Write a file (creating its directories).
    pub fn write(&self, relative: &str, text: &str) -> PathBuf {
        let path = self.path().join(relative);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, text).unwrap();
        path
    }

    /// `agent-presets args…` in the project.
    pub fn run(&self, args: &[&str]) -> Run {
        self.run_program(env!("CARGO_BIN_EXE_agent-presets"), args)
    }

    /// `agent-presets args…` with more environment variables.
    pub fn run_with_env(&self, args: &[&str], env: &[(&str, &str)]) -> Run {
        self.run_program_with_env(env!("CARGO_BIN_EXE_agent-presets"), args, env)
    }

    /// `agent-presets args…` in the subdirectory `dir` of the project (created).
    pub fn run_in(&self, dir: &str, args: &[&str]) -> Run {
        let cwd = self.path().join(dir);
        fs::create_dir_all(&cwd).unwrap();
        self.run_program_in(&cwd, env!("CARGO_BIN_EXE_agent-presets"), args, &[])
    }

    /// `program args…` in the project, with the directory of the binary under test first
    /// on `PATH` (so scripts calling `agent-presets` get it).
    pub fn run_program(&self, program: &str, args: &[&str]) -> Run {
        self.run_program_with_env(program, args, &[])
    }

    fn run_program_with_env(&self, program: &str, args: &[&str], env: &[(&str, &str)]) -> Run {
        self.run_program_in(self.path(), program, args, env)
    }

    fn run_program_in(
        &self,
        cwd: &Path,
        program: &str,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> Run {
        let bin = Path::new(env!("CARGO_BIN_EXE_agent-presets"))
            .parent()
            .unwrap();
        let path = std::env::join_paths(std::iter::once(bin.to_path_buf()).chain(
            std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
        ))
        .unwrap();
        let output = Command::new(program)
            .args(args)
            .current_dir(cwd)
            .env("PATH", path)
            .env("AGENT_PRESETS_CONFIG_DIR", self.config.path())
            .env("NO_COLOR", "1")
            .envs(env.iter().copied())
            .output()
            .unwrap();
        Run {
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }
}

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), target).unwrap();
        }
    }
}
