//! Batch validation: which presets a list of arguments (or none: every preset on offer)
//! names, each file once, validated in family order over every core (with the `parallel`
//! feature) and judged with the ambiguity policy.

use std::collections::BTreeSet;
use std::path::Path;

#[cfg(feature = "parallel")]
use rayon::prelude::*;

use super::{Project, Selected, is_path};
use crate::diagnostic::{Diagnostic, Severity};
use crate::preset::validate::Validation;
use crate::report::PresetOutcome;

/// From how many presets the work is spread over the cores (below it, starting the
/// threads costs more than it saves).
pub const PARALLEL_FROM: usize = 8;

/// One preset of a batch: what was selected, its name and its file as shown.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BatchItem {
    /// What the argument selected.
    pub selected: Selected,
    /// The preset's name.
    pub name: String,
    /// Its file as shown (or `<builtin>`, `<stdin>`).
    pub file: String,
}

/// What a list of arguments asks to validate.
#[derive(Debug, Default)]
pub struct Plan {
    /// The presets to validate, each file once, in the order asked.
    pub items: Vec<BatchItem>,
    /// Problems found while selecting: discovery problems (all of them, or those about
    /// the names asked for), unknown names, unreadable files.
    pub diagnostics: Vec<Diagnostic>,
    /// Files that could not be offered or read at all (a built-in's name, a duplicate,
    /// an unreadable path): each is an invalid preset of its own.
    pub refused_files: Vec<String>,
}

impl Project {
    /// The presets `targets` name (names, files, `-`); with none, every preset on
    /// offer, and every file discovery refused.
    pub fn plan(&mut self, targets: &[String]) -> Plan {
        let mut plan = Plan::default();
        let mut selected: Vec<Selected> = Vec::new();
        if targets.is_empty() {
            selected.extend(self.presets.names().map(|n| Selected::Name(n.to_owned())));
            // Files that could not be offered at all (a built-in's name, a duplicate).
            let offered: BTreeSet<&str> = self.presets.entries().map(|e| &**e.display()).collect();
            for d in &self.problems {
                if let Some(span) = &d.span
                    && !offered.contains(&*span.file)
                    && !plan.refused_files.iter().any(|f| **f == *span.file)
                {
                    plan.refused_files.push(span.file.to_string());
                }
            }
            plan.diagnostics.extend(self.problems.iter().cloned());
        } else {
            for target in targets {
                match self.select(target) {
                    Ok(Selected::Name(name)) => {
                        plan.diagnostics.extend(self.problems_about(&name));
                        selected.push(Selected::Name(name));
                    }
                    Ok(chosen) => selected.push(chosen),
                    Err(d) => {
                        plan.diagnostics.push(d);
                        if target == "-" || is_path(target) {
                            plan.refused_files.push(target.clone());
                        }
                    }
                }
            }
        }
        // One file named twice (by name and by path, say) is validated once.
        let mut seen = BTreeSet::new();
        plan.items = selected
            .into_iter()
            .filter_map(|chosen| {
                let e = self.entry(&chosen)?;
                let (name, file) = (e.name().to_owned(), e.display().to_string());
                seen.insert(file.clone()).then_some(BatchItem {
                    selected: chosen,
                    name,
                    file,
                })
            })
            .collect();
        plan
    }

