"""The package's searches: every answer applied to its position by the naive cube
(`cube.py`), refusals as the CLI words them, the same answers as the CLI."""

from __future__ import annotations

import json
import random

import pyarrow as pa
import pytest

import cubefleet
from cube import has_cross, reaches, solves

FACES = "URFDLB"


def random_moves(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(FACES) + rng.choice(["", "2", "'"]) for _ in range(n))


def test_a_short_position_gets_its_shortest_answer():
    r = cubefleet.solve("R U")
    assert (r.solution, r.length, r.status) == ("U' R'", 2, "solved")
    assert r.moves == ["U'", "R'"]
    assert r.to_dict()["solution"] == "U' R'"


def test_the_solved_cube_needs_no_turn():
    r = cubefleet.solve("UUUUUUUUURRRRRRRRRFFFFFFFFFDDDDDDDDDLLLLLLLLLBBBBBBBBB")
    assert (r.solution, r.length) == ("", 0)


def test_random_scrambles_are_solved_within_20_and_each_answer_solves_its_position():
    scrambles = cubefleet.scramble(40, seed=7)
    table = cubefleet.solve_many(scrambles, threads=2)
    assert isinstance(table, pa.Table)
    assert table.num_rows == 40
    assert table.column("index").to_pylist() == list(range(40))
    assert table.column("input").to_pylist() == scrambles
    for row in table.to_pylist():
        assert row["status"] == "solved"
        assert row["length"] <= 20
        assert len(row["solution"].split()) == row["length"]
        assert solves(row["input"], row["solution"]), row


def test_solve_many_keeps_input_order_whatever_the_threads():
    rng = random.Random(3)
    positions = [random_moves(rng, n) for n in range(0, 30)]
    one = cubefleet.solve_many(positions, threads=1, output="list")
    two = cubefleet.solve_many(positions, threads=2, output="list")
    assert [r.input for r in one] == positions
    assert [r.solution for r in one] == [r.solution for r in two]
    for r in two:
        assert solves(r.input, r.solution)


def test_a_target_below_the_answer_gives_the_best_found_over_target():
    r = cubefleet.solve(cubefleet.scramble(1, seed=11)[0], max_length=10, timeout=5)
    assert r.status in ("over_target", "timeout")
    assert r.length > 10


def test_optimal_answers_are_proven_shortest():
    for scramble, length in [("R U R' U'", 4), ("R2 U2 F2", 3), ("F R U' R' U' R U R' F'", 9)]:
        r = cubefleet.optimal(scramble)
        assert r.optimal and r.length == length and r.lower_bound == length, r
        assert solves(scramble, r.solution)
    q = cubefleet.optimal("R2 U2", metric="qtm")
    assert q.length == 4 and q.optimal
    none = cubefleet.optimal("R U R' U'", max_depth=3)
    assert none.status == "none_within" and none.solution == ""


def test_facelet_strings_and_nets_are_read_as_the_cli_reads_them():
    scramble = "R U2 F' L D2 B"
    facelets = cubefleet.position(cubefleet.index(scramble))
    r = cubefleet.solve(facelets)
    assert solves(scramble, r.solution)
    # the same position in other colour letters, read through the centres
    recoloured = facelets.translate(str.maketrans("URFDLB", "WRGYOB"))
    assert cubefleet.solve(recoloured).solution == r.solution


def test_a_refused_position_raises_invalid_position_with_the_reason():
    with pytest.raises(cubefleet.InvalidPosition) as e:
        cubefleet.solve("R U X2 F")
    assert e.value.line is None and e.value.input == "R U X2 F"
    assert "X2" in e.value.reason
    twisted = "UUUUUUUUFURRRRRRRRFFRFFFFFFDDDDDDDDDLLLLLLLLLBBBBBBBBB"
    with pytest.raises(cubefleet.InvalidPosition, match="twisted"):
        cubefleet.solve(twisted)
    with pytest.raises(cubefleet.InvalidPosition):
        cubefleet.solve("R4")
    with pytest.raises(ValueError):  # InvalidPosition is a ValueError
        cubefleet.index("UUUUUUUUUUUU")  # a facelet string of 12 stickers


def test_solve_many_names_the_first_refused_line_and_searches_nothing():
    with pytest.raises(cubefleet.InvalidPosition) as e:
        cubefleet.solve_many(["R U", "# a comment", "R U X2 F", "R4"])
    assert (e.value.line, e.value.input) == (2, "R U X2 F")
    assert "line 2" in str(e.value)


