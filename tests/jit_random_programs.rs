//! Random int/bool loop programs: the JIT (fast and checked variants)
//! against a direct reference evaluator of the loop AST written here —
//! same results, same first run-time error (overflow, division by zero),
//! with lazy `select`, `&&`, `||`, register accumulators, `if`/`else` and
//! accumulations, across unrolled copies.

use alphac::codegen::loop_ast::{
    acc_bin_op, Accumulation, Affine, Array, BinOp, Bound, Dim, Expr, ForLoop, Function, Local,
    LoopVar, ReduceOp, Stmt, UnOp,
};
use alphac::ir::types::{ElemType, Set, Space};
use alphac::jit::{Buffer, ExecError, JitFunction, JitOptions};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

const I: LoopVar = LoopVar(0);

fn at(k: i64) -> Expr {
    Expr::Aff(Affine::var(I).offset(k).expect("small"))
}

fn int_expr() -> impl Strategy<Value = Expr> {
    let leaf = prop_oneof![
        (0i64..4).prop_map(|k| Expr::load(0, vec![at(k)])),
        (0i64..4).prop_map(|k| Expr::load(1, vec![at(k)])),
        prop_oneof![-3i64..=3, Just(i64::MAX), Just(i64::MIN), Just(1i64 << 40)]
            .prop_map(Expr::Int),
        Just(Expr::var(I)),
        Just(Expr::Local(0)),
    ];
    leaf.prop_recursive(4, 32, 3, |inner| {
        let ops = prop_oneof![
            4 => Just(BinOp::Add),
            4 => Just(BinOp::Sub),
            2 => Just(BinOp::Mul),
            1 => Just(BinOp::Div),
            1 => Just(BinOp::Rem),
            1 => Just(BinOp::FloorDiv),
            1 => Just(BinOp::CeilDiv),
            1 => Just(BinOp::Mod),
            4 => Just(BinOp::Min),
            4 => Just(BinOp::Max),
        ];
        let cmp = prop_oneof![
            Just(BinOp::Lt),
            Just(BinOp::Le),
            Just(BinOp::Eq),
            Just(BinOp::Ne),
            Just(BinOp::Gt),
            Just(BinOp::Ge)
        ];
        let cond = (
            cmp,
            inner.clone(),
            inner.clone(),
            0u8..4,
            inner.clone(),
            inner.clone(),
        )
            .prop_map(|(c, a, b, how, x, y)| {
                let first = Expr::bin(c, a, b);
                let second = Expr::bin(BinOp::Lt, x, y);
                match how {
                    0 => first,
                    1 => Expr::bin(BinOp::And, first, second),
                    2 => Expr::bin(BinOp::Or, first, second),
                    _ => Expr::Unary(UnOp::Not, Box::new(first)),
                }
            });
        prop_oneof![
            3 => (ops, inner.clone(), inner.clone()).prop_map(|(o, a, b)| Expr::bin(o, a, b)),
            1 => inner.clone().prop_map(|a| Expr::Unary(UnOp::Neg, Box::new(a))),
            1 => (cond, inner.clone(), inner).prop_map(|(c, a, b)| Expr::select(c, a, b)),
        ]
    })
}

fn stmt() -> impl Strategy<Value = Stmt> {
    let simple = prop_oneof![
        (0i64..4, int_expr()).prop_map(|(k, e)| Stmt::Assign {
            array: 1,
            index: vec![at(k)],
            value: e
        }),
        int_expr().prop_map(|e| Stmt::SetLocal { local: 0, value: e }),
        (
            prop_oneof![
                3 => Just(ReduceOp::Add),
                1 => Just(ReduceOp::Mul),
                3 => Just(ReduceOp::Max),
                3 => Just(ReduceOp::Min)
            ],
            int_expr()
        )
            .prop_map(|(op, e)| Stmt::Accumulate(Accumulation {
                array: 2,
                index: vec![Expr::Int(0)],
                op,
                value: e
            })),
    ];
    simple.prop_recursive(2, 6, 2, |inner| {
        (int_expr(), int_expr(), inner.clone(), inner).prop_map(|(a, b, t, e)| Stmt::If {
            cond: Expr::bin(BinOp::Le, a, b),
            then: vec![t],
            els: vec![e],
        })
    })
}

