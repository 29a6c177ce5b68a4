//! What a program needs to read, derived from the program itself: the reads a sandboxed
//! stdio MCP server or command tool gets besides the system paths, the toolchains on the
//! agent's `PATH` and the preset's `allowRead` ([`program_reads`], applied by
//! [`SandboxProfile::with_program`](super::SandboxProfile::with_program)).
//!
//! From the argv, the child's `PATH` and working directory:
//! - the program as found on the child's `PATH` ([`find_program`]), and the file it leads
//!   to with every symbolic link followed ([`resolve_program`]); for each, the install
//!   prefix it sits in: `<prefix>` for `<prefix>/bin/x` (a virtualenv, a pipx or uv tool,
//!   an nvm/asdf/pyenv version), the outermost `node_modules` for a file below one (an
//!   `npx` package, `node_modules/.bin/x`), else the file's own directory;
//! - its shebang's interpreter (`#!/venv/bin/python`, `#!/usr/bin/env node`, looked up on
//!   the child's `PATH`), followed the same way (a shim that is itself a script once
//!   more), and for a virtualenv's interpreter the Python it was made from (`home` in
//!   `pyvenv.cfg`) and that Python's prefix;
//! - each argument that names a file (`node dist/index.js`, `python server.py`): the file,
//!   its directory and its prefix;
//! - the package caches of launchers that run from one (`uvx`/`uv`: `~/.cache/uv` and
//!   `~/.local/share/uv`; `npx`/`npm`: `~/.npm`; `pipx`: `~/.local/share/pipx` and
//!   `~/.cache/pipx`; each as its own environment variable moves it), read only.
//!
//! And what it may write ([`program_writes`]): when the program itself is a launcher
//! (`uvx`, `uv`, `npx`, `npm`, `pipx`, by its name), that launcher's own download cache
//! (`~/.cache/uv`, and the lock file of uv's tools directory; `~/.npm`; `~/.cache/pipx`,
//! `~/.cache/pip`, pipx's `shared` libraries, its `py` cache, its log directory
//! `~/.local/state/pipx/log` and uv's cache, which it uses), created when missing. Never what it installs for the user to run (`uv tool`'s
//! and pipx's `venvs`, `~/.local/bin`, uv's Pythons), never the home directory, never a
//! secret path; a variable that moves a cache counts only when the agent's own
//! environment says the same (a preset's `env` cannot point the write elsewhere).
//!
//! Never `/`, the home directory or a directory above it (a program directly in `~` gets
//! only its own file), and never a secret path ([`super::SECRET_PATHS`]): a candidate in
//! one is dropped, and the profile opens a directory holding one minus it.

use std::ffi::{OsStr, OsString};
use std::io::Read;
use std::path::{Path, PathBuf};

/// How many interpreters deep a shebang is followed (a shim that runs a script that
/// names an interpreter).
const MAX_SHEBANG_DEPTH: usize = 3;

/// Where `program` is found for a child whose `PATH` is `path`, started in `cwd`: the
/// program itself (relative to `cwd`) when it contains a `/`, else the first executable
/// regular file of that name in a `PATH` directory. Symbolic links are not resolved.
pub fn find_program(program: &str, path: Option<&OsStr>, cwd: &Path) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let executable = |p: &Path| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if program.is_empty() {
        return None;
    }
    if program.contains('/') {
        let p = cwd.join(program);
        return executable(&p).then_some(p);
    }
    std::env::split_paths(path?)
        .filter(|d| d.is_absolute())
        .map(|d| d.join(program))
        .find(|p| executable(p))
}

/// [`find_program`] with every symbolic link followed: the file that runs.
pub fn resolve_program(program: &str, path: Option<&OsStr>, cwd: &Path) -> Option<PathBuf> {
    find_program(program, path, cwd).and_then(|p| p.canonicalize().ok())
}

/// The arguments of a program (its argv without the program) that name a regular file,
/// relative to `cwd`, with links followed: the scripts it runs (`node dist/index.js`).
/// Options (`-m`, `--flag=x`) are not files.
pub fn script_arguments(args: &[String], cwd: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for arg in args {
        if arg.is_empty() || arg.starts_with('-') || arg.len() > 4096 {
            continue;
        }
        let Ok(p) = cwd.join(arg).canonicalize() else {
            continue;
        };
        if p.is_file() && !out.contains(&p) {
            out.push(p);
        }
    }
    out
}

