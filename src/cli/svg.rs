//! The SVG rendering of a [`Picture`]: integer points of a 2-D domain
//! (or a 2-D slice), its faces as segments with their constraints, the
//! faces a simplification added and subtracted, and the reuse vector as an
//! arrow, with axes and caption lines (the picture of the SDR paper's
//! Figure 1).
//!
//! Owns the layout and the SVG text (floating point only for screen
//! coordinates). Must not know where the picture comes from: no `poly`,
//! no IR; `draw` computes every point and segment exactly and hands them
//! over as integers.

use std::fmt::Write;

/// A point of the drawing plane (first drawn dimension, second drawn
/// dimension; the second is 0 for a 1-D domain).
pub type Pt = (i64, i64);

/// A face: the integer points on it (the segment joins the first and the
/// last, which are its extreme points) and its constraint as text.
#[derive(Debug, Clone)]
pub struct Segment {
    pub points: Vec<Pt>,
    pub label: String,
}

/// Everything a domain picture shows, in integer coordinates.
#[derive(Debug, Clone, Default)]
pub struct Picture {
    pub title: String,
    /// Names of the horizontal and the vertical axis (`None`: 1-D).
    pub x_name: String,
    pub y_name: Option<String>,
    pub points: Vec<Pt>,
    /// The faces of the domain (constraint lines or facets).
    pub faces: Vec<Segment>,
    /// The added shell's pieces (SDR's added faces).
    pub added: Vec<Segment>,
    /// The subtracted shell's pieces.
    pub subtracted: Vec<Segment>,
    /// The reuse vector as an arrow `from -> to`.
    pub reuse: Option<(Pt, Pt)>,
    /// Caption lines under the drawing.
    pub notes: Vec<String>,
}

const CELL: f64 = 48.0;
const LEFT: f64 = 130.0;
const TOP: f64 = 56.0;
const RIGHT: f64 = 150.0;
const BOTTOM: f64 = 68.0;
const LINE: f64 = 18.0;
const ADD: &str = "#1a9850";
const SUB: &str = "#d73027";
const REUSE: &str = "#2166ac";

