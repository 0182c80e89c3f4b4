# Types of the extension module `cubefleet._native` (python/src, in Rust), for type checkers;
# the docstrings are the module's own (its doc comments), not repeated here. Its classes are
# the ones users hold, typed in full. Its functions are called only by cubefleet/__init__.py,
# which states their public signatures, types and docstrings once; they are declared here only
# as that module calls them.

import os
from typing import Any, Callable, Dict, Iterator, List, Literal, Optional, Tuple, Union, overload

import pyarrow

_Path = Union[str, "os.PathLike[str]"]

MAX_LINE_BYTES: int
DEFAULT_MAX_LENGTH: int

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
    move_set: Optional[str]
    to: Optional[str]
    goal: Optional[str]
    goal_reached: Optional[str]
    solutions: Optional[List[str]]
    count: Optional[int]
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
        lines: Union[List[str], "os.PathLike[str]", None] = None,
        *,
        path: Optional[_Path] = None,
        range: Optional[Tuple[int, int]] = None,
        step: int = 1,
        sample: Optional[Tuple[int, int]] = None,
        max_length: int = ...,
        optimal: bool = False,
        max_depth: Optional[int] = None,
        metric: Optional[Literal["htm", "qtm"]] = None,
        moves: Optional[str] = None,
        to: Optional[str] = None,
        goal: Optional[str] = None,
        on: Optional[Literal["any-face"]] = None,
        timeout: Optional[float] = None,
        name: Optional[str] = None,
        priority: int = 0,
        batch_id: Optional[str] = None,
        keep: Literal["all", "histogram"] = "all",
        solutions: Optional[int] = None,
        all_optimal: bool = False,
        count_only: bool = False,
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
    position: str, max_length: int, timeout: Optional[float], **options: Any
) -> SolveResult: ...
def solve_many(source: Any, *args: Any, from_file: bool = False, **options: Any) -> Any: ...
def index(position: str) -> int: ...
def position(index: int) -> str: ...
def scramble(count: int, seed: Optional[int], max_length: int) -> List[str]: ...
def build_tables(
    dir: Optional[str], progress: Optional[Callable[[str, int, int], None]], force: bool
) -> List[str]: ...
def tables_dir() -> "os.PathLike[str]": ...