fn program(body: Vec<Stmt>) -> Function {
    let arr = |name: &str, ext: Affine| Array {
        name: name.into(),
        ty: ElemType::Int,
        dims: vec![Dim {
            lower: Affine::cst(0),
            extent: ext,
        }],
        domain: None,
    };
    let n4 = Affine::param(0).offset(4).expect("small");
    Function {
        name: "random".into(),
        params: vec!["N".into()],
        context: Set::universe(Space::set(&["N"], &[] as &[&str])),
        arrays: vec![arr("X", n4.clone()), arr("Y", n4), arr("Z", Affine::cst(1))],
        externals: vec![],
        loop_vars: vec!["i".into()],
        locals: vec![Local {
            name: "s".into(),
            ty: ElemType::Int,
        }],
        body: vec![Stmt::For(ForLoop {
            var: I,
            parallel: false,
            lower: Bound::aff(Affine::cst(0)),
            upper: Bound::aff(Affine::param(0).offset(-1).expect("small")),
            body,
        })],
    }
}

// ---------------------------------------------------------------------------
// The reference evaluator (ints and bools only).

#[derive(Debug, Clone, Copy, PartialEq)]
enum V {
    I(i64),
    B(bool),
}

struct Ref {
    arrays: Vec<Vec<i64>>,
    local: i64,
    i: i64,
    n: i64,
}

fn int(v: V) -> i64 {
    match v {
        V::I(x) => x,
        V::B(b) => i64::from(b),
    }
}
fn boolean(v: V) -> bool {
    matches!(v, V::B(true))
}

impl Ref {
    fn aff(&self, a: &Affine) -> i64 {
        a.eval(&[self.i], &[self.n]).expect("small affine")
    }
    fn idx(&self, index: &[Expr]) -> usize {
        match &index[0] {
            Expr::Aff(a) => self.aff(a) as usize,
            Expr::Int(k) => *k as usize,
            _ => unreachable!("affine indices only"),
        }
    }
    fn binop(op: BinOp, a: i64, b: i64) -> Result<V, ExecError> {
        let ovf = ExecError::Overflow;
        let div_checks = || {
            if b == 0 {
                Err(ExecError::DivisionByZero)
            } else if a == i64::MIN && b == -1 {
                Err(ExecError::Overflow)
            } else {
                Ok(())
            }
        };
        Ok(match op {
            BinOp::Add => V::I(a.checked_add(b).ok_or(ovf)?),
            BinOp::Sub => V::I(a.checked_sub(b).ok_or(ovf)?),
            BinOp::Mul => V::I(a.checked_mul(b).ok_or(ovf)?),
            BinOp::Div => {
                div_checks()?;
                V::I(a / b)
            }
            BinOp::Rem => {
                div_checks()?;
                V::I(a % b)
            }
            BinOp::FloorDiv | BinOp::CeilDiv | BinOp::Mod => {
                div_checks()?;
                // Exact in i128: floor(a/b) = q or q − 1 where q truncates.
                let (a2, b2) = (i128::from(a), i128::from(b));
                let q = a2 / b2;
                let floor = if (a2 - q * b2) != 0 && ((a2 < 0) != (b2 < 0)) {
                    q - 1
                } else {
                    q
                };
                let ceil = if (a2 - q * b2) != 0 && ((a2 < 0) == (b2 < 0)) {
                    q + 1
                } else {
                    q
                };
                let r = match op {
                    BinOp::FloorDiv => floor,
                    BinOp::CeilDiv => ceil,
                    _ => a2 - b2 * floor,
                };
                V::I(i64::try_from(r).expect("fits"))
            }
            BinOp::Min => V::I(a.min(b)),
            BinOp::Max => V::I(a.max(b)),
            BinOp::Lt => V::B(a < b),
            BinOp::Le => V::B(a <= b),
            BinOp::Gt => V::B(a > b),
            BinOp::Ge => V::B(a >= b),
            BinOp::Eq => V::B(a == b),
            BinOp::Ne => V::B(a != b),
            BinOp::And | BinOp::Or => unreachable!("lazy"),
        })
    }
    fn expr(&self, e: &Expr) -> Result<V, ExecError> {
        Ok(match e {
            Expr::Int(k) => V::I(*k),
            Expr::Bool(b) => V::B(*b),
            Expr::Aff(a) => V::I(self.aff(a)),
            Expr::Local(_) => V::I(self.local),
            Expr::Load { array, index } => V::I(self.arrays[*array][self.idx(index)]),
            Expr::Unary(UnOp::Neg, a) => V::I(
                int(self.expr(a)?)
                    .checked_neg()
                    .ok_or(ExecError::Overflow)?,
            ),
            Expr::Unary(UnOp::Not, a) => V::B(!boolean(self.expr(a)?)),
            Expr::Binary(BinOp::And, a, b) => {
                V::B(boolean(self.expr(a)?) && boolean(self.expr(b)?))
            }
            Expr::Binary(BinOp::Or, a, b) => V::B(boolean(self.expr(a)?) || boolean(self.expr(b)?)),
            Expr::Binary(op, a, b) => {
                let x = int(self.expr(a)?);
                let y = int(self.expr(b)?);
                Ref::binop(*op, x, y)?
            }
            Expr::Select(c, a, b) => {
                if boolean(self.expr(c)?) {
                    self.expr(a)?
                } else {
                    self.expr(b)?
                }
            }
            _ => unreachable!("not generated"),
        })
    }
    fn stmt(&mut self, s: &Stmt) -> Result<(), ExecError> {
        match s {
            Stmt::Assign {
                array,
                index,
                value,
            } => {
                let v = int(self.expr(value)?);
                let k = self.idx(index);
                self.arrays[*array][k] = v;
            }
            Stmt::SetLocal { value, .. } => self.local = int(self.expr(value)?),
            Stmt::Accumulate(Accumulation {
                array,
                index,
                op,
                value,
            }) => {
                let k = self.idx(index);
                let old = self.arrays[*array][k];
                let v = int(self.expr(value)?);
                self.arrays[*array][k] = int(Ref::binop(acc_bin_op(*op), old, v)?);
            }
            Stmt::If { cond, then, els } => {
                let body = if boolean(self.expr(cond)?) { then } else { els };
                for s in body {
                    self.stmt(s)?;
                }
            }
            _ => unreachable!("not generated"),
        }
        Ok(())
    }
}