    /// Validate every item, and run `check` on each validation (a lock check, say: it
    /// may take the preset out), on every core from [`PARALLEL_FROM`] items on, in
    /// family order; the results come back in the items' order.
    pub fn validate_batch<T, F>(&self, items: &[BatchItem], check: F) -> Vec<(Validation, T)>
    where
        T: Send,
        F: Fn(&BatchItem, &mut Validation) -> T + Sync,
    {
        let validate = |item: &BatchItem| {
            let mut validation = self.validate_selected(&item.selected);
            let checked = check(item, &mut validation);
            (validation, checked)
        };
        #[cfg(feature = "parallel")]
        if items.len() >= PARALLEL_FROM {
            // Families together: presets that extend the same files are validated one
            // after another (each thread takes a run of the order), so the files they
            // share are compiled once while they are still in the template cache.
            let order = self.family_order(items);
            let mut done: Vec<(usize, _)> = order
                .par_iter()
                .map(|&i| (i, validate(&items[i])))
                .collect();
            // Back in the items' order, in place: each swap puts one outcome where it
            // belongs (a sort would move these large values many times; `order` is a
            // permutation of the items' indices).
            let mut swaps = 0;
            for at in 0..done.len() {
                while let Some(&(to, _)) = done.get(at)
                    && to != at
                    && to < done.len()
                    && swaps < done.len()
                {
                    done.swap(at, to);
                    swaps += 1;
                }
            }
            return done.into_iter().map(|(_, outcome)| outcome).collect();
        }
        items.iter().map(validate).collect()
    }

    /// Is `item` valid with `diagnostics`: no error (no warning either with
    /// `deny_warnings`), and not a name two files offer?
    pub fn judge(&self, item: &BatchItem, diagnostics: &[Diagnostic], deny_warnings: bool) -> bool {
        let refused = matches!(&item.selected, Selected::Name(n) if self.is_ambiguous(n));
        !refused
            && !diagnostics.iter().any(|d| {
                d.severity == Severity::Error || (deny_warnings && d.severity == Severity::Warning)
            })
    }

    /// The presets `selected` extends, nearest first: name and file as shown (for the
    /// note on a preset invalid because of them).
    pub fn ancestors(&self, selected: &Selected) -> Vec<(String, String)> {
        const MOST: usize = 16;
        let mut out: Vec<(String, String)> = Vec::new();
        let mut next = self
            .entry(selected)
            .and_then(|e| e.parsed().ok())
            .and_then(|p| p.file.extends.as_ref())
            .map(|e| e.value.clone());
        while let Some(parent) = next {
            if out.len() >= MOST || out.iter().any(|(n, _)| *n == parent) {
                break;
            }
            let Some(entry) = self.presets.get(&parent) else {
                break;
            };
            next = entry
                .parsed()
                .ok()
                .and_then(|p| p.file.extends.as_ref())
                .map(|e| e.value.clone());
            out.push((parent, entry.display().to_string()));
        }
        out
    }

    /// The items' indices ordered by family: by the names along each preset's `extends`
    /// chain from its root to itself, so presets that share ancestors are adjacent.
    /// Reading the files is work validation does anyway (each file is parsed once); an
    /// unknown parent or a cycle only ends the path here, validation reports it.
    pub fn family_order(&self, items: &[BatchItem]) -> Vec<usize> {
        const MOST: usize = 16;
        fn path_of<'a>(project: &'a Project, item: &'a BatchItem) -> Vec<&'a str> {
            let mut path = vec![item.name.as_str()];
            let mut next = project
                .entry(&item.selected)
                .and_then(|e| e.parsed().ok())
                .and_then(|p| p.file.extends.as_ref())
                .map(|e| e.value.as_str());
            while let Some(parent) = next {
                if path.len() >= MOST || path.contains(&parent) {
                    break;
                }
                path.push(parent);
                next = project
                    .presets
                    .parsed(parent)
                    .and_then(Result::ok)
                    .and_then(|p| p.file.extends.as_ref())
                    .map(|e| e.value.as_str());
            }
            path.reverse();
            path
        }
        #[cfg(feature = "parallel")]
        let paths: Vec<Vec<&str>> = items.par_iter().map(|i| path_of(self, i)).collect();
        #[cfg(not(feature = "parallel"))]
        let paths: Vec<Vec<&str>> = items.iter().map(|i| path_of(self, i)).collect();
        // Every name before the last of a path is extended by a preset of the batch.
        for path in &paths {
            if let Some((_, parents)) = path.split_last() {
                for parent in parents {
                    self.presets.mark_extended(parent);
                }
            }
        }
        let mut order: Vec<usize> = (0..items.len()).collect();
        order.sort_by(|&a, &b| paths[a].cmp(&paths[b]));
        order
    }
}

