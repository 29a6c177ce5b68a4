//! Discovery: built-ins, project, user and extra directories, explicit paths, and the
//! problems that keep a file from being offered.

use std::fs;
use std::path::Path;

use agent_presets::preset::ShadowedFile;
use agent_presets::preset::{CatalogOptions, MAX_PRESET_FILE_BYTES, PresetCatalog, PresetSource};
use agent_presets::{Diagnostic, DiagnosticKind};

fn write(path: &Path, text: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

fn preset(name: &str, description: &str) -> String {
    format!("version: 1\nname: {name}\ndescription: {description}\n")
}

#[test]
fn builtins_only() {
    let (catalog, problems) = PresetCatalog::discover(&CatalogOptions::builtin_only());
    assert!(problems.is_empty(), "{problems:?}");
    let names: Vec<&str> = catalog.names().collect();
    assert_eq!(names, ["minimal", "standard"]);
    let standard = catalog.get("standard").unwrap();
    assert_eq!(standard.source(), PresetSource::Builtin);
    assert_eq!(&**standard.display(), "<builtin>/standard.yaml");
    assert!(standard.path().is_none());
    let parsed = catalog.parsed("standard").unwrap().unwrap();
    assert_eq!(parsed.name(), "standard");
    assert_eq!(&*parsed.source.display, "<builtin>/standard.yaml");
}

#[test]
fn project_user_and_extra_directories() {
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("project");
    let user = tmp.path().join("user");
    let extra = tmp.path().join("extra");
    write(
        &project.join(".agent-presets/reviewer.yaml"),
        &preset("reviewer", "Reviews."),
    );
    write(
        &project.join(".agent-presets/writer.yml"),
        &preset("writer", "Writes."),
    );
    write(&project.join(".agent-presets/notes.txt"), "not a preset");
    fs::create_dir_all(project.join(".agent-presets/nested.yaml")).unwrap();
    write(
        &project.join(".agent-presets/nested.yaml/inner.yaml"),
        &preset("inner", "x"),
    );
    write(&user.join("mine.yaml"), &preset("mine", "Mine."));
    write(&extra.join("ci.yaml"), &preset("ci", "CI."));

    let mut options = CatalogOptions::isolated(&project);
    options.user_dir = Some(user.clone());
    options.include_user = true;
    options.extra_dirs.push(extra.clone());
    let (catalog, problems) = PresetCatalog::discover(&options);
    assert!(problems.is_empty(), "{problems:?}");

    let listed: Vec<(&str, PresetSource, String, Option<&str>)> = catalog
        .entries()
        .map(|e| {
            (
                e.name(),
                e.source(),
                e.display().to_string(),
                e.description(),
            )
        })
        .collect();
    let extra_shown = extra.join("ci.yaml").display().to_string();
    let user_shown = user.join("mine.yaml").display().to_string();
    assert_eq!(
        listed,
        [
            ("ci", PresetSource::Path, extra_shown, Some("CI.")),
            ("mine", PresetSource::User, user_shown, Some("Mine.")),
            (
                "minimal",
                PresetSource::Builtin,
                "<builtin>/minimal.yaml".into(),
                catalog.get("minimal").unwrap().description()
            ),
            (
                "reviewer",
                PresetSource::Project,
                ".agent-presets/reviewer.yaml".into(),
                Some("Reviews.")
            ),
            (
                "standard",
                PresetSource::Builtin,
                "<builtin>/standard.yaml".into(),
                catalog.get("standard").unwrap().description()
            ),
            (
                "writer",
                PresetSource::Project,
                ".agent-presets/writer.yml".into(),
                Some("Writes.")
            ),
        ]
    );
    assert_eq!(
        catalog.get("reviewer").unwrap().path(),
        Some(project.join(".agent-presets/reviewer.yaml").as_path())
    );

    // Without `include_user`, the user directory is not read.
    options.include_user = false;
    let (catalog, _) = PresetCatalog::discover(&options);
    assert!(catalog.get("mine").is_none());
}

#[test]
fn missing_project_and_user_directories_are_fine() {
    let tmp = tempfile::tempdir().unwrap();
    let mut options = CatalogOptions::isolated(tmp.path());
    options.user_dir = Some(tmp.path().join("no-such-dir"));
    options.include_user = true;
    let (catalog, problems) = PresetCatalog::discover(&options);
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(catalog.len(), 2);
}

#[test]
fn each_file_is_parsed_once() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join(".agent-presets/reviewer.yaml");
    write(&file, &preset("reviewer", "v1"));
    let (catalog, _) = PresetCatalog::discover(&CatalogOptions::isolated(tmp.path()));
    let first = catalog.parsed("reviewer").unwrap().unwrap();
    // Changing the file afterwards changes nothing: the parse is cached.
    fs::write(&file, preset("reviewer", "v2")).unwrap();
    let second = catalog.parsed("reviewer").unwrap().unwrap();
    assert!(std::ptr::eq(first, second));
    assert_eq!(second.file.description.as_deref(), Some("v1"));
    assert!(catalog.parsed("nobody").is_none());
}

