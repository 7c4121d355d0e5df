//! `import`: finding, parsing and lowering the files a program imports,
//! and the names they make visible.
//!
//! Where a file is found (documented in docs/language.md):
//! - `import std.NAME...` is the standard library, embedded in the binary
//!   (`stdlib/NAME.alpha` of the repository, which declares
//!   `package std.NAME`);
//! - any other `import a.b.c` (or `a.b.c.*`) looks next to the importing
//!   file for `a/b/c.alpha`, then `a/b.alpha`, then `a.alpha` (the first
//!   that exists; a file may hold the package itself or a package
//!   containing it), and fails when the importing file has no directory
//!   (source text given directly).
//!
//! What becomes visible: `import a.b.*` makes every system of package
//! `a.b` callable by its simple name; `import a.b.s` the system `s`;
//! `import a.b` (a package) makes its systems callable as `b.s` and as
//! `a.b.s`. A system of a loaded file is always callable by its fully
//! qualified name. Imported files are lowered (and checked) on their own;
//! an error in one is reported at the `import` with the file's own
//! diagnostics as a note. Import cycles between files are errors naming
//! the cycle.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use super::*;
use crate::diag::render_all;

/// The standard library: `(NAME, text)` for `import std.NAME`.
const STDLIB: &[(&str, &str)] = &[
    ("linalg", include_str!("../../../stdlib/linalg.alpha")),
    ("stats", include_str!("../../../stdlib/stats.alpha")),
    ("scan", include_str!("../../../stdlib/scan.alpha")),
];

/// The text of the standard-library file `std.NAME`, if there is one.
pub fn stdlib_file(name: &str) -> Option<&'static str> {
    STDLIB.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}

/// The names of the standard-library files (`std.NAME`).
pub fn stdlib_names() -> Vec<&'static str> {
    STDLIB.iter().map(|(n, _)| *n).collect()
}

/// A checked system of an imported file.
pub(super) struct LibSystem {
    /// Its package path followed by its name.
    pub qname: Vec<String>,
    pub system: System,
    /// The externals of its file (what its `External(k)` calls index).
    pub externals: Vec<External>,
}

impl LibSystem {
    pub(super) fn qualified(&self) -> String {
        self.qname.join(".")
    }
    fn package(&self) -> String {
        self.qname[..self.qname.len().saturating_sub(1)].join(".")
    }
    pub(super) fn simple(&self) -> &str {
        self.qname.last().map_or("", String::as_str)
    }
}

/// A lowered imported file.
pub(super) struct Loaded {
    systems: Vec<Rc<LibSystem>>,
    /// Every package the file declares (dotted), and their prefixes.
    packages: HashSet<String>,
}

/// Where a file being lowered comes from: its directory (for its imports)
/// and the name shown in messages.
#[derive(Clone)]
pub(super) struct Origin {
    pub dir: Option<PathBuf>,
    pub display: String,
    /// The key of the file in the loader (`None` for the root file given as
    /// text).
    pub key: Option<String>,
}

impl Origin {
    /// The origin of a root file: its directory when `src.name` names an
    /// existing file.
    pub(super) fn of_source(src: &SourceFile) -> Origin {
        let path = Path::new(&src.name);
        let dir = if path.is_file() {
            Some(
                path.parent()
                    .map_or_else(|| PathBuf::from("."), Path::to_path_buf),
            )
        } else {
            None
        };
        let key = if path.is_file() {
            std::fs::canonicalize(path)
                .ok()
                .map(|p| p.display().to_string())
        } else {
            None
        };
        Origin {
            dir,
            display: src.name.clone(),
            key,
        }
    }
}

/// Loads imported files once each, detecting import cycles.
#[derive(Default)]
pub(super) struct Loader {
    done: HashMap<String, Rc<Loaded>>,
    /// The files being loaded, outermost first: `(key, display name)`.
    stack: Vec<(String, String)>,
}

/// What an `import` contributes to the importing file's names.
#[derive(Default)]
pub(super) struct Visible {
    /// Simple name → systems reachable by it.
    pub simple: HashMap<String, Vec<Rc<LibSystem>>>,
    /// Fully qualified name → system.
    pub qualified: HashMap<String, Rc<LibSystem>>,
    /// `b` → `a.b` for `import a.b` of a package.
    pub aliases: HashMap<String, String>,
}

