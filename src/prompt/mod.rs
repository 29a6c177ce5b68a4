//! The prompt assembler: sections, runtime contexts, templates and the context snapshot.

pub mod origin;
