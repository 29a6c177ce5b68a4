//! [`ProjectConfig`]: the project's own settings, `agent-presets.yaml` at the project
//! root — its preset directories, its lock file and its default locale — found from the
//! current directory upward (the first one found wins, as cargo and ruff find theirs), so
//! every command sees the same presets from any subdirectory of the project.
//!
//! ```yaml
//! presetDirs: [presets, teams/*/presets]   # relative to this file; `*` matches one name
//! lock: presets.lock                       # default: presets.lock beside this file
//! locale: de                               # default for render, run and texts
//! ```

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Deserialize;

use crate::diagnostic::{Diagnostic, DiagnosticKind, Diagnostics};
use crate::preset::SourceFile;
use crate::preset::source::{diagnostic_from_yaml, options};
use crate::preset::spec::Spanned;
use crate::source_files::{SourceFiles, SourceText};

/// The project config's file name, looked for in the current directory and each parent.
pub const CONFIG_FILE: &str = "agent-presets.yaml";

/// The keys of the project config, as written (see [`crate::preset::spec::KEY_SETS`]).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct ConfigSpec {
    /// Preset directories, relative to the config file; `*` matches one path component.
    #[serde(default)]
    preset_dirs: Option<Vec<Spanned<String>>>,
    /// The lock file, relative to the config file.
    #[serde(default)]
    lock: Option<Spanned<String>>,
    /// The default locale of the texts the model reads.
    #[serde(default)]
    locale: Option<Spanned<String>>,
}

/// A project config that was read and checked.
#[derive(Clone, Debug)]
pub struct ProjectConfig {
    /// The config file (absolute).
    pub path: PathBuf,
    /// The directory holding it: the project root.
    pub root: PathBuf,
    /// The preset directories it names, globs expanded, in the order written (absolute).
    /// `None` when it names none (`--preset-dir` and the project's `.agent-presets/` apply).
    pub preset_dirs: Option<Vec<PathBuf>>,
    /// The lock file (absolute); `presets.lock` beside the config unless it says otherwise.
    pub lock: PathBuf,
    /// The default locale, if it sets one.
    pub locale: Option<String>,
}

/// A project config that could not be used: its problems (located in the file) and its
/// text, for snippets.
#[derive(Debug)]
pub struct ConfigError {
    /// What is wrong (at least one).
    pub problems: Diagnostics,
    /// The config's text under its display name.
    pub sources: SourceFiles,
}

/// The nearest `agent-presets.yaml` in `start` or one of its parents, if any.
pub fn find(start: &Path) -> Option<PathBuf> {
    start
        .ancestors()
        .map(|dir| dir.join(CONFIG_FILE))
        .find(|path| path.is_file())
}

impl ProjectConfig {
    /// Read and check the config at `path` (absolute), shown as `display`. Unknown keys
    /// (with "did you mean"), YAML errors, a preset directory that does not exist or a
    /// pattern that matches none, and a malformed locale are errors at their line.
    pub fn load(path: &Path, display: &str) -> Result<ProjectConfig, ConfigError> {
        let display: Arc<str> = Arc::from(display);
        let root = path.parent().unwrap_or(Path::new("/")).to_path_buf();
        let bytes = match std::fs::read(path) {
            Ok(bytes) => bytes,
            Err(e) => {
                let d = Diagnostic::new(
                    DiagnosticKind::Io,
                    format!("cannot read the project config `{display}`: {e}"),
                );
                return Err(ConfigError {
                    problems: d.into(),
                    sources: SourceFiles::new(),
                });
            }
        };
        let source = match SourceFile::decode(display.clone(), &bytes) {
            Ok(source) => source,
            Err(d) => {
                return Err(ConfigError {
                    problems: d.into(),
                    sources: SourceFiles::new(),
                });
            }
        };
        let fail = |problems: Vec<Diagnostic>| {
            let mut sources = SourceFiles::new();
            sources.insert(display.clone(), SourceText::new(source.text.clone()));
            ConfigError {
                problems: Diagnostics::from_vec(problems),
                sources,
            }
        };
        let empty = source
            .text
            .lines()
            .all(|l| l.trim().is_empty() || l.trim_start().starts_with('#'));
        let spec = if empty {
            ConfigSpec {
                preset_dirs: None,
                lock: None,
                locale: None,
            }
        } else {
            match serde_saphyr::from_str_with_options::<ConfigSpec>(&source.text, options()) {
                Ok(spec) => spec,
                Err(e) => return Err(fail(vec![diagnostic_from_yaml(&source, &e)])),
            }
        };
        let mut problems = Vec::new();
        let preset_dirs = spec.preset_dirs.map(|dirs| {
            let mut found = Vec::new();
            for dir in dirs {
                let span = source.span_of(&dir);
                match expand(&root, &dir.value) {
                    Ok(list) if list.is_empty() => problems.push(
                        Diagnostic::new(
                            DiagnosticKind::Io,
                            format!("preset directory `{}` does not exist", dir.value),
                        )
                        .at(span)
                        .help(format!(
                            "paths in {CONFIG_FILE} are relative to it ({}); create the directory or remove the entry",
                            root.display()
                        )),
                    ),
                    Ok(list) => {
                        for path in list {
                            if !found.contains(&path) {
                                found.push(path);
                            }
                        }
                    }
                    Err(message) => problems.push(
                        Diagnostic::new(DiagnosticKind::WrongType, message)
                            .at(span)
                            .help("write a directory path; `*` matches one name (`teams/*/presets`)"),
                    ),
                }
            }
            found
        });
        let lock = match &spec.lock {
            Some(lock) if lock.value.trim().is_empty() => {
                problems.push(
                    Diagnostic::new(DiagnosticKind::WrongType, "`lock` is empty")
                        .at(source.span_of(lock))
                        .help("write the lock file's path, e.g. `lock: presets.lock`"),
                );
                root.join(super::lock::LOCK_FILE)
            }
            Some(lock) => root.join(&lock.value),
            None => root.join(super::lock::LOCK_FILE),
        };
        let locale = match spec.locale {
            Some(locale) if !crate::preset::locale_pack::is_valid_locale(&locale.value) => {
                problems.push(
                    Diagnostic::new(
                        DiagnosticKind::WrongType,
                        format!("`{}` is not a locale", locale.value),
                    )
                    .at(source.span_of(&locale))
                    .help("write a language code, optionally with a region (`de`, `pt-BR`)"),
                );
                None
            }
            Some(locale) => Some(locale.value),
            None => None,
        };
        if !problems.is_empty() {
            return Err(fail(problems));
        }
        Ok(ProjectConfig {
            path: path.to_path_buf(),
            root,
            preset_dirs,
            lock,
            locale,
        })
    }
}

