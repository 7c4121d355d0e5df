"""alphac: an optimizing compiler for Alpha-style equational programs.

Compile the equations of an algorithm (a Gibbs sweep, a Cox model's Newton
step, a dynamic program) written in `.alpha`, then run the native code on
numpy arrays::

    import alphac, numpy as np
    gmm = alphac.compile("examples/gmm_gs.alpha")          # system gmm_gs
    data = alphac.compile("examples/gmm_gs.alpha", system="gmm_gs_data")
    x = data.run(params={"N": 1000, "K": 3}, seed=1)
    trace = gmm.sweeps(100, params={"N": 1000, "K": 3}, inputs={...}, seed=1)

Errors are exceptions carrying alphac's diagnostics: `CompileError` for a
program that does not compile, `RunError` for parameters or inputs a
system refuses and errors of the running code; both are `AlphaError`s.
"""

from __future__ import annotations

import os
from typing import Optional, Union

from ._alphac import (
    AlphaError,
    CompileError,
    Program,
    RunError,
    Sampler,
    __version__,
    compile_source as _compile_source,
)

__all__ = [
    "AlphaError",
    "CompileError",
    "Program",
    "RunError",
    "Sampler",
    "__version__",
    "compile",
]


def _is_path(s: Union[str, "os.PathLike[str]"]) -> bool:
    """A path-like object, or a one-line string naming a `.alpha` file or
    an existing file (program text always spans lines or holds braces)."""
    if isinstance(s, os.PathLike):
        return True
    if "\n" in s or "{" in s:
        return False
    return s.endswith(".alpha") or os.path.isfile(s)


def compile(
    source_or_path: Union[str, "os.PathLike[str]"],
    system: Optional[str] = None,
    optimize: bool = True,
    threads: Optional[int] = None,
) -> Program:
    """Compile one system of a program to native code.

    `source_or_path` is the program's text or the path of a `.alpha` file.
    `system` names the system to compile; by default the one named like
    the file (`gmm_gs` in `gmm_gs.alpha`), else the first. With
    `optimize=False` the reductions are not simplified (the program as
    written). `threads` is the number of threads the loops proven
    parallel run on (default: all cores; results are identical for every
    number, random draws included). Raises `CompileError` with the
    diagnostics (file, line, column and a caret) when the program does not
    compile.
    """
    if _is_path(source_or_path):
        path = os.fspath(source_or_path)
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except OSError as e:
            raise CompileError(f"cannot read {path}: {e.strerror or e}") from None
        return _compile_source(text, path, system, optimize, threads)
    return _compile_source(str(source_or_path), "<source>", system, optimize, threads)
