//! Every numeric flag of every subcommand, given the values an unlucky operator types (0,
//! negative, nan, inf, huge): a clap error or a documented meaning, never a panic. Cheap:
//! commands that would do real work find no tables (`--no-build` on an empty directory), no
//! coordinator (a closed port) or no input file, so each run ends in a moment.

mod common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The values tried on every flag.
const VALUES: [&str; 7] = [
    "0",
    "-1",
    "nan",
    "inf",
    "-inf",
    "1e30",
    "18446744073709551616",
];

/// Runs `cmd` to its end (at most a minute) and asserts it did not panic; returns its exit
/// code and stderr.
fn assert_no_panic(mut cmd: Command, what: &str) -> (i32, String) {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let end = Instant::now() + Duration::from_secs(60);
    while child.try_wait().expect("try_wait").is_none() {
        if Instant::now() > end {
            let _ = child.kill();
            panic!("{what}: still running after a minute");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().expect("wait");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let code = out.status.code().unwrap_or(-1);
    assert!(
        code != 101 && !stderr.contains("panicked"),
        "{what}: exit {code}, {stderr}"
    );
    (code, stderr)
}

#[test]
fn no_numeric_flag_value_makes_any_subcommand_panic() {
    let dir = tempfile::tempdir().expect("temp dir");
    let tables = dir.path().join("no-tables");
    std::fs::create_dir(&tables).expect("tables dir");
    let positions = dir.path().join("positions.txt");
    std::fs::write(&positions, "R U\n").expect("write");
    let data = dir.path().join("data");
    let missing = dir.path().join("missing.txt");
    let (tables, positions, data, missing) = (
        tables.to_str().expect("utf-8"),
        positions.to_str().expect("utf-8"),
        data.to_str().expect("utf-8"),
        missing.to_str().expect("utf-8"),
    );
    // nothing listens on port 1 of the loopback
    let nowhere = "http://127.0.0.1:1";
    let no_tables = ["--tables", tables, "--no-build"];
    // (the command before the flag, its numeric flags, what follows the flag)
    let commands: Vec<(Vec<&str>, Vec<&str>, Vec<&str>)> = vec![
        (
            vec!["solve"],
            vec!["--timeout", "--threads", "--max-length", "--max-depth"],
            [&no_tables[..], &["R U"]].concat(),
        ),
        (
            vec!["run", positions, "--data", data],
            vec!["--timeout", "--threads", "--max-length", "--max-depth"],
            no_tables.to_vec(),
        ),
        (
            vec!["submit", positions, "--coordinator", nowhere],
            vec!["--timeout", "--max-length", "--max-depth", "--priority"],
            vec![],
        ),
        (
            vec!["coordinator", "--listen", "127.0.0.1:0", "--data", data],
            vec!["--lease"],
            vec![],
        ),
        (
            vec!["worker", "--coordinator", nowhere],
            vec!["--threads", "--grace"],
            no_tables.to_vec(),
        ),
        (
            vec!["coset", "solve", "R"],
            vec![
                "--max-depth",
                "--exact-depth",
                "--threads",
                "--position-timeout",
            ],
            no_tables.to_vec(),
        ),
        (
            vec!["scramble"],
            vec!["--count", "--seed", "--max-length"],
            no_tables.to_vec(),
        ),
        (
            vec!["bench", "twophase", "--file", missing],
            vec!["--count", "--runs", "--targets", "--threads"],
            no_tables.to_vec(),
        ),
        (
            vec!["bench", "optimal", "--file", missing],
            vec!["--count", "--skip", "--threads", "--timeout"],
            no_tables.to_vec(),
        ),
        (
            vec!["bench", "coordinator", "--data", data],
            vec!["--jobs", "--workers", "--group"],
            vec![],
        ),
    ];
    let mut refused = 0;
    for (before, flags, after) in &commands {
        for flag in flags {
            for value in VALUES {
                let mut cmd = Command::new(env!("CARGO_BIN_EXE_cubefleet"));
                cmd.args(before)
                    .arg(format!("{flag}={value}"))
                    .args(after)
                    .env_remove("CUBEFLEET_COORDINATOR")
                    .env_remove("CUBEFLEET_TOKEN");
                let what = format!("{} {flag}={value}", before.join(" "));
                let (code, _) = assert_no_panic(cmd, &what);
                refused += usize::from(code == 2);
            }
        }
    }
    // most of these values are refused when the command line is read
    assert!(refused > 100, "{refused} refused");
}

#[test]
fn values_that_pass_the_checks_are_searched_with_the_real_tables() {
    // the values solve accepts do what their help says, on real tables, without a panic
    for (flag, value) in [
        ("--max-depth", "0"),
        ("--timeout", "1e-9"),
        ("--max-length", "1"),
        ("--threads", "1024"),
    ] {
        let mut cmd = common::cubefleet();
        cmd.args([
            "solve",
            "--format",
            "json",
            &format!("{flag}={value}"),
            "R U F",
        ]);
        let what = format!("solve {flag}={value}");
        let (code, stderr) = assert_no_panic(cmd, &what);
        assert_eq!(code, 0, "{what}: {stderr}");
    }
}

/// Runs the command `before` with `flags`, which must be refused as a usage error (exit 2,
/// no panic); its stderr.
fn refused(before: &[&str], flags: &[&str]) -> String {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cubefleet"));
    cmd.args(before).args(flags);
    let what = format!("{} {}", before.join(" "), flags.join(" "));
    let (code, stderr) = assert_no_panic(cmd, &what);
    assert_eq!(code, 2, "{what}: {stderr}");
    stderr
}

#[test]
fn qtm_with_a_two_phase_search_is_refused() {
    for before in [
        vec!["solve", "R U"],
        vec!["run", "missing.txt"],
        vec!["submit", "missing.txt"],
    ] {
        let stderr = refused(&before, &["--metric", "qtm"]);
        assert!(stderr.contains("--optimal"), "{stderr}");
        refused(&before, &["--metric", "qtm", "--max-length", "18"]);
    }
}

/// `--moves` goes with `--optimal` or `--max-depth` (clap names what to add), and a set it
/// cannot read is refused naming the flag and the reason, before any table is loaded.
#[test]
fn a_move_set_without_an_exact_search_or_unreadable_is_refused() {
    for before in [
        vec!["solve", "R U"],
        vec!["run", "missing.txt"],
        vec!["submit", "missing.txt"],
    ] {
        let stderr = refused(&before, &["--moves", "R,U"]);
        assert!(stderr.contains("--optimal"), "{stderr}");
        for bad in ["R'", "X", "", "-U,R,F,D,L,B", "R,,U"] {
            let stderr = refused(&before, &["--optimal", "--moves", bad]);
            assert!(stderr.contains("--moves"), "{bad:?}: {stderr}");
        }
    }
}

/// `solve --optimal --moves R,U`: the shortest solution in R and U turns (checked here by the
/// row's own fields: turns of R and U only, its length; the search crate's tests hold the
/// lengths to a breadth-first search), the row names the set, and a position the set cannot
/// reach is `unreachable` with the reason.
#[test]
fn solve_with_a_move_set_keeps_to_it_and_says_so() {
    let mut cmd = common::cubefleet();
    cmd.args([
        "solve",
        "--format",
        "json",
        "--optimal",
        "--moves",
        "R,U",
        "R U R' U'",
        "F",
    ]);
    let rows = common::json_rows(&mut cmd);
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!(rows[0]["status"], "solved");
    assert_eq!(rows[0]["moves"], "U,R");
    assert_eq!(rows[0]["length"], 4);
    let solution = rows[0]["solution"].as_str().expect("a solution");
    assert!(
        solution
            .split(' ')
            .all(|t| t.starts_with('R') || t.starts_with('U')),
        "{solution}"
    );
    assert_eq!(rows[1]["status"], "unreachable");
    assert!(
        rows[1]["error"].as_str().is_some_and(|e| !e.is_empty()),
        "{:?}",
        rows[1]
    );
    // `-B` is a set, not a flag: every face but B
    let mut cmd = common::cubefleet();
    cmd.args([
        "solve",
        "--format",
        "json",
        "--max-depth",
        "3",
        "--moves",
        "-B",
        "R U",
    ]);
    let rows = common::json_rows(&mut cmd);
    assert_eq!(rows.len(), 1, "{rows:?}");
    let row = &rows[0];
    assert_eq!(row["status"], "solved");
    assert_eq!(row["length"], 2);
    assert_eq!(row["moves"], "U,R,F,D,L");
}

/// `run --optimal --moves R,U` through the job system: the coordinator checks the set, the
/// embedded worker keeps to it, the rows name it, and `F` is `unreachable` with the reason.
#[test]
fn run_with_a_move_set_answers_within_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("ru.txt");
    std::fs::write(&file, "R U R' U'\nF\n").expect("write");
    let rows = common::json_rows(
        common::cubefleet()
            .args([
                "run",
                "--optimal",
                "--moves",
                "R,U",
                "--no-build",
                "--threads",
                "2",
            ])
            .arg(&file)
            .arg("--data")
            .arg(dir.path().join("data")),
    );
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!(
        (&rows[0]["status"], &rows[0]["length"]),
        (&"solved".into(), &4.into())
    );
    assert_eq!(rows[0]["moves"], "U,R");
    let solution = rows[0]["solution"].as_str().expect("a solution");
    assert!(
        solution.split(' ').all(|t| t.starts_with(['R', 'U'])),
        "{solution}"
    );
    assert_eq!(rows[1]["status"], "unreachable");
    assert!(
        rows[1]["error"].as_str().is_some_and(|e| !e.is_empty()),
        "{:?}",
        rows[1]
    );
}

/// The cube a move sequence or a facelet string writes (the tables crate's reading).
fn cube_of(position: &str) -> cubefleet_tables::CubieCube {
    cubefleet_tables::parse_position(position, cubefleet_tables::InputFormat::Auto)
        .expect("a position")
}

/// Checks that `row`'s solution takes its input to `target`, that the row names the target
/// by its facelets, and returns the solution's length.
fn reaches(row: &serde_json::Value, target: &str) -> u64 {
    let input = row["input"].as_str().expect("an input");
    let solution = row["solution"].as_str().expect("a solution");
    let turns = cubefleet_tables::MoveSeq::parse(solution).expect("turns");
    assert_eq!(
        cube_of(input).apply_moves(&turns.0),
        cube_of(target),
        "{row}"
    );
    let facelets = cubefleet_tables::FaceletCube::from_cubie(&cube_of(target)).to_string();
    assert_eq!(row["to"], facelets.as_str(), "{row}");
    row["length"].as_u64().expect("a length")
}

/// `solve --to POSITION` in every mode: the solution applied to the input gives the target
/// (a move sequence or a facelet string), the row names it, and `--optimal` gives the
/// shortest way there (from `R U` to `R U R` is one turn). A `--to` that is no position is
/// refused naming the flag, before any table is loaded.
#[test]
fn solve_to_a_position_reaches_it_in_every_mode() {
    let target_facelets = cubefleet_tables::FaceletCube::from_cubie(&cube_of("R U")).to_string();
    for (mode, to) in [
        (vec![], "R U"),
        (vec!["--optimal"], target_facelets.as_str()),
        (vec!["--max-depth", "4", "--metric", "qtm"], "R U"),
        (vec!["--optimal", "--moves", "R,U"], "R U"),
    ] {
        let mut cmd = common::cubefleet();
        cmd.args(["solve", "--format", "json", "--to", to])
            .args(&mode)
            .arg("R U R' U'");
        let rows = common::json_rows(&mut cmd);
        assert_eq!(rows.len(), 1, "{mode:?}: {rows:?}");
        assert_eq!(rows[0]["status"], "solved", "{mode:?}: {rows:?}");
        let length = reaches(&rows[0], "R U");
        if !mode.is_empty() {
            assert_eq!(length, 2, "{mode:?}: {rows:?}");
        }
    }
    let mut cmd = common::cubefleet();
    cmd.args([
        "solve",
        "--format",
        "json",
        "--optimal",
        "--to",
        "R U R",
        "R U",
    ]);
    let rows = common::json_rows(&mut cmd);
    assert_eq!(
        (reaches(&rows[0], "R U R"), &rows[0]["optimal"]),
        (1, &true.into())
    );
    // without --to, no `to` in the row
    let rows = common::json_rows(common::cubefleet().args(["solve", "--format", "json", "R U"]));
    assert!(rows[0].get("to").is_none(), "{rows:?}");
    for before in [
        vec!["solve", "R U"],
        vec!["run", "missing.txt"],
        vec!["submit", "missing.txt"],
    ] {
        for bad in [
            "R4",
            "Q",
            "UUUUUUUUURRRRRRRRRFFFFFFFFFDDDDDDDDDLLLLLLLLLBBBBBBBBU",
        ] {
            let stderr = refused(&before, &["--to", bad]);
            assert!(stderr.contains("--to"), "{bad:?}: {stderr}");
        }
    }
}

/// `run --to` through the job system: the coordinator checks that each solution reaches the
/// target, the embedded worker solves to it, and the rows name it.
#[test]
fn run_to_a_position_reaches_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("to.txt");
    std::fs::write(
        &file,
        "R U R' U'
F D2 L'
R U
",
    )
    .expect("write");
    let rows = common::json_rows(
        common::cubefleet()
            .args(["run", "--to", "R U", "--no-build", "--threads", "2"])
            .arg(&file)
            .arg("--data")
            .arg(dir.path().join("data")),
    );
    assert_eq!(rows.len(), 3, "{rows:?}");
    for row in &rows {
        assert_eq!(row["status"], "solved", "{row}");
        reaches(row, "R U");
    }
    assert_eq!(rows[2]["length"], 0);
}