/// The paths a sandboxed `argv` (run in `cwd` with the environment `env`, the child's)
/// needs to read, derived from its program (see the module documentation); `home` is the
/// user's home directory, whose secrets are never given. Canonical, each once, none
/// inside another.
pub fn program_reads(
    argv: &[String],
    env: &dyn Fn(&str) -> Option<OsString>,
    cwd: &Path,
    home: Option<&Path>,
) -> Vec<PathBuf> {
    let Some((program, args)) = argv.split_first() else {
        return Vec::new();
    };
    let path = env("PATH");
    let mut reads = Reads::new(home);
    if let Some(found) = find_program(program, path.as_deref(), cwd) {
        reads.program(&found, path.as_deref(), 0);
    }
    for script in script_arguments(args, cwd) {
        reads.file_and_prefix(&script);
        reads.shebang(&script, path.as_deref(), 1);
    }
    let name = Path::new(program)
        .file_name()
        .and_then(OsStr::to_str)
        .unwrap_or_default();
    if let Some(home) = home {
        for dir in launcher_caches(name, env, home) {
            reads.add(&dir);
        }
    }
    reads.finish()
}

/// The directories a sandboxed `argv` may write besides the workspace and its temporary
/// directory: when its program is a launcher, the launcher's download cache (see the
/// module documentation), `env` being the child's environment, `cwd` its working
/// directory (the workspace) and `home` the user's home directory. The launcher must be
/// found (on the child's `PATH`, or by its path) outside `cwd`: a `./npx` of the
/// workspace is not one. Each directory is created (mode 0700) when missing; canonical,
/// each once, none the home directory or above it, none in a secret path.
pub fn program_writes(
    argv: &[String],
    env: &dyn Fn(&str) -> Option<OsString>,
    cwd: &Path,
    home: Option<&Path>,
) -> Vec<PathBuf> {
    let (Some(program), Some(home)) = (argv.first(), home) else {
        return Vec::new();
    };
    let outside_cwd = find_program(program, env("PATH").as_deref(), cwd)
        .and_then(|p| p.canonicalize().ok())
        .is_some_and(|p| {
            let cwd = cwd.canonicalize().unwrap_or_else(|_| cwd.to_path_buf());
            !p.starts_with(cwd)
        });
    if !outside_cwd {
        return Vec::new();
    }
    let name = Path::new(program)
        .file_name()
        .and_then(OsStr::to_str)
        .unwrap_or_default();
    // Only a value the agent's own environment has too (the user's): a preset's `env`
    // cannot move where the write goes.
    let agreed = |n: &str| env(n).filter(|v| std::env::var_os(n).as_ref() == Some(v));
    let mut reads = Reads::new(Some(home));
    let Some(home) = reads.home.clone() else {
        return Vec::new();
    };
    let (dirs, lock_files) = launcher_write_caches(name, &agreed, &home);
    let allowed = |p: &Path, reads: &Reads| {
        p.is_absolute()
            && (p.starts_with(&home) || p.exists())
            && !reads.denied.iter().any(|d| p.starts_with(d))
            && !home.starts_with(p)
    };
    for dir in dirs {
        if allowed(&dir, &reads) && create_dir(&dir) {
            reads.add(&dir);
        }
    }
    // Lock files in a directory that stays read-only (uv's tools directory: what `uv
    // tool install` put there runs unconfined later): each made here as the launcher
    // would make it, with its `.gitignore`, and writable alone.
    for (dir, files) in lock_files {
        if !allowed(&dir, &reads) || !create_dir(&dir) {
            continue;
        }
        for (file, text, writable) in files {
            let path = dir.join(file);
            let made = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
                .and_then(|mut f| std::io::Write::write_all(&mut f, text.as_bytes()));
            let regular = std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file());
            if (made.is_ok() || regular) && writable {
                reads.add(&path);
            }
        }
    }
    reads.finish()
}

/// `dir` and its parents, made (mode 0700) when missing; is it a directory now?
fn create_dir(dir: &Path) -> bool {
    if !dir.exists() {
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true);
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        let _ = builder.create(dir);
    }
    dir.is_dir()
}

/// A directory to make that stays read-only, and the files to make in it: name, text,
/// writable.
type LockFiles = Vec<(PathBuf, Vec<(&'static str, &'static str, bool)>)>;