/// The SVG document of `p`.
pub fn render(p: &Picture) -> String {
    let mut all: Vec<Pt> = p.points.clone();
    for s in p.faces.iter().chain(&p.added).chain(&p.subtracted) {
        all.extend(s.points.iter().copied());
    }
    if let Some((a, b)) = p.reuse {
        all.push(a);
        all.push(b);
    }
    let (x0, x1) = range(all.iter().map(|q| q.0));
    let (y0, y1) = range(all.iter().map(|q| q.1));
    let w_plot = (x1 - x0) as f64 * CELL;
    let h_plot = (y1 - y0) as f64 * CELL;
    // Room for the longest caption line (about 7 px per character).
    let longest = p
        .notes
        .iter()
        .map(|n| n.chars().count() as f64 * 7.0)
        .chain(std::iter::once(p.title.chars().count() as f64 * 9.0))
        .fold(0.0, f64::max);
    let width = (LEFT + w_plot + RIGHT).max(longest + 32.0);
    let caption_top = TOP + h_plot + BOTTOM;
    let height = caption_top + LINE * (p.notes.len() as f64) + 12.0;
    let at = |q: Pt| -> (f64, f64) {
        (
            LEFT + (q.0 - x0) as f64 * CELL,
            TOP + (y1 - q.1) as f64 * CELL,
        )
    };
    let centre = if p.points.is_empty() {
        at((x0, y0))
    } else {
        let n = p.points.len() as f64;
        let (sx, sy) = p.points.iter().fold((0.0, 0.0), |(sx, sy), &q| {
            let (px, py) = at(q);
            (sx + px, sy + py)
        });
        (sx / n, sy / n)
    };
    let mut s = String::new();
    let _ = writeln!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" font-family=\"Helvetica, Arial, sans-serif\">",
        fmt(width),
        fmt(height),
        fmt(width),
        fmt(height)
    );
    let _ = writeln!(
        s,
        "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"4\" markerHeight=\"4\" orient=\"auto-start-reverse\"><path d=\"M 0 0 L 10 5 L 0 10 z\" fill=\"{REUSE}\"/></marker></defs>"
    );
    let _ = writeln!(
        s,
        "<rect x=\"0\" y=\"0\" width=\"{}\" height=\"{}\" fill=\"white\"/>",
        fmt(width),
        fmt(height)
    );
    text(&mut s, 16.0, 28.0, &p.title, 16.0, "start", "black");
    // Axes: ticks at every integer of the box.
    let (ax, ay) = (LEFT - 78.0, TOP + h_plot + 36.0);
    let _ = writeln!(s, "<g stroke=\"#bbbbbb\" stroke-width=\"1\">");
    line(&mut s, (LEFT, ay - 8.0), (LEFT + w_plot, ay - 8.0));
    if p.y_name.is_some() {
        line(&mut s, (ax + 8.0, TOP), (ax + 8.0, TOP + h_plot));
    }
    let _ = writeln!(s, "</g>");
    for x in x0..=x1 {
        let (px, _) = at((x, y0));
        text(
            &mut s,
            px,
            ay + 8.0,
            &x.to_string(),
            11.0,
            "middle",
            "#555555",
        );
    }
    let name_x = LEFT + w_plot + 24.0;
    text(&mut s, name_x, ay + 8.0, &p.x_name, 13.0, "start", "black");
    if let Some(yn) = &p.y_name {
        for y in y0..=y1 {
            let (_, py) = at((x0, y));
            text(
                &mut s,
                ax - 4.0,
                py + 4.0,
                &y.to_string(),
                11.0,
                "end",
                "#555555",
            );
        }
        text(&mut s, ax + 8.0, TOP - 14.0, yn, 13.0, "middle", "black");
    }
    // Faces of the domain.
    let _ = writeln!(s, "<g stroke=\"#888888\" stroke-width=\"1.5\">");
    for f in &p.faces {
        segment(&mut s, f, &at, None);
    }
    let _ = writeln!(s, "</g>");
    // A face that is also an added or subtracted face is labelled in
    // that colour only.
    for f in &p.faces {
        let shell = p.added.iter().chain(&p.subtracted);
        if !shell.clone().any(|g| g.label == f.label) {
            label(&mut s, f, &at, centre, "#555555");
        }
    }
    // Added and subtracted faces: thick translucent bands with rings.
    for (shell, color) in [(&p.added, ADD), (&p.subtracted, SUB)] {
        if shell.is_empty() {
            continue;
        }
        let _ = writeln!(
            s,
            "<g stroke=\"{color}\" stroke-width=\"14\" stroke-linecap=\"round\" stroke-opacity=\"0.35\" fill=\"{color}\" fill-opacity=\"0.35\">"
        );
        for f in shell.iter() {
            segment(&mut s, f, &at, Some(7.0));
        }
        let _ = writeln!(s, "</g>");
        for f in shell.iter() {
            label(&mut s, f, &at, centre, color);
        }
    }
    // The integer points.
    let _ = writeln!(s, "<g fill=\"black\">");
    for &q in &p.points {
        let (cx, cy) = at(q);
        let _ = writeln!(s, "<circle cx=\"{}\" cy=\"{}\" r=\"4\"/>", fmt(cx), fmt(cy));
    }
    let _ = writeln!(s, "</g>");
    // The reuse vector.
    if let Some((a, b)) = p.reuse {
        let (ax, ay) = at(a);
        let (bx, by) = at(b);
        let _ = writeln!(
            s,
            "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{REUSE}\" stroke-width=\"2.5\" marker-end=\"url(#arrow)\"/>",
            fmt(ax),
            fmt(ay),
            fmt(bx),
            fmt(by)
        );
        text(
            &mut s,
            (ax + bx) / 2.0 + 6.0,
            (ay + by) / 2.0 - 8.0,
            "r",
            14.0,
            "start",
            REUSE,
        );
    }
    for (k, n) in p.notes.iter().enumerate() {
        let color = if n.starts_with("added") {
            ADD
        } else if n.starts_with("subtracted") {
            SUB
        } else if n.starts_with("reuse") {
            REUSE
        } else {
            "black"
        };
        text(
            &mut s,
            16.0,
            caption_top + LINE * k as f64,
            n,
            12.0,
            "start",
            color,
        );
    }
    s.push_str("</svg>\n");
    s
}