def test_refusals_are_the_clis_word_for_word(cli):
    path = cubefleet_examples() / "with-errors.txt"
    mine = cubefleet.solve_file(path, invalid="keep").to_pylist()
    out = cli("solve", "--format", "json", input=path.read_bytes(), check=False).stdout
    theirs = [json.loads(line) for line in out.decode().splitlines()]
    assert len(mine) == len(theirs) > 0
    assert any(r["status"] == "invalid" for r in mine)
    for a, b in zip(mine, theirs):
        assert (a["index"], a["input"], a["status"], a["error"]) == (
            b["index"], b["input"], b["status"], b["error"]
        )
        if a["status"] == "solved":
            assert a["length"] == b["length"]


def test_blank_and_comment_lines_are_skipped_in_place():
    table = cubefleet.solve_many(["R U", "", "# note", "F"])
    assert table.column("status").to_pylist() == ["solved", "skipped", "skipped", "solved"]
    assert table.column("length").to_pylist() == [2, None, None, 1]


def test_the_table_is_typed():
    table = cubefleet.solve_many(["R U", "F2"])
    s = table.schema
    assert s.field("index").type == pa.uint64()
    assert s.field("status").type == pa.dictionary(pa.int8(), pa.string())
    assert s.field("length").type == pa.uint32()
    assert s.field("optimal").type == pa.bool_()
    assert s.field("millis").type == pa.float64()
    df = table.to_pandas()
    assert str(df["status"].dtype) == "category"


def test_index_and_position_are_inverse_and_match_the_cli(cli):
    assert cubefleet.index("UUUUUUUUURRRRRRRRRFFFFFFFFFDDDDDDDDDLLLLLLLLLBBBBBBBBB") == 0
    for s in cubefleet.scramble(5, seed=2):
        i = cubefleet.index(s)
        assert 0 <= i < cubefleet.N_STATES
        assert cubefleet.index(cubefleet.position(i)) == i
        assert int(cli("index", s).stdout) == i
    last = cubefleet.N_STATES - 1
    assert cubefleet.index(cubefleet.position(last)) == last
    for bad in (cubefleet.N_STATES, -1):
        with pytest.raises(ValueError):
            cubefleet.position(bad)


def test_scrambles_are_seeded_as_the_clis(cli):
    mine = cubefleet.scramble(3, seed=42)
    theirs = cli("scramble", "--count", "3", "--seed", "42").stdout.decode().split("\n")[:3]
    assert mine == theirs
    assert cubefleet.scramble(3, seed=42) == mine


def test_arguments_are_checked():
    for bad in (
        dict(max_length=0),
        dict(timeout=0),
        dict(threads=0),
        dict(metric="stm"),
        dict(invalid="ignore"),
    ):
        with pytest.raises(ValueError):
            cubefleet.solve_many(["R"], **bad)


def test_the_tables_are_found_as_the_cli_finds_them():
    import os

    expected = os.environ.get("CUBEFLEET_TABLES")
    if expected:
        assert cubefleet.tables_dir() == expected
    assert cubefleet.build_tables() == []  # all there


def test_help_is_enough():
    assert "max_length" in cubefleet.solve.__doc__
    assert "InvalidPosition" in cubefleet.solve_many.__doc__
    assert cubefleet.Client.__doc__


def test_solve_file_takes_solve_manys_arguments(tmp_path):
    import inspect

    many = inspect.signature(cubefleet.solve_many).parameters
    file = inspect.signature(cubefleet.solve_file).parameters
    assert list(file) == ["path", *list(many)[1:]]
    # the same kinds and defaults, but a file's refused lines are answered as `run` answers
    # them (status invalid) where a list's raise
    assert [(p.kind, p.default) for p in file.values()][1:] == [
        (p.kind, "keep" if p.name == "invalid" else p.default) for p in many.values()
    ][1:]
    path = tmp_path / "two.txt"
    path.write_text("R U\nF2\n")
    by_position = cubefleet.solve_file(str(path), 20, 1, output="list")
    by_name = cubefleet.solve_file(path=path, max_length=20, threads=1, output="list")
    assert [r.solution for r in by_position] == [r.solution for r in by_name] == ["U' R'", "F2"]
    with pytest.raises(TypeError):
        cubefleet.solve_file(path, 20, 1, None)  # timeout is keyword-only, as in solve_many


def cubefleet_examples():
    from conftest import REPO

    return REPO / "examples"


