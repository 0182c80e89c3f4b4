"""cubefleet.solve_many against the Python cube solvers people use instead, on the same
1000 random states (tests/vectors/random-states-1000.txt), in one run: `kociemba` (C, PyPI)
and `RubikTwoPhase` (Kociemba's own, pure Python, PyPI). Each answer is checked by applying
it to the position with cubefleet's state index.

    pip install ./python kociemba RubikTwoPhase
    python examples/python/compare_python_solvers.py [--count N] [--slow-count N]

RubikTwoPhase builds its tables (about 80 MB, minutes) in the working directory on first use.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import statistics
import subprocess
import sys
import time

import cubefleet

REPO = pathlib.Path(__file__).resolve().parents[2]
STATES = REPO / "tests" / "vectors" / "random-states-1000.txt"


def checked(position: str, solution: str) -> int:
    """The solution's length, after checking that it solves `position`."""
    moves = solution.split()
    inverse = " ".join(m[0] + {"": "'", "'": "", "2": "2"}[m[1:]] for m in reversed(moves))
    if cubefleet.index(inverse or "UUUUUUUUURRRRRRRRRFFFFFFFFFDDDDDDDDDLLLLLLLLLBBBBBBBBB") != cubefleet.index(position):
        raise AssertionError(f"{solution!r} does not solve {position}")
    return len(moves)


def normalise(solution: str) -> str:
    """RubikTwoPhase writes `R1 U3 F2 (3f)`; the others `R U' F2`."""
    out = []
    for m in solution.split():
        if m.startswith("("):
            break
        out.append(m[0] + {"1": "", "2": "2", "3": "'"}.get(m[1:], m[1:]))
    return " ".join(out)


def report(name: str, seconds: float, n: int, lengths) -> dict:
    row = {
        "solver": name,
        "states": n,
        "seconds": seconds,
        "per_second": n / seconds,
        "ms_each": seconds * 1000 / n,
        "mean_length": statistics.mean(lengths),
        "max_length": max(lengths),
    }
    print(f"{name:<44} {n:>5} states {seconds:8.2f} s {row['per_second']:9.1f}/s "
          f"{row['ms_each']:8.3f} ms each  mean length {row['mean_length']:.2f}  max {row['max_length']}",
          flush=True)
    return row


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--count", type=int, default=1000)
    p.add_argument("--slow-count", type=int, default=100,
                   help="states for RubikTwoPhase (pure Python; seconds each at target 20)")
    p.add_argument("--cubefleet-only", action="store_true")
    p.add_argument("--cli", default=str(REPO / "target" / "release" / "cubefleet"))
    args = p.parse_args()
    states = STATES.read_text().split()[: args.count]
    cores = os.cpu_count() or 1
    rows = []

    cubefleet.solve_many(states)  # tables loaded and their pages touched before timing
    for target, label in ((20, "target 20"), (30, "any length")):
        for threads in sorted({1, cores}):
            t = time.perf_counter()
            table = cubefleet.solve_many(states, max_length=target, threads=threads)
            s = time.perf_counter() - t
            lengths = [checked(i, sol) for i, sol in zip(states, table.column("solution").to_pylist())]
            rows.append(report(f"cubefleet.solve_many {label}, {threads} thread(s)", s, len(states), lengths))
        if os.path.exists(args.cli):
            text = "\n".join(states) + "\n"
            t = time.perf_counter()
            subprocess.run([args.cli, "solve", "--max-length", str(target), "--threads", str(cores),
                            "--format", "json"], input=text.encode(), check=True, capture_output=True)
            s = time.perf_counter() - t
            rows.append(report(f"cubefleet solve (CLI) {label}, {cores} thread(s)", s, len(states), [0]))

    if args.cubefleet_only:
        return
    import kociemba

    for target, label in ((20, "target 20"), (None, "any length")):
        t = time.perf_counter()
        sols = [kociemba.solve(x) if target is None else kociemba.solve(x, max_depth=target) for x in states]
        s = time.perf_counter() - t
        lengths = [checked(i, sol) for i, sol in zip(states, sols)]
        rows.append(report(f"kociemba.solve {label}, 1 thread", s, len(states), lengths))

    import twophase.solver as sv  # RubikTwoPhase

    slow = states[: args.slow_count]
    for target, label, timeout in ((20, "target 20", 10), (30, "any length", 10)):
        t = time.perf_counter()
        sols = [normalise(sv.solve(x, target, timeout)) for x in slow]
        s = time.perf_counter() - t
        lengths = [checked(i, sol) for i, sol in zip(slow, sols)]
        rows.append(report(f"RubikTwoPhase solve {label}, 1 thread", s, len(slow), lengths))


if __name__ == "__main__":
    sys.exit(main())