/// `submit --to` to a coordinator and a worker, each its own process: the worker solves to the
/// target, the coordinator checks it, and `results` names the target in every row.
#[test]
fn submit_to_a_position_through_a_fleet() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("to.txt");
    std::fs::write(&file, "R U R' U'\nF D2 L'\n").expect("write");
    let (_coordinator, url) = common::coordinator(&dir.path().join("data"));
    let _worker = common::worker("w-to", &url);
    let file = file.to_str().expect("utf-8");
    let out = common::client(
        &url,
        &["submit", file, "--to", "R U", "--optimal", "--wait"],
    );
    let batch = out.trim().lines().last().expect("the batch id").to_string();
    let rows: Vec<serde_json::Value> = common::client(&url, &["results", &batch])
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(rows.len(), 2, "{rows:?}");
    for row in &rows {
        assert_eq!(row["status"], "solved", "{row}");
        reaches(row, "R U");
    }
    assert_eq!(rows[0]["length"], 2);
}

/// True when the D-layer edges of `row`'s input are home and unflipped after its solution (the
/// bottom cross, read from the cubie level here: DR DF DL DB are positions 4 to 7), and the
/// row names the goal.
fn reaches_cross(row: &serde_json::Value, goal: &str) -> u64 {
    let input = row["input"].as_str().expect("an input");
    let solution = row["solution"].as_str().expect("a solution");
    let turns = cubefleet_tables::MoveSeq::parse(solution).expect("turns");
    let c = cube_of(input).apply_moves(&turns.0);
    assert_eq!(
        (&c.ep[4..8], &c.eo[4..8]),
        (&[4, 5, 6, 7][..], &[0; 4][..]),
        "{row}"
    );
    assert_eq!(row["goal"], goal, "{row}");
    assert_eq!(row["goal_reached"], "cross on D", "{row}");
    row["length"].as_u64().expect("a length")
}

