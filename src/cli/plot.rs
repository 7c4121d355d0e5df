//! `alphac plot`: a sweep trace (the CSV `alphac run --sweeps N --trace
//! T.csv` writes: a header `sweep,NAME,...`, one row per sweep) as an SVG
//! line plot, one series per column, drawn with plotters' SVG backend
//! (text as SVG `<text>`, no font library).
//!
//! Owns reading and checking the trace and the plot's layout. Must not
//! know how the trace was produced.

use super::{write_or_print, CliError};
use plotters::prelude::*;
use std::path::{Path, PathBuf};

/// Arguments of `alphac plot`.
#[derive(clap::Args, Debug)]
pub struct PlotArgs {
    /// The trace (`alphac run ... --sweeps N --trace T.csv`).
    pub trace: PathBuf,
    /// Write the SVG to this file instead of standard output.
    #[arg(short, long, value_name = "FILE.svg")]
    pub output: Option<PathBuf>,
    /// The plot's title (default: the file's name).
    #[arg(long)]
    pub title: Option<String>,
}

/// A trace: the first column's name and values (x), then the series.
#[derive(Debug)]
pub struct Trace {
    pub x_name: String,
    pub x: Vec<f64>,
    pub series: Vec<(String, Vec<f64>)>,
}

/// `alphac plot`.
pub fn plot(args: PlotArgs) -> Result<String, CliError> {
    let text = std::fs::read_to_string(&args.trace)
        .map_err(|e| CliError::User(format!("cannot read {}: {e}", args.trace.display())))?;
    let trace = read_trace(&text, &args.trace)?;
    let title = args.title.unwrap_or_else(|| {
        args.trace
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    });
    let svg = render(&trace, &title).map_err(CliError::Internal)?;
    write_or_print(args.output.as_deref(), svg)
}

/// Parses and checks a trace; errors name the file, the line and the
/// column.
pub fn read_trace(text: &str, path: &Path) -> Result<Trace, CliError> {
    let file = path.display();
    let mut rdr = csv::ReaderBuilder::new()
        .has_headers(true)
        .from_reader(text.as_bytes());
    let header: Vec<String> = rdr
        .headers()
        .map_err(|e| CliError::User(format!("{file}{}", csv_message(&e))))?
        .iter()
        .map(|h| h.trim().to_string())
        .collect();
    if header.len() < 2 || header.iter().any(String::is_empty) {
        return Err(CliError::User(format!(
            "{file}:1: expected a header `sweep,NAME,...` with at least one series, found `{}`",
            header.join(",")
        )));
    }
    let mut x = Vec::new();
    let mut cols: Vec<Vec<f64>> = vec![Vec::new(); header.len() - 1];
    for rec in rdr.records() {
        let rec = rec.map_err(|e| CliError::User(format!("{file}{}", csv_message(&e))))?;
        let line = rec.position().map_or(0, |p| p.line());
        for (k, field) in rec.iter().enumerate() {
            let v: f64 = field.trim().parse().map_err(|_| {
                CliError::User(format!(
                    "{file}:{line}: `{field}` in column {} is not a number",
                    header[k]
                ))
            })?;
            if k == 0 {
                x.push(v);
            } else {
                cols[k - 1].push(v);
            }
        }
    }
    if x.is_empty() {
        return Err(CliError::User(format!(
            "{file}: no sweeps (only the header)"
        )));
    }
    Ok(Trace {
        x_name: header[0].clone(),
        x,
        series: header[1..].iter().cloned().zip(cols).collect(),
    })
}

/// A CSV error as `:LINE: what` (after the file name).
fn csv_message(e: &csv::Error) -> String {
    match e.kind() {
        csv::ErrorKind::UnequalLengths {
            pos,
            expected_len,
            len,
        } => format!(
            ":{}: {len} fields where the header has {expected_len}",
            pos.as_ref().map_or(0, |p| p.line())
        ),
        _ => format!(": {e}"),
    }
}

/// The smallest and largest finite value, widened when they are equal.
fn bounds(v: impl Iterator<Item = f64>) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for x in v.filter(|x| x.is_finite()) {
        lo = lo.min(x);
        hi = hi.max(x);
    }
    if lo > hi {
        return (0.0, 1.0);
    }
    if lo == hi {
        let pad = if lo == 0.0 { 1.0 } else { lo.abs() * 0.05 };
        return (lo - pad, hi + pad);
    }
    let pad = (hi - lo) * 0.05;
    (lo - pad, hi + pad)
}

/// The SVG line plot of a trace (non-finite values are left out).
pub fn render(trace: &Trace, title: &str) -> Result<String, String> {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (800, 480)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let (x0, x1) = bounds(trace.x.iter().copied());
        let (y0, y1) = bounds(trace.series.iter().flat_map(|(_, v)| v.iter().copied()));
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 20))
            .margin(16)
            .x_label_area_size(40)
            .y_label_area_size(80)
            .build_cartesian_2d(x0..x1, y0..y1)
            .map_err(|e| e.to_string())?;
        chart
            .configure_mesh()
            .x_desc(trace.x_name.as_str())
            .x_label_formatter(&|v| format!("{v}"))
            .y_label_formatter(&|v| format!("{v}"))
            .light_line_style(WHITE)
            .draw()
            .map_err(|e| e.to_string())?;
        for (k, (name, ys)) in trace.series.iter().enumerate() {
            let color = Palette99::pick(k).to_rgba();
            let pts: Vec<(f64, f64)> = trace
                .x
                .iter()
                .copied()
                .zip(ys.iter().copied())
                .filter(|(a, b)| a.is_finite() && b.is_finite())
                .collect();
            chart
                .draw_series(LineSeries::new(pts, color.stroke_width(2)))
                .map_err(|e| e.to_string())?
                .label(name.as_str())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
                });
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .position(SeriesLabelPosition::LowerRight)
            .draw()
            .map_err(|e| e.to_string())?;
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(out)
}