/// The directories `pattern` names under `root`: itself when it has no `*`, `?` or `[`
/// (if it is a directory), else every directory matching it, component by component,
/// sorted. An absolute pattern is taken as it is.
fn expand(root: &Path, pattern: &str) -> Result<Vec<PathBuf>, String> {
    if pattern.trim().is_empty() {
        return Err("an empty preset directory".to_owned());
    }
    let mut current = vec![root.to_path_buf()];
    for component in Path::new(pattern).components() {
        let part = component.as_os_str().to_string_lossy();
        let glob = part.contains(['*', '?', '[']);
        let mut next = Vec::new();
        for base in &current {
            if !glob {
                next.push(base.join(component.as_os_str()));
                continue;
            }
            let matcher = globset::GlobBuilder::new(&part)
                .literal_separator(true)
                .build()
                .map_err(|e| format!("`{pattern}` is not a valid pattern: {}", e.kind()))?
                .compile_matcher();
            let Ok(entries) = std::fs::read_dir(base) else {
                continue;
            };
            let mut matched: Vec<PathBuf> = entries
                .filter_map(Result::ok)
                .filter(|e| matcher.is_match(e.file_name()))
                .map(|e| e.path())
                .filter(|p| p.is_dir())
                .collect();
            matched.sort();
            next.extend(matched);
        }
        current = next;
    }
    Ok(current.into_iter().filter(|p| p.is_dir()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(text: &str, dirs: &[&str]) -> (tempfile::TempDir, Result<ProjectConfig, ConfigError>) {
        let root = tempfile::tempdir().unwrap();
        for dir in dirs {
            std::fs::create_dir_all(root.path().join(dir)).unwrap();
        }
        let path = root.path().join(CONFIG_FILE);
        std::fs::write(&path, text).unwrap();
        let config = ProjectConfig::load(&path, CONFIG_FILE);
        (root, config)
    }

    #[test]
    fn globs_expand_relative_to_the_config() {
        let (root, config) = load(
            "presetDirs: [presets, teams/*/presets]\nlock: ci/presets.lock\nlocale: de\n",
            &["presets", "teams/b/presets", "teams/a/presets", "teams/c"],
        );
        let config = config.unwrap();
        let dirs: Vec<PathBuf> = config.preset_dirs.unwrap();
        let root = root.path();
        assert_eq!(
            dirs,
            vec![
                root.join("presets"),
                root.join("teams/a/presets"),
                root.join("teams/b/presets")
            ]
        );
        assert_eq!(config.lock, root.join("ci/presets.lock"));
        assert_eq!(config.locale.as_deref(), Some("de"));
    }

    #[test]
    fn an_unknown_key_is_located_with_did_you_mean() {
        let (_root, config) = load("presetDir: [presets]\n", &["presets"]);
        let problems: Vec<Diagnostic> = config.unwrap_err().problems.into_iter().collect();
        assert_eq!(problems.len(), 1);
        let d = &problems[0];
        assert_eq!(d.kind, DiagnosticKind::UnknownKey);
        assert!(
            d.message
                .contains("unknown key `presetDir` in the project config"),
            "{}",
            d.message
        );
        assert!(
            d.help.as_deref().unwrap_or("").contains("presetDirs"),
            "{d:?}"
        );
        assert_eq!(d.span.as_ref().map(|s| s.line), Some(1));
    }

    #[test]
    fn a_missing_directory_and_a_bad_locale_are_located() {
        let (_root, config) = load("presetDirs:\n  - nowhere\nlocale: 'no such'\n", &[]);
        let problems: Vec<Diagnostic> = config.unwrap_err().problems.into_iter().collect();
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems[0].message.contains("`nowhere` does not exist"));
        assert_eq!(problems[0].span.as_ref().map(|s| s.line), Some(2));
        assert!(problems[1].message.contains("not a locale"));
        assert_eq!(problems[1].span.as_ref().map(|s| s.line), Some(3));
    }

    #[test]
    fn the_nearest_config_upward_wins() {
        let (root, _config) = load("", &["a/b"]);
        let inner = root.path().join("a").join(CONFIG_FILE);
        std::fs::write(&inner, "").unwrap();
        assert_eq!(find(&root.path().join("a/b")), Some(inner));
        assert_eq!(find(root.path()), Some(root.path().join(CONFIG_FILE)));
    }
}
