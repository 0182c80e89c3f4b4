//! The binary end to end: real tables (built once into `target/test-tables`), real processes.

mod common;

use std::io::Write;
use std::process::{Command, Stdio};

use common::{assert_solves, cubefleet, tables_dir};

use cubefleet_tables::{parse_position, InputFormat, MoveSeq};

fn run_with_stdin(mut cmd: Command, stdin: &str) -> (i32, String, String) {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes())
        .expect("write");
    let out = child.wait_with_output().expect("wait");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn tables_info_reproduces_published_distributions() {
    let out = cubefleet()
        .args(["tables", "info", "--json", "--dir"])
        .arg(tables_dir())
        .output()
        .expect("runs");
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    let tsv = include_str!("vectors/pruning-distributions.tsv");
    for (col, name, entries) in [(1, "phase1", 140_908_410u64), (2, "phase2", 111_605_760)] {
        let want: Vec<u64> = tsv
            .lines()
            .skip(1)
            .map(|l| {
                l.split('\t')
                    .nth(col)
                    .expect("column")
                    .parse()
                    .expect("number")
            })
            .collect();
        let table = v["tables"]
            .as_array()
            .expect("tables")
            .iter()
            .find(|t| t["name"] == name)
            .expect("table listed");
        assert_eq!(table["entries"], entries);
        let got: Vec<u64> = table["distribution"]
            .as_array()
            .expect("distribution")
            .iter()
            .map(|x| x.as_u64().expect("count"))
            .collect();
        let want: Vec<u64> = want[..got.len()].to_vec();
        assert_eq!(got, want, "{name}");
        assert_eq!(got.iter().sum::<u64>(), entries);
    }
}

#[test]
fn tables_verify_passes_and_detects_corruption() {
    let st = cubefleet()
        .args(["tables", "verify", "--dir"])
        .arg(tables_dir())
        .status()
        .expect("runs");
    assert!(st.success());
    // a corrupted copy of the small table is refused
    let dir = tempfile::tempdir().expect("tempdir");
    for f in ["phase1.cft", "phase2.cft", "phase2_slice.cft"] {
        std::fs::copy(tables_dir().join(f), dir.path().join(f)).expect("copy");
    }
    let p = dir.path().join("phase2_slice.cft");
    let mut bytes = std::fs::read(&p).expect("read");
    let n = bytes.len();
    bytes[n - 7] ^= 0x5a;
    std::fs::write(&p, bytes).expect("write");
    let out = cubefleet()
        .args(["tables", "verify", "--dir"])
        .arg(dir.path())
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("rebuild"));
}

#[test]
fn solve_json_mixes_invalid_lines_with_good_ones() {
    let input = "R U R' U'\n\nR U X2\nUUUUUUUUURRRRRRRRRFFFFFFFFFDDDDDDDDDLLLLLLLLLBBBBBBBBB\nUUUUUUUUURRRRRRRRRFFFFFFFFFDDDDDDDDDLLLLLLLLLBBBBBBBBU\nU R2 F B R B2 R U2 L B2 R U' D' R2 F R' L B2 U2 F2\n";
    let mut cmd = cubefleet();
    cmd.args(["solve", "--format", "json"]);
    let (code, stdout, stderr) = run_with_stdin(cmd, input);
    assert_eq!(
        code, 1,
        "an invalid line makes the exit code 1; stderr: {stderr}"
    );
    let lines: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    // every line answers at its own index, the blank one `skipped`
    assert_eq!(lines.len(), 6);
    let indices: Vec<u64> = lines
        .iter()
        .map(|l| l["index"].as_u64().expect("index"))
        .collect();
    assert_eq!(indices, [0, 1, 2, 3, 4, 5]);
    assert_eq!(lines[1]["status"], "skipped");
    assert_eq!(lines[1]["error"], serde_json::Value::Null);
    let lines = [&lines[0], &lines[2], &lines[3], &lines[4], &lines[5]];
    assert_eq!(lines[1]["status"], "invalid");
    assert!(lines[1]["error"].as_str().expect("reason").contains("X2"));
    assert_eq!(lines[2]["solution"], "");
    assert_eq!(lines[2]["length"], 0);
    assert_eq!(lines[3]["status"], "invalid");
    assert!(lines[3]["error"]
        .as_str()
        .expect("reason")
        .contains("appears"));
    assert_eq!(lines[4]["length"], 20);
    for l in [lines[0], lines[4]] {
        assert_eq!(l["status"], "solved");
        assert_eq!(l["optimal"], false);
        assert_solves(
            l["input"].as_str().expect("input"),
            l["solution"].as_str().expect("solution"),
            l["length"].as_u64().expect("length"),
        );
        assert!(l["millis"].as_f64().is_some());
    }
}