#[test]
fn parse_errors_stay_with_their_entry() {
    let tmp = tempfile::tempdir().unwrap();
    write(
        &tmp.path().join(".agent-presets/broken.yaml"),
        "version: 1\nname: broken\nbogus: 1\n",
    );
    write(
        &tmp.path().join(".agent-presets/fine.yaml"),
        &preset("fine", "ok"),
    );
    let (catalog, problems) = PresetCatalog::discover(&CatalogOptions::isolated(tmp.path()));
    assert!(problems.is_empty());
    let err = catalog.parsed("broken").unwrap().unwrap_err();
    let d = &err.as_slice()[0];
    assert_eq!(d.kind, DiagnosticKind::UnknownKey);
    let span = d.span.as_ref().unwrap();
    assert_eq!(
        (&*span.file, span.line, span.column),
        (".agent-presets/broken.yaml", 3, 1)
    );
    assert!(catalog.get("broken").unwrap().description().is_none());
    assert!(catalog.parsed("fine").unwrap().is_ok());
}

#[test]
fn name_must_equal_the_file_stem() {
    let tmp = tempfile::tempdir().unwrap();
    write(
        &tmp.path().join(".agent-presets/reviewer.yaml"),
        "version: 1\nname: reviewr\n",
    );
    let (catalog, problems) = PresetCatalog::discover(&CatalogOptions::isolated(tmp.path()));
    assert!(problems.is_empty());
    let err = catalog.parsed("reviewer").unwrap().unwrap_err();
    assert_eq!(err.as_slice().len(), 1);
    let d = &err.as_slice()[0];
    assert_eq!(d.kind, DiagnosticKind::NameMismatch);
    let span = d.span.as_ref().unwrap();
    assert_eq!((span.line, span.column, span.len), (2, 7, 7));
    assert_eq!(
        d.message,
        "the preset is named `reviewr` but its file name says `reviewer`"
    );
    assert_eq!(
        d.help.as_deref(),
        Some("rename the file to `reviewr.yaml`, or write `name: reviewer`")
    );
}

#[test]
fn invalid_names() {
    let tmp = tempfile::tempdir().unwrap();
    write(
        &tmp.path().join(".agent-presets/My_Preset.yaml"),
        "version: 1\nname: My_Preset\n",
    );
    write(
        &tmp.path().join(".agent-presets/good.yaml"),
        "version: 1\nname: Good\n",
    );
    let (catalog, problems) = PresetCatalog::discover(&CatalogOptions::isolated(tmp.path()));
    assert!(problems.is_empty());

    let err = catalog.parsed("My_Preset").unwrap().unwrap_err();
    let kinds: Vec<(DiagnosticKind, u32, u32)> = err
        .iter()
        .map(|d| {
            let s = d.span.as_ref().unwrap();
            (d.kind, s.line, s.column)
        })
        .collect();
    assert_eq!(
        kinds,
        [
            (DiagnosticKind::InvalidName, 1, 1),
            (DiagnosticKind::InvalidName, 2, 7)
        ]
    );

    let err = catalog.parsed("good").unwrap().unwrap_err();
    let kinds: Vec<DiagnosticKind> = err.iter().map(|d| d.kind).collect();
    assert_eq!(
        kinds,
        [DiagnosticKind::InvalidName, DiagnosticKind::NameMismatch]
    );
    assert_eq!(
        err.as_slice()[0].message,
        "`Good` is not a valid preset name"
    );
    assert_eq!(
        err.as_slice()[1].help.as_deref(),
        Some("write `name: good`")
    );
}