impl Visible {
    /// The imported system called `name` (simple or qualified), `Err` with
    /// the candidates when it is ambiguous, `Ok(None)` when unknown.
    pub(super) fn lookup(&self, name: &[String]) -> Result<Option<Rc<LibSystem>>, Vec<String>> {
        if name.len() == 1 {
            let Some(cands) = self.simple.get(&name[0]) else {
                return Ok(None);
            };
            let mut distinct: Vec<Rc<LibSystem>> = Vec::new();
            for c in cands {
                if !distinct.iter().any(|d| Rc::ptr_eq(d, c)) {
                    distinct.push(c.clone());
                }
            }
            return match distinct.len() {
                0 => Ok(None),
                1 => Ok(distinct.pop()),
                _ => Err(distinct.iter().map(|d| d.qualified()).collect()),
            };
        }
        let dotted = name.join(".");
        if let Some(s) = self.qualified.get(&dotted) {
            return Ok(Some(s.clone()));
        }
        if let Some(full) = self.aliases.get(&name[0]) {
            let q = format!("{full}.{}", name[1..].join("."));
            return Ok(self.qualified.get(&q).cloned());
        }
        Ok(None)
    }
}

impl Loader {
    /// Resolves one `import` of the file `origin`, adding what it makes
    /// visible to `vis`.
    pub(super) fn import(
        &mut self,
        imp: &ast::Import,
        origin: &Origin,
        vis: &mut Visible,
    ) -> Result<(), Box<Diagnostic>> {
        let path: Vec<String> = imp.path.iter().map(|i| i.name.clone()).collect();
        let dotted = path.join(".");
        // The path as written (`a.b` or `a.b.*`), where errors point.
        let span = match (imp.path.first(), imp.path.last()) {
            (Some(a), Some(b)) => {
                let s = a.span.join(b.span);
                if imp.wildcard {
                    Span::new(s.start, s.end + 2)
                } else {
                    s
                }
            }
            _ => imp.span,
        };
        let (key, display, text, dir) = self.find(&path, origin, span)?;
        let loaded = self.load(key, display.clone(), text, dir, span)?;
        let mut matched = loaded.packages.contains(&dotted) && !imp.wildcard;
        for s in &loaded.systems {
            vis.qualified.insert(s.qualified(), s.clone());
            let hit = if imp.wildcard {
                s.package() == dotted
            } else {
                s.qualified() == dotted
            };
            if hit {
                vis.simple
                    .entry(s.simple().to_string())
                    .or_default()
                    .push(s.clone());
                matched = true;
            }
        }
        if imp.wildcard && loaded.packages.contains(&dotted) {
            matched = true;
        }
        if !imp.wildcard && loaded.packages.contains(&dotted) {
            if let Some(last) = path.last() {
                vis.aliases.insert(last.clone(), dotted.clone());
            }
        }
        if matched {
            Ok(())
        } else {
            let what = if imp.wildcard {
                "a package"
            } else {
                "a package or a system"
            };
            Err(Box::new(
                Diagnostic::error(format!("`{dotted}` is not {what} of `{display}`"), span)
                    .with_label("not found in the imported file"),
            ))
        }
    }

