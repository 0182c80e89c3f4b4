//! What the tests of every cubefleet crate share (a dev-dependency only, never published):
//! the directory of the test tables, child processes that die with the test, polling, the
//! addresses a process under test reports, a port that refuses connections, known
//! positions, and a worker registered over raw gRPC.
//!
//! Invariants: the test tables live in one directory, [`TABLES_DIR`] (`target/test-tables`
//! of the workspace), built once per checkout and shared by every test binary; no helper
//! hands out a port that something else might bind first: a process under test listens on
//! port 0 and reports what it bound ([`read_addr_file`]), and [`refusing_port`] holds the
//! port it names for as long as the test keeps it.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use cubefleet_tables::{parse_position, CubieCube, InputFormat, MoveSeq};

/// The tables every test shares: `target/test-tables` of the workspace, built once per
/// checkout (by the first test that needs them; a no-op when they exist).
pub const TABLES_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../target/test-tables");

/// [`TABLES_DIR`] as a path.
pub fn tables_dir() -> PathBuf {
    PathBuf::from(TABLES_DIR)
}

/// How often the polling helpers look again.
const POLL: Duration = Duration::from_millis(50);

/// A child process, killed (SIGKILL) when dropped so a failing test leaves nothing behind.
pub struct Proc {
    /// The process.
    pub child: Child,
    /// What it is, for messages.
    pub name: String,
}

impl Proc {
    /// Starts `cmd` with stdin closed and stderr inherited (its logs show with `--nocapture`).
    pub fn spawn(name: &str, mut cmd: Command) -> Proc {
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
    pub fn kill(mut self) {
        self.child.kill().expect("kill");
        self.child.wait().expect("wait");
    }

    /// SIGTERM, then waits (up to `within`) for a clean exit; returns its exit code.
    pub fn terminate(mut self, within: Duration) -> Option<i32> {
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
            std::thread::sleep(POLL);
        }
        panic!("{} did not stop within {within:?} of SIGTERM", self.name);
    }

    /// Panics, naming the process, when it has exited.
    pub fn assert_running(&mut self) {
        if let Some(s) = self.child.try_wait().expect("try_wait") {
            panic!("{} exited: {s}", self.name);
        }
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Polls `f` every 50 ms until it returns `Some`, for at most `limit`.
pub fn wait_for<T>(what: &str, limit: Duration, mut f: impl FnMut() -> Option<T>) -> T {
    let end = Instant::now() + limit;
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(Instant::now() < end, "timed out waiting for {what}");
        std::thread::sleep(POLL);
    }
}

/// The addresses a process wrote to its address file (`--addr-file`): `NAME ADDR` lines.
#[derive(Clone, Debug)]
pub struct Addrs(Vec<(String, SocketAddr)>);

impl Addrs {
    /// The address named `name` (`grpc`, `http`); panics when the file has none.
    pub fn get(&self, name: &str) -> SocketAddr {
        self.0
            .iter()
            .find(|(n, _)| n == name)
            .map(|&(_, a)| a)
            .unwrap_or_else(|| panic!("no {name} address in {:?}", self.0))
    }

    /// `http://ADDR` of the address named `name`.
    pub fn url(&self, name: &str) -> String {
        format!("http://{}", self.get(name))
    }
}

/// A path for a process's address file (`--addr-file`) that no other test uses: in the
/// temporary directory, named by this process and a counter. Nothing is there yet.
pub fn addr_file() -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let path = std::env::temp_dir().join(format!("cubefleet-test-{}-{n}.addr", std::process::id()));
    let _ = std::fs::remove_file(&path); // left by a process of the same id long gone
    path
}

/// Waits (up to `limit`) for `proc` to write its address file `path`, reads it and removes
/// it. The process writes the file whole once it listens, so a file that exists is
/// complete; a process that exits first fails the test.
pub fn read_addr_file(proc: &mut Proc, path: &Path, limit: Duration) -> Addrs {
    let what = format!("{} to write {}", proc.name, path.display());
    let text = wait_for(&what, limit, || {
        proc.assert_running();
        std::fs::read_to_string(path).ok()
    });
    let _ = std::fs::remove_file(path);
    Addrs(
        text.lines()
            .map(|l| {
                let (name, addr) = l.split_once(' ').expect("NAME ADDR");
                (name.to_string(), addr.parse().expect("a socket address"))
            })
            .collect(),
    )
}