#[test]
fn a_custom_preset_cannot_take_a_builtin_name() {
    let tmp = tempfile::tempdir().unwrap();
    write(
        &tmp.path().join(".agent-presets/standard.yaml"),
        "# mine\nversion: 1\nname: standard\n",
    );
    write(
        &tmp.path().join(".agent-presets/minimal.yml"),
        "{{ not yaml",
    );
    let (catalog, problems) = PresetCatalog::discover(&CatalogOptions::isolated(tmp.path()));
    let found: Vec<(DiagnosticKind, String, u32, u32)> = problems
        .iter()
        .map(|d| {
            let s = d.span.as_ref().unwrap();
            (d.kind, s.file.to_string(), s.line, s.column)
        })
        .collect();
    assert_eq!(
        found,
        [
            // Unparseable: at line 1.
            (
                DiagnosticKind::BuiltinShadow,
                ".agent-presets/minimal.yml".into(),
                1,
                1
            ),
            // At the file's `name`.
            (
                DiagnosticKind::BuiltinShadow,
                ".agent-presets/standard.yaml".into(),
                3,
                7
            ),
        ]
    );
    let d = &problems[1];
    assert_eq!(
        d.message,
        "`standard` is a built-in preset; `.agent-presets/standard.yaml` cannot take its name"
    );
    assert!(d.help.as_deref().unwrap().contains("extends: standard"));
    // The built-in keeps its name.
    assert_eq!(
        catalog.get("standard").unwrap().source(),
        PresetSource::Builtin
    );
}

#[test]
fn two_files_offering_one_name() {
    let tmp = tempfile::tempdir().unwrap();
    let extra = tmp.path().join("extra");
    write(
        &tmp.path().join(".agent-presets/reviewer.yaml"),
        &preset("reviewer", "project"),
    );
    write(
        &tmp.path().join(".agent-presets/reviewer.yml"),
        &preset("reviewer", "yml"),
    );
    write(&extra.join("reviewer.yaml"), &preset("reviewer", "extra"));
    let mut options = CatalogOptions::isolated(tmp.path());
    options.extra_dirs.push(extra.clone());
    let (catalog, problems) = PresetCatalog::discover(&options);
    // Within one source: an error. Across sources: the higher one wins, silently.
    assert_eq!(problems.len(), 1, "{problems:?}");
    let d = &problems[0];
    assert_eq!(d.kind, DiagnosticKind::DuplicatePreset);
    assert!(
        d.help
            .as_deref()
            .unwrap()
            .contains("`.agent-presets/reviewer.yaml` is the one used")
    );
    assert_eq!(
        d.message,
        "two files offer the preset `reviewer`: `.agent-presets/reviewer.yaml` and `.agent-presets/reviewer.yml`"
    );
    // The first one found keeps the name, and hides the one of the lower source.
    let kept = catalog.get("reviewer").unwrap();
    assert_eq!(kept.source(), PresetSource::Project);
    assert_eq!(kept.description(), Some("project"));
    assert_eq!(
        kept.shadows(),
        [ShadowedFile {
            source: PresetSource::Path,
            display: "extra/reviewer.yaml".into(),
        }]
    );
}

