//! Batch identity and the store across runs, end to end: `cubefleet run` on many files with one
//! store, files whose old batch ids (CRC-32) collide, and `submit --batch-id` with other lines.

mod common;

use std::collections::HashMap;
use std::path::Path;
use std::process::Output;
use std::time::Duration;

use common::{assert_solves, coordinator, cubefleet, wait_for};

/// A pseudo-random sequence of `n` face turns from the xorshift state `x`.
fn turns(x: &mut u64, n: usize) -> String {
    (0..n)
        .map(|_| {
            *x ^= *x << 13;
            *x ^= *x >> 7;
            *x ^= *x << 17;
            let m = (*x % 18) as usize;
            format!("{}{}", &"URFDLB"[m / 3..m / 3 + 1], ["", "2", "'"][m % 3])
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// `cubefleet run FILE --data DATA` on one thread.
fn run(file: &Path, data: &Path) -> Output {
    cubefleet()
        .arg("run")
        .arg(file)
        .arg("--data")
        .arg(data)
        .args(["--threads", "1", "--no-build"])
        .output()
        .expect("runs")
}

/// Runs `file` (of `lines`) on the store `data` and checks that every line is answered, in
/// order, with its own input and a solution of it.
fn run_and_check(file: &Path, data: &Path, lines: &[String]) {
    let out = run(file, data);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{}: {stderr}", file.display());
    let results: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(results.len(), lines.len(), "{}: {stderr}", file.display());
    for (i, v) in results.iter().enumerate() {
        assert_eq!(v["index"].as_u64(), Some(i as u64), "{v}");
        assert_eq!(
            v["input"].as_str(),
            Some(lines[i].as_str()),
            "{}: line {i} answered with another file's line",
            file.display()
        );
        assert_eq!(v["status"], "solved", "{v}");
        let length = v["length"].as_u64().expect("length");
        assert_solves(&lines[i], v["solution"].as_str().expect("solution"), length);
    }
}

/// Twelve different files run one after another on one store each get their own answers
/// (with batch numbers from sled's id generator, which jumps at every open, about the tenth
/// run's jobs took keys of an earlier batch's).
#[test]
fn run_on_many_files_with_one_store_answers_each_with_its_own_results() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    let mut x = 0x2545_f491_4f6c_dd1d;
    let mut files = Vec::new();
    for k in 0..12 {
        let lines: Vec<String> = (0..3).map(|_| turns(&mut x, 7)).collect();
        let file = dir.path().join(format!("f{k}.txt"));
        std::fs::write(&file, lines.join("\n") + "\n").expect("write");
        run_and_check(&file, &data, &lines);
        files.push((file, lines));
    }
    // the first file again: answered from its batch, still its own
    let (file, lines) = &files[0];
    run_and_check(file, &data, lines);
}

/// Two different one-line files whose lines have the same CRC-32 (the old batch id hashed
/// each trimmed line and a newline, then the mode): found by a birthday search.
fn crc_twins() -> (String, String) {
    let mut x = 0x9e37_79b9_7f4a_7c15;
    let mut seen: HashMap<u32, String> = HashMap::new();
    for _ in 0..2_000_000 {
        let line = turns(&mut x, 10);
        let crc = crc32fast::hash(format!("{line}\n").as_bytes());
        match seen.get(&crc) {
            Some(other) if *other != line => return (other.clone(), line),
            _ => {
                seen.insert(crc, line);
            }
        }
    }
    panic!("no CRC-32 collision among 2,000,000 lines");
}

/// Two files with the same CRC-32 and line count each get verified solutions of their own
/// lines (with the CRC-32 batch id, the second got the first's answers).
#[test]
fn files_with_the_same_crc32_get_their_own_answers() {
    let (a, b) = crc_twins();
    assert_ne!(a, b);
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    for (name, line) in [("a.txt", &a), ("b.txt", &b)] {
        let file = dir.path().join(name);
        std::fs::write(&file, format!("{line}\n")).expect("write");
        run_and_check(&file, &data, std::slice::from_ref(line));
    }
}

/// `submit --batch-id` with the id of a batch that holds other lines is refused with the
/// reason (by the content hash, and for lines from stdin, which have none, line by line);
/// the same file again continues the batch.
#[test]
fn submit_to_an_existing_batch_id_with_other_lines_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_coordinator, url) = coordinator(&dir.path().join("data"));
    let (first, other) = (dir.path().join("first.txt"), dir.path().join("other.txt"));
    std::fs::write(&first, "R U\nF D2\n").expect("write");
    std::fs::write(&other, "R U\nF D'\n").expect("write");
    let submit = |file: &Path, stdin: Option<&Path>| {
        let mut c = cubefleet();
        c.arg("submit")
            .arg(if stdin.is_some() {
                Path::new("-")
            } else {
                file
            })
            .args(["--batch-id", "shared", "--coordinator", &url]);
        if let Some(f) = stdin {
            c.stdin(std::fs::File::open(f).expect("open"));
        }
        c.output().expect("runs")
    };
    let out = wait_for("the coordinator", Duration::from_secs(30), || {
        let out = submit(&first, None);
        out.status.success().then_some(out)
    });
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "shared");
    for stdin in [None, Some(other.as_path())] {
        let out = submit(&other, stdin);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "accepted other lines ({stdin:?})");
        assert!(
            stderr.contains("batch shared exists with other lines"),
            "{stdin:?}: {stderr}"
        );
        assert!(stderr.contains("another batch id"), "{stderr}");
    }
    let out = submit(&first, None);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("stored 2 lines"), "{stderr}");
}
