//! The preset file format: parsing (serde-saphyr, with spans), discovery, `extends`
//! resolution and full-build validation.