/// A loopback port that refuses connections for as long as the returned socket is kept: the
/// socket is bound to it and never listens, so nothing else can bind it meanwhile.
pub fn refusing_port() -> (tokio::net::TcpSocket, u16) {
    let socket = tokio::net::TcpSocket::new_v4().expect("socket");
    socket
        .bind(SocketAddr::from(([127, 0, 0, 1], 0)))
        .expect("bind");
    let port = socket.local_addr().expect("addr").port();
    (socket, port)
}

/// Asserts that `solution` solves `input` and that `length` counts its moves.
pub fn assert_solves(input: &str, solution: &str, length: u64) {
    let cube = parse_position(input, InputFormat::Auto).expect("a valid position");
    let sol = MoveSeq::parse(solution).expect("standard notation");
    assert!(
        cube.apply_moves(&sol.0).is_solved(),
        "{solution:?} does not solve {input:?}"
    );
    assert_eq!(sol.len() as u64, length, "length of {solution:?}");
}

/// A solution of the position made by `scramble`: the scramble undone.
pub fn undo(scramble: &str) -> String {
    MoveSeq::parse(scramble)
        .expect("standard notation")
        .inverse()
        .to_string()
}

/// `n` scrambles of 8 random face turns (a fixed pseudo-random sequence; cheap to solve).
pub fn short_scrambles(n: usize) -> Vec<String> {
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

/// The positions with proven optimal lengths (`tests/vectors/known-optimal.txt`).
const KNOWN_OPTIMAL: &str = include_str!("../../tests/vectors/known-optimal.txt");

/// Every known position whose optimal length (HTM) is in `lengths`: (facelets, cube, length).
pub fn known_optimal(lengths: std::ops::RangeInclusive<u32>) -> Vec<(String, CubieCube, u32)> {
    KNOWN_OPTIMAL
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            let facelets = words.next().expect("facelets");
            let len: u32 = words.next().expect("length").parse().expect("number");
            lengths.contains(&len).then(|| {
                let cube = parse_position(facelets, InputFormat::Facelets).expect("valid");
                (facelets.to_string(), cube, len)
            })
        })
        .collect()
}

/// The resident memory of this process, in bytes (Linux's `VmRSS`).
pub fn resident() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse::<u64>().ok())
        .expect("VmRSS in kB")
        * 1024
}

/// The threads a test's worker session registers ([`register_worker`]): a session may hold
/// two jobs per thread of a batch none of whose results came in yet, so the tests' sessions
/// may lease up to 128 jobs of a new batch at once.
pub const TEST_WORKER_THREADS: u32 = 64;

/// Registers a worker of [`TEST_WORKER_THREADS`] threads named `name` over `client`'s gRPC
/// connection, as a worker of this protocol revision would; its session id (the secret the
/// worker calls with).
pub async fn register_worker(client: &mut cubefleet_proto::client::Client, name: &str) -> String {
    client
        .workers
        .register(cubefleet_proto::RegisterRequest {
            name: name.to_string(),
            threads: TEST_WORKER_THREADS,
            table_fingerprint: "test".into(),
            protocol: cubefleet_proto::PROTOCOL,
        })
        .await
        .expect("registers")
        .into_inner()
        .worker_id
}

/// Every cube within `depth` of `turns` from solved, with its distance: a plain breadth-first
/// search, the independent answer the searches' tests compare with (each turn costs one).
pub fn distances(
    turns: &[cubefleet_tables::Move],
    depth: u32,
) -> std::collections::HashMap<CubieCube, u32> {
    let mut dist = std::collections::HashMap::from([(CubieCube::SOLVED, 0)]);
    let mut frontier = vec![CubieCube::SOLVED];
    for d in 1..=depth {
        let mut next = Vec::new();
        for c in &frontier {
            for &m in turns {
                let n = c.apply_move(m);
                if let std::collections::hash_map::Entry::Vacant(e) = dist.entry(n) {
                    e.insert(d);
                    next.push(n);
                }
            }
        }
        frontier = next;
    }
    dist
}