/// The smallest and largest value (0, 0 when there is none).
fn range(v: impl Iterator<Item = i64>) -> (i64, i64) {
    let mut lo: Option<i64> = None;
    let mut hi: Option<i64> = None;
    for x in v {
        lo = Some(lo.map_or(x, |l| l.min(x)));
        hi = Some(hi.map_or(x, |h| h.max(x)));
    }
    (lo.unwrap_or(0), hi.unwrap_or(0))
}

/// A segment from its first to its last point (a dot when they are the
/// same; radius `dot` or 3).
fn segment(s: &mut String, f: &Segment, at: &dyn Fn(Pt) -> (f64, f64), dot: Option<f64>) {
    let (Some(&a), Some(&b)) = (f.points.first(), f.points.last()) else {
        return;
    };
    let (ax, ay) = at(a);
    let (bx, by) = at(b);
    if a == b {
        let _ = writeln!(
            s,
            "<circle cx=\"{}\" cy=\"{}\" r=\"{}\" stroke=\"none\"/>",
            fmt(ax),
            fmt(ay),
            fmt(dot.unwrap_or(3.0))
        );
    } else {
        line(s, (ax, ay), (bx, by));
    }
}

/// A face's label beside its middle, on the side away from `centre`
/// (the centre of the domain's points, in screen coordinates).
fn label(
    s: &mut String,
    f: &Segment,
    at: &dyn Fn(Pt) -> (f64, f64),
    centre: (f64, f64),
    color: &str,
) {
    let (Some(&a), Some(&b)) = (f.points.first(), f.points.last()) else {
        return;
    };
    if f.label.is_empty() {
        return;
    }
    let (ax, ay) = at(a);
    let (bx, by) = at(b);
    let (mx, my) = ((ax + bx) / 2.0, (ay + by) / 2.0);
    // The unit normal of the segment pointing away from the centre (for a
    // single point: the direction from the centre).
    let (mut nx, mut ny) = if a == b {
        (mx - centre.0, my - centre.1)
    } else {
        (-(by - ay), bx - ax)
    };
    if (mx - centre.0) * nx + (my - centre.1) * ny < 0.0 {
        nx = -nx;
        ny = -ny;
    }
    let len = (nx * nx + ny * ny).sqrt();
    let (nx, ny) = if len > 0.0 {
        (nx / len, ny / len)
    } else {
        (0.0, -1.0)
    };
    let anchor = if nx > 0.3 {
        "start"
    } else if nx < -0.3 {
        "end"
    } else {
        "middle"
    };
    text(
        s,
        mx + 14.0 * nx,
        my + 14.0 * ny + 4.0,
        &f.label,
        11.0,
        anchor,
        color,
    );
}

fn line(s: &mut String, a: (f64, f64), b: (f64, f64)) {
    let _ = write!(
        s,
        "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"",
        fmt(a.0),
        fmt(a.1),
        fmt(b.0),
        fmt(b.1)
    );
    s.push_str("/>\n");
}

fn text(s: &mut String, x: f64, y: f64, t: &str, size: f64, anchor: &str, fill: &str) {
    let _ = writeln!(
        s,
        "<text x=\"{}\" y=\"{}\" font-size=\"{}\" text-anchor=\"{anchor}\" fill=\"{fill}\">{}</text>",
        fmt(x),
        fmt(y),
        fmt(size),
        escape(t)
    );
}

/// A coordinate with at most one decimal (stable text for snapshots).
fn fmt(v: f64) -> String {
    let r = (v * 10.0).round() / 10.0;
    if r.fract() == 0.0 {
        format!("{}", r as i64)
    } else {
        format!("{r:.1}")
    }
}

/// Escapes XML text.
fn escape(t: &str) -> String {
    t.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}
