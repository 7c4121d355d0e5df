//! `alphac optimize --explain`: the optimizer's decisions as text, one per
//! line, in the order they were taken, each with the complexity after it.
//!
//! Owns the rendering only; the decisions come from `sdr::optimize`.

use crate::ir::Program;
use crate::sdr::complexity::report_systems;
use crate::sdr::{Decision, Optimized};
use std::collections::HashMap;
use std::fmt::Write;

/// One line per decision:
/// `[system] var: transformation applied|declined — reason; detail;
/// face dim d; reuse vector (r); complexity after: O(...)`.
/// A decision without its own complexity shows the variable's final
/// complexity, marked `(final)`. Then the budget notes and the totals.
pub fn explain(original: &Program, o: &Optimized) -> String {
    let report = report_systems(original, o, None).ok();
    let finals: HashMap<&str, String> = report
        .as_ref()
        .map(|r| {
            r.lines
                .iter()
                .map(|l| (l.var.as_str(), l.after.to_string()))
                .collect()
        })
        .unwrap_or_default();
    let mut out = String::new();
    if o.decisions.is_empty() {
        out.push_str("no reduction to simplify\n");
    }
    for (k, d) in o.decisions.iter().enumerate() {
        let root = o
            .origin
            .iter()
            .find_map(|m| m.get(&d.var))
            .map(String::as_str)
            .unwrap_or(d.var.as_str());
        let after = match &d.complexity_after {
            Some(c) => c.clone(),
            None => match finals.get(root) {
                Some(c) => format!("{c} (final, for `{root}`)"),
                None => "unknown".to_string(),
            },
        };
        let _ = writeln!(out, "{:>3}. {}", k + 1, line(d, &after));
    }
    if let Some(r) = report {
        let _ = writeln!(out, "total: {} -> {}", r.before, r.after);
    }
    for n in &o.notes {
        let _ = writeln!(out, "note: {n}");
    }
    out
}

fn line(d: &Decision, after: &str) -> String {
    let mut s = format!(
        "[{}] {}: {} {}",
        d.system,
        d.var,
        d.kind.name(),
        if d.applied { "applied" } else { "declined" }
    );
    if !d.reason.is_empty() && d.reason != "applied" {
        let _ = write!(s, " ({})", d.reason);
    }
    if !d.detail.is_empty() {
        let _ = write!(s, "; {}", d.detail);
    }
    if d.face_dim >= 0 {
        let _ = write!(s, "; face of dimension {}", d.face_dim);
    }
    if let Some(r) = &d.reuse {
        let v: Vec<String> = r.iter().map(i64::to_string).collect();
        let _ = write!(s, "; reuse vector ({})", v.join(", "));
    }
    let _ = write!(s, "; complexity after: {after}");
    s
}
