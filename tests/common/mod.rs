//! Helpers shared by the binary's integration tests: the tables (built once per test run into
//! `target/test-tables`), the binary with them, free loopback ports, child processes that are
//! killed when a test fails, and polling.

#![allow(dead_code)] // each test binary uses its own subset

use std::path::PathBuf;
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
