//! `cubefleet index` and `cubefleet position` as a user runs them: positions to numbers and
//! back, and bad numbers refused with the reason.

mod common;

use common::cubefleet;

/// Runs `cubefleet ARGS`: (exit code, stdout, stderr).
fn run(args: &[&str]) -> (i32, String, String) {
    let out = cubefleet().args(args).output().expect("runs");
    (
        out.status.code().expect("an exit code"),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn positions_and_indices_round_trip_through_the_commands() {
    let (code, out, _) = run(&[
        "index",
        "R U R' U'",
        "U",
        "UUUUUUUUURRRRRRRRRFFFFFFFFFDDDDDDDDDLLLLLLLLLBBBBBBBBB",
    ]);
    assert_eq!(code, 0);
    let indices: Vec<&str> = out.lines().collect();
    assert_eq!(indices.len(), 3);
    assert_eq!(indices[2], "0", "the solved cube is index 0");
    let (code, out, _) = run(&["position", indices[0], indices[1], "0"]);
    assert_eq!(code, 0);
    let facelets: Vec<&str> = out.lines().collect();
    assert_eq!(
        facelets[2],
        "UUUUUUUUURRRRRRRRRFFFFFFFFFDDDDDDDDDLLLLLLLLLBBBBBBBBB"
    );
    // the facelets name the same states: their indices are the ones printed
    let (_, again, _) = run(&["index", facelets[0], facelets[1]]);
    assert_eq!(again.lines().collect::<Vec<_>>(), indices[..2]);
    let (code, json, _) = run(&["position", "43252003274489855999", "--format", "json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(json.trim()).expect("JSON");
    assert_eq!(v["index"], "43252003274489855999");
    assert_eq!(v["error"], serde_json::Value::Null);
    assert_eq!(v["facelets"].as_str().map(str::len), Some(54));
}

#[test]
fn bad_indices_are_refused_with_the_reason_and_the_rest_answered() {
    let (code, out, err) = run(&["position", "43252003274489856000", "7", "-1", "12x"]);
    assert_eq!(code, 1, "{err}");
    assert_eq!(out.lines().count(), 1, "index 7 is answered: {out}");
    assert!(
        err.contains("`43252003274489856000`") && err.contains("too large"),
        "{err}"
    );
    assert!(
        err.contains("`-1`") && err.contains("not a number"),
        "{err}"
    );
    assert!(err.contains("`12x`"), "{err}");
    // a blank argument is refused, not read as the solved cube
    let (code, out, err) = run(&["index", "", "U"]);
    assert_eq!(code, 1, "{err}");
    assert_eq!(out.lines().count(), 1, "{out}");
    assert!(err.contains("empty position"), "{err}");
    let (code, json, _) = run(&["index", "R U X", "--format", "json"]);
    assert_eq!(code, 1);
    let v: serde_json::Value = serde_json::from_str(json.trim()).expect("JSON");
    assert!(v["error"].as_str().is_some_and(|e| e.contains('X')), "{v}");
}
