//! `cubefleet bench coordinator`: the job system's own throughput, without any search. An
//! in-process coordinator on a fresh sled store serves loopback gRPC; one client submits a batch
//! of scrambles (random 20-move sequences), then worker tasks lease in groups and complete every
//! job with the inverse scramble as turn numbers (the form workers report), which the
//! coordinator verifies like any result. Two runs, each on a fresh store with its own
//! positions: `phases` submits first and leases after, giving submission lines/s and lease ->
//! complete (verified, stored) jobs/s apart; `pipelined` runs the workers from the start,
//! leasing while the batch arrives, as a cluster does. Figures: the rates, end to end jobs/s
//! (first line sent to last result stored), CPU time per job, and the process's peak memory.
//! Between its two phases, `phases` also restarts the coordinator with the whole batch queued:
//! the store's size on disk, the resident memory before and after, and the time to reopen (the
//! scan that rebuilds the queue and counters).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cubefleet_proto::{
    client::Client, BatchSpec, CompleteRequest, Completion, LeaseRequest, LeasedJob,
    RegisterRequest, ResultStatus,
};
use cubefleet_search::Question;
use cubefleet_tables::{parse_position, FaceletCube, InputFormat, Move, MoveSeq};
use rand::{Rng, SeedableRng};
use tokio_util::sync::CancellationToken;

/// What one benchmark run is made of (`cubefleet bench coordinator`'s flags).
#[derive(Clone, Debug)]
pub struct Setup {
    /// Jobs in the batch.
    pub jobs: usize,
    /// Concurrent worker tasks leasing and completing.
    pub workers: usize,
    /// Jobs per lease and per completion call.
    pub group: u32,
    /// Store directory (None: a fresh directory under the system's temp dir, removed after).
    pub data: Option<PathBuf>,
}

/// The bench's answers, by line: the position's facelets (what the coordinator must lease for
/// that line) and its solution as turn numbers (the form a worker reports, `Completion.moves`).
/// A stand-in worker finds a leased job's line from its id and checks the facelets against it,
/// so a lease that pairs an id with another line's position stops the bench; reading by line
/// instead of hashing 54 letters into a map of every position keeps the stand-ins' own cost
/// (they share the coordinator's 2 cores) to a compare.
type Answers = Vec<(String, Vec<u8>)>;

/// A random sequence of 20 face turns, no face twice in a row.
fn scramble(rng: &mut impl Rng) -> MoveSeq {
    let mut moves: Vec<Move> = Vec::with_capacity(20);
    while moves.len() < 20 {
        let m = Move::from_index(rng.random_range(0..18));
        if moves.last().is_some_and(|l| l.face() == m.face()) {
            continue;
        }
        moves.push(m);
    }
    MoveSeq(moves)
}

/// CPU time (user + system) this process has used so far, in seconds (Linux; 0 elsewhere).
/// On a shared machine it measures the work better than the wall clock does.
fn cpu_seconds() -> f64 {
    std::fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|s| {
            // the fields after the command name (which is in parentheses and may hold spaces)
            let rest = &s[s.rfind(')')? + 2..];
            let f: Vec<&str> = rest.split_whitespace().collect();
            let ticks = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
            Some(ticks / 100.0) // USER_HZ is 100 on Linux
        })
        .unwrap_or(0.0)
}

/// Peak resident memory of this process, in MB (Linux; 0 elsewhere).
fn peak_rss_mb() -> f64 {
    status_mb("VmHWM:")
}

/// The process's resident memory now in MB (0 where `/proc` is not available).
fn rss_mb() -> f64 {
    status_mb("VmRSS:")
}

/// A `/proc/self/status` figure given in kB (`field` with its colon), in MB; 0 when unknown.
fn status_mb(field: &str) -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / 1024.0)
}

/// Bytes of the files under `dir` (0 for what cannot be read).
fn disk_bytes(dir: &std::path::Path) -> u64 {
    std::fs::read_dir(dir).map_or(0, |entries| {
        entries
            .flatten()
            .map(|e| match e.metadata() {
                Ok(m) if m.is_dir() => disk_bytes(&e.path()),
                Ok(m) => m.len(),
                Err(_) => 0,
            })
            .sum()
    })
}

/// The coordinator restarted with a whole batch queued (the `phases` run, between its phases).
struct Restart {
    /// The store's size on disk.
    disk: u64,
    /// Resident memory in MB just before the stop, just after it, and just after the reopen:
    /// the last minus the middle is about what the reopened coordinator holds (the process
    /// also holds the benchmark's own lines and answers, which dwarf it).
    rss: [f64; 3],
    /// Time from the stopped coordinator to a serving one (store reopened, state rebuilt).
    reopen: Duration,
}

/// What one measurement gives.
struct Figures {
    /// Time to submit the whole batch (in the pipelined run: until the submission returned).
    submitted: Duration,
    /// Time from the start of submission until every job was completed and stored.
    total: Duration,
    /// CPU seconds of the process: during submission, then until the end (the restart, when
    /// there is one, left out of both).
    cpu: [f64; 2],
    /// The restart between the phases (`phases` run only).
    restart: Option<Restart>,
}

