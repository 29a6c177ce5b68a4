//! What `trust` and `trust --revoke` name besides one preset: every preset file of a
//! directory ([`Project::select_directory`]) and the file (or directory) trust is
//! recorded for ([`Project::trust_file`]).

use std::path::{Path, PathBuf};

use super::{Project, Refusal, Selected, is_path};
use crate::diagnostic::{Diagnostic, DiagnosticKind};

impl Project {
    /// Every `*.yaml` / `*.yml` file in `dir` (not below), as file selections, sorted. A
    /// directory that cannot be read is [`Refusal::Unusable`]; a file that cannot be
    /// added is [`Refusal::Invalid`].
    pub fn select_directory(&mut self, dir: &Path) -> Result<Vec<Selected>, Refusal> {
        let entries = std::fs::read_dir(dir).map_err(|e| {
            Refusal::Unusable(Diagnostic::new(
                DiagnosticKind::Io,
                format!("cannot read the directory `{}`: {e}", dir.display()),
            ))
        })?;
        let mut files: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "yaml" || x == "yml") && p.is_file())
            .collect();
        files.sort();
        let mut selections = Vec::with_capacity(files.len());
        for file in files {
            match self.presets.add_file(&file) {
                Ok(id) => selections.push(Selected::Target(id)),
                Err(d) => return Err(Refusal::Invalid(vec![d])),
            }
        }
        Ok(selections)
    }

    /// The file (or directory) trust in what `arg` names is recorded for: a directory
    /// as it is (also a path not there any more), else the file of the preset `arg`
    /// selects. A selection problem of kind `io` is [`Refusal::Unusable`], any other
    /// [`Refusal::Invalid`]; a preset without a file (a built-in) is unusable.
    pub fn trust_file(&mut self, arg: &str) -> Result<PathBuf, Refusal> {
        let path = Path::new(arg);
        if path.is_dir() || (is_path(arg) && !path.exists()) {
            return Ok(path.to_path_buf());
        }
        let selected = self.select(arg).map_err(|d| {
            if d.kind == DiagnosticKind::Io {
                Refusal::Unusable(d)
            } else {
                Refusal::Invalid(vec![d])
            }
        })?;
        self.entry(&selected)
            .and_then(|e| e.path())
            .map(Path::to_path_buf)
            .ok_or_else(|| {
                Refusal::Unusable(Diagnostic::new(
                    DiagnosticKind::Io,
                    format!("`{arg}` has no file, so nothing is trusted for it"),
                ))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::project::ProjectOptions;

    #[test]
    fn a_directory_offers_its_preset_files_sorted() {
        let dir = tempfile::tempdir().unwrap();
        let presets = dir.path().join("shared");
        std::fs::create_dir_all(presets.join("below")).unwrap();
        for name in ["b.yml", "a.yaml", "below/c.yaml", "notes.md"] {
            let stem = Path::new(name)
                .file_stem()
                .unwrap()
                .to_string_lossy()
                .into_owned();
            std::fs::write(
                presets.join(name),
                format!("version: 1\nname: {stem}\nextends: minimal\n"),
            )
            .unwrap();
        }
        let options = ProjectOptions {
            project_dir: Some(dir.path().to_path_buf()),
            preset_dirs: Vec::new(),
            no_user: true,
            no_project_config: true,
        };
        let (mut project, _) = Project::discover(&options).unwrap();
        let selected = project.select_directory(&presets).unwrap();
        let names: Vec<String> = selected
            .iter()
            .map(|s| project.entry(s).unwrap().name().to_owned())
            .collect();
        assert_eq!(names, ["a", "b"]);
        assert!(matches!(
            project.select_directory(&presets.join("missing")),
            Err(Refusal::Unusable(d)) if d.message.starts_with("cannot read the directory")
        ));
        assert_eq!(
            project.trust_file("shared/gone.yaml").unwrap(),
            Path::new("shared/gone.yaml")
        );
        let file = presets.join("a.yaml");
        assert_eq!(project.trust_file(file.to_str().unwrap()).unwrap(), file);
        assert!(
            matches!(project.trust_file("minimal"), Err(Refusal::Unusable(d)) if d.message.contains("has no file"))
        );
        assert!(matches!(
            project.trust_file("nope"),
            Err(Refusal::Unusable(_))
        ));
    }
}