#[test]
fn solve_text_and_arguments() {
    let out = cubefleet()
        .args(["solve", "--max-length", "21", "R U F"])
        .output()
        .expect("runs");
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.trim();
    assert!(line.ends_with(')'), "{line}");
    let (moves, n) = line.rsplit_once(" (").expect("length in parentheses");
    let sol = MoveSeq::parse(moves).expect("notation");
    assert_eq!(
        n.trim_end_matches(')').parse::<usize>().expect("n"),
        sol.len()
    );
    let cube = parse_position("R U F", InputFormat::Moves).expect("valid");
    assert!(cube.apply_moves(&sol.0).is_solved());
}

/// A reader that stops early (`| head -1`) is no error: no message, exit code 0.
#[test]
fn output_cut_short_by_its_reader_is_quiet() {
    let mut child = cubefleet()
        .args(["solve", "--max-length", "21"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut stdin = child.stdin.take().expect("stdin");
    let writer = std::thread::spawn(move || {
        // enough lines to fill the pipe many times over; the writes fail once solve is gone
        for _ in 0..200_000 {
            if stdin.write_all(b"R U R' F2\n").is_err() {
                break;
            }
        }
    });
    let mut first = String::new();
    let mut stdout = std::io::BufReader::new(child.stdout.take().expect("stdout"));
    std::io::BufRead::read_line(&mut stdout, &mut first).expect("a first line");
    drop(stdout);
    let out = child.wait_with_output().expect("wait");
    writer.join().expect("writer");
    assert!(first.trim_end().ends_with(')'), "{first}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{:?} {stderr}", out.status);
    assert!(!stderr.contains("error"), "{stderr}");
}

#[test]
fn scramble_reaches_random_states_reproducibly() {
    let run = || {
        let out = cubefleet()
            .args(["scramble", "--count", "5", "--seed", "7"])
            .output()
            .expect("runs");
        assert!(out.status.success());
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let a = run();
    assert_eq!(a, run(), "same seed, same scrambles");
    let lines: Vec<&str> = a.lines().collect();
    assert_eq!(lines.len(), 5);
    for l in lines {
        let s = MoveSeq::parse(l).expect("notation");
        assert!(s.len() <= 21 && s.len() >= 10, "{l}");
    }
}

#[test]
fn solve_optimal_and_depth_limited() {
    let out = cubefleet()
        .args([
            "solve",
            "--optimal",
            "--format",
            "json",
            "R U F D2 L' B",
            "R U R' U'",
        ])
        .output()
        .expect("runs");
    assert!(out.status.success());
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect();
    assert_eq!(lines[0]["length"], 6);
    assert_eq!(lines[0]["optimal"], true);
    assert_eq!(lines[0]["lower_bound"], 6);
    assert_eq!(lines[1]["length"], 4);
    // the ZOJ 2477 samples: colour nets, quarter turns, at most 5
    let nets = "w w w\nw w w\nb b b\nr r w g g g y b b o o o\nr r w g g g y b b o o o\nr r w g g g y b b o o o\nr r r\ny y y\ny y y\n\nw w w\nw w w\nw w w\nr r r g g g b b b o o o\nr r r g g g b b b o o o\nr r r g g g b b b o o o\ny y y\ny y y\ny y y\n";
    let mut cmd = cubefleet();
    cmd.args([
        "solve",
        "--input",
        "net",
        "--metric",
        "qtm",
        "--max-depth",
        "5",
        "--format",
        "json",
    ]);
    let (code, stdout, stderr) = run_with_stdin(cmd, nets);
    assert_eq!(code, 0, "{stderr}");
    let lines: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect();
    assert_eq!(lines[0]["length"], 1);
    assert_eq!(lines[0]["solution"], "F");
    assert_eq!(lines[1]["length"], 0);
    // deeper than the limit: the explicit answer
    let out = cubefleet()
        .args(["solve", "--max-depth", "3", "--format", "json", "R U F L"])
        .output()
        .expect("runs");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["status"], "none_within");
    assert_eq!(v["solution"], "");
}

#[test]
fn bench_coordinator_completes_both_runs() {
    // every job leased, completed with a verified solution and stored, in both runs; the
    // bench itself fails when a job is missing or a result is rejected
    let out = cubefleet()
        .args(["bench", "coordinator", "--jobs", "3000", "--group", "500"])
        .output()
        .expect("run bench");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for run in ["| phases | 3000 |", "| pipelined | 3000 |"] {
        assert!(stdout.contains(run), "no {run} row in:\n{stdout}");
    }
}

/// `cubefleet bench optimal|twophase` over `n` short scrambles written to a file, after `extra`
/// arguments: its stdout, the command having succeeded.
fn bench_short(kind: &str, n: usize, extra: &[&str]) -> String {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("positions.txt");
    std::fs::write(&file, common::short_scrambles(n).join("\n")).expect("write");
    let out = cubefleet()
        .args(["bench", kind, "--file"])
        .arg(&file)
        .args(extra)
        .output()
        .expect("run bench");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

#[test]
fn bench_optimal_json_reports_each_position_and_the_distribution() {
    let stdout = bench_short("optimal", 12, &["--count", "12", "--json", "--no-huge"]);
    let lines: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(lines.len(), 13, "12 positions and the summary:\n{stdout}");
    let mut nodes = 0;
    for (i, l) in lines[..12].iter().enumerate() {
        assert_eq!(l["index"], i as u64);
        assert_eq!(l["status"], "solved");
        assert!(l["length"].as_u64().expect("length") <= 8, "{l}");
        assert!(l["seconds"].as_f64().expect("seconds") >= 0.0);
        nodes += l["nodes"].as_u64().expect("nodes");
    }
    let s = &lines[12]["summary"];
    assert_eq!(
        (s["positions"].as_u64(), s["solved"].as_u64()),
        (Some(12), Some(12))
    );
    assert_eq!(s["nodes"], nodes);
    assert_eq!(s["bound"], "phase-1");
    for d in [&s["seconds"], &s["nodes_per_position"]] {
        assert_eq!(d["n"], 12);
        // 12 values resolve p10, p50 and p90 (nearest rank), not p99
        let p: Vec<f64> = ["p10", "p50", "p90", "max"]
            .map(|k| d[k].as_f64().unwrap_or_else(|| panic!("{k} in {d}")))
            .to_vec();
        assert!(p.windows(2).all(|w| w[0] <= w[1]), "ascending: {d}");
        assert!(d["p99"].is_null(), "{d}");
    }
}

#[test]
fn bench_optimal_and_twophase_print_the_distribution_tables() {
    let stdout = bench_short(
        "optimal",
        3,
        &["--count", "3", "--per-position", "--no-huge"],
    );
    assert!(
        stdout.contains("| # | length | seconds | nodes | nodes/s | status |"),
        "{stdout}"
    );
    for i in 0..3 {
        assert!(
            stdout.contains(&format!("\n| {i} | ")),
            "row {i}:\n{stdout}"
        );
    }
    assert!(stdout.contains("| per position | mean | p10 | p50 | p90 | p99 | max |"));
    assert!(stdout.contains("| seconds | ") && stdout.contains("| nodes | "));
    assert!(
        stdout.contains("3 positions do not resolve p90"),
        "{stdout}"
    );

    let stdout = bench_short("twophase", 10, &["--runs", "1", "--targets", "21"]);
    assert!(
        stdout.contains("| target | mean ms | p10 ms | p50 ms | p90 ms | p99 ms | max ms |"),
        "{stdout}"
    );
    let row = stdout
        .lines()
        .find(|l| l.starts_with("| 21 |"))
        .unwrap_or_else(|| panic!("no target 21 row:\n{stdout}"));
    // mean, p10, p50, p90 and max measured; p99 needs 100 positions
    let cells: Vec<&str> = row.split('|').map(str::trim).collect();
    assert_eq!(cells[6], "—", "{row}");
    assert!(
        cells[2..6].iter().all(|c| c.parse::<f64>().is_ok()),
        "{row}"
    );
}

/// `cubefleet solve --threads 2 --format json` of one position, after `extra` arguments.
fn solve_one_with_two_threads(extra: &[&str], position: &str) -> serde_json::Value {
    let out = cubefleet()
        .args(["solve", "--threads", "2", "--format", "json"])
        .args(extra)
        .arg(position)
        .output()
        .expect("runs");
    assert!(out.status.success());
    serde_json::from_slice(&out.stdout).expect("json")
}

#[test]
fn one_position_is_searched_by_every_thread() {
    // two-phase: the six directions shared out; the superflip still needs exactly 20
    let superflip = "U R2 F B R B2 R U2 L B2 R U' D' R2 F R' L B2 U2 F2";
    let v = solve_one_with_two_threads(&[], superflip);
    assert_eq!(
        (v["status"].as_str(), v["length"].as_u64()),
        (Some("solved"), Some(20))
    );
    assert_solves(superflip, v["solution"].as_str().expect("text"), 20);
    // optimal: the first levels of the tree shared out, the same proven answer
    let v = solve_one_with_two_threads(&["--optimal"], "R U F D2 L' B");
    assert_eq!(
        (v["length"].as_u64(), v["optimal"].as_bool()),
        (Some(6), Some(true))
    );
    assert_solves("R U F D2 L' B", v["solution"].as_str().expect("text"), 6);
}

/// `coset solve` names a coset by a position or its number, and its JSON holds the counts.
#[test]
fn coset_solve_prints_the_counts() {
    let out = cubefleet()
        .args([
            "coset",
            "solve",
            "R U F",
            "--max-depth",
            "4",
            "--format",
            "json",
        ])
        .args(["--threads", "2"])
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(v["size"], 19_508_428_800u64);
    let counts: Vec<u64> = v["counts"]
        .as_array()
        .expect("counts")
        .iter()
        .map(|c| c.as_u64().expect("a count"))
        .collect();
    // R U F itself is 3 turns from solved; the solved cube is not in its coset
    assert_eq!(counts.len(), 5);
    assert_eq!(counts[0], 0);
    assert!(counts[3] >= 1);
    assert_eq!(v["exact_through"], 4);
    assert_eq!(
        v["unsolved"].as_u64(),
        Some(19_508_428_800 - counts.iter().sum::<u64>())
    );
    assert!(v["unsolved_indices"].is_null());
    let number = v["number"].as_u64().expect("a number");
    assert!(v["representative"].as_str().is_some_and(|r| r.len() == 54));

    // the same coset by its number
    let text = cubefleet()
        .args(["coset", "solve", &number.to_string(), "--max-depth", "3"])
        .output()
        .expect("runs");
    assert!(text.status.success());
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.starts_with(&format!("coset {number} ")), "{text}");
    let refused = cubefleet()
        .args(["coset", "solve", "2217093120"])
        .output()
        .expect("runs");
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("no coset numbered 2217093120"));
}
