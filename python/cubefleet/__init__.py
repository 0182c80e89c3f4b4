"""Solve Rubik's Cube positions in bulk from Python, with cubefleet's searches.

Every answer is checked by applying it to the position before it is returned.

    >>> import cubefleet
    >>> cubefleet.solve("R U R' U'").solution
    "U R U' R'"
    >>> table = cubefleet.solve_many(cubefleet.scramble(1000, seed=1))  # all cores
    >>> table.column("length").value_counts()     # pyarrow; with pandas (the "pandas" extra):
    >>> table.to_pandas()["length"].value_counts()

Positions are read exactly as the ``cubefleet`` CLI reads them: move sequences (``R U2 F'``,
wide turns, slices, rotations), 54-letter facelet strings in URFDLB order in any six colour
letters, or the 9-line colour net (``input="net"``). A line no real cube can reach is refused
with the CLI's reason, raised as :class:`InvalidPosition`.

The lookup tables (about 1 GB) are found as the CLI finds them: ``$CUBEFLEET_TABLES``, else
``~/.cache/cubefleet/tables``; missing ones are built on first use (10-60 s), or by
:func:`build_tables`.
"""

# This module is the package's one statement of its functions: their signatures and types
# (what type checkers read) and their docstrings (what help() shows). The classes written in
# Rust (SolveResult, Client, Results) are typed in _native.pyi.

from __future__ import annotations

import inspect
import os
from typing import TYPE_CHECKING, Any, Callable, Iterable, List, Literal, Optional, TypeVar, Union
from typing import overload

from . import _native
from ._native import Client, SolveResult

_Path = Union[str, "os.PathLike[str]"]
_Input = Literal["auto", "moves", "facelets", "net"]
_F = TypeVar("_F", bound=Callable[..., Any])

if TYPE_CHECKING:
    import pyarrow
    from typing_extensions import TypedDict, Unpack

    class _BatchOptions(TypedDict, total=False):
        """The keyword arguments of :func:`solve_many` and :func:`solve_file` but ``output``
        (which decides what they return)."""

        timeout: Optional[float]
        optimal: bool
        max_depth: Optional[int]
        metric: Optional[Literal["htm", "qtm"]]
        moves: Optional[str]
        to: Optional[str]
        goal: Optional[str]
        on: Optional[Literal["any-face"]]
        solutions: Optional[int]
        all_optimal: bool
        count_only: bool
        input: _Input
        invalid: Literal["raise", "keep"]

__all__ = [
    "InvalidPosition",
    "SolveResult",
    "Client",
    "solve",
    "optimal",
    "solve_many",
    "solve_file",
    "index",
    "position",
    "scramble",
    "build_tables",
    "tables_dir",
    "N_STATES",
    "MAX_LINE_BYTES",
    "DEFAULT_MAX_LENGTH",
]

#: The number of positions of the cube; every one has a state index below it.
N_STATES: int = 43_252_003_274_489_856_000

#: The longest line read, in bytes (as the CLI and the coordinator read lines).
MAX_LINE_BYTES: int = _native.MAX_LINE_BYTES

#: The two-phase target when none is given (as the CLI's ``--max-length`` and the
#: coordinator's default).
DEFAULT_MAX_LENGTH: int = _native.DEFAULT_MAX_LENGTH


class InvalidPosition(ValueError):
    """A position no real cube can reach, or text that is no position.

    ``reason`` is the CLI's reason ("one corner is twisted", "unknown turn `R4`", ...),
    ``line`` the 0-based index of the line among the positions given (``None`` for a single
    position) and ``input`` the text as given.
    """

    def __init__(self, reason: str, line: Optional[int], input: str):
        self.reason = reason
        self.line = line
        self.input = input
        where = f"line {line}: " if line is not None else ""
        super().__init__(f"{where}{input!r}: {reason}")


def _parameters_of(model: Callable[..., Any], **defaults: Any) -> Callable[[_F], _F]:
    """Shows the decorated ``f(first, *args, **options)``, which hands ``args`` and ``options``
    on as ``model`` takes them, with ``model``'s parameters after its own first one (in
    ``help()`` and ``inspect.signature``), so that they are written once; ``defaults`` are
    the decorated function's own defaults where they differ from ``model``'s."""

    def show(f: _F) -> _F:
        own = inspect.signature(f)
        model_sig = inspect.signature(model)
        first = next(iter(own.parameters.values()))
        rest = [
            p.replace(default=defaults[p.name]) if p.name in defaults else p
            for p in list(model_sig.parameters.values())[1:]
        ]
        f.__signature__ = model_sig.replace(parameters=[first, *rest])  # type: ignore[attr-defined]
        return f

    return show