/// Precedence: project > each `--preset-dir` in order > user > built-ins (which stay).
#[test]
fn higher_sources_shadow_lower_ones() {
    let tmp = tempfile::tempdir().unwrap();
    let (one, two, user) = (
        tmp.path().join("one"),
        tmp.path().join("two"),
        tmp.path().join("user"),
    );
    write(
        &tmp.path().join(".agent-presets/a.yaml"),
        &preset("a", "project"),
    );
    write(&one.join("a.yaml"), &preset("a", "one"));
    write(&one.join("b.yaml"), &preset("b", "one"));
    write(&two.join("b.yaml"), &preset("b", "two"));
    write(&two.join("c.yaml"), &preset("c", "two"));
    write(&user.join("c.yaml"), &preset("c", "user"));
    write(&user.join("a.yaml"), &preset("a", "user"));
    write(&user.join("d.yaml"), &preset("d", "user"));
    let mut options = CatalogOptions::isolated(tmp.path());
    options.extra_dirs = vec![one, two];
    options.user_dir = Some(user);
    options.include_user = true;
    let (catalog, problems) = PresetCatalog::discover(&options);
    assert!(problems.is_empty(), "{problems:?}");
    let won: Vec<(&str, Option<&str>, usize)> = catalog
        .entries()
        .filter(|e| e.source() != PresetSource::Builtin)
        .map(|e| (e.name(), e.description(), e.shadows().len()))
        .collect();
    assert_eq!(
        won,
        [
            ("a", Some("project"), 2),
            ("b", Some("one"), 1),
            ("c", Some("two"), 1),
            ("d", Some("user"), 0),
        ]
    );
    let a = catalog.get("a").unwrap();
    let hidden: Vec<(PresetSource, &str)> = a
        .shadows()
        .iter()
        .map(|s| (s.source, &*s.display))
        .collect();
    assert_eq!(
        hidden,
        [
            (PresetSource::Path, "one/a.yaml"),
            (PresetSource::User, "user/a.yaml")
        ]
    );
}

#[test]
fn io_problems_are_diagnostics() {
    let tmp = tempfile::tempdir().unwrap();
    let not_a_dir = tmp.path().join("file.txt");
    write(&not_a_dir, "x");
    let mut options = CatalogOptions::isolated(tmp.path());
    options.extra_dirs.push(tmp.path().join("missing"));
    options.extra_dirs.push(not_a_dir);
    #[cfg(unix)]
    {
        fs::create_dir_all(tmp.path().join(".agent-presets")).unwrap();
        std::os::unix::fs::symlink(
            tmp.path().join("nowhere.yaml"),
            tmp.path().join(".agent-presets/dangling.yaml"),
        )
        .unwrap();
    }
    let (catalog, problems) = PresetCatalog::discover(&options);
    let kinds: Vec<DiagnosticKind> = problems.iter().map(|d| d.kind).collect();
    assert_eq!(kinds, vec![DiagnosticKind::Io; 2], "{problems:?}");
    assert!(
        problems
            .iter()
            .any(|d| d.message.contains("cannot read preset directory `missing`"))
    );
    // A link is offered like any file; what it leads to is judged when it is read.
    #[cfg(unix)]
    {
        let errors = catalog.parsed("dangling").unwrap().unwrap_err();
        let d = &errors.as_slice()[0];
        assert_eq!(d.kind, DiagnosticKind::Io);
        assert_eq!(
            d.message,
            "cannot read preset file `.agent-presets/dangling.yaml`: it is a symbolic link \
             to a file that does not exist"
        );
        assert_eq!(d.span.as_ref().map(|s| (s.line, s.column)), Some((1, 1)));
    }
    assert_eq!(catalog.len(), if cfg!(unix) { 3 } else { 2 });
}

