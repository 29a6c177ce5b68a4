//! Behaviour under test: recorded runs (cassettes), test cases and their expectations.
//!
//! `observed` is what a run did, as the expectations see it: the replay of a cassette
//! (or a live run) produces an [`Observed`], and a case's `expect` block is checked
//! against it. `cassette` is the recorded run's format (JSON lines); with the `client`
//! feature, `record` writes one from a live run (`run --record`) and `replay` runs the
//! agent again against it (`agent-presets test`), offline.

pub mod cassette;
pub mod observed;
#[cfg(feature = "client")]
pub mod record;
#[cfg(feature = "client")]
pub mod replay;

pub use cassette::{Cassette, CassetteError};
pub use observed::{Observed, ObservedCall, ObservedOutcome};