def solve(
    position: str,
    max_length: int = DEFAULT_MAX_LENGTH,
    timeout: Optional[float] = None,
    *,
    to: Optional[str] = None,
    goal: Optional[str] = None,
    on: Optional[Literal["any-face"]] = None,
    threads: int = 1,
    input: _Input = "auto",
) -> SolveResult:
    """Solve one position with the two-phase search; at most ``max_length`` turns.

    ``position``: a move sequence, a facelet string or (``input="net"``) a colour net.
    ``timeout``: seconds; the best solution found is returned with status ``timeout`` when
    the time runs out (default: no limit). ``threads``: threads searching this one position.
    ``to``: the position to reach instead of the solved cube (a move sequence or a facelet
    string, as ``cubefleet solve --to`` takes it): the solution applied to ``position`` gives
    it, and the result's ``to`` is its facelet string.
    ``goal``: reach a partial goal instead, with the shortest sequence (the optimal search):
    ``"cross"``, ``"xcross"``, ``"f2l"``, ``"eo"``, ``"dr"``, ``"corners"``, ``"edges"``, a
    piece list (``"place:DF,DR,DFR;orient:UF"``) or a facelet mask (``.`` for ignored
    stickers), as ``cubefleet solve --goal`` takes it; ``on="any-face"`` the shortest over
    the faces (colour neutral). The result's ``goal`` names it and ``goal_reached`` where.

    Returns a :class:`SolveResult` (``solution``, ``length``, ``status``, ``optimal``,
    ``millis``, ``nodes``). Status ``solved``, or ``over_target`` when the search ended
    without a solution within ``max_length`` (the shortest found is given).

    Raises :class:`InvalidPosition` when the position is refused.
    """
    return _native.solve(
        position,
        max_length,
        timeout,
        optimal=goal is not None,
        to=to,
        goal=goal,
        on=on,
        threads=threads,
        input=input,
    )


def optimal(
    position: str,
    *,
    metric: Literal["htm", "qtm"] = "htm",
    max_depth: Optional[int] = None,
    moves: Optional[str] = None,
    to: Optional[str] = None,
    goal: Optional[str] = None,
    on: Optional[Literal["any-face"]] = None,
    timeout: Optional[float] = None,
    threads: int = 1,
    input: _Input = "auto",
    solutions: Optional[int] = None,
    all_optimal: bool = False,
    count_only: bool = False,
) -> SolveResult:
    """Find a proven shortest solution of one position (IDA*).

    ``metric``: ``"htm"`` (every face turn counts 1) or ``"qtm"`` (a half turn counts 2).
    ``moves``: solve with these turns only, written as ``cubefleet solve --moves`` takes them
    (``"R,U"``, ``"U,D,R2,L2,F2,B2"``, ``"-B"``); a position they cannot solve is answered
    ``unreachable`` (with the reason in ``error``) when an invariant of the set shows it.
    ``max_depth``: search only up to this length; status ``none_within`` proves there is none.
    ``to``: the shortest way to this position instead of the solved cube (as in :func:`solve`).
    ``goal``, ``on``: the shortest way to a partial goal (as in :func:`solve`).
    Random states take seconds to minutes each (much faster with the huge, giant or colossal
    table: ``cubefleet tables build --giant``). ``lower_bound`` says no solution is shorter.
    ``solutions``: the N shortest distinct solutions (1 to 1000; every optimal one, then
    longer ones), ``all_optimal``: every optimal solution, ``count_only`` (with
    ``all_optimal``): their count alone, as ``--solutions``, ``--all-optimal`` and
    ``--count-only`` (canonical sequences: no face twice in a row, of two opposite faces U
    before D, R before L, F before B); the result's ``solutions`` lists them in order
    (``solution`` the first) and ``count`` says how many.

    Raises :class:`InvalidPosition` when the position is refused.
    """
    return _native.solve(
        position,
        DEFAULT_MAX_LENGTH,
        timeout,
        optimal=max_depth is None,
        max_depth=max_depth,
        metric=metric,
        moves=moves,
        to=to,
        goal=goal,
        on=on,
        threads=threads,
        input=input,
        solutions=solutions,
        all_optimal=all_optimal,
        count_only=count_only,
    )


