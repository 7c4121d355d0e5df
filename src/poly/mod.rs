//! The exact polyhedral core: integer sets and relations in pure Rust.
