//! The coordinator's HTTP port end to end, with real processes: `cubefleet coordinator --http`,
//! a batch submitted with `cubefleet submit` and half solved by a `cubefleet worker --http`,
//! then `/metrics` (counters, queue depth, queued work), the worker's `/metrics`, and the status
//! page: its HTML as served, and its DOM as rendered by headless Chromium after the page's
//! script ran (plus a screenshot, `target/status-page.png`, kept as a test artifact).
//!
//! The browser part needs Debian's `chromium` (`/usr/bin/chromium`, or `$CUBEFLEET_CHROMIUM`);
//! without it the part is skipped with a notice, unless `CUBEFLEET_REQUIRE_CHROMIUM` is set
//! (as CI does), which makes a missing browser a failure.

#![allow(clippy::unwrap_used)]

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{addr_file, http_coordinator, read_addr_file, wait_for, Proc};

const TOKEN: &str = "status-page-test-token";

/// The binary, with the tables (see `common`) and the token in its environment.
fn cubefleet() -> Command {
    let mut c = common::cubefleet();
    c.env("CUBEFLEET_TOKEN", TOKEN);
    c
}

/// `GET path` over HTTP/1.0 (so the body ends with the connection), presenting the token:
/// (status, content type, body).
fn get(port: u16, path: &str) -> std::io::Result<(u16, String, String)> {
    let mut s = TcpStream::connect(("127.0.0.1", port))?;
    s.set_read_timeout(Some(Duration::from_secs(30)))?;
    write!(
        s,
        "GET {path} HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {TOKEN}\r\n\r\n"
    )?;
    let mut raw = String::new();
    s.read_to_string(&mut raw)?;
    let (head, body) = raw.split_once("\r\n\r\n").unwrap_or((&raw, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let ctype = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("content-type")
                .then(|| v.trim().to_string())
        })
        .unwrap_or_default();
    Ok((status, ctype, body.to_string()))
}

/// The value of the sample `series` (a metric name with its labels, as exposed) in `text`.
fn sample(text: &str, series: &str) -> f64 {
    text.lines()
        .find_map(|l| {
            let rest = l.strip_prefix(series)?;
            rest.strip_prefix(' ')?.trim().parse().ok()
        })
        .unwrap_or_else(|| panic!("no sample {series} in:\n{text}"))
}

fn metrics(port: u16) -> String {
    let (status, ctype, body) = get(port, "/metrics").unwrap();
    assert_eq!(status, 200, "{body}");
    assert!(
        ctype.starts_with("application/openmetrics-text"),
        "content type {ctype}"
    );
    body
}