    /// The file an import path names: `(key, display name, text, directory
    /// for its own imports)`.
    #[allow(clippy::type_complexity)]
    fn find(
        &self,
        path: &[String],
        origin: &Origin,
        span: Span,
    ) -> Result<(String, String, String, Option<PathBuf>), Box<Diagnostic>> {
        if path.first().map(String::as_str) == Some("std") {
            for k in (2..=path.len()).rev() {
                let name = path[1..k].join(".");
                if let Some(text) = stdlib_file(&name) {
                    return Ok((
                        format!("std:{name}"),
                        format!("<stdlib>/{name}.alpha"),
                        text.to_string(),
                        None,
                    ));
                }
            }
            return Err(Diagnostic::error(
                format!("unknown standard-library package `{}`", path.join(".")),
                span,
            )
            .with_label("not in the standard library")
            .with_note(format!(
                "the standard library has: {}",
                stdlib_names()
                    .iter()
                    .map(|n| format!("std.{n}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
            .into());
        }
        let Some(dir) = &origin.dir else {
            return Err(Diagnostic::error(
                format!("cannot import `{}` here", path.join(".")),
                span,
            )
            .with_label("no directory to look in")
            .with_note(
                "imports other than `std.*` are looked up next to the importing file; this source has no file",
            )
            .into());
        };
        let mut tried = Vec::new();
        for k in (1..=path.len()).rev() {
            let rel = format!("{}.alpha", path[..k].join("/"));
            let full = dir.join(&rel);
            if full.is_file() {
                let text = std::fs::read_to_string(&full).map_err(|e| {
                    Diagnostic::error(format!("cannot read `{}`: {e}", full.display()), span)
                        .with_label("imported here")
                })?;
                let key = std::fs::canonicalize(&full)
                    .map_or_else(|_| full.display().to_string(), |p| p.display().to_string());
                let sub = full.parent().map_or_else(|| dir.clone(), Path::to_path_buf);
                return Ok((key, full.display().to_string(), text, Some(sub)));
            }
            tried.push(rel);
        }
        Err(Diagnostic::error(
            format!("cannot find the package `{}`", path.join(".")),
            span,
        )
        .with_label("no such file")
        .with_note(format!(
            "looked for {} in `{}`",
            tried.join(", "),
            dir.display()
        ))
        .into())
    }

    /// Parses and lowers a file (once), with cycle detection.
    fn load(
        &mut self,
        key: String,
        display: String,
        text: String,
        dir: Option<PathBuf>,
        span: Span,
    ) -> Result<Rc<Loaded>, Box<Diagnostic>> {
        if let Some(l) = self.done.get(&key) {
            return Ok(l.clone());
        }
        if let Some(pos) = self.stack.iter().position(|(k, _)| *k == key) {
            let mut names: Vec<String> = self.stack[pos..].iter().map(|(_, d)| d.clone()).collect();
            names.push(display);
            return Err(Box::new(
                Diagnostic::error(format!("import cycle: {}", names.join(" -> ")), span)
                    .with_label("this import closes the cycle"),
            ));
        }
        let src = SourceFile::new(display.clone(), text);
        let in_file = |ds: Vec<Diagnostic>, src: &SourceFile| {
            Diagnostic::error(format!("errors in the imported file `{}`", src.name), span)
                .with_label("imported here")
                .with_note(render_all(&ds, src).trim_end().to_string())
        };
        let ast = crate::syntax::parse(&src).map_err(|ds| in_file(ds, &src))?;
        let origin = Origin {
            dir,
            display: display.clone(),
            key: Some(key.clone()),
        };
        self.stack.push((key.clone(), display));
        let unit = lower_unit(&ast, &origin, self);
        self.stack.pop();
        let unit = unit.map_err(|ds| {
            // A cycle found deeper is reported as it is, at this import.
            match ds.iter().find(|d| d.message.starts_with("import cycle")) {
                Some(d) => Diagnostic {
                    span: Some(span),
                    ..d.clone()
                },
                None => in_file(ds, &src),
            }
        })?;
        let mut packages = HashSet::new();
        for q in &unit.packages {
            for k in 1..=q.len() {
                packages.insert(q[..k].join("."));
            }
        }
        let systems = unit
            .program
            .systems
            .into_iter()
            .zip(unit.qnames)
            .map(|(system, qname)| {
                Rc::new(LibSystem {
                    qname,
                    system,
                    externals: unit.program.externals.clone(),
                })
            })
            .collect();
        let loaded = Rc::new(Loaded { systems, packages });
        self.done.insert(key, loaded.clone());
        Ok(loaded)
    }

    /// Marks the root file as being loaded (so that an import of itself is
    /// a cycle).
    pub(super) fn enter(&mut self, origin: &Origin) {
        if let Some(k) = &origin.key {
            self.stack.push((k.clone(), origin.display.clone()));
        }
    }
}
