"""Type stubs of the extension module `alphac._alphac` (src/python/)."""

from typing import Any, Dict, List, Mapping, Optional, Tuple

import numpy as np
import numpy.typing as npt

__version__: str

class AlphaError(Exception):
    """An error reported by alphac."""

class CompileError(AlphaError):
    """The program does not compile: the message is alphac's diagnostics."""

class RunError(AlphaError):
    """A run was refused (parameters, inputs) or failed (an error of the
    running code, such as an out-of-range indirect index)."""

def compile_source(
    source: str,
    file_name: str = "<source>",
    system: Optional[str] = None,
    optimize: bool = True,
    threads: Optional[int] = None,
) -> Program: ...

class Program:
    """A compiled system."""

    @property
    def name(self) -> str:
        """The compiled system's name."""
    @property
    def params(self) -> List[str]:
        """The parameters' names, in the system's order."""
    @property
    def inputs(self) -> Dict[str, str]:
        """The inputs: name -> numpy dtype name ('float64', 'int64', 'bool')."""
    @property
    def outputs(self) -> Dict[str, str]:
        """The outputs: name -> numpy dtype name."""
    def shape(self, name: str, params: Optional[Mapping[str, int]] = None) -> List[int]:
        """The shape of an input's or output's array for `params`."""
    def bounds(
        self, name: str, params: Optional[Mapping[str, int]] = None
    ) -> List[Tuple[int, int]]:
        """The bounding box of a variable's domain: (lo, hi) per dimension;
        the array's index i is the point lo + i."""
    def complexity(self) -> str:
        """Each equation's cost before -> after, the total, and the cost of
        the generated loops (as `alphac complexity --system NAME`)."""
    def emit(self) -> str:
        """The generated loop code, C-like (as `alphac emit`)."""
    def decisions(self) -> List[Dict[str, Any]]:
        """The optimizer's decisions: var, transformation, applied, reason,
        detail, reuse, complexity_after."""
    def run(
        self,
        params: Optional[Mapping[str, int]] = None,
        inputs: Optional[Mapping[str, npt.ArrayLike]] = None,
        seed: int = 0,
    ) -> Dict[str, np.ndarray]:
        """Runs the system once; the outputs by name (numpy owns the
        buffers the native code's results were stored in)."""
    def sampler(
        self,
        params: Optional[Mapping[str, int]] = None,
        inputs: Optional[Mapping[str, npt.ArrayLike]] = None,
        seed: int = 0,
        first_sweep: int = 0,
    ) -> Sampler:
        """The system's state, advanced one sweep at a time."""
    def sweeps(
        self,
        n: int,
        params: Optional[Mapping[str, int]] = None,
        inputs: Optional[Mapping[str, npt.ArrayLike]] = None,
        seed: int = 0,
        progress: bool = True,
    ) -> Dict[str, np.ndarray]:
        """Runs n sweeps with a progress bar; the trace: 'sweep' and one
        array per scalar output."""

class Sampler:
    """A system's state between sweeps."""

    @property
    def next_sweep(self) -> int:
        """The index of the next sweep."""
    @property
    def scalar_names(self) -> List[str]:
        """The scalar outputs' names (the trace's columns)."""
    def sweep(self) -> Dict[str, Any]:
        """Runs one sweep; its scalar outputs by name."""
    def sweeps(self, n: int, progress: bool = True) -> Dict[str, np.ndarray]:
        """Runs n sweeps with a progress bar; their trace."""
    def outputs(self) -> Dict[str, np.ndarray]:
        """The outputs of the last sweep."""
    def state(self) -> Dict[str, np.ndarray]:
        """The state the next sweep starts from (every input)."""
