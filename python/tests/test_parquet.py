"""The CLI's Parquet export read back by pyarrow: the same rows as its JSON lines, typed."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq

import cubefleet
from conftest import REPO
from cube import reaches, solves


def json_rows(text: bytes):
    return [json.loads(line) for line in text.decode().splitlines()]


def parquet_rows(path):
    table = pq.read_table(path)
    status = table.schema.field("status").type
    assert pa.types.is_dictionary(status) and status.value_type == pa.string()
    assert table.schema.field("length").type == pa.uint32()
    assert table.schema.field("confirmed_by").type == pa.list_(pa.field("item", pa.string(), False))
    assert table.schema.metadata[b"cubefleet.schema_version"] == b"5"
    rows = table.to_pylist()
    # the JSON line leaves out the optional fields it does not know, `claimed` when false,
    # `confirmed_by` when empty, `moves` when every turn was allowed, `to` without a target and
    # `goal` without a goal, `solutions` and `count` for one solution
    for r in rows:
        for optional, none in (("lower_bound", None), ("nodes", None), ("state_index", None),
                               ("worker", None), ("claimed", False), ("confirmed_by", []),
                               ("moves", None), ("to", None), ("goal", None),
                               ("solutions", None), ("count", None)):
            if r[optional] == none:
                del r[optional]
    return rows


def test_run_writes_the_same_rows_as_parquet_and_as_json_lines(cli, tmp_path):
    lines = cubefleet.scramble(300, seed=5) + ["", "# comment", "R U X2 F", "R4"]
    src = tmp_path / "positions.txt"
    src.write_text("\n".join(lines) + "\n")
    data = tmp_path / "data"
    first = cli("run", str(src), "--data", str(data), "--threads", "2",
                "--out", str(tmp_path / "r.parquet"), check=False)
    assert first.returncode == 1, first.stderr  # the invalid lines
    # the same file again resumes from the store and writes the JSON lines
    cli("run", str(src), "--data", str(data), "--out", str(tmp_path / "r.jsonl"), check=False)
    want = json_rows((tmp_path / "r.jsonl").read_bytes())
    got = parquet_rows(tmp_path / "r.parquet")
    assert len(got) == len(lines)
    # `nodes` is not kept by the store for every line; compare the rest exactly
    for g, w in zip(got, want):
        g.pop("nodes", None)
        w.pop("nodes", None)
        assert g == w
    for r in got:
        if r["status"] == "solved":
            assert solves(r["input"], r["solution"])
    # the provenance columns hold what the JSON lines say (compared above), not nothing
    assert any("worker" in r for r in got)


def test_solve_writes_parquet_on_stdout(cli, tmp_path):
    positions = b"R U\n\nR U X2 F\nF2 U'\n"
    out = cli("solve", "--format", "parquet", input=positions, check=False)
    assert out.returncode == 1
    path = tmp_path / "s.parquet"
    path.write_bytes(out.stdout)
    got = parquet_rows(path)
    want = json_rows(cli("solve", "--format", "json", input=positions, check=False).stdout)
    for g, w in zip(got, want):
        g.pop("millis"), w.pop("millis")  # wall time of each run
        assert g == w
    assert [r["status"] for r in got] == ["solved", "skipped", "invalid", "solved"]


def test_a_move_set_is_a_column(cli, tmp_path):
    args = ("solve", "--optimal", "--moves", "R,U", "R U R' U'", "F")
    path = tmp_path / "m.parquet"
    path.write_bytes(cli(*args, "--format", "parquet", check=False).stdout)
    got = parquet_rows(path)
    want = json_rows(cli(*args, "--format", "json", check=False).stdout)
    for g, w in zip(got, want):
        g.pop("millis"), w.pop("millis")
        g.pop("nodes", None), w.pop("nodes", None)
        assert g == w
    assert [(r["status"], r["moves"]) for r in got] == [("solved", "U,R"), ("unreachable", "U,R")]


def test_a_target_is_a_column(cli, tmp_path):
    args = ("solve", "--to", "R U", "R U R' U'", "F")
    path = tmp_path / "t.parquet"
    path.write_bytes(cli(*args, "--format", "parquet").stdout)
    got = parquet_rows(path)
    want = json_rows(cli(*args, "--format", "json").stdout)
    for g, w in zip(got, want):
        g.pop("millis"), w.pop("millis")
        g.pop("nodes", None), w.pop("nodes", None)
        assert g == w
    target = cubefleet.position(cubefleet.index("R U"))
    assert [r["to"] for r in got] == [target, target]
    assert all(reaches(r["input"], r["solution"], "R U") for r in got)


def test_a_goal_is_a_column(cli, tmp_path):
    args = ("solve", "--optimal", "--goal", "cross", "--on", "any-face", "R F", "R U")
    path = tmp_path / "g.parquet"
    path.write_bytes(cli(*args, "--format", "parquet").stdout)
    got = parquet_rows(path)
    want = json_rows(cli(*args, "--format", "json").stdout)
    for g, w in zip(got, want):
        g.pop("millis"), w.pop("millis")
        g.pop("nodes", None), w.pop("nodes", None)
        # where the goal was reached is the JSON line's alone
        assert w.pop("goal_reached").startswith("cross on ")
        assert g == w
    assert [r["goal"] for r in got] == ["cross on any face"] * 2


def test_a_histogram_batch_writes_its_histogram(cli, tmp_path):
    out = tmp_path / "h.parquet"
    cli("run", "--sample", "200", "--seed", "3", "--keep", "histogram",
        "--data", str(tmp_path / "data"), "--out", str(out))
    table = pq.read_table(out)
    assert table.column_names == ["length", "count"]
    assert sum(table.column("count").to_pylist()) == 200
    lengths = [l for l, n in zip(*table.to_pydict().values()) if n]
    assert min(lengths) >= 14 and max(lengths) <= 21


def test_the_python_table_and_the_cli_file_share_a_schema(cli, tmp_path):
    path = tmp_path / "s.parquet"
    path.write_bytes(cli("solve", "--format", "parquet", "R U").stdout)
    def plain(schema):
        # pyarrow reads a dictionary column back with int32 keys whatever they were written as
        return [(f.name, f.type.value_type if pa.types.is_dictionary(f.type) else f.type, f.nullable)
                for f in schema]

    assert plain(pq.read_schema(path)) == plain(cubefleet.solve_many(["R U"]).schema)


def test_the_example_files_solve_from_python_as_from_the_cli():
    table = cubefleet.solve_file(REPO / "examples" / "scrambles.txt")
    df = table.to_pandas()
    assert (df["status"] == "solved").all()
    assert (df["length"] <= 20).all()