fn run(mut cmd: Command) -> Output {
    let out = cmd.stdin(Stdio::null()).output().unwrap();
    assert!(
        out.status.success(),
        "{:?} failed: {}",
        cmd,
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// `cubefleet submit FILE` with a name: the batch id it prints.
fn submit(grpc: u16, file: &Path, name: &str) -> String {
    let mut c = cubefleet();
    c.arg("submit")
        .arg(file)
        .args(["--coordinator", &format!("http://127.0.0.1:{grpc}")])
        .args(["--name", name]);
    let out = run(c);
    let id = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert!(!id.is_empty(), "submit printed no batch id");
    id
}

#[test]
fn metrics_and_status_page_with_a_batch_in_progress() {
    let dir = tempfile::tempdir().unwrap();

    // 40 scrambles and one bad line: batch 1 is the first 20, batch 2 all of them
    let mut c = cubefleet();
    c.args(["scramble", "--count", "40", "--seed", "7"]);
    let scrambles = String::from_utf8(run(c).stdout).unwrap();
    let lines: Vec<&str> = scrambles.lines().collect();
    assert_eq!(lines.len(), 40);
    let first = dir.path().join("first.txt");
    std::fs::write(&first, lines[..20].join("\n") + "\n").unwrap();
    let all = dir.path().join("all.txt");
    std::fs::write(&all, scrambles.clone() + "R U Q2\n").unwrap();

    let (coordinator, grpc, http) = http_coordinator(dir.path());
    wait_for(
        "the coordinator's HTTP port",
        Duration::from_secs(30),
        || get(http, "/healthz").ok().filter(|r| r.0 == 200),
    );
    let m = metrics(http);
    assert_eq!(sample(&m, "cubefleet_queue_depth"), 0.0);
    assert_eq!(sample(&m, "cubefleet_queued_work_seconds"), 0.0);

    // batch 1: queued, with no worker yet
    let batch1 = submit(grpc, &first, "warm-up");
    let m = metrics(http);
    assert_eq!(sample(&m, "cubefleet_jobs_submitted_total"), 20.0);
    assert_eq!(sample(&m, "cubefleet_queue_depth"), 20.0);
    assert_eq!(sample(&m, "cubefleet_jobs{state=\"queued\"}"), 20.0);
    // before any result, each job counts as the default 1 s: the autoscaler still sees work
    assert_eq!(sample(&m, "cubefleet_queued_work_seconds"), 20.0);
    assert_eq!(sample(&m, "cubefleet_batches{state=\"running\"}"), 1.0);

    // a worker solves batch 1; the counters move and the queue empties
    let file = addr_file();
    let mut c = cubefleet();
    c.arg("worker")
        .args(["--coordinator", &format!("http://127.0.0.1:{grpc}")])
        .args(["--threads", "1", "--no-build", "--name", "page-worker"])
        .args(["--http", "127.0.0.1:0", "--addr-file"])
        .arg(&file);
    let mut worker = Proc::spawn("worker", c);
    let worker_http = read_addr_file(&mut worker, &file, Duration::from_secs(30))
        .get("http")
        .port();
    let mut depths = Vec::new();
    let m = wait_for("batch 1 to be solved", Duration::from_secs(120), || {
        let m = metrics(http);
        depths.push(sample(&m, "cubefleet_queue_depth"));
        (sample(&m, "cubefleet_jobs_completed_total") == 20.0).then_some(m)
    });
    assert!(
        depths.windows(2).all(|w| w[1] <= w[0]),
        "queue depth only falls: {depths:?}"
    );
    assert_eq!(sample(&m, "cubefleet_queue_depth"), 0.0);
    assert_eq!(sample(&m, "cubefleet_queued_work_seconds"), 0.0);
    assert_eq!(sample(&m, "cubefleet_results_verified_total"), 20.0);
    assert_eq!(sample(&m, "cubefleet_results_rejected_total"), 0.0);
    assert_eq!(sample(&m, "cubefleet_jobs{state=\"done\"}"), 20.0);
    assert_eq!(sample(&m, "cubefleet_solve_seconds_count"), 20.0);
    assert_eq!(sample(&m, "cubefleet_solution_length_count"), 20.0);
    assert_eq!(
        sample(&m, "cubefleet_solution_length_bucket{le=\"20.0\"}"),
        20.0,
        "two-phase solutions have at most 20 moves"
    );
    assert_eq!(sample(&m, "cubefleet_workers"), 1.0);
    // the open endpoint shows counts, never a worker's name (the page and /api/status do)
    assert_eq!(sample(&m, "cubefleet_worker_threads"), 1.0);
    assert!(
        !m.contains("page-worker"),
        "a worker's name on the open /metrics:\n{m}"
    );

    // the worker's own metrics
    let w = wait_for("the worker's report", Duration::from_secs(10), || {
        let w = metrics(worker_http);
        (sample(&w, "cubefleet_worker_jobs_completed_total") == 20.0).then_some(w)
    });
    assert_eq!(sample(&w, "cubefleet_worker_search_threads"), 1.0);
    assert_eq!(sample(&w, "cubefleet_worker_jobs_leased_total"), 20.0);
    assert_eq!(sample(&w, "cubefleet_worker_threads_busy"), 0.0);
    assert!(sample(&w, "cubefleet_worker_nodes_total") > 0.0);
    assert!(sample(&w, "cubefleet_worker_nodes_per_second") > 0.0);
    assert!(sample(&w, "cubefleet_worker_tables_load_seconds") > 0.0);
    assert_eq!(sample(&w, "cubefleet_worker_search_panics_total"), 0.0);
    assert_eq!(worker.terminate(Duration::from_secs(60)), Some(0));

    // batch 2, no worker: its first 20 lines are answered from the store, the bad line is
    // invalid, 20 wait -> a batch in progress, about half done, with a length histogram
    let evil = "<b>nightly</b> & \"more\"";
    let batch2 = submit(grpc, &all, evil);
    let m = metrics(http);
    assert_eq!(sample(&m, "cubefleet_jobs_submitted_total"), 61.0);
    assert_eq!(sample(&m, "cubefleet_jobs_from_store_total"), 20.0);
    assert_eq!(sample(&m, "cubefleet_jobs_completed_total"), 40.0);
    assert_eq!(sample(&m, "cubefleet_queue_depth"), 20.0);
    assert_eq!(sample(&m, "cubefleet_jobs{state=\"queued\"}"), 20.0);
    assert_eq!(sample(&m, "cubefleet_jobs{state=\"invalid\"}"), 1.0);
    let mean = sample(&m, "cubefleet_solve_mean_seconds");
    assert!(mean > 0.0 && mean < 5.0, "mean solve time {mean}");
    let work = sample(&m, "cubefleet_queued_work_seconds");
    assert!(
        (work - 20.0 * mean).abs() < 1e-6 * work.max(1.0),
        "{work} vs 20 x {mean}"
    );

    // the status page as served
    let (status, ctype, page) = get(http, "/").unwrap();
    assert_eq!(status, 200);
    assert!(ctype.starts_with("text/html"), "{ctype}");
    assert!(page.contains("<title>cubefleet status</title>"));
    assert!(
        page.contains("&lt;b&gt;nightly&lt;/b&gt; &amp; &quot;more&quot;"),
        "the batch name, escaped"
    );
    assert!(
        !page.contains(evil),
        "a batch name must never reach the page unescaped"
    );
    let article = |id: &str| {
        let start = page
            .find(&format!("data-batch=\"{id}\""))
            .unwrap_or_else(|| panic!("no batch {id} on the page"));
        page[start..page[start..].find("</article>").unwrap() + start].to_string()
    };
    let b2 = article(&batch2);
    assert!(b2.contains("badge running"), "{b2}");
    assert!(
        b2.contains("<progress class=\"batch-progress\" max=\"41\" value=\"21\">"),
        "{b2}"
    );
    assert!(b2.contains("class=\"histogram\""));
    assert!(b2.matches("class=\"bar\"").count() >= 1, "{b2}");
    let b1 = article(&batch1);
    assert!(b1.contains("badge finished"));
    assert!(b1.contains("max=\"20\" value=\"20\""));
    assert!(page.contains("page-worker"), "the worker is listed");
    assert!(page.contains("<script>"));
    let (status, _, fragment) = get(http, "/fragment").unwrap();
    assert_eq!(status, 200);
    assert!(fragment.contains("batch-progress") && !fragment.contains("<html"));
    let (status, ctype, json) = get(http, "/api/status").unwrap();
    assert_eq!(status, 200);
    assert!(ctype.starts_with("application/json"));
    assert!(json.contains("\"queue_depth\":20"), "{json}");

    browser_checks(http, &batch2);
    assert_eq!(coordinator.terminate(Duration::from_secs(60)), Some(0));
}

/// Where Chromium is, or `None` (skip) when it is missing and not required.
fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("CUBEFLEET_CHROMIUM")
        .map_or_else(|| PathBuf::from("/usr/bin/chromium"), PathBuf::from);
    if path.exists() {
        return Some(path);
    }
    let required = std::env::var_os("CUBEFLEET_REQUIRE_CHROMIUM").is_some_and(|v| !v.is_empty());
    assert!(
        !required,
        "CUBEFLEET_REQUIRE_CHROMIUM is set but {} is missing (apt-get install chromium)",
        path.display()
    );
    eprintln!(
        "notice: {} not found, skipping the headless-browser check of the status page \
         (apt-get install chromium; set CUBEFLEET_REQUIRE_CHROMIUM=1 to make this a failure)",
        path.display()
    );
    None
}

/// Headless Chromium with a fresh profile, plus `args`, on `url`; at most 120 s.
fn chromium_run(browser: &Path, args: &[&str], url: &str) -> Output {
    let profile = tempfile::tempdir().unwrap();
    let mut child = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(args)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // read stdout on a thread so a large DOM cannot block the browser
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = stdout.read_to_end(&mut s);
        s
    });
    let end = Instant::now() + Duration::from_secs(120);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > end {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish within 120 s");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let mut stderr = Vec::new();
    if let Some(mut e) = child.stderr.take() {
        let _ = e.read_to_end(&mut stderr);
    }
    Output {
        status,
        stdout: reader.join().unwrap(),
        stderr,
    }
}

