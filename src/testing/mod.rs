//! Behaviour under test: recorded runs (cassettes), test cases and their expectations.
//!
//! `observed` is what a run did, as the expectations see it: the replay of a cassette
//! (or a live run) produces an [`Observed`], and a case's `expect` block is checked
//! against it. `cassette` is the recorded run's format (JSON lines); with the `client`
//! feature, `record` writes one from a live run (`run --record`) and `replay` runs the
//! agent again against it (`agent-presets test`), offline.

pub mod case;
pub mod cassette;
pub mod expect;
pub mod observed;
pub mod output;
#[cfg(feature = "client")]
pub mod record;
#[cfg(feature = "client")]
pub mod replay;
pub mod suite;

pub use case::{TestCase, case_json_schema, load_case};
pub use cassette::{Cassette, CassetteError};
pub use expect::{Failure, check_expectations};
pub use observed::{Observed, ObservedCall, ObservedOutcome};
pub use suite::{CaseResult, CaseStatus, Replay, Shard, SuiteReport};
