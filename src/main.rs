//! The `alphac` command-line tool. All logic lives in the library (`alphac::cli`).

fn main() {
    std::process::exit(alphac::cli::main());
}
