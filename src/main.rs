//! The `alphac` command-line tool. All logic lives in the library (`alphac::cli`).

// mimalloc instead of the system allocator: compilation allocates many
// small rows, tableaux and sets, and a quarter of its time went to
// glibc's malloc and free; with mimalloc every example compiles 1.1–1.5×
// faster (`cargo bench --bench compile`, BENCHMARKS.md). Its v2 line
// (the crate's `v2` feature) returns freed large blocks to the OS sooner
// than v3, whose retained copies of a sweep's buffers raised a run's peak
// memory by up to 80% (BENCHMARKS.md, "mimalloc v2, for memory").
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    std::process::exit(alphac::cli::main());
}
