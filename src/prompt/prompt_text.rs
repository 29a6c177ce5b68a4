//! [`PromptText`]: rendered prompt text, shared rather than copied.

use std::borrow::Borrow;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

/// Rendered text (a system prompt, a runtime context) that steps hand out without
/// copying: cloning it bumps a reference count. It reads as a `&str` (it derefs to one)
/// and compares equal to `str`, `&str` and `String`.
#[derive(Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PromptText(Arc<str>);

impl PromptText {
    /// The text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The shared text itself.
    pub fn as_arc(&self) -> &Arc<str> {
        &self.0
    }
}

impl Deref for PromptText {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for PromptText {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl Borrow<str> for PromptText {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for PromptText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for PromptText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl From<String> for PromptText {
    fn from(text: String) -> Self {
        PromptText(text.into())
    }
}

impl From<&str> for PromptText {
    fn from(text: &str) -> Self {
        PromptText(text.into())
    }
}

impl From<Arc<str>> for PromptText {
    fn from(text: Arc<str>) -> Self {
        PromptText(text)
    }
}

impl From<PromptText> for String {
    fn from(text: PromptText) -> Self {
        text.0.as_ref().to_owned()
    }
}

impl From<PromptText> for Arc<str> {
    fn from(text: PromptText) -> Self {
        text.0
    }
}

impl PartialEq<str> for PromptText {
    fn eq(&self, other: &str) -> bool {
        &*self.0 == other
    }
}

impl PartialEq<&str> for PromptText {
    fn eq(&self, other: &&str) -> bool {
        &*self.0 == *other
    }
}

impl PartialEq<String> for PromptText {
    fn eq(&self, other: &String) -> bool {
        &*self.0 == other.as_str()
    }
}

impl PartialEq<&String> for PromptText {
    fn eq(&self, other: &&String) -> bool {
        &*self.0 == other.as_str()
    }
}

impl PartialEq<PromptText> for str {
    fn eq(&self, other: &PromptText) -> bool {
        self == &*other.0
    }
}

impl PartialEq<PromptText> for &str {
    fn eq(&self, other: &PromptText) -> bool {
        *self == &*other.0
    }
}

impl PartialEq<PromptText> for String {
    fn eq(&self, other: &PromptText) -> bool {
        self.as_str() == &*other.0
    }
}

impl serde::Serialize for PromptText {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_compares_as_text() {
        let text = PromptText::from("You are a reviewer.");
        assert_eq!(text, "You are a reviewer.");
        assert_eq!("You are a reviewer.", text);
        assert_eq!(text, "You are a reviewer.".to_owned());
        assert_eq!("You are a reviewer.".to_owned(), text);
        assert!(text.starts_with("You"));
        assert_eq!(text.len(), 19);
        assert_eq!(format!("{text}"), "You are a reviewer.");
        assert_eq!(format!("{text:?}"), "\"You are a reviewer.\"");
        assert_eq!(String::from(text.clone()), "You are a reviewer.");
        assert_eq!(
            serde_json::to_string(&text).unwrap(),
            "\"You are a reviewer.\""
        );
    }

    #[test]
    fn clones_share_the_text() {
        let a = PromptText::from("x".repeat(1000));
        let b = a.clone();
        assert!(Arc::ptr_eq(a.as_arc(), b.as_arc()));
    }
}
