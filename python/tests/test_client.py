"""`cubefleet.Client` against a real coordinator process and a real worker."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

import cubefleet
from cube import solves


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


def test_a_wrong_token_or_address_is_an_error(coordinator):
    with pytest.raises(Exception):
        cubefleet.Client(coordinator.url, token="wrong").status()
    with pytest.raises(ValueError):
        cubefleet.Client("not a url")