/// Submits `lines` as one batch and has `args.workers` tasks lease and complete every job.
/// `pipelined`: the workers run from the start, leasing while the batch is still arriving (as
/// a cluster does); otherwise they start once the submission has returned, so that the two
/// phases are measured apart, and the coordinator is restarted in between ([`Restart`]; its
/// time is left out of the rates).
async fn measure(
    args: &Setup,
    dir: &std::path::Path,
    lines: &[String],
    answers: &Arc<Answers>,
    pipelined: bool,
) -> anyhow::Result<Figures> {
    let mut embedded = Embedded::start(dir).await?;
    let mut client = embedded.client.clone();
    let n = lines.len() as u64;
    let completed = Arc::new(AtomicU64::new(0));
    let spawn_workers = |client: &Client| {
        (0..args.workers)
            .map(|w| {
                let (client, answers, completed) =
                    (client.clone(), answers.clone(), completed.clone());
                tokio::spawn(lease_and_complete(
                    client, w, args.group, answers, completed, n,
                ))
            })
            .collect::<Vec<_>>()
    };

    let (start, cpu0) = (Instant::now(), cpu_seconds());
    let early = if pipelined {
        spawn_workers(&client)
    } else {
        Vec::new()
    };
    let spec = BatchSpec {
        batch_id: "bench".into(),
        name: "bench coordinator".into(),
        mode: Some(Question::default().to_wire()),
        priority: 0,
        ..BatchSpec::default()
    };
    let msgs = cubefleet_proto::batch::line_requests(spec, lines);
    let r = client
        .batches
        .clone()
        .submit(tokio_stream::iter(msgs))
        .await?
        .into_inner();
    anyhow::ensure!(r.total == n, "stored {} lines", r.total);
    let submitted = start.elapsed();
    let cpu1 = cpu_seconds();
    let mut restart = None;
    let mut paused = Duration::ZERO;
    if !pipelined {
        let (rss, stopped) = (rss_mb(), Instant::now());
        embedded.stop().await?;
        let disk = disk_bytes(dir);
        let rss_stopped = rss_mb();
        let reopened = Instant::now();
        embedded = Embedded::start(dir).await?;
        client = embedded.client.clone();
        restart = Some(Restart {
            disk,
            rss: [rss, rss_stopped, rss_mb()],
            reopen: reopened.elapsed(),
        });
        paused = stopped.elapsed();
    }
    let cpu_paused = cpu_seconds() - cpu1;
    let tasks = if pipelined {
        early
    } else {
        spawn_workers(&client)
    };
    for t in tasks {
        t.await??;
    }
    let total = start.elapsed() - paused;
    let cpu2 = cpu_seconds() - cpu_paused;
    let done = completed.load(Ordering::Relaxed);
    anyhow::ensure!(done == n, "completed {done} of {n}");
    embedded.stop().await?;
    Ok(Figures {
        submitted,
        total,
        cpu: [cpu1 - cpu0, cpu2 - cpu1],
        restart,
    })
}

/// One worker task: registers, then leases `group` jobs at a time (long-polling while the
/// queue is empty) and completes each with its answer, until `completed` reaches `n`.
async fn lease_and_complete(
    client: Client,
    w: usize,
    group: u32,
    answers: Arc<Answers>,
    completed: Arc<AtomicU64>,
    n: u64,
) -> anyhow::Result<()> {
    let id = client
        .workers
        .clone()
        .register(RegisterRequest {
            name: format!("bench-{w}"),
            threads: 1,
            table_fingerprint: String::new(),
            protocol: cubefleet_proto::PROTOCOL,
        })
        .await?
        .into_inner()
        .worker_id;
    while completed.load(Ordering::Relaxed) < n {
        let jobs = client
            .workers
            .clone()
            .lease(LeaseRequest {
                worker_id: id.clone(),
                max_jobs: group,
                wait_millis: 100,
                max_seconds: 0.0,
            })
            .await?
            .into_inner()
            .jobs;
        if jobs.is_empty() {
            continue;
        }
        let results = jobs
            .iter()
            .map(|j| {
                let mut c = Completion {
                    job_id: j.job_id,
                    moves: answer(&answers, j)?,
                    has_solution: true,
                    ..Completion::default()
                };
                c.set_outcome(ResultStatus::Solved);
                Ok(c)
            })
            .collect::<anyhow::Result<_>>()?;
        let r = client
            .workers
            .clone()
            .complete(CompleteRequest {
                worker_id: id.clone(),
                results,
            })
            .await?
            .into_inner();
        anyhow::ensure!(r.rejected.is_empty(), "rejected: {:?}", r.rejected[0]);
        completed.fetch_add(u64::from(r.accepted), Ordering::Relaxed);
    }
    Ok(())
}

/// The solution a stand-in reports for leased job `j`: its line's, after checking that the
/// coordinator leased that line's position.
fn answer(answers: &Answers, j: &LeasedJob) -> anyhow::Result<Vec<u8>> {
    let line = cubefleet_coordinator::line_index(j.job_id);
    match usize::try_from(line).ok().and_then(|i| answers.get(i)) {
        Some((facelets, moves)) if *facelets == j.facelets => Ok(moves.clone()),
        _ => anyhow::bail!(
            "job {} (line {line}) was leased with position {}, not its line's",
            j.job_id,
            j.facelets
        ),
    }
}