/// The download caches a launcher writes when it runs a package, and the lock files it
/// takes elsewhere (see [`program_writes`]).
fn launcher_write_caches(
    name: &str,
    env: &dyn Fn(&str) -> Option<OsString>,
    home: &Path,
) -> (Vec<PathBuf>, LockFiles) {
    let var = |n: &str| env(n).map(PathBuf::from).filter(|p| p.is_absolute());
    let cache = var("XDG_CACHE_HOME").unwrap_or_else(|| home.join(".cache"));
    let data = var("XDG_DATA_HOME").unwrap_or_else(|| home.join(".local/share"));
    match name {
        // `uvx` (`uv tool run`) takes `.lock` in the tools directory, writing its
        // `.gitignore` first when missing.
        "uv" | "uvx" => (
            vec![var("UV_CACHE_DIR").unwrap_or_else(|| cache.join("uv"))],
            vec![(
                var("UV_TOOL_DIR").unwrap_or_else(|| data.join("uv/tools")),
                vec![(".gitignore", "*", false), (".lock", "", true)],
            )],
        ),
        "npx" | "npm" => (
            vec![
                var("npm_config_cache")
                    .or_else(|| var("NPM_CONFIG_CACHE"))
                    .unwrap_or_else(|| home.join(".npm")),
            ],
            Vec::new(),
        ),
        "pipx" => {
            let pipx_home = var("PIPX_HOME").unwrap_or_else(|| data.join("pipx"));
            let state = var("XDG_STATE_HOME").unwrap_or_else(|| home.join(".local/state"));
            (
                vec![
                    cache.join("pipx"),
                    cache.join("pip"),
                    var("PIPX_SHARED_LIBS").unwrap_or_else(|| pipx_home.join("shared")),
                    state.join("pipx/log"),
                    // Its cache of standalone Pythons.
                    pipx_home.join("py"),
                    // pipx uses uv, where installed, to make its environments.
                    var("UV_CACHE_DIR").unwrap_or_else(|| cache.join("uv")),
                ],
                // pipx makes these at every start (even for `pipx run`), failing when it
                // cannot: made here, they stay read-only (what pipx installs runs
                // unconfined later).
                vec![
                    (pipx_home.clone(), vec![(".shared.lock", "", true)]),
                    // uv, when pipx makes its environments with it, takes the lock of
                    // its tools directory as `uvx` does.
                    (
                        var("UV_TOOL_DIR").unwrap_or_else(|| data.join("uv/tools")),
                        vec![(".gitignore", "*", false), (".lock", "", true)],
                    ),
                    (pipx_home.join("venvs"), Vec::new()),
                    (
                        var("PIPX_BIN_DIR").unwrap_or_else(|| home.join(".local/bin")),
                        Vec::new(),
                    ),
                    (
                        var("PIPX_MAN_DIR").unwrap_or_else(|| data.join("man")),
                        Vec::new(),
                    ),
                ],
            )
        }
        _ => (Vec::new(), Vec::new()),
    }
}

/// The package caches a launcher runs programs from (read only here: what it may write of
/// them is [`program_writes`]'s).
fn launcher_caches(
    name: &str,
    env: &dyn Fn(&str) -> Option<OsString>,
    home: &Path,
) -> Vec<PathBuf> {
    let var = |n: &str| env(n).map(PathBuf::from).filter(|p| p.is_absolute());
    let cache = var("XDG_CACHE_HOME").unwrap_or_else(|| home.join(".cache"));
    let data = var("XDG_DATA_HOME").unwrap_or_else(|| home.join(".local/share"));
    match name {
        "uv" | "uvx" => vec![
            var("UV_CACHE_DIR").unwrap_or_else(|| cache.join("uv")),
            var("UV_PYTHON_INSTALL_DIR").unwrap_or_else(|| data.join("uv/python")),
            var("UV_TOOL_DIR").unwrap_or_else(|| data.join("uv/tools")),
        ],
        "npx" | "npm" => vec![
            var("npm_config_cache")
                .or_else(|| var("NPM_CONFIG_CACHE"))
                .unwrap_or_else(|| home.join(".npm")),
        ],
        "pipx" => vec![
            var("PIPX_HOME").unwrap_or_else(|| data.join("pipx")),
            cache.join("pipx"),
            // The Pythons uv installs, when pipx makes its environments with uv.
            var("UV_PYTHON_INSTALL_DIR").unwrap_or_else(|| data.join("uv/python")),
        ],
        _ => Vec::new(),
    }
}

