//! What a newcomer hits first: connection errors that name the URL and the cause
//! (nothing listening, a name that does not resolve, a URL without its scheme, TLS refused
//! for each of its reasons, a credential refused) in the client commands and the worker;
//! `cubefleet certs` making a CA and a certificate a TLS coordinator serves; a cancelled batch
//! that says so (`cancel`, `submit --wait`, `status`).

#![allow(clippy::unwrap_used)]

mod common;

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{addr_file, coordinator, cubefleet, read_addr_file, refusing_port, Proc};

/// The client secret of the TLS coordinator.
const SECRET: &str = "open-sesame";

/// `cubefleet certs --out DIR --name localhost`; the directory's files exist after it.
fn certs(dir: &Path) {
    let out = cubefleet()
        .args(["certs", "--name", "localhost", "--out"])
        .arg(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let said = text(&out.stdout);
    assert!(
        said.contains("ca.pem") && said.contains("cert.pem"),
        "{said}"
    );
    for f in ["ca.pem", "ca-key.pem", "cert.pem", "key.pem"] {
        assert!(dir.join(f).exists(), "{f}");
    }
}

/// A coordinator serving TLS with the certificate in `certs`, a client credential
/// ([`SECRET`]); its gRPC port.
fn tls_coordinator(certs: &Path, data: &Path) -> (Proc, u16) {
    let file = addr_file();
    let mut c = cubefleet();
    c.args(["coordinator", "--listen", "127.0.0.1:0"])
        .arg("--data")
        .arg(data)
        .arg("--tls-cert")
        .arg(certs.join("cert.pem"))
        .arg("--tls-key")
        .arg(certs.join("key.pem"))
        .args(["--client-token", &format!("alice:{SECRET}")])
        .arg("--addr-file")
        .arg(&file);
    let mut proc = Proc::spawn("tls coordinator", c);
    let port = read_addr_file(&mut proc, &file, Duration::from_secs(60))
        .get("grpc")
        .port();
    (proc, port)
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `cubefleet status --coordinator URL` with `extra` arguments and `ca` as the trusted CA.
fn status(url: &str, ca: Option<&Path>, extra: &[&str]) -> Output {
    let mut c = cubefleet();
    c.args(["status", "--coordinator", url]).args(extra);
    c.env_remove("CUBEFLEET_TLS_CA")
        .env_remove("CUBEFLEET_TOKEN");
    if let Some(ca) = ca {
        c.env("CUBEFLEET_TLS_CA", ca);
    }
    c.output().unwrap()
}

/// Asserts that `out` failed with an error naming `url` (unless empty) and every one of
/// `words`, and none of the libraries' internals.
fn assert_says(what: &str, out: &Output, url: &str, words: &[&str]) {
    let err = text(&out.stderr);
    assert!(!out.status.success(), "{what}: succeeded\n{err}");
    assert!(
        err.contains(url),
        "{what}: the URL {url} is not named:\n{err}"
    );
    for w in words {
        assert!(err.contains(w), "{what}: {w:?} is not said:\n{err}");
    }
    for internal in [
        "code: '",
        "transport error",
        "Status {",
        "hyper",
        "h2 protocol",
    ] {
        assert!(
            !err.contains(internal),
            "{what}: a library's internals ({internal}):\n{err}"
        );
    }
}

#[test]
fn every_connection_error_names_the_url_and_its_cause() {
    let dir = tempfile::tempdir().unwrap();
    let pki = dir.path().join("pki");
    certs(&pki);
    let ca = pki.join("ca.pem");
    let (_tls, port) = tls_coordinator(&pki, &dir.path().join("tls-data"));
    let (_plain, plain_url) = coordinator(&dir.path().join("plain-data"));
    let tls_url = format!("https://localhost:{port}");

    // the certificate `certs` made is served and trusted through the CA it made
    let ok = status(&tls_url, Some(&ca), &["--token", SECRET]);
    assert!(ok.status.success(), "{}", text(&ok.stderr));

    let (_socket, refusing) = refusing_port();
    let nothing = format!("http://127.0.0.1:{refusing}");
    assert_says(
        "nothing listening",
        &status(&nothing, None, &[]),
        &nothing,
        &["nothing is listening"],
    );
    let unknown = "http://no-such-host.invalid:7700";
    assert_says(
        "an unknown host",
        &status(unknown, None, &[]),
        unknown,
        &["no-such-host.invalid does not resolve"],
    );
    assert_says(
        "no scheme",
        &status("127.0.0.1:7700", None, &[]),
        "127.0.0.1:7700",
        &["http://127.0.0.1:7700"],
    );
    assert_says(
        "an untrusted certificate",
        &status(&tls_url, None, &["--token", SECRET]),
        &tls_url,
        &["not trusted", "CUBEFLEET_TLS_CA"],
    );
    let by_ip = format!("https://127.0.0.1:{port}");
    assert_says(
        "a certificate for another name",
        &status(&by_ip, Some(&ca), &["--token", SECRET]),
        &by_ip,
        &["does not name 127.0.0.1"],
    );
    let plain_to_tls = format!("http://localhost:{port}");
    // the server's TLS alert read as a frame, or the connection it closed: both say https
    let out = status(&plain_to_tls, Some(&ca), &["--token", SECRET]);
    assert_says("plain text to a TLS port", &out, &plain_to_tls, &[&tls_url]);
    let err = text(&out.stderr);
    assert!(
        err.contains("speaks TLS") || err.contains("if it serves TLS"),
        "{err}"
    );
    let tls_to_plain = plain_url.replacen("http://", "https://", 1);
    assert_says(
        "TLS to a plain port",
        &status(&tls_to_plain, Some(&ca), &[]),
        &tls_to_plain,
        &["plain text", &plain_url],
    );
    assert_says(
        "a wrong token",
        &status(&tls_url, Some(&ca), &["--token", "guess"]),
        &tls_url,
        &["refused the credential", "wrong bearer token"],
    );
    assert_says(
        "no token",
        &status(&tls_url, Some(&ca), &[]),
        &tls_url,
        &["refused the credential", "needs a bearer token"],
    );
}

/// A worker joining `url` with `token`, trusting `ca`: its exit status and stderr once it
/// ended, or None when it still runs after `limit` (then killed).
fn worker_until(url: &str, ca: &Path, token: &str, limit: Duration) -> (Option<bool>, String) {
    let mut child = cubefleet()
        .args([
            "worker",
            "--threads",
            "1",
            "--no-build",
            "--coordinator",
            url,
        ])
        .args(["--token", token])
        .env("CUBEFLEET_TLS_CA", ca)
        .env("NO_COLOR", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let ended = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break Some(st.success());
        }
        if start.elapsed() > limit {
            child.kill().unwrap();
            child.wait().unwrap();
            break None;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let mut err = String::new();
    use std::io::Read;
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    (ended, err)
}

#[test]
fn a_worker_names_the_cause_and_stops_when_no_retry_helps() {
    let dir = tempfile::tempdir().unwrap();
    let pki = dir.path().join("pki");
    certs(&pki);
    let ca = pki.join("ca.pem");
    let (_tls, port) = tls_coordinator(&pki, &dir.path().join("data"));
    let url = format!("https://localhost:{port}");
    // a wrong token: it stops at once, saying why
    let (ended, err) = worker_until(&url, &ca, "guess", Duration::from_secs(60));
    assert_eq!(ended, Some(false), "{err}");
    assert!(
        err.contains(&url) && err.contains("refused the credential"),
        "{err}"
    );
    // a client's credential: not a worker's
    let (ended, err) = worker_until(&url, &ca, SECRET, Duration::from_secs(60));
    assert_eq!(ended, Some(false), "{err}");
    assert!(err.contains("needs a worker credential"), "{err}");
    // nothing listening: it says so and keeps trying (the coordinator may start later)
    let (_socket, refusing) = refusing_port();
    let nothing = format!("http://127.0.0.1:{refusing}");
    let (ended, err) = worker_until(&nothing, &ca, "any", Duration::from_secs(4));
    assert_eq!(ended, None, "{err}");
    assert!(
        err.contains(&nothing) && err.contains("nothing is listening"),
        "{err}"
    );
    assert!(!err.contains("transport error"), "{err}");
}

#[test]
fn certs_signs_a_new_certificate_with_the_ca_already_there() {
    let dir = tempfile::tempdir().unwrap();
    certs(dir.path());
    let ca = std::fs::read(dir.path().join("ca.pem")).unwrap();
    let cert = std::fs::read(dir.path().join("cert.pem")).unwrap();
    let out = cubefleet()
        .args(["certs", "--name", "localhost", "--name", "10.0.0.5"])
        .arg("--out")
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("signed with the CA"));
    assert_eq!(std::fs::read(dir.path().join("ca.pem")).unwrap(), ca);
    assert_ne!(std::fs::read(dir.path().join("cert.pem")).unwrap(), cert);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        for key in ["ca-key.pem", "key.pem"] {
            let mode = std::fs::metadata(dir.path().join(key))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o077, 0, "{key} is readable by others");
        }
    }
    // the new certificate, signed by the CA already there, is trusted through the old ca.pem
    let old_ca = dir.path().join("old-ca.pem");
    std::fs::write(&old_ca, &ca).unwrap();
    let (_c, port) = tls_coordinator(dir.path(), &dir.path().join("data"));
    let url = format!("https://localhost:{port}");
    let ok = status(&url, Some(&old_ca), &["--token", SECRET]);
    assert!(ok.status.success(), "{}", text(&ok.stderr));
}

