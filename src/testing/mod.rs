//! Behaviour under test: recorded runs (cassettes), test cases and their expectations.
//!
//! `observed` is what a run did, as the expectations see it: the replay of a cassette
//! (or a live run) produces an [`Observed`], and a case's `expect` block is checked
//! against it. The other pieces (the cassette format, recording and replay, the case
//! file and its expectations, the report formats) build on this type.

pub mod case;
pub mod expect;
pub mod observed;
pub mod output;
pub mod suite;

pub use case::{TestCase, case_json_schema, load_case};
pub use expect::{Failure, check_expectations};
pub use observed::{Observed, ObservedCall, ObservedOutcome};
pub use suite::{CaseResult, CaseStatus, Replay, Shard, SuiteReport};