#[test]
fn explicit_paths() {
    let tmp = tempfile::tempdir().unwrap();
    let project_file = tmp.path().join(".agent-presets/reviewer.yaml");
    write(&project_file, &preset("reviewer", "project"));
    let loose = tmp.path().join("somewhere/loose.yaml");
    write(&loose, &preset("loose", "loose"));
    let other = tmp.path().join("other/reviewer.yaml");
    write(&other, &preset("reviewer", "other"));
    let shadow = tmp.path().join("other/minimal.yaml");
    write(&shadow, &preset("minimal", "mine"));

    let mut options = CatalogOptions::isolated(tmp.path());
    options.paths.push(loose.clone());
    let (mut catalog, problems) = PresetCatalog::discover(&options);
    assert!(problems.is_empty(), "{problems:?}");
    // A file named explicitly is a target: not offered by name.
    assert!(catalog.get("loose").is_none());

    let id = catalog.add_file(&loose).unwrap();
    let entry = catalog.target(id).unwrap();
    assert_eq!(entry.source(), PresetSource::Path);
    assert_eq!(&**entry.display(), "somewhere/loose.yaml");
    assert_eq!(entry.description(), Some("loose"));

    // The file on offer (also through another spelling of its path) is that entry.
    let id = catalog.add_file(&project_file).unwrap();
    assert_eq!(catalog.target(id).unwrap().source(), PresetSource::Project);
    let dotted = tmp.path().join("somewhere/../.agent-presets/reviewer.yaml");
    let id = catalog.add_file(&dotted).unwrap();
    assert_eq!(catalog.target(id).unwrap().source(), PresetSource::Project);
    // Another file with a name on offer is itself, and leaves the name alone.
    let id = catalog.add_file(&other).unwrap();
    assert_eq!(catalog.target(id).unwrap().description(), Some("other"));
    assert_eq!(
        catalog.get("reviewer").unwrap().description(),
        Some("project")
    );
    // A built-in's name, nothing, a directory.
    let d = catalog.add_file(&shadow).unwrap_err();
    assert_eq!(d.kind, DiagnosticKind::BuiltinShadow);
    assert_eq!(d.span.as_ref().map(|s| (s.line, s.column)), Some((2, 7)));
    let d = catalog.add_file(&tmp.path().join("nope.yaml")).unwrap_err();
    assert_eq!(d.kind, DiagnosticKind::Io);
    assert!(d.message.contains("nope.yaml"));
    let d = catalog.add_file(tmp.path()).unwrap_err();
    assert_eq!(d.kind, DiagnosticKind::Io);
    assert!(d.help.as_deref().unwrap().contains("--preset-dir"));
}

/// A file's own directory is searched for its `extends` before the catalog, and the
/// chain continues there as long as it finds files; a built-in's name is the built-in.
#[test]
fn a_file_extends_its_neighbours_first() {
    let tmp = tempfile::tempdir().unwrap();
    write(
        &tmp.path().join(".agent-presets/base.yaml"),
        "version: 1\nname: base\ndescription: project\nextends: minimal\n",
    );
    write(
        &tmp.path().join("sub/child.yaml"),
        "version: 1\nname: child\nextends: base\n",
    );
    write(
        &tmp.path().join("sub/base.yaml"),
        "version: 1\nname: base\ndescription: sibling\nextends: standard\n",
    );
    write(
        &tmp.path().join("sub/standard.yaml"),
        &preset("standard", "not used"),
    );
    let (mut catalog, _) = PresetCatalog::discover(&CatalogOptions::isolated(tmp.path()));
    let id = catalog
        .add_file(&tmp.path().join("sub/child.yaml"))
        .unwrap();
    let base = catalog.lookup_for_target(id, "base").unwrap();
    assert_eq!(base.description(), Some("sibling"));
    assert_eq!(&**base.display(), "sub/base.yaml");
    let standard = catalog.lookup_for_target(id, "standard").unwrap();
    assert_eq!(standard.source(), PresetSource::Builtin);
    let tools = agent_presets::ToolCatalog::builtin();
    let v = agent_presets::preset::validate_target(&catalog, id, &tools);
    assert!(v.is_valid(), "{:?}", v.diagnostics);
    let chain: Vec<&str> = v
        .preset
        .as_ref()
        .unwrap()
        .chain()
        .iter()
        .map(|p| p.name())
        .collect();
    assert_eq!(chain, ["standard", "base", "child"]);
    // By name, the project's `base` is the one on offer.
    assert_eq!(catalog.get("base").unwrap().description(), Some("project"));
}