/// `solve --goal`: the shortest sequence to the goal, the row naming the goal and where it was
/// reached (on any face: the first face whose cross is there); a facelet mask reads as its
/// pieces. A goal that is no goal, one without an exact search, one with `--to`, and `--on`
/// without a goal are refused naming the flag.
#[test]
fn solve_to_a_goal_names_it_and_reaches_it() {
    let rows = common::json_rows(common::cubefleet().args([
        "solve",
        "--format",
        "json",
        "--optimal",
        "--goal",
        "cross",
        "R F",
        "R U",
    ]));
    assert_eq!(reaches_cross(&rows[0], "cross"), 2);
    assert_eq!(reaches_cross(&rows[1], "cross"), 1);
    assert_eq!(rows[0]["optimal"], true);
    // D turns break the D cross only: on any face, the U cross is there already
    let rows = common::json_rows(common::cubefleet().args([
        "solve",
        "--format",
        "json",
        "--max-depth",
        "3",
        "--goal",
        "cross",
        "--on",
        "any-face",
        "D",
    ]));
    assert_eq!(rows[0]["length"], 0, "{rows:?}");
    assert_eq!(rows[0]["goal"], "cross on any face");
    assert_eq!(rows[0]["goal_reached"], "cross on U");
    // the cross as a facelet mask: the D face's edge stickers and those beside them
    let mut mask = vec![b'.'; 54];
    for i in [28, 30, 32, 34, 25, 16, 43, 52] {
        mask[i] = b"UUUUUUUUURRRRRRRRRFFFFFFFFFDDDDDDDDDLLLLLLLLLBBBBBBBBB"[i];
    }
    let mask = String::from_utf8(mask).expect("ascii");
    let rows = common::json_rows(common::cubefleet().args([
        "solve",
        "--format",
        "json",
        "--optimal",
        "--goal",
        &mask,
        "R F",
    ]));
    assert_eq!(rows[0]["goal"], "place:DR,DF,DL,DB", "{rows:?}");
    assert_eq!(rows[0]["length"], 2, "{rows:?}");
    let text = common::cubefleet()
        .args(["solve", "--optimal", "--goal", "cross", "R F"])
        .output()
        .expect("runs");
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("(2: cross on D)"), "{text}");
    for before in [
        vec!["solve", "R U"],
        vec!["run", "missing.txt"],
        vec!["submit", "missing.txt"],
    ] {
        for flags in [
            vec!["--optimal", "--goal", "crosses"],
            vec!["--optimal", "--goal", "place:XY"],
            vec!["--goal", "cross"],
            vec!["--optimal", "--goal", "cross", "--to", "R U"],
            vec!["--optimal", "--on", "any-face"],
        ] {
            let stderr = refused(&before, &flags);
            assert!(stderr.contains("--goal"), "{flags:?}: {stderr}");
        }
    }
}

