//! What a caller gives a system before any engine runs it: parameter
//! values (by name or in order) and input arrays by name. One check for
//! every engine (the interpreter and the compiled code), with one error
//! type, so that neither engine borrows the other's.

use std::collections::HashMap;

use thiserror::Error;

use super::types::{System, VarKind};
use crate::poly::ParamsRefused;

/// Parameters or inputs a system refuses.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum InputError {
    /// A wrong number of values, an unknown or a missing parameter name.
    #[error("parameters: {0}")]
    Params(String),
    /// The values (`N=3, M=1`) are outside the context of the system.
    #[error("parameters {0} are outside the context of system {1}")]
    OutsideContext(String, String),
    #[error("missing input {0}")]
    MissingInput(String),
    #[error("{0} is not an input of the system")]
    NotAnInput(String),
}

impl System {
    /// Parameter values in the system's order from a name → value map;
    /// every parameter must be given and no other name.
    pub fn resolve_params(&self, values: &HashMap<String, i64>) -> Result<Vec<i64>, InputError> {
        let mut unknown: Vec<&String> =
            values.keys().filter(|k| !self.params.contains(k)).collect();
        unknown.sort();
        if let Some(k) = unknown.first() {
            return Err(InputError::Params(format!(
                "{k} is not a parameter of {} (parameters: {})",
                self.name,
                self.params.join(", ")
            )));
        }
        self.params
            .iter()
            .map(|p| {
                values
                    .get(p)
                    .copied()
                    .ok_or_else(|| InputError::Params(format!("missing value of parameter {p}")))
            })
            .collect()
    }

    /// One value per parameter, inside the system's context
    /// ([`crate::poly::Set::check_param_values`]: structural, no solver).
    pub fn check_params(&self, values: &[i64]) -> Result<(), InputError> {
        match self.context.check_param_values(values) {
            Ok(()) => Ok(()),
            Err(ParamsRefused::Count { expected, got }) => Err(InputError::Params(format!(
                "system {} has {expected} parameters, {got} values given",
                self.name,
            ))),
            Err(ParamsRefused::OutsideContext) => {
                let shown: Vec<String> = self
                    .params
                    .iter()
                    .zip(values)
                    .map(|(n, v)| format!("{n}={v}"))
                    .collect();
                Err(InputError::OutsideContext(
                    shown.join(", "),
                    self.name.clone(),
                ))
            }
        }
    }

    /// Every given name is an input of the system.
    pub fn check_input_names<'a>(
        &self,
        names: impl IntoIterator<Item = &'a String>,
    ) -> Result<(), InputError> {
        for name in names {
            match self.var_by_name(name) {
                Some(v) if self.vars[v].kind == VarKind::Input => {}
                _ => return Err(InputError::NotAnInput(name.clone())),
            }
        }
        Ok(())
    }
}
