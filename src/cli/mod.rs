//! The `alphac` command-line interface: argument parsing (clap), dispatch to
//! the pipeline stages, diagnostics rendering and exit codes
//! (0 success, 1 user error, 2 internal error).
//!
//! It owns no compiler logic: every command is a thin call into a library
//! stage.

/// Runs the command line and returns the process exit code.
pub fn main() -> i32 {
    0
}
