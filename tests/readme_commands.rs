//! Keeps the README's commands true: every command line of its code blocks is run (with the
//! built binary in place of `cargo run --release --`), in a scratch directory holding a copy of
//! `examples/`, and must exit as its comment says (`exit code N`; 0 when it says nothing).
//!
//! A block this test cannot run (the whole test suite, servers that run until stopped) is
//! marked by the line right before its opening fence, outside what a reader copies:
//! `<!-- not run by tests/readme_commands.rs: REASON -->` (REASON not empty). A marker that is
//! not followed by a fence fails the test, and so does any unmarked command this test cannot
//! run: a new README command is either run here or marked.

#![allow(clippy::unwrap_used)]

mod common;

use std::path::Path;
use std::process::Stdio;

/// The README, as compiled in (a change to it rebuilds this test).
const README: &str = include_str!("../README.md");

/// What the binary is called in the README's commands.
const CARGO_RUN: &str = "cargo run --release -- ";

/// The marker line that keeps the code block right after it from being run.
const NOT_RUN: &str = "<!-- not run by tests/readme_commands.rs:";

/// One command line of a code block: the command, its comment, where it is, and why it is
/// not run (the reason of its block's marker), if it is not.
#[derive(Debug)]
struct Shown {
    line: usize,
    command: String,
    comment: String,
    not_run: Option<String>,
}

/// The reason a marker line gives, when `line` is one.
fn marker_reason(line: &str) -> Option<String> {
    let reason = line
        .trim()
        .strip_prefix(NOT_RUN)?
        .strip_suffix("-->")?
        .trim();
    assert!(!reason.is_empty(), "a `{NOT_RUN}` marker gives no reason");
    Some(reason.to_string())
}

/// Every command line of the README's code blocks.
fn commands(readme: &str) -> Vec<Shown> {
    let mut inside = false;
    let mut shell = true;
    // the reason of the marker on the line before, then of the block it marks
    let mut marked: Option<String> = None;
    let mut block_not_run: Option<String> = None;
    let mut out = Vec::new();
    for (i, l) in readme.lines().enumerate() {
        let pending = marked.take();
        if let Some(fence) = l.trim_start().strip_prefix("```") {
            inside = !inside;
            // a block of another language (```python) holds no shell commands
            shell = fence.is_empty() || fence == "sh";
            block_not_run = if inside { pending } else { None };
            continue;
        }
        if let Some(p) = pending {
            panic!("README line {i}: the marker `{p}` is not right before a code block");
        }
        if !inside {
            marked = marker_reason(l);
            continue;
        }
        let t = l.trim();
        if !shell || t.is_empty() || t.starts_with('#') {
            continue;
        }
        let (command, comment) = match t.find("  #") {
            Some(at) => (t[..at].trim(), t[at..].trim()),
            None => (t, ""),
        };
        out.push(Shown {
            line: i + 1,
            command: command.to_string(),
            comment: comment.to_string(),
            not_run: block_not_run.clone(),
        });
    }
    assert!(
        marked.is_none(),
        "the README ends with a `{NOT_RUN}` marker"
    );
    out
}

/// Splits a command line into words as a POSIX shell would (quotes, escapes).
fn words(command: &str) -> Vec<String> {
    shlex::split(command).unwrap_or_else(|| panic!("unbalanced quotes in `{command}`"))
}

/// The exit code a comment states (`exit code N`), 0 when it states none.
fn expected_exit(comment: &str) -> i32 {
    comment
        .split("exit code ")
        .nth(1)
        .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// Copies the folder `from` to `to`, subfolders too.
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &to.join(entry.file_name()));
        } else {
            std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
    }
}

#[test]
fn the_parser_reads_commands_comments_quotes_and_markers() {
    let shown = commands(
        "x\n```sh\n# a comment line\ncargo run --release -- solve \"R U\"  # note, exit code 1\n\
         ```\n<!-- not run by tests/readme_commands.rs: the whole suite -->\n```sh\n\
         cargo test   # the tests\n```\n`not code`\n```python\nimport cubefleet\n```\n",
    );
    assert_eq!(shown.len(), 2);
    assert_eq!(shown[0].command, "cargo run --release -- solve \"R U\"");
    assert_eq!(expected_exit(&shown[0].comment), 1);
    assert_eq!(shown[0].not_run, None);
    assert_eq!(shown[1].command, "cargo test");
    assert_eq!(shown[1].not_run.as_deref(), Some("the whole suite"));
    assert_eq!(words("solve \"R U\" 'F B' x"), ["solve", "R U", "F B", "x"]);
}

#[test]
#[should_panic(expected = "not right before a code block")]
fn a_marker_away_from_a_code_block_fails() {
    commands("<!-- not run by tests/readme_commands.rs: stale -->\ntext\n```sh\ncargo test\n```\n");
}

#[test]
#[should_panic(expected = "gives no reason")]
fn a_marker_without_a_reason_fails() {
    commands("<!-- not run by tests/readme_commands.rs: -->\n```sh\ncargo test\n```\n");
}

#[test]
fn every_readme_command_runs_as_the_readme_says() {
    let shown = commands(README);
    assert!(!shown.is_empty(), "the README shows no command");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut ran = 0;
    for s in &shown {
        if let Some(reason) = &s.not_run {
            eprintln!("README line {}: not run ({reason}): {}", s.line, s.command);
            continue;
        }
        let args = s.command.strip_prefix(CARGO_RUN).unwrap_or_else(|| {
            panic!(
                "README line {}: `{}` is not `{CARGO_RUN}...` and its block has no `{NOT_RUN} ... -->` marker",
                s.line, s.command
            )
        });
        // a fresh directory per command, as on a fresh checkout (`run` stores into
        // ./cubefleet-data)
        let dir = tempfile::tempdir().unwrap();
        copy_dir(&root.join("examples"), &dir.path().join("examples"));
        let out = common::cubefleet()
            .args(words(args))
            .current_dir(dir.path())
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let want = expected_exit(&s.comment);
        assert_eq!(
            out.status.code(),
            Some(want),
            "README line {}: `{}` exited {:?}, the README says {want}\nstderr:\n{}",
            s.line,
            s.command,
            out.status.code(),
            String::from_utf8_lossy(&out.stderr)
        );
        let stdout = String::from_utf8(out.stdout).unwrap();
        if args.starts_with("run ") {
            // `run` prints one JSON line per line of its file, in order
            let file = words(args)[1].clone();
            let input = std::fs::read_to_string(root.join(&file)).unwrap();
            let results: Vec<serde_json::Value> = stdout
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect();
            assert_eq!(results.len(), input.lines().count(), "{file}: {stdout}");
            for (i, (r, line)) in results.iter().zip(input.lines()).enumerate() {
                assert_eq!(r["index"], i, "{file}: {r}");
                assert_eq!(r["input"], line, "{file}: {r}");
                let invalid = r["status"] == "invalid";
                assert_eq!(invalid, r["error"].is_string(), "{file}: {r}");
                assert!(invalid || r["status"] == "solved", "{file}: {r}");
            }
            let invalid = results.iter().filter(|r| r["status"] == "invalid").count();
            assert_eq!(
                invalid > 0,
                want == 1,
                "{file}: exit {want}, {invalid} invalid"
            );
        }
        ran += 1;
    }
    assert!(ran > 0, "every README command is marked not run");
}