/// The preset name a refused file would have had (its stem).
pub fn stem_name(file: &str) -> String {
    Path::new(file)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The outcome of a file that could not be read as a preset: invalid, named after its
/// stem.
pub fn refused_outcome(file: &str) -> PresetOutcome {
    PresetOutcome {
        name: stem_name(file),
        file: file.to_owned(),
        valid: false,
        blamed_parents: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_and_names() {
        assert!(is_path("presets/examples/reviewer.yaml"));
        assert!(is_path("reviewer.yaml"));
        assert!(is_path("x.yml"));
        assert!(is_path("./reviewer"));
        assert!(!is_path("reviewer"));
        assert!(!is_path("my-preset-2"));
        assert_eq!(stem_name("a/b/p.yml"), "p");
    }

    /// A family validated as a batch (in family order, on every core, its shared files
    /// compiled once into the cache the family uses) gives each preset the outcome it
    /// gets validated alone in a fresh project, in the order the items were given.
    #[test]
    fn a_batch_finds_what_each_preset_validated_alone_finds() {
        use crate::project::ProjectOptions;
        let dir = tempfile::tempdir().expect("a temporary directory");
        let presets = dir.path().join(".agent-presets");
        std::fs::create_dir_all(&presets).expect("the preset directory");
        let write = |name: &str, extends: &str, body: &str| {
            std::fs::write(
                presets.join(format!("{name}.yaml")),
                format!("version: 1\nname: {name}\nextends: {extends}\n{body}"),
            )
            .expect("a preset file");
        };
        write(
            "base",
            "standard",
            "persona:\n  sections:\n  - name: house\n    order: 50\n    text: |\n      Style: {{ style }}. {% if 'bash' in tools %}Use bash for builds.{% endif %}\nvariables:\n  style: {default: terse}\n",
        );
        write(
            "mid",
            "base",
            "persona:\n  sections:\n  - name: house\n    order: 50\n    text: 'Mid {{ style }} {{ nope }}'\n",
        );
        for i in 0..10 {
            let (parent, body) = if i % 2 == 0 {
                (
                    "base",
                    format!(
                        "tools:\n  allow: [read_file, grep]\npersona:\n  sections:\n  - name: c{i}\n    order: {}\n    text: 'Use bash {{{{ style }}}}.'\n",
                        100 + i
                    ),
                )
            } else {
                (
                    "mid",
                    format!(
                        "persona:\n  sections:\n  - name: c{i}\n    order: {}\n    text: '{{% if os %}}x{{% endif %}}'\n",
                        100 + i
                    ),
                )
            };
            write(&format!("kid-{i:02}"), parent, &body);
        }
        let options = ProjectOptions {
            project_dir: Some(dir.path().to_path_buf()),
            preset_dirs: Vec::new(),
            no_user: true,
            no_project_config: true,
        };
        let fresh = || Project::discover(&options).expect("the project").0;
        let mut project = fresh();
        let plan = project.plan(&[]);
        assert!(
            plan.items.len() >= PARALLEL_FROM,
            "{} items",
            plan.items.len()
        );
        let batch = project.validate_batch(&plan.items, |item, _| item.name.clone());
        assert_eq!(batch.len(), plan.items.len());
        let mut warned = 0;
        for (item, (validation, name)) in plan.items.iter().zip(&batch) {
            assert_eq!(&item.name, name, "outcomes in the items' order");
            let alone = fresh().validate_selected(&item.selected);
            assert_eq!(
                format!("{:?}", validation.diagnostics),
                format!("{:?}", alone.diagnostics),
                "{name}"
            );
            assert_eq!(
                validation.preset.is_some(),
                alone.preset.is_some(),
                "{name}"
            );
            warned += usize::from(!validation.diagnostics.is_empty());
        }
        assert!(warned > 0, "the family has findings to compare");
    }
}