/// Standard input: named by its `name:`, shown as `<stdin>`.
#[test]
fn stdin_targets() {
    let mut catalog = PresetCatalog::builtin();
    let id = catalog
        .add_stdin(b"version: 1\nname: piped\nextends: minimal\n")
        .unwrap();
    let entry = catalog.target(id).unwrap();
    assert_eq!((entry.name(), &**entry.display()), ("piped", "<stdin>"));
    assert_eq!(entry.source(), PresetSource::Stdin);
    assert!(catalog.get("piped").is_none());
    let d = catalog
        .add_stdin(b"version: 1\nname: standard\n")
        .unwrap_err();
    assert_eq!(d.kind, DiagnosticKind::BuiltinShadow);
    let id = catalog.add_stdin(b"version: 1\nname: Bad\n").unwrap();
    let errors = catalog.target(id).unwrap().parsed().unwrap_err();
    assert_eq!(errors.as_slice()[0].kind, DiagnosticKind::InvalidName);
}

#[test]
fn inline_text() {
    let mut catalog = PresetCatalog::builtin();
    catalog
        .add_text(
            "child",
            "child.yaml",
            "version: 1\nname: child\nextends: standard\n",
        )
        .unwrap();
    let entry = catalog.get("child").unwrap();
    assert_eq!(entry.source(), PresetSource::Inline);
    let parsed = entry.parsed().unwrap();
    assert_eq!(parsed.file.extends.as_ref().unwrap().value, "standard");
    assert_eq!(
        catalog
            .add_text("child", "again.yaml", "")
            .unwrap_err()
            .kind,
        DiagnosticKind::DuplicatePreset
    );
}

/// `AGENT_PRESETS_CONFIG_DIR` as the library reads it. The environment is process-wide and
/// this binary runs every integration test on many threads, so the checks run in a child
/// process of this test binary (the ignored test below) with the variable set there.
#[test]
fn config_dir_environment_variable() {
    let tmp = tempfile::tempdir().unwrap();
    write(
        &tmp.path().join("presets/fromenv.yaml"),
        &preset("fromenv", "env"),
    );
    for value in [tmp.path().as_os_str(), std::ffi::OsStr::new("")] {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "preset_catalog::config_dir_environment_variable_in_child",
                "--include-ignored",
                "--nocapture",
            ])
            .env(agent_presets::preset::CONFIG_DIR_ENV, value)
            .env_remove(agent_presets::preset::NO_USER_ENV)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(text.contains("1 passed"), "the child ran the check: {text}");
    }
}

/// Run by [`config_dir_environment_variable`] in a child process with the variable set.
#[test]
#[ignore = "run by config_dir_environment_variable with the environment it needs"]
fn config_dir_environment_variable_in_child() {
    let Some(value) = std::env::var_os(agent_presets::preset::CONFIG_DIR_ENV) else {
        panic!("run only by config_dir_environment_variable");
    };
    let options = CatalogOptions::from_environment();
    if value.is_empty() {
        // Empty: user presets off.
        assert_eq!(options.user_dir, None);
        return;
    }
    let dir = std::path::PathBuf::from(value);
    assert_eq!(options.user_dir, Some(dir.join("presets")));
    assert!(options.include_user);
    let mut isolated = CatalogOptions::builtin_only();
    isolated.user_dir = options.user_dir.clone();
    isolated.include_user = true;
    let (catalog, problems) = PresetCatalog::discover(&isolated);
    assert!(problems.is_empty());
    assert_eq!(catalog.get("fromenv").unwrap().source(), PresetSource::User);
}

