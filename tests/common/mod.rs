//! Helpers shared by the binary's integration tests: the tables (built once per test run into
//! `target/test-tables`), the binary with them, free loopback ports, child processes that are
//! killed when a test fails, and polling.

#![allow(dead_code)] // each test binary uses its own subset

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use cubefleet_tables::{parse_position, InputFormat, MoveSeq};

/// The tables directory every test shares.
pub(crate) fn tables_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/target/test-tables"))
}

/// The `cubefleet` binary with `CUBEFLEET_TABLES` set; builds the tables once per test run (a
/// no-op when they exist).
pub(crate) fn cubefleet() -> Command {
    static BUILT: OnceLock<()> = OnceLock::new();
    BUILT.get_or_init(|| {
        let st = Command::new(env!("CARGO_BIN_EXE_cubefleet"))
            .args(["tables", "build", "--dir"])
            .arg(tables_dir())
            .status()
            .expect("runs");
        assert!(st.success());
    });
    let mut c = Command::new(env!("CARGO_BIN_EXE_cubefleet"));
    c.env("CUBEFLEET_TABLES", tables_dir());
    c
}

/// A loopback port that was free a moment ago.
pub(crate) fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port()
}

/// A child process, killed (SIGKILL) when dropped so a failing test leaves nothing behind.
pub(crate) struct Proc {
    /// The process.
    pub(crate) child: Child,
    /// What it is, for messages.
    pub(crate) name: String,
}

impl Proc {
    /// Starts `cmd` with stdin closed and stderr inherited (its logs show with `--nocapture`).
    pub(crate) fn spawn(name: &str, mut cmd: Command) -> Proc {
        let child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("starting {name}: {e}"));
        Proc {
            child,
            name: name.to_string(),
        }
    }

    /// SIGKILL: the process gets no chance to clean up.
    pub(crate) fn kill(mut self) {
        self.child.kill().expect("kill");
        self.child.wait().expect("wait");
    }

    /// SIGTERM, then waits (up to `within`) for a clean exit; returns its exit code.
    pub(crate) fn terminate(mut self, within: Duration) -> Option<i32> {
        let pid = self.child.id().to_string();
        let st = Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .expect("kill");
        assert!(st.success());
        let end = Instant::now() + within;
        while Instant::now() < end {
            if let Some(s) = self.child.try_wait().expect("try_wait") {
                return s.code();
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("{} did not stop within {within:?} of SIGTERM", self.name);
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Polls `f` every 50 ms until it returns `Some`, for at most `limit`.
pub(crate) fn wait_for<T>(what: &str, limit: Duration, mut f: impl FnMut() -> Option<T>) -> T {
    let end = Instant::now() + limit;
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(Instant::now() < end, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Asserts that `solution` solves `input` and that `length` counts its moves.
pub(crate) fn assert_solves(input: &str, solution: &str, length: u64) {
    let cube = parse_position(input, InputFormat::Auto).expect("a valid position");
    let sol = MoveSeq::parse(solution).expect("standard notation");
    assert!(
        cube.apply_moves(&sol.0).is_solved(),
        "{solution:?} does not solve {input:?}"
    );
    assert_eq!(sol.len() as u64, length, "length of {solution:?}");
}

/// A coordinator process on `port` over the store in `data`.
pub(crate) fn coordinator(port: u16, data: &Path) -> Proc {
    let mut c = cubefleet();
    c.args(["coordinator", "--listen", &format!("127.0.0.1:{port}")])
        .arg("--data")
        .arg(data)
        .args(["--lease", "3"]);
    Proc::spawn("coordinator", c)
}

/// A one-thread worker process joining the coordinator at `url`.
pub(crate) fn worker(name: &str, url: &str) -> Proc {
    let mut c = cubefleet();
    c.args([
        "worker",
        "--coordinator",
        url,
        "--threads",
        "1",
        "--no-build",
        "--grace",
        "5",
        "--name",
        name,
    ]);
    Proc::spawn(name, c)
}

/// Runs a client command against `url`; returns stdout, panicking on failure.
pub(crate) fn client(url: &str, args: &[&str]) -> String {
    client_output(url, args).unwrap_or_else(|e| panic!("cubefleet {args:?}: {e}"))
}

/// Runs a client command against `url`: its stdout, or its stderr when it fails.
pub(crate) fn client_output(url: &str, args: &[&str]) -> Result<String, String> {
    let out = cubefleet()
        .args(args)
        .args(["--coordinator", url])
        .output()
        .expect("runs");
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

/// `status BATCH --json`, or `None` while the coordinator is unreachable.
pub(crate) fn status(url: &str, batch: &str) -> Option<serde_json::Value> {
    let out = client_output(url, &["status", batch, "--json"]).ok()?;
    Some(serde_json::from_str(out.trim()).expect("one JSON object"))
}

/// A count field of a `status --json` object.
pub(crate) fn count(s: &serde_json::Value, field: &str) -> u64 {
    s[field]
        .as_u64()
        .unwrap_or_else(|| panic!("{field} in {s}"))
}

/// `n` scrambles of 8 random face turns (a fixed pseudo-random sequence; cheap to solve).
pub(crate) fn short_scrambles(n: usize) -> Vec<String> {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    (0..n)
        .map(|_| {
            (0..8)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    let m = (x % 18) as usize;
                    format!("{}{}", &"URFDLB"[m / 3..m / 3 + 1], ["", "2", "'"][m % 3])
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}