@overload
def solve_many(
    positions: Iterable[str], max_length: int = ..., threads: Optional[int] = ...,
    *, output: Literal["arrow"] = ..., **options: Unpack[_BatchOptions],
) -> pyarrow.Table: ...
@overload
def solve_many(
    positions: Iterable[str], max_length: int = ..., threads: Optional[int] = ...,
    *, output: Literal["list"], **options: Unpack[_BatchOptions],
) -> List[SolveResult]: ...
def solve_many(
    positions: Iterable[str],
    max_length: int = DEFAULT_MAX_LENGTH,
    threads: Optional[int] = None,
    *,
    timeout: Optional[float] = None,
    optimal: bool = False,
    max_depth: Optional[int] = None,
    metric: Optional[Literal["htm", "qtm"]] = None,
    moves: Optional[str] = None,
    to: Optional[str] = None,
    goal: Optional[str] = None,
    on: Optional[Literal["any-face"]] = None,
    input: _Input = "auto",
    invalid: Literal["raise", "keep"] = "raise",
    output: Literal["arrow", "list"] = "arrow",
    solutions: Optional[int] = None,
    all_optimal: bool = False,
    count_only: bool = False,
) -> Union[pyarrow.Table, List[SolveResult]]:
    """Solve many positions on every core (``threads``), the GIL released; input order.

    Returns a ``pyarrow.Table`` with one row per position and the columns of
    ``cubefleet results --format parquet``: ``index`` (uint64), ``input``, ``status``
    (dictionary: a pandas categorical), ``solution``, ``length`` (uint32, null without a
    solution), ``optimal`` (bool), ``lower_bound`` (uint32, null for two-phase),
    ``millis`` (float64), ``nodes`` (uint64), ``state_index`` (null here), ``error``
    (the reason for a refused line), ``worker`` (null here: no worker searched),
    ``claimed`` (false here), ``confirmed_by`` (list of strings, empty here), ``moves``
    (the ``moves`` set, null when every turn was allowed), ``to`` (the facelets of the
    ``to`` position, null without one), ``goal`` (the goal, null without one), ``solutions``
    (list of strings, null unless several were asked for) and ``count`` (uint64, likewise).
    ``output="list"`` gives :class:`SolveResult` objects.

    Blank lines and ``#`` comments are answered with status ``skipped``. A refused line raises
    :class:`InvalidPosition` naming it before anything is searched; with ``invalid="keep"``
    it is answered with status ``invalid`` and its reason in ``error`` instead, as the CLI
    does. ``optimal=True`` / ``max_depth=N`` (with ``metric``, and ``moves`` as for
    :func:`optimal`) ask for the optimal or depth-limited search instead of the two-phase one;
    ``to`` solves every position to that one (as in :func:`solve`); ``goal`` and ``on`` (with
    ``optimal=True`` or ``max_depth=N``) to a partial goal (as in :func:`solve`); ``solutions``,
    ``all_optimal`` and ``count_only`` ask for several solutions (as in :func:`optimal`).
    Ctrl-C stops the searches.
    """
    return _native.solve_many(
        positions,
        max_length,
        threads,
        timeout=timeout,
        optimal=optimal,
        max_depth=max_depth,
        metric=metric,
        moves=moves,
        to=to,
        goal=goal,
        on=on,
        input=input,
        invalid=invalid,
        output=output,
        solutions=solutions,
        all_optimal=all_optimal,
        count_only=count_only,
    )


@overload
def solve_file(
    path: _Path, max_length: int = ..., threads: Optional[int] = ...,
    *, output: Literal["arrow"] = ..., **options: Unpack[_BatchOptions],
) -> pyarrow.Table: ...
@overload
def solve_file(
    path: _Path, max_length: int = ..., threads: Optional[int] = ...,
    *, output: Literal["list"], **options: Unpack[_BatchOptions],
) -> List[SolveResult]: ...
@_parameters_of(solve_many, invalid="keep")
def solve_file(path: _Path, *args: Any, **options: Any) -> Union[pyarrow.Table, List[SolveResult]]:
    """Solve every line of a file, read as ``cubefleet run`` reads it (``index`` is the
    0-based line; blank and ``#`` lines are ``skipped``) and answered as it answers them: a
    refused line gets status ``invalid`` and its reason in ``error``, and the rest are solved
    (``invalid="raise"`` raises :class:`InvalidPosition` for the first one instead, before
    anything is searched). Otherwise as :func:`solve_many`.
    """
    options.setdefault("invalid", "keep")
    return _native.solve_many(os.fspath(path), *args, from_file=True, **options)


def index(position: str) -> int:
    """The state index of a position: 0 for solved, below :data:`N_STATES`.

    Consecutive numbers are states one small change apart (the order is documented in the
    repository's ``tables/src/index.rs``). Raises :class:`InvalidPosition`.
    """
    return _native.index(position)


def position(index: int) -> str:
    """The position with state index ``index``, as a 54-letter facelet string (URFDLB).

    Raises ``ValueError`` for a number that is not below :data:`N_STATES`.
    """
    return _native.position(index)


def scramble(count: int, seed: Optional[int] = None, max_length: int = 21) -> List[str]:
    """``count`` random-state scrambles, as the WCA makes them (a uniformly random state,
    solved, the solution inverted). The same ``seed`` gives the same scrambles as
    ``cubefleet scramble --count N --seed S``.
    """
    return _native.scramble(count, seed, max_length)


def build_tables(
    dir: Optional[_Path] = None,
    progress: Optional[Callable[[str, int, int], None]] = None,
    force: bool = False,
) -> List[str]:
    """Build the missing two-phase tables (about 1 GB, 10-60 s) in ``dir`` (default:
    :func:`tables_dir`). ``progress(name, done, total)`` is called about every percent of
    each table. Returns the names of the tables built (``[]`` when none was missing).
    """
    return _native.build_tables(None if dir is None else os.fspath(dir), progress, force)


def tables_dir() -> str:
    """The tables directory the searches use: ``$CUBEFLEET_TABLES``, else
    ``~/.cache/cubefleet/tables`` (as the CLI)."""
    return os.fspath(_native.tables_dir())
