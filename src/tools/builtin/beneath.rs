//! The tools resolve paths beneath the workspace root with the crate's one confinement
//! walk, [`crate::confine::beneath`].

pub(crate) use crate::confine::beneath::*;