/// A too-large file is refused from its reported size, located at the file, whether it
/// was discovered or given as a path (then it is still offered, invalid).
#[test]
fn too_large_files_are_limit_exceeded_at_the_file() {
    let tmp = tempfile::tempdir().unwrap();
    let giant = tmp.path().join(".agent-presets/giant.yaml");
    write(&giant, "");
    fs::File::options()
        .write(true)
        .open(&giant)
        .unwrap()
        .set_len(1_500_000_000)
        .unwrap();
    let loose = tmp.path().join("loose/big.yaml");
    write(&loose, &"#".repeat(MAX_PRESET_FILE_BYTES + 1));

    let (mut catalog, problems) = PresetCatalog::discover(&CatalogOptions::isolated(tmp.path()));
    assert!(problems.is_empty(), "{problems:?}");
    let big = catalog.add_file(&loose).unwrap();
    assert_eq!(catalog.target(big).unwrap().name(), "big");
    for (name, size) in [("giant", 1_500_000_000u64), ("big", 1_048_577)] {
        let entry = match catalog.get(name) {
            Some(entry) => entry,
            None => catalog.target(big).unwrap(),
        };
        let errors = entry.parsed().unwrap_err();
        let d = &errors.as_slice()[0];
        assert_eq!(d.kind, DiagnosticKind::LimitExceeded, "{d}");
        assert_eq!(
            d.message,
            format!("the file is {size} bytes; a preset file may be at most 1 MiB (1048576 bytes)")
        );
        let span = d.span.as_ref().unwrap();
        assert_eq!((span.line, span.column), (1, 1));
        assert!(span.file.ends_with(&format!("{name}.yaml")));
        assert!(d.help.is_some());
    }
}

#[cfg(unix)]
mod special_files {
    use std::collections::BTreeMap;
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::symlink;
    use std::sync::mpsc;
    use std::time::Duration;

    use super::*;

    fn mkfifo(path: &Path) {
        let c = CString::new(path.as_os_str().as_bytes()).unwrap();
        // SAFETY: `c` is a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    }

    /// Discover `project` and parse every entry on another thread, so a hang fails the
    /// test instead of hanging the suite. Returns each entry's first diagnostic.
    fn discover_and_parse(project: &Path) -> Vec<(String, Option<Diagnostic>)> {
        let (tx, rx) = mpsc::channel();
        let project = project.to_path_buf();
        std::thread::spawn(move || {
            let (catalog, problems) = PresetCatalog::discover(&CatalogOptions::isolated(project));
            assert!(problems.is_empty(), "{problems:?}");
            let found = catalog
                .entries()
                .filter(|e| e.source() != PresetSource::Builtin)
                .map(|e| {
                    let first = e.parsed().err().map(|ds| ds.as_slice()[0].clone());
                    (e.name().to_owned(), first)
                })
                .collect();
            let _ = tx.send(found);
        });
        rx.recv_timeout(Duration::from_secs(60))
            .expect("discovering and parsing must not block")
    }

    /// The attacks of a hostile checkout: a FIFO, links to a device and to a `/proc`
    /// file that never ends. Each is offered and refused when read, without blocking
    /// and without reading past the limit.
    #[test]
    fn fifos_devices_and_proc_links_are_refused_when_read() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join(".agent-presets");
        fs::create_dir_all(&dir).unwrap();
        mkfifo(&dir.join("fifo.yaml"));
        symlink("/dev/zero", dir.join("zero.yaml")).unwrap();
        let pagemap = Path::new("/proc/self/pagemap");
        if pagemap.exists() {
            symlink(pagemap, dir.join("evil.yaml")).unwrap();
        }
        fs::create_dir_all(dir.join("folder.yaml")).unwrap();
        write(&dir.join("fine.yaml"), &preset("fine", "fine"));

        let found = discover_and_parse(tmp.path());
        let by_name: BTreeMap<&str, &Option<Diagnostic>> =
            found.iter().map(|(n, d)| (n.as_str(), d)).collect();
        // A directory is not offered; a good file next to the bad ones still is.
        assert!(!by_name.contains_key("folder"));
        assert!(by_name["fine"].is_none());
        let fifo = by_name["fifo"].as_ref().unwrap();
        assert_eq!(fifo.kind, DiagnosticKind::Io);
        assert_eq!(
            fifo.message,
            "cannot read preset file `.agent-presets/fifo.yaml`: it is a FIFO (named pipe), \
             not a regular file"
        );
        let zero = by_name["zero"].as_ref().unwrap();
        assert_eq!(zero.kind, DiagnosticKind::Io);
        assert!(
            zero.message
                .ends_with("it is a character device, not a regular file")
        );
        if pagemap.exists() {
            let evil = by_name["evil"].as_ref().unwrap();
            assert_eq!(evil.kind, DiagnosticKind::LimitExceeded, "{evil}");
            assert_eq!(
                evil.message,
                "the file holds more than 1 MiB (1048576 bytes), the most a preset file may hold"
            );
            let span = evil.span.as_ref().unwrap();
            assert_eq!(&*span.file, ".agent-presets/evil.yaml");
        }
    }

