//! Commands a message suggests, as the user can run them: every `` `agent-presets …` ``
//! in a diagnostic repeats the global flags (`--preset-dir`, `--project-dir`,
//! `--no-user`, `--no-project-config`) of the command that printed it, so a re-lock
//! command in a drift report finds the same presets. The CLI sets the flags for the
//! command it runs ([`repeat_flags`]); every rendering ([`human`](super::human),
//! [`json`](super::json), [`github`](super::github), [`sarif`](super::sarif)) shows
//! messages and help through [`with_flags`]. A library host that sets nothing gets the
//! texts unchanged.

use std::borrow::Cow;
use std::cell::RefCell;

thread_local! {
    /// The global flags of the command being run on this thread, as shell words.
    static FLAGS: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// The marker of a suggested command: inline code starting with the program's name.
const COMMAND: &str = "`agent-presets ";

/// While the returned guard lives, [`with_flags`] inserts `flags` (shell words, already
/// quoted) after `agent-presets` in every suggested command on this thread. No flags:
/// nothing changes.
#[must_use = "the flags are repeated only while the guard lives"]
pub fn repeat_flags(flags: &str) -> FlagsGuard {
    let flags = flags.trim();
    let previous = FLAGS.with(|f| f.replace((!flags.is_empty()).then(|| flags.to_owned())));
    FlagsGuard { previous }
}

/// Restores the flags in force before [`repeat_flags`] when dropped.
#[derive(Debug)]
pub struct FlagsGuard {
    previous: Option<String>,
}

impl Drop for FlagsGuard {
    fn drop(&mut self) {
        let previous = self.previous.take();
        FLAGS.with(|f| *f.borrow_mut() = previous);
    }
}

/// `text` with the flags of [`repeat_flags`] after each `` `agent-presets `` (a command
/// that already starts with them is left as it is).
pub fn with_flags(text: &str) -> Cow<'_, str> {
    if !text.contains(COMMAND) {
        return Cow::Borrowed(text);
    }
    FLAGS.with(|f| match &*f.borrow() {
        None => Cow::Borrowed(text),
        Some(flags) => {
            let mut out = String::with_capacity(text.len() + flags.len());
            let mut rest = text;
            while let Some(at) = rest.find(COMMAND) {
                let after = at + COMMAND.len();
                out.push_str(&rest[..after]);
                rest = &rest[after..];
                if !rest.starts_with(flags.as_str()) {
                    out.push_str(flags);
                    out.push(' ');
                }
            }
            out.push_str(rest);
            Cow::Owned(out)
        }
    })
}

/// [`with_flags`], then [`mask`](super::mask::mask): how reports show a message or a help.
pub(crate) fn displayed(text: &str) -> Cow<'_, str> {
    match with_flags(text) {
        Cow::Borrowed(text) => super::mask::mask(text),
        Cow::Owned(text) => Cow::Owned(super::mask::mask(&text).into_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggested_commands_repeat_the_flags_once() {
        let text = "run `agent-presets lock a b` and commit presets.lock";
        assert_eq!(with_flags(text), text, "no flags set: unchanged");
        {
            let _guard = repeat_flags("--preset-dir 'my presets' --no-user");
            assert_eq!(
                with_flags(text),
                "run `agent-presets --preset-dir 'my presets' --no-user lock a b` and commit presets.lock"
            );
            let already = "`agent-presets --preset-dir 'my presets' --no-user trust x`";
            assert_eq!(with_flags(already), already);
            assert_eq!(
                with_flags("`agent-presets list`, then `agent-presets show x`"),
                "`agent-presets --preset-dir 'my presets' --no-user list`, then `agent-presets --preset-dir 'my presets' --no-user show x`"
            );
        }
        assert_eq!(with_flags(text), text, "the guard restores");
    }
}
