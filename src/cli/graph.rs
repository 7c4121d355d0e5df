//! `alphac graph`: a system's reduced dependence graph as Graphviz DOT.
//!
//! Nodes are the polyhedral statements of the augmented program (`deps`):
//! a variable's equation (box), a reduction's accumulation over its body
//! (ellipse), an embedded reduction's completion (diamond), and the input
//! variables that are read (at the top). Edges are the dependence pieces
//! (writer → reader) and the reads of inputs, each labelled with its
//! affine map (`B[i - 1] -> A[i]`: instance `A[i]` reads `B[i - 1]`; `*`
//! for an index the map leaves free, such as a data-dependent one).
//! Statements with the same outer schedule dimension are ranked together
//! (`rank=same`), and every node shows its whole schedule. A variable
//! whose reduction SDR simplified is drawn bold with its reuse vector.
//!
//! Owns the rendering only: statements, dependences and schedules come
//! from `deps` and `schedule`, the decisions from `sdr`, the affine
//! expressions from `poly` (`linalg::solve_each`, `print::fmt_expr`).
//! Must not know how any of them was computed.

use crate::deps::{StmtKind, SystemSchedule};
use crate::ir::{self, VarKind};
use crate::poly::print::fmt_expr;
use crate::poly::{linalg, PolyResult};
use crate::sdr::{Decision, DecisionKind};
use std::collections::BTreeMap;
use std::fmt::Write;

/// The DOT text of system `system` scheduled as `sched`, with the applied
/// simplifications of `decisions` (those of this system) marked.
pub fn dot(
    system: &ir::System,
    sched: &SystemSchedule,
    decisions: &[Decision],
) -> PolyResult<String> {
    let deps = &sched.deps;
    let params = &deps.params;
    let mut out = String::new();
    let _ = writeln!(out, "digraph \"{}\" {{", esc(&system.name));
    let _ = writeln!(
        out,
        "  // Reduced dependence graph of system {}: statements of the augmented program,",
        system.name
    );
    let _ = writeln!(
        out,
        "  // edges writer -> reader labelled `W[f] -> R[t]` (instance R[t] reads W[f]; * = any index)."
    );
    let _ = writeln!(
        out,
        "  graph [rankdir=TB, fontname=\"Helvetica\"];\n  node [fontname=\"Helvetica\"];\n  edge [fontname=\"Helvetica\", fontsize=10];"
    );
    // Inputs read by some statement, in declaration order.
    let mut inputs: Vec<ir::VarId> = deps
        .accesses
        .iter()
        .filter(|a| !a.write && system.vars[a.var].kind == VarKind::Input)
        .map(|a| a.var)
        .collect();
    inputs.sort_unstable();
    inputs.dedup();
    for &v in &inputs {
        let var = &system.vars[v];
        let _ = writeln!(
            out,
            "  in_{v} [shape=note, label=\"{} (input)\\n{}\"];",
            esc(&var.name),
            esc(&var.domain.to_string())
        );
    }
    if !inputs.is_empty() {
        let ids: Vec<String> = inputs.iter().map(|v| format!("in_{v};")).collect();
        let _ = writeln!(out, "  {{ rank=source; {} }}", ids.join(" "));
    }
    // Statements.
    for (k, st) in deps.stmts.iter().enumerate() {
        let var_name = &system.vars[st.var].name;
        let mut names = st.dims.clone();
        names.extend(params.iter().cloned());
        let rows: Vec<String> = sched.schedule.rows[k]
            .iter()
            .map(|r| expr(r, &names))
            .collect();
        let (shape, what) = match st.kind {
            StmtKind::Equation => ("box", format!("equation of {var_name}")),
            StmtKind::Accumulate => ("ellipse", format!("reduction body, in {var_name}")),
            StmtKind::Complete => ("diamond", format!("reduction result, in {var_name}")),
        };
        let mut label = format!(
            "{}[{}]\\n{}\\nschedule [{}]",
            esc(&st.name),
            esc(&st.dims.join(", ")),
            esc(&what),
            esc(&rows.join(", "))
        );
        let mut style = String::new();
        if st.kind == StmtKind::Equation {
            let reuse: Vec<String> = decisions
                .iter()
                .filter(|d| {
                    d.system == system.name
                        && d.var == *var_name
                        && d.kind == DecisionKind::Simplification
                        && d.applied
                })
                .filter_map(|d| d.reuse.as_ref())
                .map(|r| {
                    let v: Vec<String> = r.iter().map(i64::to_string).collect();
                    format!("({})", v.join(", "))
                })
                .collect();
            if !reuse.is_empty() {
                let _ = write!(label, "\\nsimplified: reuse vector {}", reuse.join(", "));
                style = ", style=bold, color=blue".to_string();
            }
        }
        let _ = writeln!(out, "  s{k} [shape={shape}, label=\"{label}\"{style}];");
    }
    // Rank: statements with the same outer schedule dimension.
    let mut ranks: BTreeMap<(usize, String), Vec<usize>> = BTreeMap::new();
    let mut first_of: BTreeMap<String, usize> = BTreeMap::new();
    for (k, st) in deps.stmts.iter().enumerate() {
        let Some(row) = sched.schedule.rows[k].first() else {
            continue;
        };
        let mut names = st.dims.clone();
        names.extend(params.iter().cloned());
        let text = expr(row, &names);
        let first = *first_of.entry(text.clone()).or_insert(k);
        ranks.entry((first, text)).or_default().push(k);
    }
    for ((_, text), members) in &ranks {
        let ids: Vec<String> = members.iter().map(|k| format!("s{k};")).collect();
        let _ = writeln!(
            out,
            "  {{ rank=same; {} }}  // outer schedule dimension: {text}",
            ids.join(" ")
        );
    }
    // Dependences, one edge per distinct label between two statements.
    let mut seen: Vec<(usize, usize, String)> = Vec::new();
    for piece in &deps.model.deps {
        let (s, t) = (piece.source, piece.target);
        let label = dep_label(
            &deps.stmts[s].name,
            &deps.stmts[s].dims,
            &deps.stmts[t].name,
            &deps.stmts[t].dims,
            params,
            &piece.poly.eqs,
        )?;
        let key = (s, t, label);
        if !seen.contains(&key) {
            seen.push(key);
        }
    }
    for (s, t, label) in &seen {
        let _ = writeln!(out, "  s{s} -> s{t} [label=\"{}\"];", esc(label));
    }
    // Reads of inputs.
    let mut reads: Vec<(ir::VarId, usize, String)> = Vec::new();
    for a in deps
        .accesses
        .iter()
        .filter(|a| !a.write && system.vars[a.var].kind == VarKind::Input)
    {
        let st = &deps.stmts[a.stmt];
        let idx: Vec<String> = a
            .map
            .iter()
            .map(|m| match m {
                Some(f) => {
                    let names = crate::poly::print::var_names(f.space());
                    expr(f.row(), &names)
                }
                None => "*".to_string(),
            })
            .collect();
        let label = format!(
            "{}[{}] -> {}[{}]",
            system.vars[a.var].name,
            idx.join(", "),
            st.name,
            st.dims.join(", ")
        );
        let key = (a.var, a.stmt, label);
        if !reads.contains(&key) {
            reads.push(key);
        }
    }
    for (v, t, label) in &reads {
        let _ = writeln!(
            out,
            "  in_{v} -> s{t} [label=\"{}\", style=dashed];",
            esc(label)
        );
    }
    out.push_str("}\n");
    Ok(out)
}

