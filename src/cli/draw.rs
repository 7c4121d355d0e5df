//! `alphac draw`: a variable's domain, or the body domain of the reduction
//! that defines it, as an SVG picture for concrete parameter values: the
//! integer points, the faces, and for a reduction SDR simplified the reuse
//! vector and the faces it added and subtracted (SDR paper, Figure 1).
//! A domain of more than two dimensions is drawn as a 2-D slice
//! (`--slice k=2` fixes `k`).
//!
//! Owns the choice of what to draw and the exact geometry, computed with
//! `poly` (`Set::fix_dims` for slices, `fix_params`, `points`, `faces`,
//! `print::fmt_constraint`); the layout is `svg`'s. The reuse vector and
//! the shells come from the optimizer's decision (`sdr::Shells`). Must not
//! know how the optimizer chose them.

use super::svg::{self, Picture, Pt, Segment};
use super::{optimize_program, run, write_or_print, CliError};
use crate::ir::{self, ExprKind};
use crate::poly::{self, BasicSet, PolyError, Set};
use crate::sdr::{Decision, DecisionKind, Shells};
use std::path::PathBuf;

/// The most cells (of the bounding box of the drawn slice) a picture may
/// have.
const MAX_CELLS: i64 = 2500;

/// Arguments of `alphac draw`.
#[derive(clap::Args, Debug)]
pub struct DrawArgs {
    /// The `.alpha` file.
    pub file: PathBuf,
    /// The system (default: the one named like the file, else the last).
    #[arg(long)]
    pub system: Option<String>,
    /// The variable to draw (a declared variable, or a reduction's local
    /// such as `C_red2`, as `alphac optimize --explain` names them).
    #[arg(long, value_name = "X")]
    pub var: String,
    /// A parameter value, `NAME=VALUE` (repeatable; every parameter).
    #[arg(long = "param", value_name = "NAME=VALUE")]
    pub params: Vec<String>,
    /// Fix a dimension, `DIM=VALUE` (repeatable): all but two dimensions
    /// of a higher-dimensional domain must be fixed.
    #[arg(long = "slice", value_name = "DIM=VALUE")]
    pub slices: Vec<String>,
    /// Draw the variable's own domain even when a reduction defines it.
    #[arg(long)]
    pub domain: bool,
    /// Do not run the optimizer (no reuse vector or shells).
    #[arg(long)]
    pub no_optimize: bool,
    /// Write the SVG to this file instead of standard output.
    #[arg(short, long, value_name = "FILE.svg")]
    pub output: Option<PathBuf>,
}

/// `alphac draw`.
pub fn draw(args: DrawArgs) -> Result<String, CliError> {
    let (_, program) = super::compile_file(&args.file)?;
    let sys = run::default_system(&program, &args.file, args.system.as_deref())?;
    let values = run::parse_params(&args.params, &[sys])?;
    let params = sys
        .resolve_params(&values)
        .map_err(|e| CliError::User(e.to_string()))?;
    sys.check_params(&params)
        .map_err(|e| CliError::User(e.to_string()))?;
    let (normalized, decisions) = if args.no_optimize || args.domain {
        let n = crate::sdr::normalize::normalize(&program)
            .map_err(|e| CliError::Internal(e.to_string()))?;
        (n, Vec::new())
    } else {
        let o = optimize_program(&program)?;
        (o.normalized, o.decisions)
    };
    let nsys = normalized
        .systems
        .iter()
        .find(|s| s.name == sys.name)
        .ok_or_else(|| CliError::Internal(format!("system {} lost by normalization", sys.name)))?;
    let subject = choose(nsys, &args.var, args.domain, &decisions)?;
    let picture = picture(sys, &params, &args.slices, &subject).map_err(|e| match e {
        Failure::User(m) => CliError::User(m),
        Failure::Poly(p) => CliError::User(format!("cannot draw {}: {p}", args.var)),
    })?;
    write_or_print(args.output.as_deref(), svg::render(&picture))
}

/// What is drawn: a set with a description, and the decision about it.
struct Subject<'a> {
    var: String,
    what: &'static str,
    set: Set,
    applied: Option<(&'a [i64], &'a Shells, &'a str)>,
    declined: Option<&'a str>,
}

