//! The exact solver: rational simplex, lexicographic optimization,
//! integer sampling and integer lexicographic optimization.
