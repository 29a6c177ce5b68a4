//! Behaviour under test: recorded runs (cassettes), test cases and their expectations.
//!
//! `observed` is what a run did, as the expectations see it: the replay of a cassette
//! (or a live run) produces an [`Observed`], and a case's `expect` block is checked
//! against it. The other pieces (the cassette format, recording and replay, the case
//! file and its expectations, the report formats) build on this type.

pub mod observed;

pub use observed::{Observed, ObservedCall, ObservedOutcome};
