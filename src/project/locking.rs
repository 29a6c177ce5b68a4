//! The entries `lock` writes: each preset named validated, the ambiguity policy applied,
//! and every problem that keeps one from being locked.

use super::Project;
use super::lock::{LockError, PresetLock, entry_with_listings, with_hook_scripts};
use crate::diagnostic::Diagnostic;

/// Why [`Project::lock_entries`] gives no entries.
#[derive(Debug)]
pub enum LockEntriesError {
    /// A preset is invalid or ambiguous: every problem about the names (each once,
    /// warnings included), with at least one error.
    Invalid(Vec<Diagnostic>),
    /// A valid preset's entry could not be made.
    Lock(LockError),
}

impl Project {
    /// The lock entry of each preset in `names` (on offer), in order.
    pub fn lock_entries(
        &self,
        names: &[String],
    ) -> Result<Vec<(String, PresetLock)>, LockEntriesError> {
        let mut problems: Vec<Diagnostic> = Vec::new();
        let mut entries = Vec::new();
        for name in names {
            problems.extend(self.problems_about(name));
            let validation = self.validate(name);
            match validation.preset {
                Some(preset) if !self.is_ambiguous(name) => {
                    let entry = entry_with_listings(&preset, self.tools.listings())
                        .map_err(LockEntriesError::Lock)?;
                    // Each hook's script, read beneath the project (where hooks run).
                    let entry = with_hook_scripts(entry, &preset, &self.project_dir);
                    entries.push((name.clone(), entry));
                }
                _ => problems.extend(
                    validation
                        .diagnostics
                        .into_iter()
                        .filter(Diagnostic::is_error),
                ),
            }
        }
        if problems.iter().any(Diagnostic::is_error) {
            let mut list = Vec::new();
            for d in problems {
                if !list.contains(&d) {
                    list.push(d);
                }
            }
            return Err(LockEntriesError::Invalid(list));
        }
        Ok(entries)
    }
}