#[test]
fn random_int_programs_match_the_reference() {
    let strat = (
        prop::collection::vec(stmt(), 1..4),
        0i64..=11,
        prop::collection::vec(prop_oneof![4 => -5i64..=5, 1 => any::<i64>()], 15),
    );
    let mut runner = TestRunner::new(Config::with_cases(400));
    let outcomes = std::cell::Cell::new((0u32, 0u32));
    runner
        .run(&strat, |(body, n, xs)| {
            let f = program(body.clone());
            let nu = n as usize;
            let x = xs[..nu + 4].to_vec();
            let mut r = Ref {
                arrays: vec![x.clone(), vec![0; nu + 4], vec![1]],
                local: 0,
                i: 0,
                n,
            };
            let mut want = Ok(());
            'outer: for i in 0..n {
                r.i = i;
                for s in &body {
                    if let Err(e) = r.stmt(s) {
                        want = Err(e);
                        break 'outer;
                    }
                }
            }
            let (ok, err) = outcomes.get();
            outcomes.set(if want.is_ok() {
                (ok + 1, err)
            } else {
                (ok, err + 1)
            });
            for checked in [false, true] {
                let jit = JitFunction::compile_with(&f, JitOptions { checked }).expect("compiles");
                let mut bufs = vec![
                    Buffer::Int(x.clone()),
                    Buffer::Int(vec![0; nu + 4]),
                    Buffer::Int(vec![1]),
                ];
                let got = jit.run(&[n], &mut bufs);
                prop_assert_eq!(&got, &want, "checked = {}\n{}", checked, f.to_c());
                if want.is_ok() {
                    for (b, w) in bufs.iter().zip(&r.arrays) {
                        prop_assert_eq!(b.as_int().expect("int"), &w[..], "{}", f.to_c());
                    }
                }
            }
            Ok(())
        })
        .expect("property holds");
    let (ok, err) = outcomes.get();
    assert!(ok > 50 && err > 20, "ok/err outcomes {ok}/{err}");
}
