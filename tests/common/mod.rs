//! What the binary's integration tests share beyond `cubefleet_testkit` (re-exported here):
//! the binary with the test tables (built once per test run), coordinators and workers as
//! processes (a coordinator listens on port 0 and reports its address), and client commands.

#![allow(dead_code, unused_imports)] // each test binary uses its own subset

use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

pub(crate) use cubefleet_testkit::{
    addr_file, assert_solves, read_addr_file, refusing_port, short_scrambles, tables_dir, wait_for,
    Proc,
};

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

/// How long a coordinator may take to open its store and listen.
const COORDINATOR_START: Duration = Duration::from_secs(60);

/// A coordinator process over the store in `data`, on a loopback port it chose (it listens on
/// port 0 and reports the port in its `--addr-file`); returned once it listens, with its URL.
pub(crate) fn coordinator(data: &Path) -> (Proc, String) {
    coordinator_on("127.0.0.1:0", data)
}

/// A coordinator restarted at `url`, the address of one that stopped (workers and clients
/// that know the address find it again), over the store in `data`; returned once it listens.
pub(crate) fn coordinator_at(url: &str, data: &Path) -> Proc {
    let addr = url.strip_prefix("http://").expect("an http:// URL");
    let (proc, again) = coordinator_on(addr, data);
    assert_eq!(again, url, "the coordinator listens where it did");
    proc
}

/// A coordinator listening on `addr` over the store in `data`, with leases of 3 s; returned
/// once it listens, with its URL.
fn coordinator_on(addr: &str, data: &Path) -> (Proc, String) {
    let file = addr_file();
    let mut c = cubefleet();
    c.args(["coordinator", "--listen", addr])
        .arg("--data")
        .arg(data)
        .args(["--lease", "3"])
        .arg("--addr-file")
        .arg(&file);
    let mut proc = Proc::spawn("coordinator", c);
    let url = read_addr_file(&mut proc, &file, COORDINATOR_START).url("grpc");
    (proc, url)
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

/// Runs `cmd`, which must succeed (its stderr is the failure's message), and reads its
/// standard output as JSON lines.
pub(crate) fn json_rows(cmd: &mut Command) -> Vec<serde_json::Value> {
    let out = cmd.output().expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

/// A coordinator over the store in `dir/data` with its status page, both ports chosen by it
/// (port 0) and read from its address file: the process, its gRPC port and its HTTP port.
pub(crate) fn http_coordinator(dir: &Path) -> (Proc, u16, u16) {
    let file = addr_file();
    let mut c = cubefleet();
    c.args([
        "coordinator",
        "--listen",
        "127.0.0.1:0",
        "--http",
        "127.0.0.1:0",
    ])
    .arg("--data")
    .arg(dir.join("data"))
    .arg("--addr-file")
    .arg(&file);
    let mut coordinator = Proc::spawn("coordinator", c);
    let addrs = read_addr_file(&mut coordinator, &file, COORDINATOR_START);
    let (grpc, http) = (addrs.get("grpc").port(), addrs.get("http").port());
    (coordinator, grpc, http)
}