/// The reads found so far, and the limits every one is checked against.
struct Reads {
    home: Option<PathBuf>,
    denied: Vec<PathBuf>,
    out: Vec<PathBuf>,
}

impl Reads {
    fn new(home: Option<&Path>) -> Self {
        let home = home.map(|h| h.canonicalize().unwrap_or_else(|_| h.to_path_buf()));
        let denied = super::secret_paths(home.as_deref());
        Reads {
            home,
            denied,
            out: Vec::new(),
        }
    }

    /// Allow `path` (when it exists): not the root, the home directory or above it, not
    /// inside a secret path.
    fn add(&mut self, path: &Path) {
        let Ok(p) = path.canonicalize() else {
            return;
        };
        let too_wide =
            p.parent().is_none() || self.home.as_deref().is_some_and(|h| h.starts_with(&p));
        if too_wide || self.denied.iter().any(|d| p.starts_with(d)) {
            return;
        }
        if self.out.iter().any(|o| p.starts_with(o)) {
            return;
        }
        self.out.retain(|o| !o.starts_with(&p));
        self.out.push(p);
    }

    /// A program found at `found` (links not followed): it and the file it leads to, each
    /// with its prefix, and its shebang's interpreter.
    fn program(&mut self, found: &Path, path: Option<&OsStr>, depth: usize) {
        self.file_and_prefix(found);
        if let Ok(real) = found.canonicalize() {
            if real != found {
                self.file_and_prefix(&real);
            }
            self.shebang(&real, path, depth + 1);
        }
        self.virtualenv_home(found);
    }

    /// `file` itself and the prefix it is installed in (see [`install_prefix`]).
    fn file_and_prefix(&mut self, file: &Path) {
        self.add(file);
        if let Some(prefix) = install_prefix(file) {
            self.add(&prefix);
        }
    }

    /// The interpreter `script`'s `#!` line names, followed like a program.
    fn shebang(&mut self, script: &Path, path: Option<&OsStr>, depth: usize) {
        if depth > MAX_SHEBANG_DEPTH {
            return;
        }
        let Some(interpreter) = shebang_interpreter(script, path) else {
            return;
        };
        self.program(&interpreter, path, depth);
    }

    /// For an interpreter in a virtualenv (`<venv>/bin/python`, `pyvenv.cfg` beside
    /// `bin`): the Python it was made from (`home = …`) and that Python's prefix.
    fn virtualenv_home(&mut self, found: &Path) {
        let Some(venv) = found.parent().and_then(Path::parent) else {
            return;
        };
        let Ok(text) = std::fs::read_to_string(venv.join("pyvenv.cfg")) else {
            return;
        };
        for line in text.lines() {
            let Some((key, value)) = line.split_once('=') else {
                continue;
            };
            if key.trim() == "home" {
                let home = PathBuf::from(value.trim());
                if home.is_absolute() {
                    self.add(&home);
                    if let Some(prefix) = home.parent().filter(|_| home.ends_with("bin")) {
                        self.add(prefix);
                    }
                }
            }
        }
    }

    fn finish(self) -> Vec<PathBuf> {
        self.out
    }
}

/// The prefix `file` is installed in: the outermost `node_modules` above it (an npm
/// package and its dependencies), else `<prefix>` for `<prefix>/{bin,sbin,shims,Scripts}/x`,
/// else the file's own directory.
fn install_prefix(file: &Path) -> Option<PathBuf> {
    if let Some(modules) = file
        .ancestors()
        .filter(|a| a.file_name() == Some(OsStr::new("node_modules")))
        .last()
    {
        return Some(modules.to_path_buf());
    }
    let dir = file.parent()?;
    match dir.file_name().and_then(OsStr::to_str) {
        Some("bin" | "sbin" | "shims" | "Scripts") => dir.parent().map(Path::to_path_buf),
        _ => Some(dir.to_path_buf()),
    }
}