/// Checks a row of a question for several solutions: each of `solutions` solves the input
/// (applied by the tables crate's cube), they are distinct, the first is `solution`; returns
/// them.
fn several(row: &serde_json::Value) -> Vec<String> {
    let input = row["input"].as_str().expect("an input");
    let list: Vec<String> = row["solutions"]
        .as_array()
        .expect("a solutions list")
        .iter()
        .map(|s| s.as_str().expect("a solution").to_string())
        .collect();
    for s in &list {
        let turns = cubefleet_tables::MoveSeq::parse(s).expect("turns");
        assert!(
            cube_of(input).apply_moves(&turns.0).is_solved(),
            "{s}: {row}"
        );
    }
    let distinct: std::collections::HashSet<&String> = list.iter().collect();
    assert_eq!(distinct.len(), list.len(), "{row}");
    assert_eq!(row["solution"], list[0].as_str(), "{row}");
    list
}

/// `solve --all-optimal`, `--count-only` and `--solutions N`: every optimal solution of the
/// checkerboard (its three axes in any order: 6) with the count, the count alone, and N
/// solutions shortest first; the flags refused where they do not belong, naming them.
#[test]
fn solve_lists_and_counts_several_solutions() {
    let checkerboard = "R2 L2 U2 D2 F2 B2";
    let solve = |flags: &[&str]| {
        let mut cmd = common::cubefleet();
        cmd.args(["solve", "--format", "json"])
            .args(flags)
            .arg(checkerboard);
        let rows = common::json_rows(&mut cmd);
        assert_eq!(rows.len(), 1, "{flags:?}: {rows:?}");
        rows[0].clone()
    };
    let all = solve(&["--optimal", "--all-optimal"]);
    assert_eq!(
        (&all["status"], &all["count"]),
        (&"solved".into(), &6.into()),
        "{all}"
    );
    let list = several(&all);
    assert_eq!(list.len(), 6);
    assert!(list.iter().all(|s| s.split(' ').count() == 6), "{list:?}");
    let only = solve(&[
        "--optimal",
        "--all-optimal",
        "--count-only",
        "--threads",
        "2",
    ]);
    assert_eq!(only["count"], 6, "{only}");
    assert!(only.get("solutions").is_none(), "{only}");
    let ten = solve(&["--max-depth", "8", "--solutions", "10"]);
    let ten_list = several(&ten);
    assert_eq!(ten_list[..6], list[..], "{ten}");
    assert_eq!(ten["count"], ten_list.len());
    assert!(ten_list.len() <= 10 && ten_list[6..].iter().all(|s| s.split(' ').count() > 6));
    // one solution, as before: no solutions, no count
    let one = solve(&["--optimal"]);
    assert!(
        one.get("solutions").is_none() && one.get("count").is_none(),
        "{one}"
    );
    for (flags, names) in [
        (vec!["--all-optimal"], "--optimal"),
        (vec!["--solutions", "3"], "--optimal"),
        (vec!["--optimal", "--count-only"], "--all-optimal"),
        (vec!["--optimal", "--solutions", "1001"], "--solutions"),
        (vec!["--optimal", "--solutions", "0"], "--solutions"),
        (
            vec!["--optimal", "--solutions", "3", "--all-optimal"],
            "--all-optimal",
        ),
    ] {
        for before in [vec!["solve", "R U"], vec!["submit", "missing.txt"]] {
            let stderr = refused(&before, &flags);
            assert!(stderr.contains(names), "{flags:?}: {stderr}");
        }
    }
}