/// The label of a dependence piece `W[s] -> R[t]` whose equalities are
/// `eqs` (rows over `(s, t, params, 1)`): the writer's indices as
/// functions of the reader's when the equalities determine them all, else
/// the reader's as functions of the writer's when they determine those,
/// else whichever side has more determined indices; an index the
/// equalities leave free is `*`.
fn dep_label(
    w_name: &str,
    w_dims: &[String],
    r_name: &str,
    r_dims: &[String],
    params: &[String],
    eqs: &[Vec<i64>],
) -> PolyResult<String> {
    let (ds, dt) = (w_dims.len(), r_dims.len());
    let n = ds + dt + params.len();
    // Column names: only one side is printed as a function of the other,
    // so the writer's and the reader's dimensions may share names.
    let mut names: Vec<String> = w_dims.to_vec();
    names.extend(r_dims.iter().cloned());
    names.extend(params.iter().cloned());
    let w_of_r = linalg::solve_each(eqs, n, &(0..ds).collect::<Vec<_>>())?;
    let r_of_w = linalg::solve_each(eqs, n, &(ds..ds + dt).collect::<Vec<_>>())?;
    // `solve_each` zeroes the columns of the side solved for: each
    // function reads the other side and the parameters only.
    let count = |v: &[Option<Vec<i64>>]| v.iter().filter(|f| f.is_some()).count();
    let show = |fs: &[Option<Vec<i64>>]| -> String {
        let parts: Vec<String> = fs
            .iter()
            .map(|f| match f {
                Some(row) => expr(row, &names),
                None => "*".to_string(),
            })
            .collect();
        parts.join(", ")
    };
    let (cw, cr) = (count(&w_of_r), count(&r_of_w));
    let writer_side = if cw == ds {
        true
    } else if cr == dt {
        false
    } else {
        cw >= cr
    };
    Ok(if writer_side {
        format!(
            "{w_name}[{}] -> {r_name}[{}]",
            show(&w_of_r),
            r_dims.join(", ")
        )
    } else {
        format!(
            "{w_name}[{}] -> {r_name}[{}]",
            w_dims.join(", "),
            show(&r_of_w)
        )
    })
}

/// An affine row (coefficients of `names`, then the constant) as text.
fn expr(row: &[i64], names: &[String]) -> String {
    let wide: Vec<i128> = row[..=names.len()].iter().map(|&c| i128::from(c)).collect();
    fmt_expr(&wide, names)
}

/// Escapes a string for a double-quoted DOT label.
fn esc(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}