/// The page in a real browser: after its script ran (the fragment was fetched and swapped in
/// at least once), the batch in progress shows a progress bar and a histogram; a screenshot is
/// saved as `target/status-page.png`, and as the README's `docs/status-page.png` with
/// `CUBEFLEET_REFRESH_DOCS=1`.
fn browser_checks(http: u16, batch: &str) {
    let Some(browser) = chromium() else {
        return;
    };
    // the token as the password of HTTP Basic credentials, as a user would log in
    let url = format!("http://cubefleet:{TOKEN}@127.0.0.1:{http}/");
    let out = chromium_run(
        &browser,
        &["--virtual-time-budget=5000", "--dump-dom"],
        &url,
    );
    let dom = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && dom.contains("</html>"),
        "chromium --dump-dom failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    // the script ran: it counts its refreshes on <body> and stamps the header
    let refreshed: u32 = dom
        .split("data-refreshed=\"")
        .nth(1)
        .and_then(|r| r.split('"').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    assert!(refreshed >= 1, "the page's script never refreshed:\n{dom}");
    assert!(
        dom.contains("id=\"updated\">updated "),
        "refresh time shown"
    );
    let start = dom
        .find(&format!("data-batch=\"{batch}\""))
        .unwrap_or_else(|| panic!("batch {batch} not in the rendered DOM:\n{dom}"));
    let b = &dom[start..];
    let b = &b[..b.find("</article>").unwrap()];
    assert!(
        b.contains("<progress class=\"batch-progress\" max=\"41\" value=\"21\">"),
        "progress bar in the rendered DOM: {b}"
    );
    assert!(b.contains("class=\"histogram\""), "histogram: {b}");
    assert!(b.contains("class=\"bar\""), "histogram bars: {b}");
    assert!(
        b.contains("&lt;b&gt;nightly&lt;/b&gt;"),
        "escaped name: {b}"
    );

    let shot = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/target/status-page.png"
    ));
    let _ = std::fs::remove_file(&shot);
    let arg = format!("--screenshot={}", shot.display());
    let out = chromium_run(
        &browser,
        &["--virtual-time-budget=5000", "--window-size=1280,900", &arg],
        &url,
    );
    assert!(
        out.status.success(),
        "chromium --screenshot failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let png = std::fs::read(&shot).unwrap();
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "a PNG");
    assert!(png.len() > 10_000, "a screenshot of a real page");
    eprintln!("status page screenshot: {}", shot.display());
    // the README's picture, redrawn when asked (a test run leaves the checkout as it was)
    if std::env::var_os("CUBEFLEET_REFRESH_DOCS").is_some() {
        let docs = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/status-page.png");
        std::fs::write(docs, &png).unwrap();
        eprintln!("the README's picture redrawn: {docs}");
    }
}

