"""Shared by the tests: the repository, the `cubefleet` binary, the tables (as the CLI finds
them: `.ci/run` points `CUBEFLEET_TABLES` at those `cargo test` built), and child processes
that are killed when a test ends."""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys
import threading
import time

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]


def binary() -> str:
    """The CLI: `$CUBEFLEET_BIN`, else the release build of this repository."""
    path = os.environ.get("CUBEFLEET_BIN", str(REPO / "target" / "release" / "cubefleet"))
    if not os.path.exists(path):
        pytest.fail(f"no cubefleet binary at {path}: cargo build --release first")
    return path


@pytest.fixture(scope="session")
def cli():
    """Runs the CLI; returns the completed process (output as bytes)."""

    def run(*args, input=None, check=True):
        return subprocess.run(
            [binary(), *args], input=input, capture_output=True, check=check, timeout=600
        )

    return run


class Coordinator:
    """A `cubefleet coordinator` on `127.0.0.1:0` (the address read from its log, so no
    port is guessed) and one `cubefleet worker`, both killed at the end."""

    def __init__(self, data: pathlib.Path, token: str):
        self.token = token
        self.proc = subprocess.Popen(
            [binary(), "coordinator", "--listen", "127.0.0.1:0", "--data", str(data),
             "--token", token],
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "NO_COLOR": "1"},
        )
        self.url = None
        deadline = time.monotonic() + 60
        for line in self.proc.stderr:
            line = re.sub(r"\x1b\[[0-9;]*m", "", line)  # colours, if any
            m = re.search(r"listen=(\S+)", line)
            if m:
                self.url = f"http://{m.group(1)}"
                break
            if time.monotonic() > deadline:
                break
        # the rest of its log is read and dropped, so that a full pipe never blocks it
        threading.Thread(target=self.proc.stderr.read, daemon=True).start()
        if self.url is None:
            self.stop()
            pytest.fail("the coordinator did not say where it listens")
        self.worker = subprocess.Popen(
            [binary(), "worker", "--coordinator", self.url, "--threads", "1", "--token", token],
            stderr=subprocess.DEVNULL,
        )

    def stop(self):
        for p in (getattr(self, "worker", None), self.proc):
            if p is not None and p.poll() is None:
                p.kill()
                p.wait()


@pytest.fixture
def coordinator(tmp_path):
    c = Coordinator(tmp_path / "data", token="sesame")
    try:
        yield c
    finally:
        c.stop()


@pytest.fixture(scope="session", autouse=True)
def tables():
    """The tables, built once (a no-op when they exist)."""
    import cubefleet

    cubefleet.build_tables()
    print(f"tables: {cubefleet.tables_dir()}", file=sys.stderr)
