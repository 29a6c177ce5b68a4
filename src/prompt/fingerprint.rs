//! [`Fingerprint`]: the sha256 of the cacheable prefix an [`Assembly`](super::Assembly)
//! renders (tools + system prompt, for one provider and model). It lives with the prompt
//! it fingerprints; `request` re-exports it.

use std::fmt;

use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::tools::{WireTool, wire_json};

/// sha256 of the cacheable prefix: changes iff the provider, the model, the tools or the
/// system prompt bytes do. A provider's prompt cache is per model, so the same bytes sent
/// to another model are another prefix.
///
/// Encoding (version 3): the sha256 of `agent-presets prefix v3\n`, then the tool list
/// as compact JSON, the provider, the model and the system prompt, each as a tagged,
/// length-prefixed field (`0` for an absent value; `1`, the length as a big-endian
/// `u64` and the bytes for a present one), so no two prefixes share an encoding. The
/// tools come first because they never change while an agent runs: an assembler hashes
/// them once and only the rest per step.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Fingerprint([u8; 32]);

/// The fingerprint's hash of one tool list, taken once: [`PrefixHasher::fingerprint`]
/// adds provider, model and system prompt to a copy of it.
#[derive(Clone)]
pub(crate) struct PrefixHasher(Sha256);

impl fmt::Debug for PrefixHasher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("PrefixHasher")
    }
}

/// A tagged, length-prefixed field.
fn field(h: &mut Sha256, value: Option<&[u8]>) {
    match value {
        None => h.update([0u8]),
        Some(v) => {
            h.update([1u8]);
            h.update((v.len() as u64).to_be_bytes());
            h.update(v);
        }
    }
}

impl PrefixHasher {
    /// Hash the header and the tool list (as compact JSON).
    pub(crate) fn new(tools: &[WireTool]) -> Self {
        let json = wire_json(tools);
        let mut h = Sha256::new();
        h.update(b"agent-presets prefix v3\n");
        field(&mut h, Some(json.as_bytes()));
        PrefixHasher(h)
    }

    /// The fingerprint of these tools with `provider`, `model` and `system`.
    pub(crate) fn fingerprint(
        &self,
        provider: Option<&str>,
        model: Option<&str>,
        system: &str,
    ) -> Fingerprint {
        let mut h = self.0.clone();
        field(&mut h, provider.map(str::as_bytes));
        field(&mut h, model.map(str::as_bytes));
        field(&mut h, Some(system.as_bytes()));
        Fingerprint(h.finalize().into())
    }
}

impl Fingerprint {
    /// Fingerprint the prefix a model sees: `provider` and `model` (the values of the
    /// built-in variables of those names, `None` when unset), the system prompt and the
    /// tool list.
    pub fn of(
        provider: Option<&str>,
        model: Option<&str>,
        system: &str,
        tools: &[WireTool],
    ) -> Self {
        PrefixHasher::new(tools).fingerprint(provider, model, system)
    }

    /// Stands in for a fingerprint nobody will read (`validate`'s render).
    pub(crate) const fn placeholder() -> Self {
        Fingerprint([0; 32])
    }

    /// The raw digest.
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }
}

impl fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("sha256:")?;
        for b in self.0 {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Fingerprint({self})")
    }
}

impl Serialize for Fingerprint {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}
