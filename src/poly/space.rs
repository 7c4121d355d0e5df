//! Spaces: the named parameters and the named dimensions of a set, or the
//! named input and output dimensions of a map.
//!
//! Owns: `Tuple`, `Space`, compatibility checks and the variable layout
//! (parameters first, then input dimensions, then output dimensions).
//!
//! Must not know about: constraints, sets, the solver.

use super::error::{PolyError, PolyResult};
use std::sync::Arc;

/// A list of variable names, shared: spaces are copied with every set and
/// map the library builds, and their names almost never change, so a copy
/// is a reference count, not an allocation per name.
pub type Names = Arc<[String]>;

/// A tuple of named dimensions with an optional name (`S1[i, j]`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Tuple {
    pub name: Option<Arc<str>>,
    pub dims: Names,
}

impl Tuple {
    /// An anonymous tuple with the given dimension names.
    pub fn new<S: AsRef<str>>(dims: &[S]) -> Tuple {
        Tuple {
            name: None,
            dims: dims.iter().map(|s| s.as_ref().to_string()).collect(),
        }
    }
    /// A named tuple `name[dims]`.
    pub fn named<S: AsRef<str>>(name: &str, dims: &[S]) -> Tuple {
        Tuple {
            name: Some(name.into()),
            dims: dims.iter().map(|s| s.as_ref().to_string()).collect(),
        }
    }
    /// An anonymous tuple of `n` dimensions named `prefix0, prefix1, ...`.
    pub fn anonymous(prefix: &str, n: usize) -> Tuple {
        Tuple {
            name: None,
            dims: (0..n).map(|k| format!("{prefix}{k}")).collect(),
        }
    }
    pub fn len(&self) -> usize {
        self.dims.len()
    }
    pub fn is_empty(&self) -> bool {
        self.dims.is_empty()
    }
    fn compatible(&self, other: &Tuple) -> bool {
        self.dims.len() == other.dims.len()
            && match (&self.name, &other.name) {
                (Some(a), Some(b)) => a == b,
                _ => true,
            }
    }
}

/// The space of a set (`input == None`: variables are parameters then the
/// dimensions of `output`) or of a map (`input == Some(..)`: parameters,
/// then input dimensions, then output dimensions).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Space {
    pub params: Names,
    pub input: Option<Tuple>,
    pub output: Tuple,
}

impl Space {
    /// The space of a set with the given parameters and dimensions.
    pub fn set<S: AsRef<str>, T: AsRef<str>>(params: &[S], dims: &[T]) -> Space {
        Space {
            params: params.iter().map(|s| s.as_ref().to_string()).collect(),
            input: None,
            output: Tuple::new(dims),
        }
    }
    /// The space of a set with the given parameters and tuple.
    pub fn set_tuple<S: AsRef<str>>(params: &[S], tuple: Tuple) -> Space {
        Space {
            params: params.iter().map(|s| s.as_ref().to_string()).collect(),
            input: None,
            output: tuple,
        }
    }
    /// The space of a map `input -> output`.
    pub fn map<S: AsRef<str>>(params: &[S], input: Tuple, output: Tuple) -> Space {
        Space {
            params: params.iter().map(|s| s.as_ref().to_string()).collect(),
            input: Some(input),
            output,
        }
    }
    pub fn is_map(&self) -> bool {
        self.input.is_some()
    }
    pub fn n_params(&self) -> usize {
        self.params.len()
    }
    pub fn n_in(&self) -> usize {
        self.input.as_ref().map_or(0, |t| t.len())
    }
    pub fn n_out(&self) -> usize {
        self.output.len()
    }
    /// Number of set dimensions (for a map: input + output dimensions).
    pub fn n_dims(&self) -> usize {
        self.n_in() + self.n_out()
    }
    /// Number of variables of a row (parameters + dimensions); rows have
    /// one more entry, the constant.
    pub fn n_vars(&self) -> usize {
        self.n_params() + self.n_dims()
    }
    /// The names of all variables in row order.
    pub fn var_names(&self) -> Vec<String> {
        let mut v = self.params.to_vec();
        if let Some(t) = &self.input {
            v.extend(t.dims.iter().cloned());
        }
        v.extend(self.output.dims.iter().cloned());
        v
    }
    /// The domain space of a map space (a set space over its input tuple);
    /// a set space is returned unchanged.
    pub fn domain(&self) -> Space {
        match &self.input {
            Some(t) => Space {
                params: self.params.clone(),
                input: None,
                output: t.clone(),
            },
            None => self.clone(),
        }
    }
    /// The range space of a map space (a set space over its output tuple).
    pub fn range(&self) -> Space {
        Space {
            params: self.params.clone(),
            input: None,
            output: self.output.clone(),
        }
    }
    /// The reversed map space `output -> input`.
    pub fn reverse(&self) -> Space {
        Space {
            params: self.params.clone(),
            input: Some(self.output.clone()),
            output: self.input.clone().unwrap_or_default(),
        }
    }
    /// The set space over all dimensions of this space (a map's input and
    /// output concatenated; the tuple name is dropped for maps).
    pub fn wrapped(&self) -> Space {
        match &self.input {
            None => self.clone(),
            Some(t) => {
                let mut dims = t.dims.to_vec();
                dims.extend(self.output.dims.iter().cloned());
                Space {
                    params: self.params.clone(),
                    input: None,
                    output: Tuple {
                        name: None,
                        dims: dims.into(),
                    },
                }
            }
        }
    }
    /// True when both spaces have the same parameters (names, in order),
    /// the same kind and dimension counts, and no conflicting tuple names.
    /// Dimension names do not matter.
    pub fn compatible(&self, other: &Space) -> bool {
        self.params == other.params
            && self.output.compatible(&other.output)
            && match (&self.input, &other.input) {
                (None, None) => true,
                (Some(a), Some(b)) => a.compatible(b),
                _ => false,
            }
    }
    /// `Ok(())` if compatible, else `SpaceMismatch`.
    pub fn check(&self, other: &Space, what: &str) -> PolyResult<()> {
        if self.compatible(other) {
            Ok(())
        } else {
            Err(PolyError::SpaceMismatch(format!(
                "{what}: {} vs {}",
                self.describe(),
                other.describe()
            )))
        }
    }
    /// `Ok(())` when `params` has one value per parameter, else `Invalid`
    /// (for the `*_for(params)` questions, which fix the parameters).
    pub fn check_params(&self, params: &[i64]) -> PolyResult<()> {
        if params.len() != self.n_params() {
            return Err(PolyError::Invalid(format!(
                "{} parameter values given, the space {} has {}",
                params.len(),
                self.describe(),
                self.n_params()
            )));
        }
        Ok(())
    }
    /// A short description used in error messages.
    pub fn describe(&self) -> String {
        let tup = |t: &Tuple| {
            format!(
                "{}[{}]",
                t.name.clone().unwrap_or_default(),
                t.dims.join(", ")
            )
        };
        let body = match &self.input {
            Some(i) => format!("{} -> {}", tup(i), tup(&self.output)),
            None => tup(&self.output),
        };
        format!("[{}] -> {{ {} }}", self.params.join(", "), body)
    }
}
