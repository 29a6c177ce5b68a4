//! [`ApiKey`]: a provider key that never shows itself.

use std::fmt;

use super::{ClientError, KeyProblem};
use crate::endpoint::Provider;
use crate::redact::Redactor;

/// An API key, read only from the environment variable a preset names. It has no
/// `Display`, its `Debug` prints `ApiKey(***)`, and [`ApiKey::redactor`] masks it (and its
/// common transformations, see [`crate::redact`]) in any text a server sends back, so it
/// cannot reach output, logs or errors.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// Read the key from environment variable `var`. Unset, empty or not UTF-8 is
    /// [`ClientError::MissingApiKey`], which names the variable and never a value.
    pub fn from_env(provider: Provider, var: &str) -> Result<Self, ClientError> {
        let problem = match std::env::var(var) {
            Ok(v) if !v.trim().is_empty() => return Ok(ApiKey(v.trim().to_owned())),
            Ok(_) => KeyProblem::Empty,
            Err(std::env::VarError::NotPresent) => KeyProblem::Unset,
            Err(std::env::VarError::NotUnicode(_)) => KeyProblem::NotUnicode,
        };
        Err(ClientError::MissingApiKey {
            provider,
            var: var.to_owned(),
            problem,
        })
    }

    /// A key given directly (library hosts with their own secret store).
    pub fn new(key: impl Into<String>) -> Self {
        ApiKey(key.into())
    }

    /// The key, for the request header only.
    pub(crate) fn expose(&self) -> &str {
        &self.0
    }

    /// A [`Redactor`] for this key.
    pub fn redactor(&self) -> Redactor {
        Redactor::new([self.0.as_str()])
    }

    /// `text` with the key and its common transformations masked, one `*` per character
    /// (a shorthand for [`ApiKey::redactor`]`.redact`; build the redactor once to redact
    /// much text).
    pub fn redact(&self, text: &str) -> String {
        self.redactor().redact(text).into_owned()
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(***)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn never_shows_itself() {
        let key = ApiKey::new("sk-secret-123");
        assert_eq!(format!("{key:?}"), "ApiKey(***)");
        assert_eq!(
            key.redact("bad key sk-secret-123! SK-SECRET-123"),
            "bad key *************! *************"
        );
    }
}