    /// `validate x/fifo.yaml`: the path is refused when opened, with what it is.
    #[test]
    fn an_explicit_fifo_path_is_an_io_error() {
        let tmp = tempfile::tempdir().unwrap();
        let fifo = tmp.path().join("x/fifo.yaml");
        fs::create_dir_all(fifo.parent().unwrap()).unwrap();
        mkfifo(&fifo);
        let (tx, rx) = mpsc::channel();
        let root = tmp.path().to_path_buf();
        std::thread::spawn(move || {
            let mut catalog = PresetCatalog::discover(&CatalogOptions::isolated(&root)).0;
            let _ = tx.send(catalog.add_file(&fifo).map(|_| ()));
        });
        let d = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("must not block")
            .unwrap_err();
        assert_eq!(d.kind, DiagnosticKind::Io);
        assert_eq!(
            d.message,
            "cannot read preset file `x/fifo.yaml`: it is a FIFO (named pipe), not a regular file"
        );
    }
}

/// Diagnostics are printed from the text read when the file was parsed: the catalog
/// keeps it (for files that failed to parse too) and never reads a file twice.
#[test]
fn the_text_read_is_kept_for_snippets() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join(".agent-presets");
    write(&dir.join("good.yaml"), &preset("good", "good"));
    write(&dir.join("typo.yaml"), "version: 1\nname: typo\nfoo: 1\n");
    fs::write(
        dir.join("latin1.yaml"),
        b"version: 1\r\nname: latin1\r\ndescription: caf\xe9\r\n",
    )
    .unwrap();
    write(&dir.join("minimal.yaml"), "version: 1\nname: minimal\n");
    write(
        &dir.join("unread.yaml"),
        &preset("unread", "never asked for"),
    );

    let (catalog, problems) = PresetCatalog::discover(&CatalogOptions::isolated(tmp.path()));
    // The file that takes a built-in's name was read to point at its `name`.
    assert_eq!(problems.len(), 1, "{problems:?}");
    let shadow = problems[0].span.clone().unwrap();
    assert!(
        catalog
            .source_files()
            .get(".agent-presets/unread.yaml")
            .is_none()
    );
    assert!(catalog.get("good").unwrap().source_text().is_none());

    for name in ["good", "typo", "latin1"] {
        let _ = catalog.parsed(name);
        // Gone from disk: whatever is printed now comes from memory.
        fs::remove_file(dir.join(format!("{name}.yaml"))).unwrap();
    }
    fs::remove_file(dir.join("minimal.yaml")).unwrap();
    let sources = catalog.source_files();
    assert_eq!(sources.len(), 4);
    assert_eq!(
        sources.line(".agent-presets/good.yaml", 3),
        Some("description: good")
    );
    let typo = catalog.parsed("typo").unwrap().unwrap_err().as_slice()[0].clone();
    let span = typo.span.unwrap();
    assert_eq!(sources.line(&span.file, span.line), Some("foo: 1"));
    // Not UTF-8: decoded lossily, line ends normalised, so the span's line is right.
    let latin1 = catalog.parsed("latin1").unwrap().unwrap_err().as_slice()[0].clone();
    assert_eq!(latin1.kind, DiagnosticKind::Encoding);
    let span = latin1.span.unwrap();
    assert_eq!((span.line, span.column), (3, 17));
    assert_eq!(
        sources.line(&span.file, span.line),
        Some("description: caf\u{FFFD}")
    );
    assert_eq!(
        sources.line(&shadow.file, shadow.line),
        Some("name: minimal")
    );
}
