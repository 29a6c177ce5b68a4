//! Tests that measure the peak memory of the processes they start: they need a test
//! binary of their own (see tests/integration/main.rs for the rest).

mod hostile_inputs;
mod template_budget;
