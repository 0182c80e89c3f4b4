//! Every kind of bad input, in `solve`, `run` and `submit` (over real gRPC to a coordinator
//! process): each line is solved as written or refused with its reason, blank and comment
//! lines are answered `skipped`, and every answer's `index` is its line of the file.

mod common;

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::{coordinator, cubefleet, wait_for};

const SOLVED: &str = "UUUUUUUUURRRRRRRRRFFFFFFFFFDDDDDDDDDLLLLLLLLLBBBBBBBBB";

/// Ten moves from solved: out of reach of `--max-length 5`.
const TEN: &str = "R U F D L B R' U' F' D'";

/// The lines of the test file, each with the status a two-phase search to 5 moves gives it
/// and a word of its error (`""`: no error).
fn lines() -> Vec<(String, &'static str, &'static str)> {
    vec![
        ("# scrambles of the day".into(), "skipped", ""),
        ("R U".into(), "solved", ""),
        ("".into(), "skipped", ""),
        (
            SOLVED[..53].into(),
            "invalid",
            "facelet string has 53 stickers, needs 54",
        ),
        (
            format!("{SOLVED}U"),
            "invalid",
            "facelet string has 55 stickers",
        ),
        ("R4 U".into(), "invalid", "`R4`"),
        ("R U R1000".into(), "invalid", "`R1000`"),
        ("R0".into(), "invalid", "`R0`"),
        ("R U ".repeat(25_000), "invalid", "4096 bytes"),
        ("   # an indented comment".into(), "skipped", ""),
        (TEN.into(), "over_target", ""),
    ]
}

/// The file the lines make.
fn file_text(lines: &[(String, &str, &str)]) -> String {
    lines.iter().map(|(l, _, _)| format!("{l}\n")).collect()
}

/// Checks results (JSON lines) against `expected`, in order, each at its own index; with
/// `searched` false (no worker), lines to be searched may still be queued.
fn check(out: &str, expected: &[(String, &str, &str)], searched: bool) {
    let results: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(results.len(), expected.len(), "{out}");
    for (i, (r, (line, status, error))) in results.iter().zip(expected).enumerate() {
        assert_eq!(r["index"], i as u64, "{r}");
        let got = r["status"].as_str().expect("status");
        let to_search = matches!(*status, "solved" | "over_target");
        if searched || !to_search {
            assert_eq!(got, *status, "line {i}: {r}");
        } else {
            assert_eq!(got, "queued", "line {i}: {r}");
        }
        let err = r["error"].as_str().unwrap_or("");
        assert!(err.contains(error), "line {i}: {err:?} lacks {error:?}");
        assert_eq!(err.is_empty(), error.is_empty(), "line {i}: {r}");
        if line.len() < 100 {
            assert_eq!(r["input"], line.trim(), "{r}");
        }
        if searched && to_search {
            let solution = r["solution"].as_str().expect("solution");
            common::assert_solves(line, solution, r["length"].as_u64().expect("length"));
            let length = r["length"].as_u64().expect("length");
            assert_eq!(length <= 5, *status == "solved", "{r}");
        }
    }
}

#[test]
fn solve_answers_each_line_as_written_or_with_the_reason() {
    let expected = lines();
    let mut child = cubefleet()
        .args(["solve", "--format", "json", "--max-length", "5"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let input = file_text(&expected);
    let mut stdin = child.stdin.take().expect("stdin");
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()).expect("write"));
    let out = child.wait_with_output().expect("wait");
    writer.join().expect("writer");
    assert_eq!(out.status.code(), Some(1), "invalid lines give exit code 1");
    check(&String::from_utf8_lossy(&out.stdout), &expected, true);
}

#[test]
fn run_answers_each_line_of_the_file_at_its_index() {
    let dir = tempfile::tempdir().expect("temp dir");
    let expected = lines();
    let file = dir.path().join("positions.txt");
    std::fs::write(&file, file_text(&expected)).expect("write");
    let out = cubefleet()
        .arg("run")
        .arg(&file)
        .arg("--data")
        .arg(dir.path().join("data"))
        .args(["--threads", "1", "--max-length", "5", "--no-build"])
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    check(&String::from_utf8_lossy(&out.stdout), &expected, true);
}

#[test]
fn a_submission_of_long_lines_over_grpc_records_them_invalid_and_keeps_the_rest() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (_coordinator, url) = coordinator(&dir.path().join("data"));
    // the lines above, then a thousand lines of 10 kB (10 MB: more than gRPC takes in one
    // message), every tenth a position
    let mut expected = lines();
    for i in 0..1000 {
        if i % 10 == 0 {
            expected.push(("F R".into(), "solved", ""));
        } else {
            expected.push(("U R ".repeat(2500), "invalid", "4096 bytes"));
        }
    }
    let file = dir.path().join("long.txt");
    std::fs::write(&file, file_text(&expected)).expect("write");
    let submit = |extra: &[&str]| {
        cubefleet()
            .arg("submit")
            .arg(&file)
            .args(["--coordinator", &url, "--max-length", "5"])
            .args(extra)
            .output()
            .expect("runs")
    };
    let out = wait_for(
        "the coordinator to take a submission",
        Duration::from_secs(30),
        || {
            let out = submit(&[]);
            out.status.success().then_some(out)
        },
    );
    let batch = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let results = Command::new(env!("CARGO_BIN_EXE_cubefleet"))
        .args(["results", &batch, "--coordinator", &url])
        .output()
        .expect("runs");
    assert!(results.status.success());
    check(&String::from_utf8_lossy(&results.stdout), &expected, false);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "stored {} lines ({} invalid",
            expected.len(),
            6 + 900
        )),
        "{stderr}"
    );
}