/// The interpreter of `script`'s `#!` line: its path, or for `/usr/bin/env [-S] NAME` the
/// program `NAME` found on `path`. `None` when the file has no `#!` line.
fn shebang_interpreter(script: &Path, path: Option<&OsStr>) -> Option<PathBuf> {
    let mut head = [0u8; 256];
    let mut file = std::fs::File::open(script).ok()?;
    let mut len = 0;
    while len < head.len() {
        match file.read(&mut head[len..]) {
            Ok(0) => break,
            Ok(n) => len += n,
            Err(_) => return None,
        }
    }
    let line = head[..len].strip_prefix(b"#!")?;
    let line = &line[..line.iter().position(|&b| b == b'\n').unwrap_or(line.len())];
    let line = std::str::from_utf8(line).ok()?;
    let mut words = line.split_whitespace();
    let interpreter = words.next()?;
    if Path::new(interpreter).file_name() == Some(OsStr::new("env")) {
        let name = words.find(|w| !w.starts_with('-') && !w.contains('='))?;
        return find_program(name, path, Path::new("/"));
    }
    let p = PathBuf::from(interpreter);
    p.is_absolute().then_some(p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{PermissionsExt, symlink};

    fn executable(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    struct Tree {
        _dir: tempfile::TempDir,
        root: PathBuf,
        home: PathBuf,
    }

    fn tree() -> Tree {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let home = root.join("home/me");
        std::fs::create_dir_all(home.join(".ssh")).unwrap();
        Tree {
            _dir: dir,
            root,
            home,
        }
    }

    fn reads(t: &Tree, argv: &[&str], path: &[PathBuf], cwd: &Path) -> Vec<PathBuf> {
        let argv: Vec<String> = argv.iter().map(|a| (*a).to_owned()).collect();
        let path = std::env::join_paths(path).unwrap();
        let home = t.home.clone();
        let env = move |name: &str| match name {
            "PATH" => Some(path.clone()),
            "HOME" => Some(home.clone().into_os_string()),
            _ => None,
        };
        program_reads(&argv, &env, cwd, Some(&t.home))
    }

    fn assert_never_home_or_secret(t: &Tree, reads: &[PathBuf]) {
        for r in reads {
            assert!(
                !t.home.starts_with(r),
                "{} is the home or above",
                r.display()
            );
            assert!(!r.starts_with(t.home.join(".ssh")), "{}", r.display());
        }
    }

    #[test]
    fn a_virtualenv_program_gives_the_venv_and_the_python_it_was_made_from() {
        let t = tree();
        // A pyenv Python, and a venv made from it with a console script.
        let python = t.home.join(".pyenv/versions/3.12.1/bin/python3.12");
        executable(&python, "\x7fELF");
        let venv = t.home.join("venvs/time");
        std::fs::create_dir_all(venv.join("bin")).unwrap();
        symlink(&python, venv.join("bin/python3")).unwrap();
        std::fs::write(
            venv.join("pyvenv.cfg"),
            format!(
                "home = {}\nversion = 3.12.1\n",
                python.parent().unwrap().display()
            ),
        )
        .unwrap();
        executable(
            &venv.join("bin/mcp-server-time"),
            &format!("#!{}\nimport sys\n", venv.join("bin/python3").display()),
        );
        let cwd = t.root.join("work");
        std::fs::create_dir_all(&cwd).unwrap();
        let got = reads(&t, &["mcp-server-time"], &[venv.join("bin")], &cwd);
        assert!(got.contains(&venv), "{got:?}");
        assert!(
            got.contains(&t.home.join(".pyenv/versions/3.12.1")),
            "{got:?}"
        );
        assert_never_home_or_secret(&t, &got);
        // By its absolute path, the same.
        let abs = venv.join("bin/mcp-server-time");
        let got = reads(&t, &[abs.to_str().unwrap()], &[], &cwd);
        assert!(got.contains(&venv), "{got:?}");
    }

    #[test]
    fn an_npx_package_bin_gives_its_node_modules_and_the_node_env_finds() {
        let t = tree();
        // nvm's node, and a project's node_modules/.bin link to a package's script.
        let nvm = t.home.join(".nvm/versions/node/v20.1.0");
        executable(&nvm.join("bin/node"), "\x7fELF");
        let project = t.home.join("code/tools");
        let script = project.join("node_modules/@scope/server/dist/index.js");
        executable(&script, "#!/usr/bin/env node\nconsole.log(1)\n");
        std::fs::create_dir_all(project.join("node_modules/.bin")).unwrap();
        symlink(
            "../@scope/server/dist/index.js",
            project.join("node_modules/.bin/server"),
        )
        .unwrap();
        let bin = project.join("node_modules/.bin");
        let got = reads(&t, &["server"], &[bin, nvm.join("bin")], &t.root);
        assert!(got.contains(&project.join("node_modules")), "{got:?}");
        assert!(got.contains(&nvm), "{got:?}");
        assert_never_home_or_secret(&t, &got);
    }

    #[test]
    fn launchers_read_their_caches_and_a_script_argument_is_read_with_its_directory() {
        let t = tree();
        let uvx = t.home.join(".local/bin/uvx");
        executable(&uvx, "\x7fELF");
        std::fs::create_dir_all(t.home.join(".cache/uv/archive-v0")).unwrap();
        std::fs::create_dir_all(t.home.join(".local/share/uv/python")).unwrap();
        let got = reads(
            &t,
            &["uvx", "mcp-server-time"],
            &[uvx.parent().unwrap().into()],
            &t.root,
        );
        assert!(got.contains(&t.home.join(".cache/uv")), "{got:?}");
        let covered = |p: PathBuf| got.iter().any(|g| p.starts_with(g));
        assert!(covered(t.home.join(".local/share/uv/python")), "{got:?}");
        // `~/.local/bin/uvx`'s prefix is `~/.local`, not the home directory.
        assert!(got.contains(&t.home.join(".local")), "{got:?}");
        assert_never_home_or_secret(&t, &got);

        let npx = t.root.join("usr/bin/npx");
        executable(&npx, "#!/bin/sh\n");
        std::fs::create_dir_all(t.home.join(".npm/_npx")).unwrap();
        let got = reads(
            &t,
            &["npx", "-y", "@x/y"],
            &[npx.parent().unwrap().into()],
            &t.root,
        );
        assert!(got.contains(&t.home.join(".npm")), "{got:?}");

        // `python3 server.py`: the script and its directory (not the home directory when
        // the script is directly in it).
        let python = t.root.join("opt/py/bin/python3");
        executable(&python, "\x7fELF");
        let srv = t.home.join("srv/server.py");
        executable(&srv, "print(1)\n");
        let loose = t.home.join("loose.py");
        executable(&loose, "print(1)\n");
        let got = reads(
            &t,
            &["python3", "srv/server.py", "../me/loose.py", "-u"],
            &[python.parent().unwrap().into()],
            &t.home,
        );
        assert!(got.contains(&t.home.join("srv")), "{got:?}");
        assert!(got.contains(&loose), "{got:?}");
        assert!(got.contains(&t.root.join("opt/py")), "{got:?}");
        assert_never_home_or_secret(&t, &got);
    }

    fn writes(t: &Tree, argv: &[&str], extra: &[(&str, PathBuf)]) -> Vec<PathBuf> {
        let argv: Vec<String> = argv.iter().map(|a| (*a).to_owned()).collect();
        let bin = t.root.join("usr/bin");
        for name in ["uvx", "uv", "npx", "pipx", "node", "python3"] {
            if !bin.join(name).exists() {
                executable(&bin.join(name), "\x7fELF");
            }
        }
        let home = t.home.clone();
        let extra: Vec<(String, PathBuf)> = extra
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone()))
            .collect();
        let env = move |name: &str| match name {
            "HOME" => Some(home.clone().into_os_string()),
            "PATH" => Some(bin.clone().into_os_string()),
            _ => extra
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone().into_os_string()),
        };
        program_writes(&argv, &env, &t.root.join("work"), Some(&t.home))
    }

    #[test]
    fn a_launcher_writes_its_own_download_cache_and_nothing_it_installs() {
        let t = tree();
        // uvx: its cache, created when missing, and the lock file of its tools directory
        // (made with its `.gitignore`, as uv makes them); not its tools or Pythons.
        let tools = t.home.join(".local/share/uv/tools");
        let got = writes(&t, &["uvx", "mcp-server-time"], &[]);
        assert_eq!(got, [t.home.join(".cache/uv"), tools.join(".lock")]);
        assert!(t.home.join(".cache/uv").is_dir());
        assert_eq!(
            std::fs::read_to_string(tools.join(".gitignore")).unwrap(),
            "*"
        );
        // The same by an absolute path (`/home/me/.local/bin/uv tool run …`).
        let uv = t.home.join(".local/bin/uv");
        executable(&uv, "\x7fELF");
        assert_eq!(
            writes(&t, &[uv.to_str().unwrap(), "tool", "run", "x"], &[]),
            [t.home.join(".cache/uv"), tools.join(".lock")]
        );
        // npx: ~/.npm.
        assert_eq!(
            writes(&t, &["npx", "-y", "@x/server"], &[]),
            [t.home.join(".npm")]
        );
        // pipx: its caches, pip's, its shared libraries and logs; not its venvs.
        let got = writes(&t, &["pipx", "run", "x"], &[]);
        for dir in [".cache/pipx", ".cache/pip", ".local/share/pipx/shared"] {
            assert!(got.contains(&t.home.join(dir)), "{dir}: {got:?}");
        }
        assert!(
            !got.iter()
                .any(|g| g.ends_with("venvs") || t.home.join(".local/share/pipx").starts_with(g)),
            "{got:?}"
        );
        // With uv as its backend (pipx's default where uv is installed), uv's cache and
        // the lock of uv's tools directory, not the directory itself.
        assert!(got.contains(&t.home.join(".cache/uv")), "{got:?}");
        assert!(got.contains(&tools.join(".lock")), "{got:?}");
        assert!(!got.contains(&tools), "{got:?}");
        // The directories it makes at every start exist, read-only.
        assert!(t.home.join(".local/share/pipx/venvs").is_dir());
        assert!(t.home.join(".local/bin").is_dir());
        assert!(!got.iter().any(|g| g.ends_with(".local/bin")), "{got:?}");
        // A launcher of the workspace (`./npx`, or found through a `PATH` entry inside
        // it) is not one.
        let work = t.root.join("work");
        executable(&work.join("npx"), "#!/bin/sh\n");
        assert!(writes(&t, &["./npx", "x"], &[]).is_empty());
        // Anything else writes nothing more, whatever its arguments name.
        assert!(writes(&t, &["node", "uvx"], &[]).is_empty());
        assert!(writes(&t, &["python3", "-m", "uv"], &[]).is_empty());
        assert_never_home_or_secret(&t, &writes(&t, &["uvx", "x"], &[]));
    }

    #[test]
    fn a_variable_cannot_point_a_launchers_write_at_the_home_or_a_secret() {
        let t = tree();
        // A preset's `env` moving the cache (the agent's own environment does not say
        // the same): the default cache, not the place named.
        for target in [
            t.home.clone(),
            t.home.join(".ssh"),
            t.home.join(".config/autostart"),
            t.root.clone(),
        ] {
            for var in [
                "UV_CACHE_DIR",
                "XDG_CACHE_HOME",
                "UV_TOOL_DIR",
                "XDG_DATA_HOME",
            ] {
                let got = writes(&t, &["uvx", "x"], &[(var, target.clone())]);
                assert_eq!(
                    got,
                    [
                        t.home.join(".cache/uv"),
                        t.home.join(".local/share/uv/tools/.lock")
                    ],
                    "{var}={}",
                    target.display()
                );
            }
            let got = writes(&t, &["npx", "x"], &[("npm_config_cache", target.clone())]);
            assert_eq!(got, [t.home.join(".npm")], "{}", target.display());
        }
        assert!(!t.home.join(".config/autostart").exists());
        // No home directory: nothing.
        let argv = vec!["uvx".to_owned()];
        assert!(program_writes(&argv, &|_| None, &t.root, None).is_empty());
    }

    #[test]
    fn a_program_in_the_home_or_a_secret_directory_gives_nothing_wider() {
        let t = tree();
        let direct = t.home.join("server");
        executable(&direct, "\x7fELF");
        let got = reads(&t, &["./server"], &[], &t.home);
        assert_eq!(got, [direct], "only the file");
        let hidden = t.home.join(".ssh/bin/evil");
        executable(&hidden, "\x7fELF");
        let got = reads(&t, &[hidden.to_str().unwrap()], &[], &t.root);
        assert!(got.is_empty(), "{got:?}");
        // A missing program gives nothing; a shebang loop ends.
        assert!(reads(&t, &["missing"], &[], &t.root).is_empty());
        let a = t.root.join("loop/bin/a");
        executable(&a, &format!("#!{}\n", a.display()));
        let got = reads(&t, &[a.to_str().unwrap()], &[], &t.root);
        assert_eq!(got, [t.root.join("loop")]);
    }
}
