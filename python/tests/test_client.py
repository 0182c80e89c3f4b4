"""`cubefleet.Client` against a real coordinator process and a real worker."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

import cubefleet
from cube import has_cross, reaches, solves


def test_submit_wait_results_lookup_cancel(coordinator, cli, tmp_path):
    c = cubefleet.Client(coordinator.url, token=coordinator.token)
    scrambles = cubefleet.scramble(50, seed=9)
    batch = c.submit(scrambles + ["R U X2 F"], name="from python")
    status = c.wait(batch, timeout=300)
    assert status["finished"] and status["done"] == 50 and status["invalid"] == 1
    batches = list(c.results(batch))
    assert all(isinstance(b, pa.RecordBatch) for b in batches)
    table = pa.Table.from_batches(batches)
    assert table.column("input").to_pylist() == scrambles + ["R U X2 F"]
    for r in table.to_pylist()[:50]:
        assert r["status"] == "solved" and r["length"] <= 20
        assert solves(r["input"], r["solution"])
    assert table.to_pylist()[50]["error"]
    # the same rows as `cubefleet results` prints
    out = cli("results", batch, "--coordinator", coordinator.url, "--token", coordinator.token)
    want = [json.loads(l) for l in out.stdout.decode().splitlines()]
    assert [w["solution"] for w in want] == table.column("solution").to_pylist()
    # and as `results --format parquet --out` writes
    pfile = tmp_path / "r.parquet"
    cli("results", batch, "--format", "parquet", "--out", str(pfile),
        "--coordinator", coordinator.url, "--token", coordinator.token)
    import pyarrow.parquet as pq

    assert pq.read_table(pfile).to_pylist() == c.results(batch).read_all().to_pylist()
    only_invalid = c.results(batch, status="invalid").read_all()
    assert only_invalid.num_rows == 1
    # a stored answer is found for the position, mapped back to it
    found = c.lookup(scrambles[0])
    assert found is not None and solves(scrambles[0], found.solution)
    assert c.lookup("R U R' U' R U") is None
    assert any(s["batch"] == batch for s in c.status())
    assert c.status(batch)["total"] == 51


def test_a_range_batch_and_a_cancel(coordinator):
    c = cubefleet.Client(coordinator.url, token=coordinator.token)
    batch = c.submit(range=(0, 10))
    s = c.wait(batch, timeout=300)
    assert s["done"] == 10
    table = c.results(batch).read_all()
    assert table.column("state_index").to_pylist() == [str(i) for i in range(10)]
    slow = c.submit(cubefleet.scramble(5, seed=1), optimal=True)
    s = c.cancel(slow)
    assert s["cancelled_batch"]


def test_a_batch_to_a_target(coordinator, cli, tmp_path):
    c = cubefleet.Client(coordinator.url, token=coordinator.token)
    positions = ["R U R' U'", "F D2 L'", "R U"]
    batch = c.submit(positions, to="R U")
    assert c.wait(batch, timeout=300)["done"] == 3
    rows = c.results(batch).read_all().to_pylist()
    target = cubefleet.position(cubefleet.index("R U"))
    for r in rows:
        assert r["status"] == "solved" and r["to"] == target
        assert reaches(r["input"], r["solution"], "R U")
    pfile = tmp_path / "t.parquet"
    cli("results", batch, "--format", "parquet", "--out", str(pfile),
        "--coordinator", coordinator.url, "--token", coordinator.token)
    import pyarrow.parquet as pq

    assert pq.read_table(pfile).to_pylist() == rows
    with pytest.raises(ValueError, match="to"):
        c.submit(positions, to="R4")


def test_a_batch_to_a_goal(coordinator):
    c = cubefleet.Client(coordinator.url, token=coordinator.token)
    positions = ["R F", "R U", "U2"]
    batch = c.submit(positions, goal="cross", optimal=True)
    assert c.wait(batch, timeout=300)["done"] == 3
    rows = c.results(batch).read_all().to_pylist()
    assert [r["length"] for r in rows] == [2, 1, 0]
    for r in rows:
        assert r["status"] == "solved" and r["goal"] == "cross"
        assert has_cross(r["input"], r["solution"])
    with pytest.raises(ValueError, match="goal"):
        c.submit(positions, goal="cross")


def test_a_batch_of_every_optimal_solution(coordinator):
    c = cubefleet.Client(coordinator.url, token=coordinator.token)
    positions = ["R2 L2 U2 D2 F2 B2", "R U"]
    listed = c.submit(positions, optimal=True, all_optimal=True)
    counted = c.submit(positions, optimal=True, all_optimal=True, count_only=True)
    for batch in (listed, counted):
        assert c.wait(batch, timeout=300)["done"] == 2
    rows = c.results(listed).read_all().to_pylist()
    assert [r["count"] for r in rows] == [6, 1]
    for r in rows:
        assert r["solution"] == r["solutions"][0]
        assert all(solves(r["input"], s) for s in r["solutions"])
    counts = c.results(counted).read_all().to_pylist()
    assert [(r["count"], r["solutions"]) for r in counts] == [(6, None), (1, None)]
    with pytest.raises(ValueError, match="count_only"):
        c.submit(positions, optimal=True, count_only=True)


def test_a_wrong_token_or_address_is_an_error(coordinator):
    with pytest.raises(Exception):
        cubefleet.Client(coordinator.url, token="wrong").status()
    with pytest.raises(ValueError):
        cubefleet.Client("not a url")


def test_a_file_is_named_by_the_clis_content_hash(coordinator, cli, tmp_path):
    c = cubefleet.Client(coordinator.url, token=coordinator.token)
    flags = ("--coordinator", coordinator.url, "--token", coordinator.token)
    # lines the reader trims, a CRLF, a blank line and a comment: hashed as read
    first = tmp_path / "first.txt"
    first.write_bytes(b" R U \r\nF2\n\n# a note\nU'")
    longer = tmp_path / "longer.txt"
    longer.write_bytes(first.read_bytes() + b"\nD\n")  # the same lines and one more
    # a batch the CLI made from the file takes the file again from Python: the same hash
    cli("submit", str(first), "--batch-id", "by-cli", *flags)
    assert c.submit(path=first, batch_id="by-cli") == "by-cli"
    # another file under that id is refused by its hash, though every line the batch holds
    # is the same
    with pytest.raises(RuntimeError, match="content hash is not the one it was created with"):
        c.submit(path=longer, batch_id="by-cli")
    assert c.status("by-cli")["total"] == 5
    # the other way round: the CLI checks its file against the hash Python sent
    c.submit(path=longer, batch_id="by-python")
    cli("submit", str(longer), "--batch-id", "by-python", *flags)
    refused = cli("submit", str(first), "--batch-id", "by-python", *flags, check=False)
    assert refused.returncode != 0
    assert b"content hash is not the one it was created with" in refused.stderr
    # lines given as a list are named by the same hash as the file they came from
    assert c.submit(lines=["R U", "F2", "", "# a note", "U'"], batch_id="by-cli") == "by-cli"
    with pytest.raises(RuntimeError, match="content hash is not the one it was created with"):
        c.submit(lines=["R U", "F2", "", "# a note"], batch_id="by-cli")
