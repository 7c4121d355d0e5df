import os
from typing import Optional, Union

from ._alphac import AlphaError as AlphaError
from ._alphac import CompileError as CompileError
from ._alphac import Program as Program
from ._alphac import RunError as RunError
from ._alphac import Sampler as Sampler
from ._alphac import __version__ as __version__

def compile(
    source_or_path: Union[str, "os.PathLike[str]"],
    system: Optional[str] = None,
    optimize: bool = True,
    threads: Optional[int] = None,
) -> Program: ...