/// Runs the benchmark (`phases`, then `pipelined`) and returns its figures: a Markdown
/// table, the restart line and the peak memory.
pub fn run(args: &Setup) -> anyhow::Result<String> {
    let base = match &args.data {
        Some(d) => d.clone(),
        None => std::env::temp_dir().join(format!("cubefleet-bench-{}", std::process::id())),
    };
    // each run's lines, and for each line its position's facelets and solution (what a
    // worker would find); each run gets its own positions and a fresh store, so nothing is
    // answered by dedup
    let mut rng = rand::rngs::StdRng::seed_from_u64(42);
    let mut make_lines = || -> anyhow::Result<(Vec<String>, Arc<Answers>)> {
        let (mut lines, mut answers) = (Vec::with_capacity(args.jobs), Answers::new());
        answers.reserve(args.jobs);
        for _ in 0..args.jobs {
            let s = scramble(&mut rng);
            let cube = parse_position(&s.to_string(), InputFormat::Moves)?;
            answers.push((
                FaceletCube::from_cubie(&cube).to_string(),
                s.inverse().indices(),
            ));
            lines.push(s.to_string());
        }
        Ok((lines, Arc::new(answers)))
    };
    let (phased, pipelined) = (make_lines()?, make_lines()?);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let mut rows = Vec::new();
    for (name, (lines, answers), overlap) in
        [("phases", &phased, false), ("pipelined", &pipelined, true)]
    {
        let dir = base.join(name);
        let figures = rt.block_on(measure(args, &dir, lines, answers, overlap));
        rows.push((name, overlap, figures?));
    }
    if args.data.is_none() {
        let _ = std::fs::remove_dir_all(&base);
    }
    let n = args.jobs as f64;
    let mut out = String::new();
    writeln!(
        out,
        "| run | jobs | workers x group | submit lines/s | lease+complete jobs/s | end to end jobs/s | CPU µs/job submit, rest |"
    )?;
    writeln!(out, "| --- | ---: | --- | ---: | ---: | ---: | ---: |")?;
    let mut restarts = Vec::new();
    for (name, overlap, f) in rows {
        if let Some(r) = f.restart {
            restarts.push(r);
        }
        // in the pipelined run the workers overlap the submission: no rate of their own
        let lease_complete = if overlap {
            "(overlapped)".into()
        } else {
            format!("{:.0}", n / (f.total - f.submitted).as_secs_f64())
        };
        writeln!(
            out,
            "| {name} | {} | {} x {} | {:.0} | {lease_complete} | {:.0} | {:.1}, {:.1} |",
            args.jobs,
            args.workers,
            args.group,
            n / f.submitted.as_secs_f64(),
            n / f.total.as_secs_f64(),
            f.cpu[0] * 1e6 / n,
            f.cpu[1] * 1e6 / n,
        )?;
    }
    for r in restarts {
        writeln!(
            out,
            "restart with {} jobs queued: store {:.0} MB on disk ({:.0} bytes a job); resident {:.0} MB before the stop, {:.0} MB stopped, {:.0} MB reopened (+{:.0} MB); reopened in {:.2} s",
            args.jobs,
            r.disk as f64 / 1e6,
            r.disk as f64 / n,
            r.rss[0],
            r.rss[1],
            r.rss[2],
            r.rss[2] - r.rss[1],
            r.reopen.as_secs_f64()
        )?;
    }
    writeln!(out, "peak resident memory: {:.0} MB", peak_rss_mb())?;
    Ok(out)
}

/// A coordinator served by this process over the store in a directory, and a client of it
/// (`bench coordinator`): the same gRPC code path as a cluster, over a loopback port.
struct Embedded {
    /// A client of the embedded coordinator.
    client: Client,
    /// Cancelled when the coordinator stops serving.
    shutdown: CancellationToken,
    server: tokio::task::JoinHandle<Result<(), cubefleet_coordinator::Error>>,
}

impl Embedded {
    /// Opens the store in `data`, serves it on `127.0.0.1:0` and connects (the listener is
    /// bound and the store open before the server starts, so one attempt is enough).
    async fn start(data: &Path) -> anyhow::Result<Embedded> {
        let shutdown = CancellationToken::new();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let url = format!("http://{}", listener.local_addr()?);
        let config = cubefleet_coordinator::Config::new(data);
        let core = cubefleet_coordinator::open(&config).await?;
        let server = tokio::spawn(cubefleet_coordinator::serve_core(
            core.clone(),
            config,
            listener,
            shutdown.clone(),
        ));
        let client = Client::connect(&url, None).await?;
        Ok(Embedded {
            client,
            shutdown,
            server,
        })
    }

    /// Stops serving, flushes the store and waits until it is closed.
    async fn stop(self) -> anyhow::Result<()> {
        self.shutdown.cancel();
        Ok(self.server.await??)
    }
}
