import os
from typing import Callable, Dict, Iterable, Iterator, List, Literal, Optional, Tuple, Union, overload

import pyarrow

N_STATES: int
MAX_LINE_BYTES: int
DEFAULT_MAX_LENGTH: int

_Path = Union[str, "os.PathLike[str]"]
_Input = Literal["auto", "moves", "facelets", "net"]

class InvalidPosition(ValueError):
    reason: str
    line: Optional[int]
    input: str
    def __init__(self, reason: str, line: Optional[int], input: str) -> None: ...

class SolveResult:
    index: int
    input: str
    status: str
    solution: str
    length: Optional[int]
    optimal: bool
    lower_bound: Optional[int]
    millis: float
    nodes: Optional[int]
    error: Optional[str]
    @property
    def moves(self) -> List[str]: ...
    def to_dict(self) -> Dict[str, object]: ...

class Results(Iterator[pyarrow.RecordBatch]):
    def __iter__(self) -> "Results": ...
    def __next__(self) -> pyarrow.RecordBatch: ...
    def read_all(self) -> pyarrow.Table: ...

class Client:
    def __init__(self, url: str, token: Optional[str] = None, tls_ca: Optional[_Path] = None) -> None: ...
    def submit(
        self,
        lines: Optional[List[str]] = None,
        *,
        path: Optional[_Path] = None,
        range: Optional[Tuple[int, int]] = None,
        step: int = 1,
        sample: Optional[Tuple[int, int]] = None,
        max_length: int = ...,
        optimal: bool = False,
        max_depth: Optional[int] = None,
        metric: Optional[Literal["htm", "qtm"]] = None,
        timeout: Optional[float] = None,
        name: Optional[str] = None,
        priority: int = 0,
        batch_id: Optional[str] = None,
        keep: Literal["all", "histogram"] = "all",
    ) -> str: ...
    @overload
    def status(self, batch: str) -> Dict[str, object]: ...
    @overload
    def status(self, batch: None = None) -> List[Dict[str, object]]: ...
    def wait(self, batch: str, timeout: Optional[float] = None) -> Dict[str, object]: ...
    def results(self, batch: str, status: Optional[str] = None) -> Results: ...
    def cancel(self, batch: str) -> Dict[str, object]: ...
    def lookup(self, position: str) -> Optional[SolveResult]: ...

def solve(
    position: str,
    max_length: int = ...,
    timeout: Optional[float] = None,
    *,
    threads: int = 1,
    input: _Input = "auto",
) -> SolveResult: ...
def optimal(
    position: str,
    *,
    metric: Literal["htm", "qtm"] = "htm",
    max_depth: Optional[int] = None,
    timeout: Optional[float] = None,
    threads: int = 1,
    input: _Input = "auto",
) -> SolveResult: ...
@overload
def solve_many(
    positions: Iterable[str],
    max_length: int = ...,
    threads: Optional[int] = None,
    *,
    timeout: Optional[float] = None,
    optimal: bool = False,
    max_depth: Optional[int] = None,
    metric: Optional[Literal["htm", "qtm"]] = None,
    input: _Input = "auto",
    invalid: Literal["raise", "keep"] = "raise",
    output: Literal["arrow"] = "arrow",
) -> pyarrow.Table: ...
@overload
def solve_many(
    positions: Iterable[str],
    max_length: int = ...,
    threads: Optional[int] = None,
    *,
    timeout: Optional[float] = None,
    optimal: bool = False,
    max_depth: Optional[int] = None,
    metric: Optional[Literal["htm", "qtm"]] = None,
    input: _Input = "auto",
    invalid: Literal["raise", "keep"] = "raise",
    output: Literal["list"],
) -> List[SolveResult]: ...
@overload
def solve_file(
    path: _Path,
    max_length: int = ...,
    threads: Optional[int] = None,
    *,
    timeout: Optional[float] = None,
    optimal: bool = False,
    max_depth: Optional[int] = None,
    metric: Optional[Literal["htm", "qtm"]] = None,
    input: _Input = "auto",
    invalid: Literal["raise", "keep"] = "raise",
    output: Literal["arrow"] = "arrow",
) -> pyarrow.Table: ...
@overload
def solve_file(
    path: _Path,
    max_length: int = ...,
    threads: Optional[int] = None,
    *,
    timeout: Optional[float] = None,
    optimal: bool = False,
    max_depth: Optional[int] = None,
    metric: Optional[Literal["htm", "qtm"]] = None,
    input: _Input = "auto",
    invalid: Literal["raise", "keep"] = "raise",
    output: Literal["list"],
) -> List[SolveResult]: ...
def index(position: str) -> int: ...
def position(index: int) -> str: ...
def scramble(count: int, seed: Optional[int] = None, max_length: int = 21) -> List[str]: ...
def build_tables(
    dir: Optional[_Path] = None,
    progress: Optional[Callable[[str, int, int], None]] = None,
    force: bool = False,
) -> List[str]: ...
def tables_dir() -> str: ...
