//! Lowering of calls: built-in functions, random draws (numbered call
//! sites) and `external` functions, with their arity and argument types.
//! Alpha's notations written as calls (`val[e]`, `select`, the n-ary
//! `sum`/`prod`/`and`/`or`/`xor`, which take precedence over an `external`
//! of the same name) are lowered in `expr::notation`.

use super::*;

impl SysCx<'_> {
    pub(super) fn call(
        &mut self,
        func: &ast::Ident,
        args: &[ast::Expr],
        scope: &Scope,
        span: Span,
    ) -> Lowered {
        if let Some(lowered) = self.notation_call(func, args, scope, span) {
            return lowered;
        }
        let kind = builtin_kind(&func.name);
        let ext = self.g.externals.iter().position(|e| e.name == func.name);
        if kind.is_none() && ext.is_none() {
            let msg = if self.var_map.contains_key(&func.name) {
                format!(
                    "`{}` is a variable, not a function (use `[ ]` to read it)",
                    func.name
                )
            } else {
                format!("unknown function `{}`", func.name)
            };
            self.err(msg, func.span, "not a built-in or declared external");
            return None;
        }
        // Pre-order numbering of stochastic call sites: the call's own
        // ordinal is taken before its arguments'.
        let site = match kind {
            Some(CallKind::Random(_)) => Some(self.site()),
            _ => None,
        };
        let lowered = self.lower_each(args, |cx, a| cx.expr(a, scope))?;
        let arity_err = |cx: &mut Self, want: String| {
            cx.err(
                format!(
                    "`{}` takes {want} argument(s), {} given",
                    func.name,
                    args.len()
                ),
                span,
                "wrong number of arguments",
            );
            None
        };
        let numeric_args = |cx: &mut Self, xs: &[Expr]| {
            cx.require_each(Need::Number, xs, &format!("`{}` needs numbers", func.name))
        };
        match (kind, ext) {
            (Some(CallKind::Builtin(b)), _) => {
                let (min, max): (usize, usize) = match b {
                    Builtin::Pow => (2, 2),
                    Builtin::Max | Builtin::Min => (1, usize::MAX),
                    _ => (1, 1),
                };
                if lowered.len() < min || lowered.len() > max {
                    let want = if max == usize::MAX {
                        format!("at least {min}")
                    } else {
                        min.to_string()
                    };
                    return arity_err(self, want);
                }
                let ty = match b {
                    Builtin::ToFloat => ElemType::Float,
                    Builtin::ToInt => ElemType::Int,
                    Builtin::Max | Builtin::Min => {
                        numeric_args(self, &lowered)?;
                        if lowered.iter().all(|x| x.ty == ElemType::Int) {
                            ElemType::Int
                        } else {
                            ElemType::Float
                        }
                    }
                    _ => {
                        numeric_args(self, &lowered)?;
                        ElemType::Float
                    }
                };
                Some(mk(ExprKind::Builtin(b, lowered), ty, span))
            }
            (Some(CallKind::Random(d)), _) => {
                let want = d.arity();
                if lowered.len() != want {
                    return arity_err(self, want.to_string());
                }
                numeric_args(self, &lowered)?;
                let ty = d.result();
                let site = site.unwrap_or(CallSite {
                    var: self.cur_var,
                    ordinal: 0,
                });
                Some(mk(ExprKind::Random(d, lowered, site), ty, span))
            }
            (None, Some(k)) => {
                let want = self.g.externals[k].arity;
                if lowered.len() != want {
                    return arity_err(self, want.to_string());
                }
                numeric_args(self, &lowered)?;
                Some(mk(ExprKind::External(k, lowered), ElemType::Float, span))
            }
            (None, None) => None,
        }
    }
}