#[test]
fn a_cancelled_batch_is_not_finished() {
    let dir = tempfile::tempdir().unwrap();
    let (_coordinator, url) = coordinator(&dir.path().join("data"));
    let file = dir.path().join("lines.txt");
    std::fs::write(&file, "R U\nF2 D'\nL B2\n").unwrap();
    // no worker: the batch waits until it is cancelled
    let wait = cubefleet()
        .args([
            "submit",
            "--batch-id",
            "nc1",
            "--wait",
            "--coordinator",
            &url,
        ])
        .arg(&file)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let status = |extra: &[&str]| {
        let mut c = cubefleet();
        c.args(extra).args(["--coordinator", &url]);
        c.output().unwrap()
    };
    common::wait_for("the batch", Duration::from_secs(30), || {
        status(&["status", "nc1"]).status.success().then_some(())
    });
    let cancelled = status(&["cancel", "nc1"]);
    assert!(cancelled.status.success(), "{}", text(&cancelled.stderr));
    let said = text(&cancelled.stdout);
    assert!(
        said.contains("cancelled batch nc1: 3 of 3 lines will not be searched"),
        "{said}"
    );
    let again = text(&status(&["cancel", "nc1"]).stdout);
    assert!(again.contains("batch nc1 was already cancelled"), "{again}");
    let shown = text(&status(&["status", "nc1"]).stdout);
    assert!(
        shown.starts_with("nc1 ") && shown.contains("[cancelled]:"),
        "{shown}"
    );
    assert!(
        shown.contains("done 0") && shown.contains("cancelled 3"),
        "{shown}"
    );
    let out = wait_with_limit(wait, Duration::from_secs(30));
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("batch nc1 was cancelled: 3 of 3 lines were not searched"),
        "{}",
        text(&out.stderr)
    );
}