/// The set to draw for `--var name`: the body of the simplified reduction
/// (the domain SDR worked on), else the body domain of the reduction
/// defining the variable, else the variable's domain.
fn choose<'a>(
    s: &ir::System,
    name: &str,
    domain_only: bool,
    decisions: &'a [Decision],
) -> Result<Subject<'a>, CliError> {
    let Some(id) = s.vars.iter().position(|v| v.name == name) else {
        let names: Vec<&str> = s.vars.iter().map(|v| v.name.as_str()).collect();
        return Err(CliError::User(format!(
            "no variable named {name} in system {} (variables: {})",
            s.name,
            names.join(", ")
        )));
    };
    let mine = |d: &&Decision| {
        d.system == s.name && d.var == name && d.kind == DecisionKind::Simplification
    };
    let applied =
        decisions
            .iter()
            .filter(mine)
            .find_map(|d| match (d.applied, &d.reuse, &d.shells) {
                (true, Some(r), Some(sh)) => Some((r.as_slice(), &**sh, d.detail.as_str())),
                _ => None,
            });
    let declined = decisions
        .iter()
        .filter(mine)
        .find(|d| !d.applied)
        .map(|d| d.reason.as_str());
    let reduction = match s.equation_of(id).map(|e| &e.expr.kind) {
        Some(ExprKind::Reduce(r)) if !domain_only => Some(r.body_domain.clone()),
        _ => None,
    };
    Ok(match (applied, reduction) {
        (Some((r, sh, detail)), _) if !domain_only => Subject {
            var: name.to_string(),
            what: "body domain of its reduction",
            set: Set::from_basic(sh.body.clone()),
            applied: Some((r, sh, detail)),
            declined: None,
        },
        (_, Some(body)) => Subject {
            var: name.to_string(),
            what: "body domain of its reduction",
            set: body,
            applied: None,
            declined,
        },
        _ => Subject {
            var: name.to_string(),
            what: "domain",
            set: s.vars[id].domain.clone(),
            applied: None,
            declined: None,
        },
    })
}

enum Failure {
    User(String),
    Poly(PolyError),
}

impl From<PolyError> for Failure {
    fn from(e: PolyError) -> Self {
        Failure::Poly(e)
    }
}

