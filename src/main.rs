//! The `alphac` command-line tool. All logic lives in the library (`alphac::cli`).

// mimalloc instead of the system allocator: compilation allocates many
// small rows, tableaux and sets, and a quarter of its time went to
// glibc's malloc and free; with mimalloc every example compiles 1.1–1.5×
// faster (`cargo bench --bench compile`, BENCHMARKS.md).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    std::process::exit(alphac::cli::main());
}