/// Waits for `child` at most `limit`; its output.
fn wait_with_limit(mut child: std::process::Child, limit: Duration) -> Output {
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        assert!(start.elapsed() < limit, "did not end within {limit:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
    child.wait_with_output().unwrap()
}

#[test]
fn a_first_solve_says_it_builds_the_tables_and_logs_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    // stderr is a pipe here, as in a log file: lines instead of bars, no colour codes
    let out = Command::new(env!("CARGO_BIN_EXE_cubefleet"))
        .args(["solve", "R U R' U'", "--tables"])
        .arg(dir.path())
        .env_remove("RUST_LOG")
        .env_remove("NO_COLOR")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    for said in [
        "building the two-phase tables in",
        "building table phase1",
        "built table phase1 in",
        "built table phase2_slice in",
    ] {
        assert!(err.contains(said), "{said:?} not said:\n{err}");
    }
    assert!(!err.contains("\x1b["), "colour codes in a pipe:\n{err}");
    assert!(!err.contains(" INFO "), "internal INFO lines:\n{err}");
    assert_eq!(text(&out.stdout).trim(), "U R U' R' (4)");
}

#[test]
fn run_says_how_much_a_resumed_batch_had_answered() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("lines.txt");
    std::fs::write(&file, "R U\nF2 D'\n# a note\nL B2\n").unwrap();
    let run = || {
        cubefleet()
            .arg("run")
            .arg(&file)
            .arg("--data")
            .arg(dir.path().join("data"))
            .env_remove("RUST_LOG")
            .output()
            .unwrap()
    };
    let first = run();
    assert!(first.status.success(), "{}", text(&first.stderr));
    let err = text(&first.stderr);
    assert!(!err.contains("resuming"), "{err}");
    assert!(!err.contains(" INFO "), "internal INFO lines:\n{err}");
    assert_eq!(text(&first.stdout).lines().count(), 4);
    let again = run();
    assert!(again.status.success(), "{}", text(&again.stderr));
    let err = text(&again.stderr);
    assert!(
        err.contains("resuming: 4 of 4 lines already answered"),
        "{err}"
    );
    assert_eq!(text(&again.stdout), text(&first.stdout));
}

#[cfg(unix)]
#[test]
fn an_optimal_search_without_a_bound_table_says_which_one_helps() {
    // the standard tables only (links to the test tables', which may hold a bound table
    // too): the superflip's optimal search takes far longer than a second with them
    let dir = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(common::tables_dir()).unwrap() {
        let name = entry.unwrap().file_name();
        let standard = ["phase1", "phase1_moves", "phase2", "phase2_slice", "coords"]
            .iter()
            .any(|t| name.to_string_lossy().split('.').next() == Some(t));
        if standard {
            std::os::unix::fs::symlink(common::tables_dir().join(&name), dir.path().join(&name))
                .unwrap();
        }
    }
    let out = cubefleet()
        .args([
            "solve",
            "--optimal",
            "--timeout",
            "1",
            "--no-build",
            "--tables",
        ])
        .arg(dir.path())
        .arg("U R2 F B R B2 R U2 L B2 R U' D' R2 F R' L B2 U2 F2")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    for said in [
        "holds no huge, giant or colossal table",
        "cubefleet tables build --huge",
        "timeout: 1 position(s) ran out of the 1 s budget",
        "line 0: no solution shorter than",
    ] {
        assert!(err.contains(said), "{said:?} not said:\n{err}");
    }
    assert!(
        text(&out.stdout).contains("timeout"),
        "{}",
        text(&out.stdout)
    );
}