/// `run --goal` through the job system (the coordinator checks each solution against the goal)
/// and `submit --goal --on any-face` to a coordinator and a worker, each its own process:
/// every row reaches the goal and names it, the lengths are the shortest.
#[test]
fn goals_through_the_job_system_and_a_fleet() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("goal.txt");
    std::fs::write(&file, "R F\nR U\nU2\n").expect("write");
    let rows = common::json_rows(
        common::cubefleet()
            .args(["run", "--optimal", "--goal", "cross", "--no-build"])
            .args(["--threads", "2"])
            .arg(&file)
            .arg("--data")
            .arg(dir.path().join("run")),
    );
    let lengths: Vec<u64> = rows.iter().map(|r| reaches_cross(r, "cross")).collect();
    assert_eq!(lengths, [2, 1, 0], "{rows:?}");
    let (_coordinator, url) = common::coordinator(&dir.path().join("data"));
    let _worker = common::worker("w-goal", &url);
    let file = file.to_str().expect("utf-8");
    let out = common::client(
        &url,
        &[
            "submit",
            file,
            "--goal",
            "cross",
            "--on",
            "any-face",
            "--optimal",
            "--wait",
        ],
    );
    let batch = out.trim().lines().last().expect("the batch id").to_string();
    let rows: Vec<serde_json::Value> = common::client(&url, &["results", &batch])
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(rows.len(), 3, "{rows:?}");
    // F' brings back the L cross (R leaves it alone); R' the D cross (U leaves it alone, and
    // D comes before L); U2 leaves D's
    for (row, (length, face)) in rows.iter().zip([(1, "L"), (1, "D"), (0, "D")]) {
        assert_eq!(row["status"], "solved", "{row}");
        assert_eq!(row["goal"], "cross on any face", "{row}");
        assert_eq!(row["length"], length, "{row}");
        assert_eq!(row["goal_reached"], format!("cross on {face}"), "{row}");
        let c = cube_of(row["input"].as_str().expect("input")).apply_moves(
            &cubefleet_tables::MoveSeq::parse(row["solution"].as_str().expect("solution"))
                .expect("turns")
                .0,
        );
        // the L cross: UL FL BL DL (positions 2, 9, 10, 6); the D cross: 4 to 7
        let home = |p: &[usize]| p.iter().all(|&i| c.ep[i] == i as u8 && c.eo[i] == 0);
        assert!(
            home(if face == "L" {
                &[2, 9, 10, 6]
            } else {
                &[4, 5, 6, 7]
            }),
            "{row}"
        );
    }
}

