//! The trust promises that need real processes: an acknowledged range or sample submission
//! survives a SIGKILL of the coordinator right after the acknowledgement, an empty token is
//! refused at start, and `submit -` names its batch by the hash of the lines it read, so stdin
//! lines never join another file's batch.

#![allow(clippy::unwrap_used)]

mod common;

use std::io::Write;
use std::process::Stdio;
use std::time::Duration;

use common::{client, client_output, coordinator, cubefleet, status, wait_for};

#[test]
fn an_acknowledged_range_or_sample_survives_a_sigkill() {
    let dir = tempfile::tempdir().unwrap();
    for round in 0..4 {
        let (coord, url) = coordinator(dir.path());
        wait_for("coordinator", Duration::from_secs(30), || {
            client_output(&url, &["status"]).ok()
        });
        let id = format!("range-{round}");
        let what: &[&str] = if round % 2 == 0 {
            &["--range", "5..100000"]
        } else {
            &["--sample", "1000", "--seed", "7"]
        };
        let mut args = vec!["submit", "--batch-id", &id];
        args.extend_from_slice(what);
        // acknowledged (exit 0), then killed at once
        client(&url, &args);
        coord.kill();
        let (coord, url) = coordinator(dir.path());
        let s = wait_for("the batch after the kill", Duration::from_secs(30), || {
            status(&url, &id)
        });
        assert!(s["total"].as_u64().unwrap() > 0, "round {round}: {s}");
        coord.kill();
    }
}

#[test]
fn an_empty_token_is_refused_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let out = cubefleet()
        .args(["coordinator", "--listen", "127.0.0.1:0", "--token", ""])
        .arg("--data")
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("without authentication"), "{err}");
}

#[test]
fn lines_from_stdin_never_join_another_files_batch() {
    let dir = tempfile::tempdir().unwrap();
    let (coord, url) = coordinator(&dir.path().join("data"));
    wait_for("coordinator", Duration::from_secs(30), || {
        client_output(&url, &["status"]).ok()
    });
    let file = dir.path().join("a.txt");
    std::fs::write(&file, "R U\nF D\n").unwrap();
    client(&url, &["submit", file.to_str().unwrap(), "--batch-id", "a"]);
    let piped = |id: &str, lines: &str| {
        let mut c = cubefleet()
            .args(["submit", "-", "--batch-id", id, "--coordinator", &url])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        c.stdin.take().unwrap().write_all(lines.as_bytes()).unwrap();
        c.wait_with_output().unwrap()
    };
    // the file's lines and one more, from stdin: refused, nothing appended
    let out = piped("a", "R U\nF D\nB L\n");
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("content hash"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(status(&url, "a").unwrap()["total"], 2);
    // a batch made from stdin is named by its lines: the same file continues it, another
    // file is refused
    assert!(piped("p", "R U\nF D\n").status.success());
    client(&url, &["submit", file.to_str().unwrap(), "--batch-id", "p"]);
    let other = dir.path().join("b.txt");
    std::fs::write(&other, "R U\nF D\nL\n").unwrap();
    let refused = client_output(
        &url,
        &["submit", other.to_str().unwrap(), "--batch-id", "p"],
    );
    assert!(refused.is_err_and(|e| e.contains("content hash")));
    coord.kill();
}