/// The exact picture of `subject` at `params`, sliced by `slices`.
fn picture(
    sys: &ir::System,
    params: &[i64],
    slices: &[String],
    subject: &Subject,
) -> Result<Picture, Failure> {
    let dims: Vec<String> = subject.set.dims().to_vec();
    let what = format!("{}: {} [{}]", subject.var, subject.what, dims.join(", "));
    // The slice.
    let mut fixed: Vec<(usize, i64)> = Vec::new();
    for item in slices {
        let (k, v) = super::split_assignment(item, "--slice").map_err(|e| match e {
            CliError::User(m) => Failure::User(m),
            other => Failure::User(other.render()),
        })?;
        let Some(pos) = dims.iter().position(|d| *d == k) else {
            return Err(Failure::User(format!(
                "--slice {k}: {k} is not a dimension of {what}"
            )));
        };
        let value: i64 = v
            .parse()
            .map_err(|_| Failure::User(format!("--slice {k}: `{v}` is not an integer")))?;
        if fixed.iter().any(|&(p, _)| p == pos) {
            return Err(Failure::User(format!("--slice {k} given twice")));
        }
        fixed.push((pos, value));
    }
    let kept: Vec<usize> = (0..dims.len())
        .filter(|k| !fixed.iter().any(|&(p, _)| p == *k))
        .collect();
    if kept.len() > 2 {
        let extra: Vec<&str> = kept[..kept.len() - 2]
            .iter()
            .map(|&k| dims[k].as_str())
            .collect();
        return Err(Failure::User(format!(
            "{what} has {} dimensions: fix all but two with --slice (e.g. --slice {}=0)",
            dims.len(),
            extra.join("=0 --slice ")
        )));
    }
    if kept.is_empty() {
        return Err(Failure::User(format!(
            "nothing to draw: {what} has no dimension left to draw"
        )));
    }
    let set = subject.set.fix_dims(&fixed)?.simplify()?;
    let at = |p: &[i64]| -> Pt { (p[0], p.get(1).copied().unwrap_or(0)) };
    let concrete = set.fix_params(params)?;
    if let Some(bbox) = concrete.bounding_box(&[])? {
        let cells = bbox
            .iter()
            .map(|(lo, hi)| hi.saturating_sub(*lo).saturating_add(1))
            .fold(1i64, i64::saturating_mul);
        if cells > MAX_CELLS {
            return Err(Failure::User(format!(
                "{what} spans {cells} cells at these parameters (at most {MAX_CELLS} are drawn): choose smaller values"
            )));
        }
    }
    let points: Vec<Pt> = concrete.points(&[])?.iter().map(|p| at(p)).collect();
    // Faces: the facets of each piece, labelled with their constraint.
    let names: Vec<String> = {
        let mut n = sys.params.clone();
        n.extend(kept.iter().map(|&k| dims[k].clone()));
        n
    };
    let mut faces = Vec::new();
    for piece in set.pieces() {
        let d = piece.dimension()?;
        for f in poly::faces(piece)? {
            if f.dimension()? != d - 1 || d < 1 {
                continue;
            }
            if let Some(seg) = segment(&f, piece, params, &names, at)? {
                faces.push(seg);
            }
        }
    }
    let mut notes = Vec::new();
    let shown: Vec<String> = sys
        .params
        .iter()
        .zip(params)
        .map(|(n, v)| format!("{n} = {v}"))
        .chain(fixed.iter().map(|&(k, v)| format!("{} = {v}", dims[k])))
        .collect();
    let title = if shown.is_empty() {
        what.clone()
    } else {
        format!("{what} at {}", shown.join(", "))
    };
    let mut pic = Picture {
        title,
        x_name: dims[kept[0]].clone(),
        y_name: kept.get(1).map(|&k| dims[k].clone()),
        points,
        faces,
        ..Picture::default()
    };
    match subject.applied {
        Some((r, shells, detail)) => {
            let v: Vec<String> = r.iter().map(i64::to_string).collect();
            notes.push(format!(
                "reuse vector r = ({}) over [{}]",
                v.join(", "),
                dims.join(", ")
            ));
            if !detail.is_empty() {
                notes.push(format!("SDR: {detail}"));
            }
            let body = shells.body.fix_dims(&fixed)?.simplify()?;
            for (list, out, word) in [
                (&shells.added, &mut pic.added, "added"),
                (&shells.subtracted, &mut pic.subtracted, "subtracted"),
            ] {
                let mut labels = Vec::new();
                for q in list {
                    let q = q.fix_dims(&fixed)?.simplify()?;
                    if let Some(seg) = segment(&q, &body, params, &names, at)? {
                        labels.push(seg.label.clone());
                        out.push(seg);
                    }
                }
                notes.push(match (list.is_empty(), labels.is_empty()) {
                    (true, _) => format!("{word} face: none"),
                    (false, true) => format!("{word} face: none in this slice"),
                    (false, false) => format!("{word} face: {}", labels.join("; ")),
                });
            }
            // The arrow: along the drawn dimensions, from the domain's
            // point nearest its centre whose translate is in the domain.
            if fixed.iter().any(|&(k, _)| r[k] != 0) {
                notes.push(
                    "the reuse vector leaves this slice (it changes a fixed dimension)".into(),
                );
            } else {
                let step = at(&kept.iter().map(|&k| r[k]).collect::<Vec<_>>());
                pic.reuse = anchor(&pic.points, step).map(|a| (a, (a.0 + step.0, a.1 + step.1)));
            }
        }
        None => {
            if let Some(why) = subject.declined {
                notes.push(format!("SDR: not simplified ({why})"));
            }
        }
    }
    pic.notes = notes;
    Ok(pic)
}

/// The segment of face `f` of `piece` at `params`: its integer points and
/// the equalities it adds to `piece` (`None` when it has no point there).
fn segment(
    f: &BasicSet,
    piece: &BasicSet,
    params: &[i64],
    names: &[String],
    at: impl Fn(&[i64]) -> Pt,
) -> Result<Option<Segment>, PolyError> {
    let pts: Vec<Pt> = f
        .fix_params(params)?
        .points(&[])?
        .iter()
        .map(|p| at(p))
        .collect();
    if pts.is_empty() {
        return Ok(None);
    }
    let own: Vec<String> = f
        .eqs()
        .iter()
        .filter(|e| {
            let neg: Vec<i64> = e.iter().map(|c| -c).collect();
            !piece.eqs().iter().any(|p| p == *e || *p == neg)
        })
        .map(|e| poly::print::fmt_constraint(e, true, names))
        .collect();
    Ok(Some(Segment {
        points: pts,
        label: own.join(" and "),
    }))
}

/// The point of `points` nearest their centre (then the smallest) whose
/// translate by `step` is also a point; `None` when there is none.
fn anchor(points: &[Pt], step: Pt) -> Option<Pt> {
    if step == (0, 0) || points.is_empty() {
        return None;
    }
    let n = points.len() as i64;
    let cx: i64 = points.iter().map(|p| p.0).sum();
    let cy: i64 = points.iter().map(|p| p.1).sum();
    points
        .iter()
        .filter(|p| points.contains(&(p.0 + step.0, p.1 + step.1)))
        .min_by_key(|p| {
            let dx = p.0 * n - cx;
            let dy = p.1 * n - cy;
            (dx * dx + dy * dy, **p)
        })
        .copied()
}