/// A `cubefleet worker` of one thread with its own `/metrics`, joining the coordinator at gRPC
/// port `grpc`: the process and its HTTP port.
fn metered_worker(grpc: u16, name: &str) -> (Proc, u16) {
    let file = addr_file();
    let mut c = cubefleet();
    c.arg("worker")
        .args(["--coordinator", &format!("http://127.0.0.1:{grpc}")])
        .args(["--threads", "1", "--no-build", "--name", name])
        .args(["--http", "127.0.0.1:0", "--addr-file"])
        .arg(&file);
    let mut worker = Proc::spawn(name, c);
    let port = read_addr_file(&mut worker, &file, Duration::from_secs(30))
        .get("http")
        .port();
    (worker, port)
}

/// A fair share of a slow batch: after a fast batch, two workers do not
/// take a slow batch whole (what a worker may hold is sized by the batch's own search time,
/// a few seconds of it, and by two per thread before its first result), a third worker that
/// joins is busy within seconds, and the queue depth and queued work count the jobs waiting in
/// leases, so the autoscaling signal stays above zero until the batch is nearly done.
#[test]
fn a_slow_batch_after_a_fast_one_is_spread_over_every_worker() {
    const SLOW: u64 = 24;
    const BUDGET: &str = "2";
    let dir = tempfile::tempdir().unwrap();
    let scrambles = |count: u64, seed: &str, name: &str| {
        let mut c = cubefleet();
        c.args(["scramble", "--count", &count.to_string(), "--seed", seed]);
        let file = dir.path().join(name);
        std::fs::write(&file, run(c).stdout).unwrap();
        file
    };
    let fast = scrambles(300, "4901", "fast.txt");
    // random states take an optimal search with the standard tables far longer than the
    // budget: each job is a search of exactly the budget, ending in `timeout`
    let slow = scrambles(SLOW, "4902", "slow.txt");

    let (coordinator, grpc, http) = http_coordinator(dir.path());
    let url = format!("http://127.0.0.1:{grpc}");
    let (_w1, m1) = metered_worker(grpc, "fair-1");
    let (_w2, m2) = metered_worker(grpc, "fair-2");
    let busy = |port: u16| sample(&metrics(port), "cubefleet_worker_threads_busy") >= 1.0;

    // the fast batch: its search times are the ones the workers saw last
    let mut c = cubefleet();
    c.arg("submit")
        .arg(&fast)
        .args(["--coordinator", &url, "--batch-id", "fast", "--wait"]);
    run(c);
    let mut c = cubefleet();
    c.arg("submit").arg(&slow).args([
        "--coordinator",
        &url,
        "--batch-id",
        "slow",
        "--optimal",
        "--timeout",
        BUDGET,
    ]);
    run(c);
    wait_for("both workers to search", Duration::from_secs(20), || {
        (busy(m1) && busy(m2)).then_some(())
    });
    // (queued, finished) of a batch, by `status --json`
    let queued = |batch: &str| {
        let mut c = cubefleet();
        c.args(["status", batch, "--json", "--coordinator", &url]);
        let s: serde_json::Value = serde_json::from_slice(&run(c).stdout).unwrap();
        (common::count(&s, "queued"), common::count(&s, "finished"))
    };
    let (waiting, _) = queued("slow");
    assert!(
        waiting >= SLOW / 2,
        "two one-thread workers took the slow batch: {waiting} of {SLOW} queued"
    );

    // a third worker joins and is busy within a lease round trip (and its tables' load)
    let joined = Instant::now();
    let (_w3, m3) = metered_worker(grpc, "fair-3");
    wait_for(
        "the third worker to search",
        Duration::from_secs(20),
        || busy(m3).then_some(()),
    );
    let late = joined.elapsed();
    assert!(busy(m1) && busy(m2), "a worker ran out of work");

    // until the batch is nearly done (no more jobs left than threads), the queue depth and
    // the queued work count what is not searched yet
    let mut seen = Vec::new();
    wait_for("the slow batch", Duration::from_secs(120), || {
        let m = metrics(http);
        let (depth, work) = (
            sample(&m, "cubefleet_queue_depth"),
            sample(&m, "cubefleet_queued_work_seconds"),
        );
        let (_, finished) = queued("slow");
        seen.push((finished, depth, work));
        (finished == SLOW).then_some(())
    });
    for &(finished, depth, work) in &seen {
        if SLOW - finished > 3 {
            assert!(
                depth >= 1.0 && work > 0.0,
                "{finished} of {SLOW} finished, queue depth {depth}, queued work {work} s: {seen:?}"
            );
        }
    }
    eprintln!("the third worker searched {late:?} after it started; {seen:?}");
    assert_eq!(coordinator.terminate(Duration::from_secs(30)), Some(0));
}
