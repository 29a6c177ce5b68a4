//! [`ContextSnapshot`]: decides when the runtime context is (re-)sent.
//!
//! The rendered contexts travel as one user-role message placed after the retained
//! history — never in the system prompt, so the cacheable prefix stays byte-stable. A
//! snapshot is appended only when its text differs from the last one sent; when context
//! existed and is now empty, a short notice says earlier snapshots no longer apply.

use std::sync::Arc;

use crate::texts::{CONTEXT_NOTICE, CONTEXT_WRAPPER, Texts};

/// Opens a snapshot message.
pub const SNAPSHOT_OPEN: &str = "<runtime-context>\n";
/// Closes a snapshot message.
pub const SNAPSHOT_CLOSE: &str = "\n</runtime-context>";
/// The body of the message sent when context that existed is now empty.
pub const CLEARED_NOTICE: &str = CONTEXT_NOTICE.text;

/// What to append after the history this step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SnapshotUpdate {
    /// Nothing changed: append nothing.
    Unchanged,
    /// New or changed context: append this user message.
    Changed(String),
    /// Context existed and is now empty: append this notice.
    Cleared(String),
}

impl SnapshotUpdate {
    /// The message to append, if any.
    pub fn message(&self) -> Option<&str> {
        match self {
            SnapshotUpdate::Unchanged => None,
            SnapshotUpdate::Changed(m) | SnapshotUpdate::Cleared(m) => Some(m),
        }
    }
}

/// Remembers the last context sent in one conversation.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ContextSnapshot {
    last: Option<String>,
    /// The wrapper and the notice (`context.wrapper`, `context.notice`); `None`: English.
    texts: Option<Arc<Texts>>,
}

impl ContextSnapshot {
    /// A conversation that has sent no context yet.
    pub fn new() -> Self {
        ContextSnapshot::default()
    }

    /// The message text for a context body (English wrapper).
    pub fn wrap(context: &str) -> String {
        format!("{SNAPSHOT_OPEN}{context}{SNAPSHOT_CLOSE}")
    }

    /// Wrap contexts and say the notice in `texts` from now on (the agent sets its
    /// preset's texts at the start of a run).
    pub fn use_texts(&mut self, texts: &Arc<Texts>) {
        self.texts = (!texts.is_empty()).then(|| Arc::clone(texts));
    }

    /// The message text for a context body, in this snapshot's texts.
    fn wrapped(&self, context: &str) -> String {
        match &self.texts {
            Some(t) => t.render(&CONTEXT_WRAPPER, &[("context", context)]),
            None => Self::wrap(context),
        }
    }

    /// Feed this step's rendered context ([`Assembly::context`](super::Assembly)).
    pub fn update(&mut self, context: Option<&str>) -> SnapshotUpdate {
        match (context, self.last.as_deref()) {
            (Some(now), Some(last)) if now == last => SnapshotUpdate::Unchanged,
            (Some(now), _) => {
                self.last = Some(now.to_owned());
                SnapshotUpdate::Changed(self.wrapped(now))
            }
            (None, Some(_)) => {
                self.last = None;
                let notice = match &self.texts {
                    Some(t) => t.get(&CONTEXT_NOTICE).to_owned(),
                    None => CLEARED_NOTICE.to_owned(),
                };
                SnapshotUpdate::Cleared(self.wrapped(&notice))
            }
            (None, None) => SnapshotUpdate::Unchanged,
        }
    }

    /// The history no longer holds the last snapshot (it was compacted away): send the
    /// next one again even if unchanged.
    pub fn reset(&mut self) {
        self.last = None;
    }

    /// The last context sent, if any.
    pub fn last(&self) -> Option<&str> {
        self.last.as_deref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_changes_are_sent() {
        let mut s = ContextSnapshot::new();
        assert_eq!(s.update(None), SnapshotUpdate::Unchanged);
        assert_eq!(
            s.update(Some("a")),
            SnapshotUpdate::Changed(ContextSnapshot::wrap("a"))
        );
        assert_eq!(s.update(Some("a")), SnapshotUpdate::Unchanged);
        assert_eq!(
            s.update(Some("b")),
            SnapshotUpdate::Changed(ContextSnapshot::wrap("b"))
        );
        assert!(matches!(s.update(None), SnapshotUpdate::Cleared(m) if m.contains(CLEARED_NOTICE)));
        assert_eq!(s.update(None), SnapshotUpdate::Unchanged);
        assert_eq!(
            s.update(Some("b")),
            SnapshotUpdate::Changed(ContextSnapshot::wrap("b"))
        );
        s.reset();
        assert_eq!(
            s.update(Some("b")),
            SnapshotUpdate::Changed(ContextSnapshot::wrap("b"))
        );
    }

    #[test]
    fn wrapper_and_notice_come_from_the_texts() {
        use crate::texts::TextSource;
        let mut texts = Texts::new(Some("de".into()));
        texts.set(
            CONTEXT_WRAPPER.id,
            "<runtime-context>\n(Laufzeit)\n{{ context }}\n</runtime-context>",
            TextSource::Builtin,
        );
        texts.set(CONTEXT_NOTICE.id, "Nichts gilt mehr.", TextSource::Builtin);
        let mut s = ContextSnapshot::new();
        s.use_texts(&Arc::new(texts));
        assert_eq!(
            s.update(Some("a")).message(),
            Some("<runtime-context>\n(Laufzeit)\na\n</runtime-context>")
        );
        assert_eq!(
            s.update(None).message(),
            Some("<runtime-context>\n(Laufzeit)\nNichts gilt mehr.\n</runtime-context>")
        );
        // English texts: the constants, unchanged.
        s.use_texts(&Texts::english());
        assert_eq!(
            s.update(Some("b")).message(),
            Some(ContextSnapshot::wrap("b").as_str())
        );
        assert_eq!(
            ContextSnapshot::wrap("b"),
            Texts::english().render(&CONTEXT_WRAPPER, &[("context", "b")])
        );
    }
}