/// `submit --all-optimal` and `--count-only` to a coordinator and a worker, each its own
/// process: the worker lists (or counts, answering the lease's spot check) every optimal
/// solution, the coordinator verifies each, and `results` gives them with the count.
#[test]
fn submit_all_optimal_through_a_fleet() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("many.txt");
    std::fs::write(&file, "R2 L2 U2 D2 F2 B2\nR U\nR2 U2 R2 U2 R2 U2\n").expect("write");
    let (_coordinator, url) = common::coordinator(&dir.path().join("data"));
    let _worker = common::worker("w-many", &url);
    let file = file.to_str().expect("utf-8");
    for (flags, counts) in [
        (vec!["--all-optimal"], [6, 1, 8]),
        (vec!["--all-optimal", "--count-only"], [6, 1, 8]),
    ] {
        let out = common::client(
            &url,
            &[&["submit", file, "--optimal", "--wait"][..], &flags].concat(),
        );
        let batch = out.trim().lines().last().expect("the batch id").to_string();
        let rows: Vec<serde_json::Value> = common::client(&url, &["results", &batch])
            .lines()
            .map(|l| serde_json::from_str(l).expect("a JSON line"))
            .collect();
        assert_eq!(rows.len(), 3, "{rows:?}");
        for (row, count) in rows.iter().zip(counts) {
            assert_eq!(row["status"], "solved", "{row}");
            assert_eq!(row["count"], count, "{row}");
            if flags.len() == 1 {
                assert_eq!(several(row).len(), count, "{row}");
            } else {
                assert!(row.get("solutions").is_none(), "{row}");
            }
        }
    }
}

/// `--addr-file` where no file can be written (a missing directory, a directory itself): the
/// process stops with an error naming the flag, exit code 2, instead of serving addresses
/// nobody can read.
#[test]
fn an_addr_file_that_cannot_be_written_is_refused() {
    let dir = tempfile::tempdir().expect("temp dir");
    let missing = dir.path().join("no").join("such").join("dir");
    for file in [missing.as_path(), dir.path()] {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_cubefleet"));
        cmd.args(["coordinator", "--listen", "127.0.0.1:0", "--data"])
            .arg(dir.path().join("data"))
            .arg("--addr-file")
            .arg(file);
        let (code, stderr) = assert_no_panic(cmd, "coordinator --addr-file");
        assert_eq!(code, 2, "{stderr}");
        assert!(stderr.contains("--addr-file"), "{stderr}");
    }
}
