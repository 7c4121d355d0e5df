//! Source files, spans and diagnostics shared by every stage that reports
//! user errors (syntax, ir, interp, runtime, cli). Rendering uses
//! `codespan-reporting`: `file:line:col`, the source line and a caret.
//!
//! Must not know about any particular stage: a stage builds `Diagnostic`
//! values; the CLI renders them.

use codespan_reporting::diagnostic::{Diagnostic as CsDiagnostic, Label};
use codespan_reporting::files::SimpleFile;
use codespan_reporting::term::{self, termcolor::NoColor, Config};

/// A byte range `[start, end)` into one source text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

impl Span {
    pub fn new(start: usize, end: usize) -> Span {
        Span { start, end }
    }
    /// The smallest span covering both.
    pub fn join(self, other: Span) -> Span {
        Span {
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }
}

/// A named source text.
#[derive(Debug, Clone)]
pub struct SourceFile {
    pub name: String,
    pub text: String,
}

impl SourceFile {
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> SourceFile {
        SourceFile {
            name: name.into(),
            text: text.into(),
        }
    }

    /// 1-based (line, column) of a byte offset (column counts characters).
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let before = &self.text[..offset];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map(|p| p + 1).unwrap_or(0);
        let col = before[line_start..].chars().count() + 1;
        (line, col)
    }
}

/// Severity of a diagnostic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    Error,
    Warning,
}

/// One user-facing message: a primary location, optional secondary
/// locations and notes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub severity: Severity,
    pub message: String,
    /// The primary location (absent for errors with no source position,
    /// such as a missing input file).
    pub span: Option<Span>,
    /// Text shown under the caret of the primary location.
    pub label: String,
    /// Secondary locations with their text.
    pub secondary: Vec<(Span, String)>,
    pub notes: Vec<String>,
}

impl Diagnostic {
    pub fn error(message: impl Into<String>, span: Span) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            message: message.into(),
            span: Some(span),
            label: String::new(),
            secondary: Vec::new(),
            notes: Vec::new(),
        }
    }
    /// An error with no source location.
    pub fn error_nowhere(message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            message: message.into(),
            span: None,
            label: String::new(),
            secondary: Vec::new(),
            notes: Vec::new(),
        }
    }
    pub fn with_label(mut self, label: impl Into<String>) -> Diagnostic {
        self.label = label.into();
        self
    }
    pub fn with_secondary(mut self, span: Span, text: impl Into<String>) -> Diagnostic {
        self.secondary.push((span, text.into()));
        self
    }
    pub fn with_note(mut self, note: impl Into<String>) -> Diagnostic {
        self.notes.push(note.into());
        self
    }

    /// Renders as plain text (no colour): `error: msg`, ` --> file:line:col`,
    /// the source line and a caret, then notes.
    pub fn render(&self, file: &SourceFile) -> String {
        render_all(std::slice::from_ref(self), file)
    }

    /// One-line form `file:line:col: error: message` (for logs and tests).
    pub fn one_line(&self, file: &SourceFile) -> String {
        match self.span {
            Some(s) => {
                let (l, c) = file.line_col(s.start);
                format!("{}:{}:{}: error: {}", file.name, l, c, self.message)
            }
            None => format!("{}: error: {}", file.name, self.message),
        }
    }
}

/// Renders several diagnostics of one file, in order, as plain text.
pub fn render_all(diags: &[Diagnostic], file: &SourceFile) -> String {
    let files = SimpleFile::new(file.name.clone(), file.text.clone());
    let mut out = NoColor::new(Vec::new());
    let config = Config::default();
    for d in diags {
        let mut cs = match d.severity {
            Severity::Error => CsDiagnostic::error(),
            Severity::Warning => CsDiagnostic::warning(),
        }
        .with_message(d.message.clone());
        let mut labels = Vec::new();
        if let Some(s) = d.span {
            let s = clamp(s, file.text.len());
            labels.push(Label::primary((), s.start..s.end).with_message(d.label.clone()));
        }
        for (s, t) in &d.secondary {
            let s = clamp(*s, file.text.len());
            labels.push(Label::secondary((), s.start..s.end).with_message(t.clone()));
        }
        cs = cs.with_labels(labels).with_notes(d.notes.clone());
        // Writing into an in-memory buffer cannot fail for I/O reasons; a
        // rendering error (span outside the file) is prevented by `clamp`.
        if term::emit(&mut out, &config, &files, &cs).is_err() {
            return diags
                .iter()
                .map(|d| d.one_line(file))
                .collect::<Vec<_>>()
                .join("\n");
        }
    }
    String::from_utf8_lossy(&out.into_inner()).into_owned()
}

fn clamp(s: Span, len: usize) -> Span {
    let start = s.start.min(len);
    let end = s.end.clamp(start, len);
    Span { start, end }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_location_and_caret() {
        let f = SourceFile::new("a.alpha", "line one\nbad token here\n");
        let d = Diagnostic::error("unexpected token", Span::new(13, 18)).with_label("here");
        let r = d.render(&f);
        assert!(r.contains("a.alpha:2:5"), "{r}");
        assert!(r.contains("^^^^^"), "{r}");
        assert_eq!(d.one_line(&f), "a.alpha:2:5: error: unexpected token");
    }
}