def test_a_move_set_keeps_the_optimal_search_to_its_turns():
    r = cubefleet.optimal("R U R' U'", moves="R,U")
    assert (r.status, r.length, r.move_set) == ("solved", 4, "U,R")
    assert all(m[0] in "RU" for m in r.moves)
    assert solves("R U R' U'", r.solution)
    assert r.to_dict()["moves"] == "U,R"
    out = cubefleet.optimal("F", moves="R,U")
    assert out.status == "unreachable" and out.error
    with pytest.raises(ValueError, match="moves"):
        cubefleet.optimal("R U", moves="R'")
    with pytest.raises(ValueError, match="moves"):
        cubefleet.solve_many(["R U"], moves="R,U")


def test_goal_gives_the_shortest_way_to_a_partial_goal():
    r = cubefleet.solve("R F", goal="cross")
    assert (r.length, r.optimal, r.goal, r.goal_reached) == (2, True, "cross", "cross on D")
    assert has_cross("R F", r.solution) and not has_cross("R F", "")
    assert r.to_dict()["goal_reached"] == "cross on D"
    # on any face: D breaks only the D cross (and R the D and U ones): the U cross is there
    anywhere = cubefleet.optimal("D", goal="cross", on="any-face")
    assert (anywhere.length, anywhere.goal_reached) == (0, "cross on U")
    assert cubefleet.solve("R U").goal is None
    table = cubefleet.solve_many(["R F", "U2", "R U R' F2"], goal="cross", max_depth=8)
    assert table.column("goal").to_pylist() == ["cross"] * 3
    for position, solution in zip(table.column("input").to_pylist(), table.column("solution").to_pylist()):
        assert has_cross(position, solution)
    assert table.column("length").to_pylist()[1] == 0
    with pytest.raises(ValueError, match="goal"):
        cubefleet.optimal("R", goal="crosses")
    with pytest.raises(ValueError, match="on"):
        cubefleet.optimal("R", goal="cross", on="every-face")
    with pytest.raises(ValueError, match="goal"):
        cubefleet.solve_many(["R"], goal="cross")


def test_to_solves_to_another_position_in_every_mode():
    target = cubefleet.position(cubefleet.index("R U"))
    r = cubefleet.solve("R U R' U'", to="R U")
    assert r.status == "solved" and reaches("R U R' U'", r.solution, "R U")
    assert (r.to, r.to_dict()["to"]) == (target, target)
    assert not reaches("R U R' U'", r.solution, "") and cubefleet.solve("R U").to is None
    shortest = cubefleet.optimal("R U", to="R U R")
    assert (shortest.solution, shortest.length, shortest.optimal) == ("R", 1, True)
    table = cubefleet.solve_many(["F", "R U R' U'", "R U"], to="R U", max_depth=8)
    assert table.column("to").to_pylist() == [target] * 3
    for position, solution in zip(table.column("input").to_pylist(), table.column("solution").to_pylist()):
        assert reaches(position, solution, "R U")
    assert table.column("length").to_pylist()[2] == 0
    with pytest.raises(ValueError, match="to"):
        cubefleet.solve("R", to="R4")


def test_several_solutions_all_optimal_and_their_count():
    checkerboard = "R2 L2 U2 D2 F2 B2"
    every = cubefleet.optimal(checkerboard, all_optimal=True)
    assert (every.status, every.count, every.optimal) == ("solved", 6, True)
    assert every.solution == every.solutions[0] and len(set(every.solutions)) == 6
    assert all(solves(checkerboard, s) and len(s.split()) == 6 for s in every.solutions)
    assert every.to_dict()["count"] == 6
    only = cubefleet.optimal(checkerboard, all_optimal=True, count_only=True, threads=2)
    assert (only.count, only.solutions) == (6, None)
    ten = cubefleet.optimal(checkerboard, max_depth=8, solutions=10)
    assert ten.solutions[:6] == every.solutions and ten.count == len(ten.solutions) <= 10
    assert all(solves(checkerboard, s) for s in ten.solutions)
    one = cubefleet.optimal(checkerboard)
    assert (one.solutions, one.count, one.to_dict()["solutions"]) == (None, None, None)
    table = cubefleet.solve_many(["R U", checkerboard], optimal=True, all_optimal=True)
    assert table.column("count").to_pylist() == [1, 6]
    assert table.column("solutions").to_pylist()[1] == every.solutions
    with pytest.raises(ValueError, match="count_only"):
        cubefleet.optimal("R U", count_only=True)
    with pytest.raises(ValueError, match="solutions"):
        cubefleet.optimal("R U", solutions=1001)
    with pytest.raises(ValueError, match="solutions"):
        cubefleet.solve_many(["R U"], solutions=3)
