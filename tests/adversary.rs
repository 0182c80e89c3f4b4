//! The stateful adversary: one real `cubefleet coordinator` process, over a
//! store that survives its restarts, driven by a seeded random sequence of raw gRPC calls from
//! several credentials, with the promises of the README's threat model checked against a small
//! model after every step. It speaks the generated gRPC clients only, never cubefleet's own
//! client or worker code.
//!
//! The cast (a `--tokens-file`): the client `alice`, the admin `root`, the honest workers
//! `farm1` and `farm2`, and the hostile workers `evil1` and `evil2`. When the admin revokes a
//! hostile credential, the next start adds a fresh one (`evil3`, ...), so two hostile
//! credentials are live most of the time; revoked ones stay in the file, as an operator who
//! revoked them would leave them (the last [`PROBED_REVOKED`] of them are probed after every
//! restart; older ones are retired: no connection, still checked gone from every answer). In the main run leases last an hour, so only their holders
//! and restarts end them; a second run has leases of two seconds and pauses, so leases expire,
//! the last holder reports within and after the grace, and others lease the job meanwhile
//! (reports the model cannot judge, within [`CLOCK_MARGIN`] of a lease's end or grace, are
//! not judged).
//!
//! Positions: canonical sequences of 1 to 3 face turns, whose optimal length is their length
//! (checked at start: the 3,501 such sequences make 3,501 distinct positions), each submitted
//! as its moves (the coordinator can clamp bounds to the line's length) and as facelets (it
//! cannot); plus a reservoir of 8-turn scrambles at a lower priority (two-phase only), so
//! work is always queued. An honest worker answers by undoing the line, so no tables are
//! needed. Batches are two-phase (target 20 or 3), optimal or depth-limited (depth 1 to 4),
//! with `confirm` 1 or 2, and the same positions come back in later batches (answered from the
//! store).
//!
//! Every step is one random action: an honest worker leases, heartbeats (with true bounds),
//! completes (true answers) or releases; a hostile worker leases, hoards, registers under any
//! name (an honest worker's too), or sends any well-formed message about any job id (its own,
//! an honest worker's, the other hostile's, a queued or finished one, a guessed
//! `batch_seq << 40 | line`): wrong and non-solving solutions, `timeout`, `over_target`,
//! `none_within`, `cancelled` with and without solutions, `optimal` with a longer solution,
//! huge or false bounds, heartbeats with bounds, releases with and without reasons; the
//! client submits or resubmits; a credential without the admin role tries to revoke; the
//! admin revokes a hostile credential (plainly, then SIGKILL at once, or SIGKILL while the
//! call may be in flight); the coordinator is restarted by SIGKILL or SIGTERM.
//!
//! The invariants (numbered as in failure messages):
//! 1. no stored answer is wrong: every solution solves its line as written, its length is
//!    its turns, a valid line is never `invalid` (read by ListResults, and now and then by
//!    StreamResults, which must agree, and Lookup, which 2 and 4 hold too);
//! 2. no stored answer is mislabelled: an answer that is not a verified solution meeting its
//!    batch's question (an `optimal` flag, `none_within`, a bound, `timeout`, `over_target`,
//!    `cancelled`, or anything false) is `claimed`, names in `worker` the credential that said
//!    it (never a name a worker chose), with a bound that credential stated; a false answer
//!    never names an honest credential;
//! 3. an answer of a `confirm 2` batch that rests on a claim lists two different credentials
//!    in `confirmed_by`, each of which said it (a false one: two hostile ones);
//! 4. nothing a revoked credential said survives its revoke or any restart after it (no
//!    claimed answer names it as `worker` or in `confirmed_by`, no failure rests on its
//!    refusals), and its calls are refused after the revoke and after every restart;
//! 5. an honest worker that holds nothing gets work while jobs are queued, and no credential
//!    holds more than its share of the outstanding work across its sessions ([`SHARES`]);
//! 6. the coordinator's resident memory stays under [`MEMORY_BOUND`];
//! 7. a report about a job the reporting session does not hold (never leased, or another
//!    session holds) changes nothing visible, and no answer or failure rests on one; no job is
//!    leased to two sessions at once;
//! 8. roles: only the admin may revoke; a client may not act as a worker nor a worker as a
//!    client; calls without a valid token are refused;
//! 9. the lease holder's true answer, heartbeat and release are accepted;
//! 0. the coordinator answers every call within [`CALL_LIMIT`], stops on SIGTERM within
//!    [`STOP_LIMIT`] and starts again over its store.
//!
//! Replay and length: the seed is printed at start and in every failure;
//! `CUBEFLEET_ADVERSARY_SEED=S` replays it, `CUBEFLEET_ADVERSARY_STEPS=N` sets the number of
//! steps (default [`DEFAULT_STEPS`], cut at [`DEFAULT_WALL`] of wall time unless N is given),
//! `CUBEFLEET_ADVERSARY_TRACE=1` prints every call, `CUBEFLEET_ADVERSARY_FAIL_FAST=1` stops at
//! the first violation, `CUBEFLEET_ADVERSARY_BIN=PATH` runs another build of `cubefleet` (a
//! release to audit). A replay is exact up to the first SIGKILL sent while a revoke may be in
//! flight (whether it landed decides what follows). The long run (the run whose leases
//! expire takes an eighth of the steps):
//!
//! ```sh
//! CUBEFLEET_ADVERSARY_STEPS=100000 cargo test --release --test adversary -- --nocapture
//! ```
//!
//! On a failure the store and the coordinator's log are kept (the path is printed).

#![allow(clippy::unwrap_used)]

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use cubefleet_proto::client::Client;
use cubefleet_proto::{
    mode, submit_request, BatchSpec, CompleteRequest, Completion, DepthLimited, HeartbeatRequest,
    JobProgress, JobRef, JobResult, JobState, LeaseRequest, LeasedJob, LineChunk,
    ListBatchesRequest, LookupRequest, Metric, Mode, Optimal, RegisterRequest, ReleaseRequest,
    ResultStatus, ResultsRequest, RevokeRequest, SubmitRequest, TwoPhase,
};
use cubefleet_tables::{CubieCube, FaceletCube, Move, MoveSeq};
use cubefleet_testkit::{addr_file, short_scrambles, Proc};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use tonic::{Code, Status};

/// Steps of a run when `CUBEFLEET_ADVERSARY_STEPS` is not set (the CI run).
const DEFAULT_STEPS: u64 = 400;

/// Steps of the run whose leases expire when `CUBEFLEET_ADVERSARY_STEPS` is not set (it
/// pauses, so each step takes longer); with it set, an eighth of that.
const EXPIRING_STEPS: u64 = 120;

/// Revoked credentials still connected and probed after each restart (the most recently
/// revoked); older ones are retired.
const PROBED_REVOKED: usize = 16;

/// Steps between two progress lines of a long run.
const PROGRESS_EVERY: u64 = 2500;

/// Wall time after which a run of the default length stops early (a loaded CI machine).
const DEFAULT_WALL: Duration = Duration::from_secs(80);

/// The coordinator's resident memory may not exceed this (invariant 6).
const MEMORY_BOUND: u64 = 300 * 1024 * 1024;

/// A credential's share of the outstanding work (queued and leased jobs) it may hold across
/// all its sessions, whatever it registers (invariant 5): one part in this many while farm1,
/// farm2 and it ask for work (the coordinator's rule is a fair share among the credentials
/// that asked within a lease duration).
const SHARES: u64 = 3;

/// The coordinator's `--lease` in the main run: an hour, so a lease ends only by its holder
/// or a restart.
const LONG_LEASE: Duration = Duration::from_secs(3600);

/// The coordinator's `--lease` in the run whose leases expire.
const SHORT_LEASE: Duration = Duration::from_secs(2);

/// Lease durations after its lease expired that a session may still report on the job when
/// nobody leased it since (the coordinator's grace).
const GRACE_LEASES: u32 = 1;

/// How late the coordinator's sweeper may notice an expired lease, and how far the model's
/// clock may be off the coordinator's: a lease this close to its end (or grace) is neither
/// surely held nor surely expired, and reports on it are not judged.
const CLOCK_MARGIN: Duration = Duration::from_millis(1000);

/// How long one gRPC call may take before the coordinator counts as not answering.
const CALL_LIMIT: Duration = Duration::from_secs(20);

/// How long the coordinator may take to open its store and listen.
const START_LIMIT: Duration = Duration::from_secs(60);

/// How long the coordinator may take to stop after SIGTERM.
const STOP_LIMIT: Duration = Duration::from_secs(30);

/// Most jobs an honest worker holds at once (it completes before it leases more).
const HONEST_HOLD: usize = 8;

/// The threads an honest worker registers: enough that the fewest jobs a session may hold
/// (two per thread, also of a batch whose search time is unknown) are [`HONEST_HOLD`], so an
/// honest worker holding fewer is always owed work while jobs are queued.
const HONEST_THREADS: u32 = 4;

/// Most sessions the model keeps per hostile credential (older ones are forgotten).
const HOSTILE_SESSIONS: usize = 12;

/// Distinct short positions in the pool (each as moves and as facelets).
const POOL_CUBES: usize = 32;

/// Lines of the reservoir batch (8-turn scrambles, two-phase, lower priority).
const RESERVOIR: usize = 600;

/// Results refused from lease holders before a job ends failed (the coordinator's figure).
const MAX_REJECTIONS: usize = cubefleet_coordinator::MAX_REJECTIONS;

/// The seed: `CUBEFLEET_ADVERSARY_SEED`, else a fresh one.
fn seed() -> u64 {
    std::env::var("CUBEFLEET_ADVERSARY_SEED")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or_else(rand::random)
}

/// The binary under test: `CUBEFLEET_ADVERSARY_BIN` (another build, e.g. a release to audit),
/// else this build's `cubefleet`.
fn binary() -> PathBuf {
    std::env::var_os("CUBEFLEET_ADVERSARY_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_cubefleet")))
}

/// True when the environment variable `name` is set to something other than 0 or "".
fn flag(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| !v.is_empty() && v != "0")
}

// ------------------------------------------------------------------------------------------
// Positions

/// The index (0 to 5, U R F D L B) of a turn's face.
fn face(m: Move) -> usize {
    m.index() / 3
}

/// Whether `next` may follow `prev` in a canonical sequence: another face, and of two
/// opposite faces (U D, R L, F B) only the first-listed one first.
fn canonical_after(prev: Option<Move>, next: Move) -> bool {
    prev.is_none_or(|p| {
        let (a, b) = (face(p), face(next));
        a != b && !(b == (a + 3) % 6 && b < a)
    })
}

/// Every canonical sequence of 1 to `len` turns.
fn all_canonical(len: usize) -> Vec<Vec<Move>> {
    let mut out = Vec::new();
    let mut frontier: Vec<Vec<Move>> = vec![Vec::new()];
    for _ in 0..len {
        let mut next = Vec::new();
        for seq in &frontier {
            for i in 0..18 {
                let m = Move::from_index(i);
                if canonical_after(seq.last().copied(), m) {
                    let mut s = seq.clone();
                    s.push(m);
                    next.push(s);
                }
            }
        }
        out.extend(next.iter().cloned());
        frontier = next;
    }
    out
}

/// A random canonical sequence of `len` turns.
fn random_canonical(rng: &mut StdRng, len: usize) -> Vec<Move> {
    let mut seq: Vec<Move> = Vec::new();
    while seq.len() < len {
        let m = Move::from_index(rng.random_range(0..18));
        if canonical_after(seq.last().copied(), m) {
            seq.push(m);
        }
    }
    seq
}

/// A solution of `pos` 4 turns longer than its undo: a commuting pair and back (the
/// `choice`-th of those whose first turn may follow the undo's last).
fn padded_with(pos: &Position, choice: usize) -> String {
    let last = MoveSeq::parse(&pos.undo)
        .ok()
        .and_then(|m| m.0.last().copied())
        .map(face);
    let pads = ["U D U' D'", "R L R' L'", "F B F' B'", "D2 U2 D2 U2"];
    let ok: Vec<&str> = pads
        .iter()
        .copied()
        .filter(|p| {
            let first = MoveSeq::parse(p).expect("pad").0[0];
            Some(face(first)) != last
        })
        .collect();
    format!("{} {}", pos.undo, ok[choice % ok.len()])
}

/// The lie every hostile credential tells about job `id` of a batch asking `question` of
/// `pos`: the same from each, so two of them agree under `confirm 2`. An optimal claim for a
/// longer solution, a `none_within` where there is a solution, or a non-answer.
fn shared_lie(id: u64, question: Question, pos: &Position) -> Completion {
    let k = pos.optimum.unwrap_or(pos.undo_len);
    let mut c = Completion {
        job_id: id,
        nodes: 77,
        millis: 1.0,
        ..Completion::default()
    };
    let longer = padded_with(pos, id as usize);
    let longer_len = k + 4;
    match question {
        Question::Depth(d) if k <= d => {
            c.lower_bound = d + 1;
            c.set_outcome(ResultStatus::NoneWithin);
        }
        Question::Depth(d) => {
            c.lower_bound = d;
            c.set_outcome(ResultStatus::Timeout);
        }
        Question::Optimal => {
            c.optimal = true;
            c.lower_bound = longer_len;
            c.solution = longer;
            c.has_solution = true;
            c.set_outcome(ResultStatus::Solved);
        }
        Question::TwoPhase(t) if longer_len > t => {
            c.solution = longer;
            c.has_solution = true;
            c.set_outcome(ResultStatus::OverTarget);
        }
        Question::TwoPhase(_) => c.set_outcome(ResultStatus::Timeout),
    }
    c
}

/// The facelets of a cube.
fn facelets(cube: &CubieCube) -> String {
    FaceletCube::from_cubie(cube).to_string()
}

/// One line the client submits: a position written as moves or as facelets.
#[derive(Clone, Debug)]
struct Position {
    /// The line as submitted.
    line: String,
    /// The position.
    cube: CubieCube,
    /// A solution: the line's moves undone (standard notation, one turn per token).
    undo: String,
    /// Turns of `undo`.
    undo_len: u32,
    /// The optimal length, where known (the short positions); None for the reservoir.
    optimum: Option<u32>,
}

impl Position {
    /// The position made by `moves`, written as moves (`as_facelets` false) or facelets.
    fn new(moves: &[Move], as_facelets: bool, optimum: Option<u32>) -> Position {
        let seq = MoveSeq(moves.to_vec());
        let cube = CubieCube::from_moves(&seq.0);
        let inverse = seq.inverse();
        Position {
            line: if as_facelets {
                facelets(&cube)
            } else {
                seq.text()
            },
            cube,
            undo: inverse.text(),
            undo_len: inverse.len() as u32,
            optimum,
        }
    }
}

/// The question a batch asks of each position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Question {
    /// Two-phase to this target.
    TwoPhase(u32),
    /// A proven shortest solution.
    Optimal,
    /// The shortest solution within this depth, or none within it.
    Depth(u32),
}

impl Question {
    /// The protocol's mode.
    fn mode(self) -> Mode {
        let kind = match self {
            Question::TwoPhase(t) => mode::Kind::TwoPhase(TwoPhase { max_length: t }),
            Question::Optimal => mode::Kind::Optimal(Optimal {
                metric: Metric::Htm as i32,
            }),
            Question::Depth(d) => mode::Kind::DepthLimited(DepthLimited {
                max_depth: d,
                metric: Metric::Htm as i32,
            }),
        };
        Mode {
            kind: Some(kind),
            timeout_seconds: 0.0,
            ..Mode::default()
        }
    }
}

/// A batch the client submitted.
#[derive(Clone, Debug)]
struct Batch {
    /// Its id.
    id: String,
    /// Its question.
    question: Question,
    /// Its `confirm`.
    confirm: u32,
    /// Its priority.
    priority: i32,
    /// Its lines, as indices into the model's positions.
    lines: Vec<usize>,
    /// Whether the coordinator acknowledged it (else it is submitted again before use).
    acknowledged: bool,
}

// ------------------------------------------------------------------------------------------
// Credentials and what they said

/// What a credential is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// The client.
    Client,
    /// The admin.
    Admin,
    /// An honest worker.
    Honest,
    /// A hostile worker.
    Hostile,
}

/// A worker session: its secret token and public id.
#[derive(Clone, Debug)]
struct Session {
    /// The secret sent as `worker_id`.
    token: String,
    /// The public id results show.
    public: String,
    /// The name it registered with (never what results may name it by).
    name: String,
}

/// A credential of the tokens file.
struct Cred {
    /// Its name.
    name: String,
    /// Its secret.
    secret: String,
    /// Its kind.
    kind: Kind,
    /// Whether its name is given (a tokens file line); an unnamed one (`--worker-token
    /// SECRET`) is known by the name the coordinator derives, learnt from the first answer
    /// its sessions make (until then its name ends with `?`).
    named: bool,
    /// Whether the model knows it revoked.
    revoked: bool,
    /// A revoked credential no longer probed (beyond the last [`PROBED_REVOKED`]): it has no
    /// connection, and is never picked; what it said is still checked gone.
    retired: bool,
    /// A connection presenting its secret.
    client: Option<Client>,
    /// Its worker sessions (oldest first).
    sessions: Vec<Session>,
}

/// A statement a worker credential made about a job.
#[derive(Clone, Debug)]
struct Said {
    /// Who.
    cred: usize,
    /// The status the coordinator reads from it.
    status: Option<ResultStatus>,
    /// Turns of its solution (None without one, or one that does not parse).
    length: Option<u32>,
    /// Whether the session held the job's lease (or held it before the last restart).
    holder: bool,
}

/// Who holds a job's lease, as the model knows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Holder {
    /// The credential.
    cred: usize,
    /// The session (index into its sessions).
    session: usize,
}

/// A broken promise.
#[derive(Clone, Debug)]
struct Violation {
    /// The step it was found at.
    step: u64,
    /// The invariant (numbered as in the module doc).
    invariant: u8,
    /// What was seen.
    text: String,
}

/// A reply a call refused: refused as a revoked or unauthorised caller would be.
fn refused_as_unauthorised(s: &Status) -> bool {
    matches!(s.code(), Code::PermissionDenied | Code::Unauthenticated)
}

/// What of a result a report by someone else must not change (invariant 7).
fn fingerprint(r: &Result<JobResult, Status>) -> String {
    match r {
        Ok(r) => format!(
            "state {:?} status {:?} solution {:?} optimal {} bound {} worker {:?} session {:?} \
             claimed {} confirmed {:?} error {:?}",
            JobState::try_from(r.state).unwrap_or(JobState::Unspecified),
            r.outcome(),
            r.solution,
            r.optimal,
            r.lower_bound,
            r.worker,
            r.session,
            r.claimed,
            r.confirmed_by,
            r.error
        ),
        Err(e) => format!("error {:?}", e.code()),
    }
}

/// Runs a call, or a deadline-exceeded status after [`CALL_LIMIT`].
async fn within<T>(f: impl std::future::Future<Output = Result<T, Status>>) -> Result<T, Status> {
    match tokio::time::timeout(CALL_LIMIT, f).await {
        Ok(r) => r,
        Err(_) => Err(Status::deadline_exceeded("no answer within the call limit")),
    }
}

// ------------------------------------------------------------------------------------------
// The coordinator process

/// The coordinator under test.
struct Coordinator {
    /// Its process (None once stopped).
    proc: Option<Proc>,
    /// `http://ADDR` of its gRPC port.
    url: String,
    /// Its process id.
    pid: u32,
}

impl Coordinator {
    /// Starts a coordinator over `data` with the credentials in `tokens`, its log appended to
    /// `log`; returned once it listens.
    fn start(
        data: &Path,
        tokens: &Path,
        log: &Path,
        lease: Duration,
        extra: &[String],
    ) -> Result<Coordinator, String> {
        let file = addr_file();
        let out = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .map_err(|e| format!("log {}: {e}", log.display()))?;
        let mut c = Command::new(binary());
        c.args([
            "coordinator",
            "--listen",
            "127.0.0.1:0",
            "--lease",
            &lease.as_secs().to_string(),
        ])
        .arg("--data")
        .arg(data)
        .arg("--tokens-file")
        .arg(tokens)
        .args(extra)
        .arg("--addr-file")
        .arg(&file)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(out);
        let child = c
            .spawn()
            .map_err(|e| format!("starting the coordinator: {e}"))?;
        let pid = child.id();
        let mut proc = Proc {
            child,
            name: "coordinator".into(),
        };
        let end = Instant::now() + START_LIMIT;
        let text = loop {
            if let Ok(Some(st)) = proc.child.try_wait() {
                return Err(format!("the coordinator exited at start: {st}"));
            }
            if let Ok(t) = std::fs::read_to_string(&file) {
                if t.ends_with('\n') || t.contains("grpc ") {
                    break t;
                }
            }
            if Instant::now() > end {
                return Err(format!(
                    "the coordinator did not listen within {START_LIMIT:?}"
                ));
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let _ = std::fs::remove_file(&file);
        let addr = text
            .lines()
            .find_map(|l| l.strip_prefix("grpc "))
            .ok_or_else(|| format!("no grpc address in {text:?}"))?;
        Ok(Coordinator {
            proc: Some(proc),
            url: format!("http://{}", addr.trim()),
            pid,
        })
    }

    /// SIGKILL.
    fn kill(&mut self) {
        if let Some(p) = self.proc.take() {
            p.kill();
        }
    }

    /// SIGTERM, then waits up to [`STOP_LIMIT`]; an error when it does not stop cleanly (it
    /// is killed then).
    fn terminate(&mut self) -> Result<(), String> {
        let Some(mut p) = self.proc.take() else {
            return Ok(());
        };
        let _ = Command::new("kill")
            .args(["-TERM", &p.child.id().to_string()])
            .status();
        let end = Instant::now() + STOP_LIMIT;
        while Instant::now() < end {
            if let Ok(Some(st)) = p.child.try_wait() {
                return if st.success() {
                    Ok(())
                } else {
                    Err(format!("the coordinator exited with {st} on SIGTERM"))
                };
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        p.kill();
        Err(format!(
            "the coordinator did not stop within {STOP_LIMIT:?} of SIGTERM"
        ))
    }

    /// Whether the process has exited (its status, if so).
    fn exited(&mut self) -> Option<String> {
        let p = self.proc.as_mut()?;
        p.child.try_wait().ok().flatten().map(|s| s.to_string())
    }

    /// Its resident memory in bytes (`VmRSS`), when readable.
    fn resident(&self) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid)).ok()?;
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse::<u64>().ok())
            .map(|kb| kb * 1024)
    }
}

// ------------------------------------------------------------------------------------------
// The adversary

/// How the admin's revoke meets a restart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RevokeTiming {
    /// No restart.
    Plain,
    /// SIGKILL as soon as the call returns.
    KillAfter,
    /// SIGKILL while the call may be in flight.
    KillDuring,
}

/// The test's whole state: the coordinator, the credentials, the model, the findings.
struct Adversary {
    /// The random source of every choice.
    rng: StdRng,
    /// The seed, for messages.
    seed: u64,
    /// The current step.
    step: u64,
    /// The directory of the store, the tokens file and the log.
    dir: PathBuf,
    /// The coordinator.
    coord: Coordinator,
    /// Every credential (the first four: alice, root, farm1, farm2).
    creds: Vec<Cred>,
    /// Every position ever submitted.
    positions: Vec<Position>,
    /// The pool of short positions batches draw from (indices into `positions`).
    pool: Vec<usize>,
    /// Every batch submitted.
    batches: Vec<Batch>,
    /// Job id to (batch, line), as results showed them.
    jobs: BTreeMap<u64, (usize, usize)>,
    /// Who holds which job now, as the model knows it.
    held: BTreeMap<u64, Holder>,
    /// Who held which job before the last restart (their late reports are not judged).
    stale: BTreeMap<u64, Holder>,
    /// What each credential said about each job.
    said: BTreeMap<u64, Vec<Said>>,
    /// The highest bound each credential stated for each job (heartbeats and completions).
    bounds: BTreeMap<(u64, usize), u32>,
    /// Refused reports per job: (credential, whether it held the job).
    refusals: BTreeMap<u64, Vec<(usize, bool)>>,
    /// Hostile credentials made so far (for the next one's name).
    hostile_made: usize,
    /// Whether the client may still submit new batches (false once a bound refused one).
    may_submit: bool,
    /// The last steps, for failure messages.
    trace: Vec<String>,
    /// Whether every step is printed.
    print_trace: bool,
    /// Whether the first violation ends the run.
    fail_fast: bool,
    /// Every violation found.
    violations: Vec<Violation>,
    /// Keys of violations already reported (each is reported once).
    reported: HashSet<String>,
    /// Observations that are not violations.
    notes: Vec<String>,
    /// Restarts so far (by SIGKILL, by SIGTERM).
    restarts: (u64, u64),
    /// Revokes that took effect.
    revokes: u64,
    /// Whether the coordinator knows the admin role (else root is a client, see [`binary`]).
    admin_role: bool,
    /// Batch number (a job id's top bits) to batch, as results showed them.
    seq_batch: BTreeMap<u64, usize>,
    /// What ListBatches said of each batch at its last check (checked again when it changes).
    signatures: HashMap<String, String>,
    /// The next batch of the rotating window checked whatever its signature.
    rotor: usize,
    /// Jobs queued at the last ListBatches (the client submits new batches while few are).
    last_queued: u64,
    /// The coordinator's `--lease`.
    lease: Duration,
    /// When the holder of each held job last leased or heartbeated it.
    renewed: BTreeMap<u64, Instant>,
    /// Jobs whose lease the model knows expired, with their last holder and when it ended.
    last: BTreeMap<u64, (Holder, Instant)>,
    /// Every (job, session) lease so far: a session's late reports aim at these.
    history: BTreeSet<(u64, usize, usize)>,
    /// Reports by sessions about jobs they did not hold, judged (invariant 7); of those, late
    /// ones (the session held the job before).
    judged: (u64, u64),
}

/// Index of the credentials in [`Adversary::creds`].
const ALICE: usize = 0;
/// See [`ALICE`].
const ROOT: usize = 1;
/// The honest workers.
const FARMS: [usize; 2] = [2, 3];

impl Adversary {
    /// A fresh store, the credentials, the pool and the first coordinator.
    async fn new(seed: u64, lease: Duration) -> Adversary {
        let dir = tempfile::tempdir().expect("tempdir").keep();
        let mut rng = StdRng::seed_from_u64(seed);
        let mut creds = Vec::new();
        for (name, kind) in [
            ("alice", Kind::Client),
            ("root", Kind::Admin),
            ("farm1", Kind::Honest),
            ("farm2", Kind::Honest),
            ("evil1", Kind::Hostile),
            ("evil2", Kind::Hostile),
            ("unnamed?", Kind::Hostile),
        ] {
            creds.push(Cred {
                name: name.into(),
                secret: format!(
                    "{}-secret-{:016x}",
                    name.trim_end_matches('?'),
                    rng.random::<u64>()
                ),
                kind,
                named: !name.ends_with('?'),
                revoked: false,
                retired: false,
                client: None,
                sessions: Vec::new(),
            });
        }
        // positions: short canonical ones (as moves and as facelets), then the reservoir
        let mut positions = Vec::new();
        let mut pool = Vec::new();
        let mut seen = HashSet::new();
        while seen.len() < POOL_CUBES {
            let len = match rng.random_range(0..10) {
                0 => 1,
                1..=3 => 2,
                _ => 3,
            };
            let moves = random_canonical(&mut rng, len);
            let p = Position::new(&moves, false, Some(len as u32));
            if seen.insert(facelets(&p.cube)) {
                pool.push(positions.len());
                positions.push(p);
                pool.push(positions.len());
                positions.push(Position::new(&moves, true, Some(len as u32)));
            }
        }
        let mut adv = Adversary {
            rng,
            seed,
            step: 0,
            dir: dir.clone(),
            coord: Coordinator {
                proc: None,
                url: String::new(),
                pid: 0,
            },
            creds,
            positions,
            pool,
            batches: Vec::new(),
            jobs: BTreeMap::new(),
            held: BTreeMap::new(),
            stale: BTreeMap::new(),
            said: BTreeMap::new(),
            bounds: BTreeMap::new(),
            refusals: BTreeMap::new(),
            hostile_made: 2,
            may_submit: true,
            trace: Vec::new(),
            print_trace: flag("CUBEFLEET_ADVERSARY_TRACE"),
            fail_fast: flag("CUBEFLEET_ADVERSARY_FAIL_FAST"),
            violations: Vec::new(),
            reported: HashSet::new(),
            notes: Vec::new(),
            restarts: (0, 0),
            revokes: 0,
            admin_role: true,
            seq_batch: BTreeMap::new(),
            signatures: HashMap::new(),
            rotor: 0,
            last_queued: 0,
            lease,
            renewed: BTreeMap::new(),
            last: BTreeMap::new(),
            history: BTreeSet::new(),
            judged: (0, 0),
        };
        adv.write_tokens();
        adv.coord = match Coordinator::start(
            &adv.data(),
            &adv.tokens(),
            &adv.log(),
            adv.lease,
            &adv.unnamed_args(),
        ) {
            Ok(c) => c,
            Err(e) => {
                // a build without the admin role (older builds): root revokes as a client,
                // and the client's own revoke is not refused (reported, not judged)
                let log = std::fs::read_to_string(adv.log()).unwrap_or_default();
                assert!(log.contains("role `admin`"), "seed {seed}: {e}\n{log}");
                adv.admin_role = false;
                adv.note("this coordinator has no admin role: root revokes as a client".into());
                adv.write_tokens();
                Coordinator::start(
                    &adv.data(),
                    &adv.tokens(),
                    &adv.log(),
                    adv.lease,
                    &adv.unnamed_args(),
                )
                .unwrap_or_else(|e| panic!("seed {seed}: {e}"))
            }
        };
        adv.connect().await;
        for f in FARMS {
            let _ = adv
                .register(f, &format!("farm-host-{f}"), HONEST_THREADS)
                .await;
        }
        for h in adv.hostiles(false) {
            let _ = adv.register(h, &format!("volunteer-{h}"), 1).await;
        }
        // the reservoir: distinct 8-turn scrambles, two-phase, below every other batch
        let lines: Vec<usize> = short_scrambles(RESERVOIR)
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let seq = MoveSeq::parse(s).expect("a scramble");
                adv.positions.push(Position::new(&seq.0, i % 2 == 1, None));
                adv.positions.len() - 1
            })
            .collect();
        adv.batches.push(Batch {
            id: "reservoir".into(),
            question: Question::TwoPhase(20),
            confirm: 1,
            priority: -1,
            lines,
            acknowledged: false,
        });
        adv.submit_batch(0).await;
        adv
    }

    /// The store directory.
    fn data(&self) -> PathBuf {
        self.dir.join("store")
    }

    /// The tokens file.
    fn tokens(&self) -> PathBuf {
        self.dir.join("tokens")
    }

    /// The coordinator's log.
    fn log(&self) -> PathBuf {
        self.dir.join("coordinator.log")
    }

    /// Writes the tokens file: every credential, revoked ones too.
    fn write_tokens(&self) {
        let mut text = String::from("# written by tests/adversary.rs\n");
        for c in self.creds.iter().filter(|c| c.named) {
            let role = match c.kind {
                Kind::Client => "client",
                Kind::Admin if self.admin_role => "admin",
                Kind::Admin => "client",
                Kind::Honest | Kind::Hostile => "worker",
            };
            let _ = writeln!(text, "{} {role} {}", c.name, c.secret);
        }
        std::fs::write(self.tokens(), text).expect("tokens file");
    }

    /// The flags of the unnamed credentials: `--worker-token SECRET` each.
    fn unnamed_args(&self) -> Vec<String> {
        self.creds
            .iter()
            .filter(|c| !c.named)
            .flat_map(|c| ["--worker-token".to_string(), c.secret.clone()])
            .collect()
    }

    /// (Re)connects every credential to the coordinator (but the retired ones).
    async fn connect(&mut self) {
        for i in 0..self.creds.len() {
            if self.creds[i].retired {
                continue;
            }
            let c = Client::connect(&self.coord.url, Some(&self.creds[i].secret))
                .await
                .unwrap_or_else(|e| panic!("seed {}: connecting: {e}", self.seed));
            self.creds[i].client = Some(c);
        }
    }

    /// The connection of credential `c`.
    fn client(&self, c: usize) -> Client {
        self.creds[c].client.clone().expect("connected")
    }

    /// The hostile credentials (revoked ones too when `with_revoked`).
    fn hostiles(&self, with_revoked: bool) -> Vec<usize> {
        (0..self.creds.len())
            .filter(|&i| {
                self.creds[i].kind == Kind::Hostile
                    && !self.creds[i].retired
                    && (with_revoked || !self.creds[i].revoked)
            })
            .collect()
    }

    /// The credential named `name`, if any.
    fn cred_named(&self, name: &str) -> Option<usize> {
        self.creds.iter().position(|c| c.name == name)
    }

    /// Whether `name` names a hostile credential.
    fn is_hostile(&self, name: &str) -> bool {
        self.cred_named(name)
            .is_some_and(|c| self.creds[c].kind == Kind::Hostile)
    }

    // --------------------------------------------------------------------------------------
    // Findings

    /// Records a step for the trace (printed with `CUBEFLEET_ADVERSARY_TRACE`).
    fn note_step(&mut self, what: String) {
        if self.print_trace {
            eprintln!("[{}] {what}", self.step);
        }
        self.trace.push(format!("[{}] {what}", self.step));
        if self.trace.len() > 40 {
            self.trace.remove(0);
        }
    }

    /// Records a violation of `invariant`, reported once per `key`.
    fn violation(&mut self, invariant: u8, key: String, text: String) {
        if !self.reported.insert(format!("{invariant}:{key}")) {
            return;
        }
        let first_of_kind = !self.violations.iter().any(|v| v.invariant == invariant);
        eprintln!(
            "VIOLATION of invariant {invariant} at step {} (CUBEFLEET_ADVERSARY_SEED={}): {text}",
            self.step, self.seed
        );
        if first_of_kind {
            eprintln!("  the steps before it:\n    {}", self.trace.join("\n    "));
        }
        self.violations.push(Violation {
            step: self.step,
            invariant,
            text,
        });
        if self.fail_fast {
            self.fail();
        }
    }

    /// Records an observation that is not a violation.
    fn note(&mut self, text: String) {
        if self.notes.len() < 50 && !self.notes.contains(&text) {
            eprintln!("note at step {}: {text}", self.step);
            self.notes.push(text);
        }
    }

    /// Panics with every violation, naming the seed and where the store and log are.
    fn fail(&mut self) -> ! {
        self.coord.kill();
        let mut msg = format!(
            "{} violation(s) with CUBEFLEET_ADVERSARY_SEED={} (replay: CUBEFLEET_ADVERSARY_SEED={} \
             CUBEFLEET_ADVERSARY_STEPS={} cargo test --release --test adversary -- --nocapture); \
             store and log kept in {}:\n",
            self.violations.len(),
            self.seed,
            self.seed,
            self.step + 1,
            self.dir.display()
        );
        for v in &self.violations {
            let _ = writeln!(
                msg,
                "  step {} invariant {}: {}",
                v.step, v.invariant, v.text
            );
        }
        panic!("{msg}");
    }

    // --------------------------------------------------------------------------------------
    // Calls

    /// Registers a session of credential `c` named `name` with `threads`; adds it to the
    /// model. The reply.
    async fn register(&mut self, c: usize, name: &str, threads: u32) -> Result<usize, Status> {
        let mut client = self.client(c);
        let r = within(client.workers.register(RegisterRequest {
            name: name.into(),
            threads,
            table_fingerprint: "adversary".into(),
            protocol: cubefleet_proto::PROTOCOL,
        }))
        .await
        .map(|r| r.into_inner());
        self.expect_refused_if_revoked(c, &r, "register");
        let r = r?;
        let sessions = &mut self.creds[c].sessions;
        if sessions.len() >= HOSTILE_SESSIONS {
            // forget the oldest: its leases become a ghost's, which no call of the test makes
            sessions.remove(0);
            self.forget_first_session(c);
        }
        let sessions = &mut self.creds[c].sessions;
        sessions.push(Session {
            token: r.worker_id,
            public: r.session,
            name: name.to_string(),
        });
        Ok(sessions.len() - 1)
    }

    /// Credential `c`'s first session was forgotten: the others move down by one; what the
    /// first held becomes a ghost's (a session no call of the test presents).
    fn forget_first_session(&mut self, c: usize) {
        let shift = |h: Holder| match h {
            Holder { cred, .. } if cred != c => h,
            Holder { session: 0, .. } => Holder {
                cred: c,
                session: usize::MAX,
            },
            Holder {
                session: usize::MAX,
                ..
            } => h,
            Holder { cred, session } => Holder {
                cred,
                session: session - 1,
            },
        };
        let held = std::mem::take(&mut self.held);
        for (j, h) in held {
            match shift(h) {
                g if g.session == usize::MAX => {
                    self.stale.insert(j, g);
                }
                g => {
                    self.held.insert(j, g);
                }
            }
        }
        for h in self.stale.values_mut() {
            *h = shift(*h);
        }
        for (h, _) in self.last.values_mut() {
            *h = shift(*h);
        }
        self.history = std::mem::take(&mut self.history)
            .into_iter()
            .map(|(j, cred, session)| {
                let g = shift(Holder { cred, session });
                (j, g.cred, g.session)
            })
            .collect();
    }

    /// A revoked credential's call must be refused (invariant 4).
    fn expect_refused_if_revoked<T>(&mut self, c: usize, r: &Result<T, Status>, what: &str) {
        if !self.creds[c].revoked {
            return;
        }
        match r {
            Err(e) if refused_as_unauthorised(e) => {}
            Err(e) if e.code() == Code::DeadlineExceeded => {}
            other => {
                let outcome = match other {
                    Ok(_) => "accepted".to_string(),
                    Err(e) => format!("{:?}: {}", e.code(), e.message()),
                };
                let name = self.creds[c].name.clone();
                self.violation(
                    4,
                    format!("revoked-call:{name}:{what}"),
                    format!(
                        "the revoked credential {name}'s {what} was not refused as \
                         unauthorised: {outcome}"
                    ),
                );
            }
        }
    }

    /// Reports a call that did not return in time (invariant 0).
    fn check_answered<T>(&mut self, r: &Result<T, Status>, what: &str) {
        if let Err(e) = r {
            if e.code() == Code::DeadlineExceeded {
                self.violation(
                    0,
                    format!("deadline:{what}:{}", self.step),
                    format!("{what}: no answer within {CALL_LIMIT:?}"),
                );
            }
        }
    }

    /// The results of batch `b`, noting the job ids.
    async fn results(&mut self, b: usize) -> Result<Vec<JobResult>, Status> {
        let mut client = self.client(ALICE);
        let r = within(client.batches.list_results(ResultsRequest {
            batch_id: self.batches[b].id.clone(),
            status: String::new(),
            from_index: 0,
            limit: 0,
        }))
        .await
        .map(|r| r.into_inner().results);
        self.check_answered(&r, "ListResults");
        let rs = r?;
        for r in &rs {
            self.jobs.insert(r.job_id, (b, r.index as usize));
            self.seq_batch.insert(r.job_id >> 40, b);
        }
        Ok(rs)
    }

    /// One job as GetJob shows it.
    async fn get_job(&mut self, id: u64) -> Result<JobResult, Status> {
        let mut client = self.client(ALICE);
        let r = within(client.batches.get_job(JobRef { job_id: id }))
            .await
            .map(|r| r.into_inner());
        self.check_answered(&r, "GetJob");
        r
    }

    /// Jobs queued over all batches, by ListBatches.
    async fn queued(&mut self) -> Option<u64> {
        self.counts().await.map(|(q, _)| q)
    }

    /// Jobs queued and leased over all batches, by ListBatches.
    async fn counts(&mut self) -> Option<(u64, u64)> {
        let mut client = self.client(ALICE);
        let r = within(client.batches.list_batches(ListBatchesRequest {}))
            .await
            .map(|r| r.into_inner().batches);
        self.check_answered(&r, "ListBatches");
        r.ok().map(|bs| {
            bs.iter()
                .fold((0, 0), |(q, l), b| (q + b.queued, l + b.leased))
        })
    }

    /// Submits batch `b` (again, when it was before); learns its job ids.
    async fn submit_batch(&mut self, b: usize) {
        let batch = self.batches[b].clone();
        let lines: Vec<String> = batch
            .lines
            .iter()
            .map(|&p| self.positions[p].line.clone())
            .collect();
        let requests = vec![
            SubmitRequest {
                part: Some(submit_request::Part::Spec(BatchSpec {
                    batch_id: batch.id.clone(),
                    mode: Some(batch.question.mode()),
                    priority: batch.priority,
                    confirm: batch.confirm,
                    ..BatchSpec::default()
                })),
            },
            SubmitRequest {
                part: Some(submit_request::Part::Chunk(LineChunk { lines })),
            },
        ];
        let mut client = self.client(ALICE);
        let r = within(client.batches.submit(tokio_stream::iter(requests)))
            .await
            .map(|r| r.into_inner());
        self.check_answered(&r, "Submit");
        match r {
            Ok(r) => {
                if r.total != batch.lines.len() as u64 {
                    self.violation(
                        1,
                        format!("total:{}", batch.id),
                        format!(
                            "batch {} of {} lines acknowledged with total {}",
                            batch.id,
                            batch.lines.len(),
                            r.total
                        ),
                    );
                }
                self.batches[b].acknowledged = true;
                let _ = self.results(b).await;
            }
            Err(e) if e.code() == Code::ResourceExhausted => {
                self.note(format!(
                    "a submission was refused by a bound: {}",
                    e.message()
                ));
                self.may_submit = false;
            }
            Err(e) => self.note(format!("submission of {} refused: {e:?}", batch.id)),
        }
    }

    /// Leases up to `n` jobs for credential `c`'s session `s`; the model holds them.
    async fn lease(&mut self, c: usize, s: usize, n: u32) -> Result<Vec<LeasedJob>, Status> {
        let mut client = self.client(c);
        let token = self.creds[c].sessions[s].token.clone();
        let r = within(client.workers.lease(LeaseRequest {
            worker_id: token,
            max_jobs: n,
            wait_millis: 0,
            max_seconds: 0.0,
        }))
        .await
        .map(|r| r.into_inner().jobs);
        self.check_answered(&r, "Lease");
        self.expect_refused_if_revoked(c, &r, "lease");
        let jobs = r?;
        for j in &jobs {
            self.take(
                j,
                Holder {
                    cred: c,
                    session: s,
                },
            )
            .await;
        }
        Ok(jobs)
    }

    /// The model learns that `h` holds the leased job `j`.
    async fn take(&mut self, j: &LeasedJob, h: Holder) {
        if let (true, Some(&other)) = (self.surely_held(j.job_id), self.held.get(&j.job_id)) {
            let (a, b) = (
                self.creds[other.cred].name.clone(),
                self.creds[h.cred].name.clone(),
            );
            self.violation(
                7,
                format!("double-lease:{}", j.job_id),
                format!(
                    "job {} was leased to a session of {b} while a session of {a} holds it",
                    j.job_id
                ),
            );
        }
        self.stale.remove(&j.job_id);
        self.last.remove(&j.job_id);
        self.held.insert(j.job_id, h);
        self.renewed.insert(j.job_id, Instant::now());
        self.history.insert((j.job_id, h.cred, h.session));
        match self.position_of(j.job_id).await {
            Some((_, p)) => {
                if j.facelets != facelets(&self.positions[p].cube) {
                    self.violation(
                        1,
                        format!("lease-facelets:{}", j.job_id),
                        format!(
                            "job {} was leased with the position {} instead of its line's",
                            j.job_id, j.facelets
                        ),
                    );
                }
            }
            None => self.violation(
                1,
                format!("unknown-job:{}", j.job_id),
                format!("job {} was leased, but no submitted line made it", j.job_id),
            ),
        }
    }

    /// The (batch, position) of job `id`, reading results once when it is not known yet.
    async fn position_of(&mut self, id: u64) -> Option<(usize, usize)> {
        if !self.jobs.contains_key(&id) && !self.seq_batch.contains_key(&(id >> 40)) {
            // a batch whose number is not known yet: read those batches once
            let known: BTreeSet<usize> = self.seq_batch.values().copied().collect();
            for b in 0..self.batches.len() {
                if !known.contains(&b) && self.batches[b].acknowledged {
                    let _ = self.results(b).await;
                }
            }
        }
        let (b, line) = match self.jobs.get(&id) {
            Some(&found) => found,
            None => (
                *self.seq_batch.get(&(id >> 40))?,
                (id & ((1 << 40) - 1)) as usize,
            ),
        };
        Some((b, *self.batches[b].lines.get(line)?))
    }

    /// The true answer to job `id` (what an honest worker sends).
    fn honest_answer(&self, b: usize, p: usize, id: u64) -> Completion {
        let pos = &self.positions[p];
        let k = pos.optimum.unwrap_or(pos.undo_len);
        let mut c = Completion {
            job_id: id,
            solution: pos.undo.clone(),
            has_solution: true,
            nodes: 1000,
            millis: 2.0,
            ..Completion::default()
        };
        c.set_outcome(ResultStatus::Solved);
        match self.batches[b].question {
            Question::TwoPhase(_) => {}
            Question::Optimal => {
                c.optimal = true;
                c.lower_bound = k;
            }
            Question::Depth(d) if k <= d => {
                c.optimal = true;
                c.lower_bound = k;
            }
            Question::Depth(d) => {
                c.solution.clear();
                c.has_solution = false;
                c.lower_bound = d + 1;
                c.set_outcome(ResultStatus::NoneWithin);
            }
        }
        c
    }

    /// Turns of a completion's solution, if it has one that parses.
    fn completion_length(c: &Completion) -> Option<u32> {
        if !c.has_solution {
            return None;
        }
        if !c.moves.is_empty() {
            return MoveSeq::from_indices(&c.moves).map(|m| m.len() as u32);
        }
        MoveSeq::parse(&c.solution).ok().map(|m| m.len() as u32)
    }

    /// Records what credential `c` said in `results`, as session `by` (None: a token of no
    /// session of its own), holding each job or not ([`Adversary::may_report`]).
    fn record_said(&mut self, c: usize, results: &[Completion], by: Option<Holder>) {
        for r in results {
            let holder = by.is_some_and(|h| self.may_report(r.job_id, h));
            self.said.entry(r.job_id).or_default().push(Said {
                cred: c,
                status: r.reported(),
                length: Self::completion_length(r),
                holder,
            });
            let b = self.bounds.entry((r.job_id, c)).or_default();
            *b = (*b).max(r.lower_bound);
        }
    }

    /// Sends `results` as credential `c`'s session token `token`; the reply (accepted,
    /// rejected job ids).
    async fn complete(
        &mut self,
        c: usize,
        token: String,
        results: Vec<Completion>,
    ) -> Result<(u32, Vec<(u64, String)>), Status> {
        let mut client = self.client(c);
        let r = within(client.workers.complete(CompleteRequest {
            worker_id: token,
            results,
        }))
        .await
        .map(|r| r.into_inner());
        self.check_answered(&r, "Complete");
        self.expect_refused_if_revoked(c, &r, "complete");
        let r = r?;
        Ok((
            r.accepted,
            r.rejected
                .into_iter()
                .map(|x| (x.job_id, x.reason))
                .collect(),
        ))
    }

    /// Sends a heartbeat of `jobs` as `c` with `token`; the jobs it is told to stop.
    async fn heartbeat(
        &mut self,
        c: usize,
        token: String,
        jobs: Vec<JobProgress>,
    ) -> Result<Vec<u64>, Status> {
        for j in &jobs {
            let b = self.bounds.entry((j.job_id, c)).or_default();
            *b = (*b).max(j.lower_bound);
        }
        let mut client = self.client(c);
        let r = within(client.workers.heartbeat(HeartbeatRequest {
            worker_id: token,
            jobs,
        }))
        .await
        .map(|r| r.into_inner().cancel);
        self.check_answered(&r, "Heartbeat");
        self.expect_refused_if_revoked(c, &r, "heartbeat");
        r
    }

    /// Sends a release of `jobs` as `c` with `token`; the count released.
    async fn release(
        &mut self,
        c: usize,
        token: String,
        jobs: Vec<JobProgress>,
    ) -> Result<u32, Status> {
        for j in &jobs {
            let b = self.bounds.entry((j.job_id, c)).or_default();
            *b = (*b).max(j.lower_bound);
        }
        let mut client = self.client(c);
        let r = within(client.workers.release(ReleaseRequest {
            worker_id: token,
            jobs,
        }))
        .await
        .map(|r| r.into_inner().released);
        self.check_answered(&r, "Release");
        self.expect_refused_if_revoked(c, &r, "release");
        r
    }

    /// Whether job `j`'s lease is surely still its holder's (not near its end).
    fn surely_held(&self, j: u64) -> bool {
        self.held.contains_key(&j)
            && self
                .renewed
                .get(&j)
                .is_some_and(|t| t.elapsed() + CLOCK_MARGIN < self.lease)
    }

    /// Whether session `h` may report on job `j`, or the model cannot tell: it holds the job,
    /// or held it last (its lease expired within the grace, or before the last restart).
    fn may_report(&self, j: u64, h: Holder) -> bool {
        let grace = self.lease * GRACE_LEASES + CLOCK_MARGIN;
        self.held.get(&j) == Some(&h)
            || self.stale.get(&j) == Some(&h)
            || self
                .last
                .get(&j)
                .is_some_and(|&(lh, ended)| lh == h && ended.elapsed() < grace)
    }

    /// A heartbeat of the held jobs `sent` was answered with `cancel`: the others' leases are
    /// renewed.
    fn renew(&mut self, sent: &[(u64, Holder)], cancel: &[u64]) {
        for &(j, h) in sent {
            if !cancel.contains(&j) && self.held.get(&j) == Some(&h) {
                self.renewed.insert(j, Instant::now());
            }
        }
    }

    /// Leases the model knows expired become their holders' last leases.
    fn expire(&mut self) {
        let gone: Vec<u64> = self
            .held
            .keys()
            .copied()
            .filter(|j| {
                self.renewed
                    .get(j)
                    .is_some_and(|t| t.elapsed() > self.lease + CLOCK_MARGIN)
            })
            .collect();
        for j in gone {
            let h = self.held.remove(&j).expect("held");
            let ended = self.renewed.remove(&j).expect("renewed") + self.lease;
            self.last.insert(j, (h, ended));
        }
    }

    /// Time passes (the run whose leases expire): leases end, grace passes.
    async fn pause(&mut self) {
        let ms = self
            .rng
            .random_range(300..=(self.lease.as_millis() as u64 * 5 / 2));
        self.note_step(format!("pause {ms} ms"));
        tokio::time::sleep(Duration::from_millis(ms)).await;
    }

    /// Jobs the model says credential `c` holds (all its sessions).
    fn held_by(&self, c: usize) -> Vec<(u64, Holder)> {
        self.held
            .iter()
            .filter(|(_, h)| h.cred == c)
            .map(|(&j, &h)| (j, h))
            .collect()
    }

    // --------------------------------------------------------------------------------------
    // Honest workers

    /// An honest worker's session, registering one when it has none.
    async fn honest_session(&mut self, f: usize) -> Option<usize> {
        if self.creds[f].revoked {
            return None;
        }
        if self.creds[f].sessions.is_empty() {
            let name = format!("farm-host-{f}");
            if let Err(e) = self.register(f, &name, HONEST_THREADS).await {
                self.violation(
                    9,
                    format!("honest-register:{}", self.step),
                    format!("{} could not register: {e:?}", self.creds[f].name),
                );
                return None;
            }
        }
        Some(self.creds[f].sessions.len() - 1)
    }

    /// An honest worker leases 1 to 4 jobs; when it gets none while jobs are queued, the other
    /// honest worker must get one (invariant 5).
    async fn honest_lease(&mut self, f: usize) {
        if self.held_by(f).len() >= HONEST_HOLD {
            return self.honest_complete(f).await;
        }
        let Some(s) = self.honest_session(f).await else {
            return;
        };
        let queued = self.queued().await.unwrap_or(0);
        let n = self.rng.random_range(1..=4);
        let name = self.creds[f].name.clone();
        match self.lease(f, s, n).await {
            Ok(jobs) => {
                let ids: Vec<u64> = jobs.iter().map(|j| j.job_id).collect();
                self.note_step(format!("{name} leases {n}: {ids:?} ({queued} queued)"));
                if jobs.is_empty() && queued > 0 {
                    self.starving(f).await;
                }
            }
            Err(e) => {
                self.note_step(format!(
                    "{name} leases {n}: refused {}",
                    outcome(&Err::<(), _>(e.clone()))
                ));
                self.honest_refused(f, "lease", &e);
            }
        }
    }

    /// An honest worker got nothing while `ListBatches` counted jobs queued: the other honest
    /// worker tries; if neither gets a job and jobs are still queued, invariant 5 is broken.
    async fn starving(&mut self, f: usize) {
        // a worker holding jobs has work: its credential's fair share may allow no more
        if !self.held_by(f).is_empty() {
            return;
        }
        let other = if f == FARMS[0] { FARMS[1] } else { FARMS[0] };
        if self.held_by(other).len() < HONEST_HOLD {
            if let Some(s) = self.honest_session(other).await {
                if let Ok(jobs) = self.lease(other, s, 1).await {
                    if !jobs.is_empty() {
                        return;
                    }
                }
            }
        }
        let queued = self.queued().await.unwrap_or(0);
        if queued > 0 {
            let hostile: usize = self
                .hostiles(true)
                .iter()
                .map(|&h| self.held_by(h).len())
                .sum();
            self.violation(
                5,
                format!("starving:{}", self.step),
                format!(
                    "no honest worker gets a job while {queued} are queued (the hostile \
                     credentials hold {hostile})"
                ),
            );
        }
    }

    /// An honest worker's call was refused: after a restart its session may be gone (a note,
    /// and it registers again); anything else breaks invariant 9.
    fn honest_refused(&mut self, f: usize, what: &str, e: &Status) {
        if e.code() == Code::DeadlineExceeded {
            return;
        }
        let name = self.creds[f].name.clone();
        self.violation(
            9,
            format!("honest-refused:{name}:{what}:{:?}", e.code()),
            format!(
                "{name}'s {what} was refused: {:?} {}",
                e.code(),
                e.message()
            ),
        );
        if refused_as_unauthorised(e) {
            self.creds[f].sessions.clear();
            self.held.retain(|_, h| h.cred != f);
        }
    }

    /// An honest worker completes some of the jobs it holds with true answers; each must be
    /// accepted (invariant 9).
    async fn honest_complete(&mut self, f: usize) {
        let mine = self.held_by(f);
        if mine.is_empty() {
            return Box::pin(self.honest_lease(f)).await;
        }
        let n = self.rng.random_range(1..=mine.len());
        let mut results = Vec::new();
        let mut firsts = HashSet::new();
        let session = mine[0].1.session;
        for &(j, h) in mine.iter().take(n) {
            if h.session != session {
                continue;
            }
            let Some((b, p)) = self.position_of(j).await else {
                continue;
            };
            let mut c = self.honest_answer(b, p, j);
            if self.rng.random_bool(0.5) && c.has_solution {
                // as this version's workers send it: turn numbers
                c.moves = MoveSeq::parse(&c.solution).expect("undo parses").indices();
                c.solution.clear();
            }
            let said_before = self
                .said
                .get(&j)
                .is_some_and(|v| v.iter().any(|s| s.cred == f));
            if !said_before {
                firsts.insert(j);
            }
            results.push(c);
        }
        if results.is_empty() {
            return;
        }
        let token = self.creds[f].sessions[session].token.clone();
        let by = Holder { cred: f, session };
        self.record_said(f, &results, Some(by));
        let sure: BTreeSet<u64> = results
            .iter()
            .map(|r| r.job_id)
            .filter(|&j| self.surely_held(j))
            .collect();
        let ids: Vec<u64> = results.iter().map(|r| r.job_id).collect();
        for id in &ids {
            self.held.remove(id);
        }
        let name = self.creds[f].name.clone();
        match self.complete(f, token, results).await {
            Ok((accepted, rejected)) => {
                self.note_step(format!(
                    "{name} completes {ids:?}: {accepted} accepted, rejected {rejected:?}"
                ));
                for (j, reason) in rejected {
                    self.refusals.entry(j).or_default().push((f, true));
                    if firsts.contains(&j) && sure.contains(&j) {
                        self.violation(
                            9,
                            format!("honest-rejected:{j}"),
                            format!("{name}'s true answer to job {j}, whose lease it holds, was rejected: {reason}"),
                        );
                    }
                }
            }
            Err(e) => {
                self.note_step(format!(
                    "{name} completes {ids:?}: {}",
                    outcome(&Err::<(), _>(e.clone()))
                ));
                self.keep_held(&ids, Holder { cred: f, session }, &e);
                self.honest_refused(f, "complete", &e);
            }
        }
    }

    /// An honest worker heartbeats the jobs it holds with true bounds; it must not be told to
    /// stop any (invariant 9: nobody else may take them).
    async fn honest_heartbeat(&mut self, f: usize) {
        let mine = self.held_by(f);
        if mine.is_empty() {
            return;
        }
        let mut jobs = Vec::new();
        for &(j, _) in &mine {
            let Some((b, p)) = self.position_of(j).await else {
                continue;
            };
            let pos = &self.positions[p];
            let bound = match (self.batches[b].question, pos.optimum) {
                (Question::TwoPhase(_), _) | (_, None) => 0,
                (_, Some(k)) => self.rng.random_range(0..=k),
            };
            jobs.push(JobProgress {
                job_id: j,
                lower_bound: bound,
                nodes: 500,
                reason: String::new(),
            });
        }
        let session = mine[0].1.session;
        let token = self.creds[f].sessions[session].token.clone();
        let name = self.creds[f].name.clone();
        let sure: BTreeSet<u64> = mine
            .iter()
            .map(|&(j, _)| j)
            .filter(|&j| self.surely_held(j))
            .collect();
        match self.heartbeat(f, token, jobs).await {
            Ok(cancel) => {
                self.note_step(format!(
                    "{name} heartbeats {} jobs: stop {cancel:?}",
                    mine.len()
                ));
                self.renew(&mine, &cancel);
                for j in cancel {
                    if self.held.get(&j).is_some_and(|h| h.cred == f) {
                        self.held.remove(&j);
                    }
                    if sure.contains(&j) {
                        self.violation(
                            9,
                            format!("honest-cancelled:{j}"),
                            format!("{name} was told to stop job {j}, whose lease it holds"),
                        );
                    }
                }
            }
            Err(e) => {
                self.note_step(format!(
                    "{name} heartbeats: {}",
                    outcome(&Err::<(), _>(e.clone()))
                ));
                self.honest_refused(f, "heartbeat", &e);
            }
        }
    }

    /// An honest worker hands back some of its jobs, as a draining worker does.
    async fn honest_release(&mut self, f: usize) {
        let mine = self.held_by(f);
        if mine.is_empty() {
            return;
        }
        let n = self.rng.random_range(1..=mine.len());
        let jobs: Vec<JobProgress> = mine
            .iter()
            .take(n)
            .map(|&(j, _)| JobProgress {
                job_id: j,
                lower_bound: 0,
                nodes: 10,
                reason: String::new(),
            })
            .collect();
        let ids: Vec<u64> = jobs.iter().map(|j| j.job_id).collect();
        let sure = ids.iter().all(|&j| self.surely_held(j));
        for j in &ids {
            self.held.remove(j);
        }
        let holder = mine[0].1;
        let token = self.creds[f].sessions[holder.session].token.clone();
        let name = self.creds[f].name.clone();
        match self.release(f, token, jobs).await {
            Ok(released) => {
                self.note_step(format!("{name} releases {n}: {released} released"));
                if released as usize != n && sure {
                    self.violation(
                        9,
                        format!("honest-release:{}", self.step),
                        format!("{name} released {n} jobs it holds, {released} were taken back"),
                    );
                }
            }
            Err(e) => {
                self.keep_held(&ids, holder, &e);
                self.honest_refused(f, "release", &e);
            }
        }
    }

    // --------------------------------------------------------------------------------------
    // Hostile workers

    /// A hostile credential to act as (now and then a revoked one, whose calls must fail).
    fn pick_hostile(&mut self) -> usize {
        let live = self.hostiles(false);
        let all = self.hostiles(true);
        if live.is_empty() || self.rng.random_bool(0.08) {
            all[self.rng.random_range(0..all.len())]
        } else {
            live[self.rng.random_range(0..live.len())]
        }
    }

    /// A session of hostile `h`, registering one when it has none (None if refused).
    async fn hostile_session(&mut self, h: usize) -> Option<usize> {
        if self.creds[h].sessions.is_empty() {
            let name = format!("volunteer-{}", self.rng.random::<u16>());
            self.register(h, &name, 1).await.ok()?;
        }
        let n = self.creds[h].sessions.len();
        Some(self.rng.random_range(0..n))
    }

    /// A solution that solves `pos` but is 4 turns longer (a commuting pair and back).
    fn padded(&mut self, pos: &Position) -> String {
        let choice = self.rng.random_range(0..4);
        padded_with(pos, choice)
    }

    /// A random canonical sequence that does not solve `pos`.
    fn wrong(&mut self, pos: &Position) -> String {
        loop {
            let len = self.rng.random_range(1..=6);
            let m = random_canonical(&mut self.rng, len);
            if !pos.cube.apply_moves(&m).is_solved() {
                return MoveSeq(m).text();
            }
        }
    }

    /// Any well-formed report about job `id`: mostly lies of every kind, now and then the
    /// truth.
    async fn hostile_report(&mut self, id: u64) -> Completion {
        let known = self.position_of(id).await;
        let (question, pos) = match known {
            Some((b, p)) => (
                Some(self.batches[b].question),
                Some(self.positions[p].clone()),
            ),
            None => (None, None),
        };
        if let (Some(q), Some(p)) = (question, &pos) {
            if self.rng.random_bool(0.35) {
                return shared_lie(id, q, p);
            }
        }
        let fallback = Position::new(&random_canonical(&mut self.rng, 3), false, Some(3));
        let pos = pos.unwrap_or(fallback);
        let k = pos.optimum.unwrap_or(pos.undo_len);
        let depth = match question {
            Some(Question::Depth(d)) => d,
            _ => 3,
        };
        let mut c = Completion {
            job_id: id,
            nodes: self.rng.random_range(0..1_000_000),
            millis: self.rng.random_range(0.0..5000.0),
            ..Completion::default()
        };
        let huge = [k + 1, 19, 20, 21, 26, 1000, u32::MAX];
        let pick_huge = |rng: &mut StdRng| huge[rng.random_range(0..huge.len())];
        // fourteen kinds, the last (a status no worker may send, which refuses the whole
        // call) rarer than the others
        let kind = (self.rng.random_range(0..40) / 3).min(13);
        let (status, solution) = match kind {
            // a solution that does not solve, claimed every way
            0 => (ResultStatus::Solved, Some(self.wrong(&pos))),
            // garbage text
            1 => (
                ResultStatus::Solved,
                Some(["R4", "X Y", "U U", "", "R,U", "Rw"][self.rng.random_range(0..6)].into()),
            ),
            // optimal claimed for a longer solution, with a bound to match
            2 => {
                let s = self.padded(&pos);
                c.optimal = true;
                c.lower_bound = k + 4;
                (ResultStatus::Solved, Some(s))
            }
            // the true solution with a false bound, optimal or not
            3 => {
                c.optimal = self.rng.random_bool(0.5);
                c.lower_bound = pick_huge(&mut self.rng);
                (ResultStatus::Solved, Some(pos.undo.clone()))
            }
            // none within, without a solution: a bound just above the depth, or anything
            4 => {
                c.lower_bound = if self.rng.random_bool(0.6) {
                    depth + 1
                } else {
                    pick_huge(&mut self.rng)
                };
                (ResultStatus::NoneWithin, None)
            }
            // none within with a solution
            5 => {
                c.lower_bound = depth + 1;
                (ResultStatus::NoneWithin, Some(pos.undo.clone()))
            }
            // timeout without a solution, with any bound
            6 => {
                c.lower_bound = self.rng.random_range(0..=25);
                (ResultStatus::Timeout, None)
            }
            // timeout with a longer solution
            7 => {
                let s = self.padded(&pos);
                c.lower_bound = self.rng.random_range(0..=k);
                (ResultStatus::Timeout, Some(s))
            }
            // over target with a longer solution, or none
            8 => {
                if self.rng.random_bool(0.6) {
                    let s = self.padded(&pos);
                    (ResultStatus::OverTarget, Some(s))
                } else {
                    (ResultStatus::OverTarget, None)
                }
            }
            // given up, with and without a solution
            9 => {
                if self.rng.random_bool(0.5) {
                    (ResultStatus::Cancelled, Some(pos.undo.clone()))
                } else {
                    (ResultStatus::Cancelled, None)
                }
            }
            // a longer solution, not claimed optimal (a verified answer, if within target)
            10 => (ResultStatus::Solved, Some(self.padded(&pos))),
            // the truth, optimal claimed
            11 => {
                c.optimal = true;
                c.lower_bound = k;
                (ResultStatus::Solved, Some(pos.undo.clone()))
            }
            // the truth, plain
            12 => (ResultStatus::Solved, Some(pos.undo.clone())),
            // a status a worker may not report, as text or as enum
            _ => {
                let s = [
                    ResultStatus::Invalid,
                    ResultStatus::Skipped,
                    ResultStatus::Failed,
                    ResultStatus::Unspecified,
                ][self.rng.random_range(0..4)];
                (s, Some(pos.undo.clone()))
            }
        };
        c.set_outcome(status);
        match self.rng.random_range(0..5) {
            // the text only, as an old worker
            0 => c.result_status = 0,
            // the enum and a text that says something else
            1 => c.status = "solved".into(),
            _ => {}
        }
        if let Some(s) = solution {
            c.has_solution = true;
            if self.rng.random_bool(0.3) {
                if let Ok(m) = MoveSeq::parse(&s) {
                    c.moves = m.indices();
                    c.solution.clear();
                } else {
                    c.solution = s;
                }
            } else {
                c.solution = s;
            }
        } else {
            c.has_solution = self.rng.random_bool(0.1);
        }
        c
    }

    /// A hostile worker leases 1 to 16 jobs.
    async fn hostile_lease(&mut self) {
        let h = self.pick_hostile();
        let Some(s) = self.hostile_session(h).await else {
            return;
        };
        let n = self.rng.random_range(1..=16);
        let r = self.lease(h, s, n).await;
        let name = self.creds[h].name.clone();
        match r {
            Ok(jobs) => {
                let ids: Vec<u64> = jobs.iter().map(|j| j.job_id).collect();
                self.note_step(format!("{name}/{s} leases {n}: {ids:?}"));
            }
            Err(e) => self.note_step(format!(
                "{name}/{s} leases {n}: {}",
                outcome(&Err::<(), _>(e))
            )),
        }
    }

    /// A hostile worker registers sessions of 1024 threads and leases all it can; the honest
    /// workers must still get work while any is queued (invariant 5). Then it hands most back.
    async fn hostile_hoard(&mut self) {
        let h = self.pick_hostile();
        // the farms ask for work first: a credential that has not asked within a lease
        // duration reserves no share (the coordinator's rule), and a restart forgets who asked
        for f in FARMS {
            if self.creds[f].revoked {
                continue;
            }
            if let Some(s) = self.honest_session(f).await {
                let _ = self.lease(f, s, 1).await;
            }
        }
        let (queued, leased) = self.counts().await.unwrap_or((0, 0));
        let outstanding = queued + leased;
        let mut got = 0;
        for _ in 0..3 {
            let Ok(s) = self.register(h, "hoarder", 1024).await else {
                break;
            };
            match self.lease(h, s, 100_000).await {
                Ok(jobs) => got += jobs.len(),
                Err(_) => break,
            }
        }
        let name = self.creds[h].name.clone();
        let holds = self.held_by(h).len() as u64;
        self.note_step(format!(
            "{name} hoards: {got} jobs, holds {holds} of {outstanding} outstanding"
        ));
        // farm1 and farm2 asked just now, and leases last an hour
        // (what it held before may exceed its share of what is left: only a gain is judged)
        // (at exactly its share a credential still takes one queued job more)
        if self.lease == LONG_LEASE && got > 0 && holds > outstanding.div_ceil(SHARES) + 1 {
            self.violation(
                5,
                "hoard".into(),
                format!(
                    "{name} holds {holds} jobs across its sessions, more than a {SHARES}rd of \
                     the {outstanding} outstanding while farm1 and farm2 ask for work"
                ),
            );
        }
        for f in FARMS {
            if !self.creds[f].revoked && self.held_by(f).len() < HONEST_HOLD {
                self.honest_lease(f).await;
                break;
            }
        }
        // hand most of it back, as its holder
        let mine = self.held_by(h);
        let mut by_session: BTreeMap<usize, Vec<u64>> = BTreeMap::new();
        for (j, hh) in mine {
            if self.rng.random_bool(0.9) {
                by_session.entry(hh.session).or_default().push(j);
            }
        }
        for (s, jobs) in by_session {
            let token = self.creds[h].sessions[s].token.clone();
            for chunk in jobs.chunks(60) {
                let progress = chunk
                    .iter()
                    .map(|&j| JobProgress {
                        job_id: j,
                        lower_bound: 0,
                        nodes: 1,
                        reason: String::new(),
                    })
                    .collect();
                for j in chunk {
                    self.held.remove(j);
                }
                if let Err(e) = self.release(h, token.clone(), progress).await {
                    self.keep_held(
                        chunk,
                        Holder {
                            cred: h,
                            session: s,
                        },
                        &e,
                    );
                }
            }
        }
    }

    /// A hostile worker reports on 1 to 4 jobs it holds (the lies are stored only as claims).
    async fn hostile_complete_held(&mut self) {
        let h = self.pick_hostile();
        let mine = self.held_by(h);
        if mine.is_empty() {
            return self.hostile_lease().await;
        }
        let session = mine[self.rng.random_range(0..mine.len())].1.session;
        let jobs: Vec<u64> = mine
            .iter()
            .filter(|(_, hh)| hh.session == session)
            .map(|&(j, _)| j)
            .take(self.rng.random_range(1..=4))
            .collect();
        let mut results = Vec::new();
        for &j in &jobs {
            results.push(self.hostile_report(j).await);
        }
        self.record_said(h, &results, Some(Holder { cred: h, session }));
        for j in &jobs {
            self.held.remove(j);
        }
        let token = self.creds[h].sessions[session].token.clone();
        let what: Vec<String> = results.iter().map(describe).collect();
        let name = self.creds[h].name.clone();
        match self.complete(h, token, results).await {
            Ok((accepted, rejected)) => {
                self.note_step(format!(
                    "{name}/{session} reports its jobs {what:?}: {accepted} accepted, {} rejected",
                    rejected.len()
                ));
                for (j, _) in rejected {
                    self.refusals.entry(j).or_default().push((h, true));
                }
            }
            Err(e) => {
                self.note_step(format!(
                    "{name}/{session} reports its jobs {what:?}: {}",
                    outcome(&Err::<(), _>(e.clone()))
                ));
                self.keep_held(&jobs, Holder { cred: h, session }, &e);
            }
        }
    }

    /// A call about `jobs` held by `h` was refused whole: the jobs stay with it, unless it was
    /// refused as unauthorised (a revoked credential's leases end with it).
    fn keep_held(&mut self, jobs: &[u64], h: Holder, e: &Status) {
        if refused_as_unauthorised(e) || e.code() == Code::DeadlineExceeded {
            return;
        }
        for &j in jobs {
            self.held.insert(j, h);
        }
    }

    /// A job id the hostile `h` (calling with session `s`) does not hold: an honest worker's,
    /// the other hostile's, another session's of its own, a queued or finished one, or a
    /// guess.
    fn foreign_job(&mut self, h: usize, s: usize) -> u64 {
        let mine = Holder {
            cred: h,
            session: s,
        };
        for _ in 0..20 {
            let candidates: Vec<u64> = match self.rng.random_range(0..8) {
                // jobs this session held before (a late report)
                6 | 7 => self
                    .history
                    .iter()
                    .filter(|&&(_, c, sess)| c == h && sess == s)
                    .map(|&(j, _, _)| j)
                    .collect(),
                // jobs it reported on before (answered ones among them: a second report)
                5 => self
                    .said
                    .iter()
                    .filter(|(_, v)| v.iter().any(|x| x.cred == h))
                    .map(|(&j, _)| j)
                    .collect(),
                0 => self
                    .held
                    .iter()
                    .filter(|(_, hh)| FARMS.contains(&hh.cred))
                    .map(|(&j, _)| j)
                    .collect(),
                1 => self
                    .held
                    .iter()
                    .filter(|(_, &hh)| hh != mine)
                    .map(|(&j, _)| j)
                    .collect(),
                2 | 3 => self.jobs.keys().copied().collect(),
                _ => {
                    let seqs: BTreeSet<u64> = self.jobs.keys().map(|j| j >> 40).collect();
                    let top = seqs.iter().max().copied().unwrap_or(1);
                    let seq = self.rng.random_range(0..=top + 2);
                    let line = self.rng.random_range(0..=16u64);
                    let guess = match self.rng.random_range(0..10) {
                        0 => u64::MAX,
                        1 => 0,
                        _ => seq << 40 | line,
                    };
                    vec![guess]
                }
            };
            if candidates.is_empty() {
                continue;
            }
            let j = candidates[self.rng.random_range(0..candidates.len())];
            if !self.may_report(j, mine) {
                return j;
            }
        }
        u64::MAX - 1
    }

    /// A hostile worker reports, heartbeats or releases jobs it does not hold; nothing about
    /// them may change (invariant 7).
    async fn hostile_foreign(&mut self) {
        let h = self.pick_hostile();
        let Some(s) = self.hostile_session(h).await else {
            return;
        };
        // one job, several, or every job of a batch at once
        let mut targets: Vec<u64> = Vec::new();
        match self.rng.random_range(0..6) {
            0 if !self.batches.is_empty() => {
                let b = self.rng.random_range(0..self.batches.len());
                let mut ids: Vec<u64> = self
                    .jobs
                    .iter()
                    .filter(|(_, &(bb, _))| bb == b)
                    .map(|(&j, _)| j)
                    .collect();
                ids.sort_unstable();
                ids.truncate(64);
                let mine = Holder {
                    cred: h,
                    session: s,
                };
                ids.retain(|&j| !self.may_report(j, mine));
                targets = ids;
            }
            1 => {
                for _ in 0..self.rng.random_range(2..=5) {
                    targets.push(self.foreign_job(h, s));
                }
            }
            _ => targets.push(self.foreign_job(h, s)),
        }
        targets.sort_unstable();
        targets.dedup();
        if targets.is_empty() {
            return;
        }
        let mut before = Vec::new();
        for &j in &targets {
            before.push(fingerprint(&self.get_job(j).await));
        }
        // which session token it presents: its own mostly, now and then another's public id
        let own = self.rng.random_range(0..10) >= 2;
        let by = own.then_some(Holder {
            cred: h,
            session: s,
        });
        let token = match self.rng.random_range(0..2) {
            _ if own => self.creds[h].sessions[s].token.clone(),
            0 => {
                let all: Vec<String> = self
                    .creds
                    .iter()
                    .flat_map(|c| c.sessions.iter().map(|s| s.public.clone()))
                    .collect();
                all[self.rng.random_range(0..all.len())].clone()
            }
            _ => String::new(),
        };
        // a target the session may report on after all (a lease near its end) is not judged
        let judged: Vec<bool> = targets
            .iter()
            .map(|&j| by.is_none_or(|b| !self.may_report(j, b)))
            .collect();
        let name = self.creds[h].name.clone();
        let what = match self.rng.random_range(0..10) {
            0..=5 => {
                let mut results = Vec::new();
                for &j in &targets {
                    results.push(self.hostile_report(j).await);
                }
                let text: Vec<String> = results.iter().map(describe).collect();
                self.record_said(h, &results, by);
                let r = self.complete(h, token, results).await;
                if let Ok((_, rejected)) = &r {
                    for (j, _) in rejected {
                        let holder = by.is_some_and(|b| self.may_report(*j, b));
                        self.refusals.entry(*j).or_default().push((h, holder));
                    }
                }
                format!("reports {text:?} on jobs it does not hold: {}", outcome(&r))
            }
            6 | 7 => {
                let jobs: Vec<JobProgress> = targets
                    .iter()
                    .map(|&j| JobProgress {
                        job_id: j,
                        lower_bound: [1, 5, 19, 20, 21, 1000][self.rng.random_range(0..6)],
                        nodes: 1,
                        reason: String::new(),
                    })
                    .collect();
                let r = self.heartbeat(h, token, jobs).await;
                format!(
                    "heartbeats bounds on jobs it does not hold: {}",
                    outcome(&r)
                )
            }
            _ => {
                let reason = if self.rng.random_bool(0.5) {
                    "cannot run it".to_string()
                } else {
                    String::new()
                };
                let jobs: Vec<JobProgress> = targets
                    .iter()
                    .map(|&j| JobProgress {
                        job_id: j,
                        lower_bound: 0,
                        nodes: 1,
                        reason: reason.clone(),
                    })
                    .collect();
                if !reason.is_empty() {
                    for &j in &targets {
                        let holder = by.is_some_and(|b| self.may_report(j, b));
                        self.refusals.entry(j).or_default().push((h, holder));
                    }
                }
                let r = self.release(h, token, jobs).await;
                format!(
                    "releases (reason {reason:?}) jobs it does not hold: {}",
                    outcome(&r)
                )
            }
        };
        self.note_step(format!("{name}/{s} {what}: {targets:?}"));
        for (i, &j) in targets.iter().enumerate() {
            let after = fingerprint(&self.get_job(j).await);
            if judged[i] {
                self.judged.0 += 1;
                if by.is_some_and(|b| self.history.contains(&(j, b.cred, b.session))) {
                    self.judged.1 += 1;
                }
            }
            if after != before[i] && judged[i] {
                let holder = self
                    .held
                    .get(&j)
                    .map(|hh| self.creds[hh.cred].name.clone())
                    .unwrap_or_else(|| "nobody".into());
                self.violation(
                    7,
                    format!("foreign:{j}:{}", self.step),
                    format!(
                        "{name} {what}; job {j} (held by {holder}) changed from [{}] to [{after}]",
                        before[i]
                    ),
                );
                // the model follows what happened, so later steps are judged on it
                if !after.starts_with("state Leased") {
                    self.held.remove(&j);
                }
            }
        }
    }

    /// A hostile worker heartbeats (with any bounds) or hands back (with or without a reason)
    /// jobs it holds.
    async fn hostile_own(&mut self) {
        let h = self.pick_hostile();
        let mine = self.held_by(h);
        if mine.is_empty() {
            return self.hostile_lease().await;
        }
        let session = mine[self.rng.random_range(0..mine.len())].1.session;
        let jobs: Vec<u64> = mine
            .iter()
            .filter(|(_, hh)| hh.session == session)
            .map(|&(j, _)| j)
            .collect();
        let token = self.creds[h].sessions[session].token.clone();
        let name = self.creds[h].name.clone();
        if self.rng.random_bool(0.5) {
            let progress = jobs
                .iter()
                .map(|&j| JobProgress {
                    job_id: j,
                    lower_bound: [0, 1, 3, 8, 20, 21, 1000, u32::MAX][self.rng.random_range(0..8)],
                    nodes: 5,
                    reason: String::new(),
                })
                .collect();
            let r = self.heartbeat(h, token, progress).await;
            self.note_step(format!(
                "{name}/{session} heartbeats its {jobs:?}: {}",
                outcome(&r)
            ));
            if let Ok(cancel) = r {
                let sent: Vec<(u64, Holder)> = jobs
                    .iter()
                    .map(|&j| (j, Holder { cred: h, session }))
                    .collect();
                self.renew(&sent, &cancel);
                for j in cancel {
                    self.held.remove(&j);
                }
            }
        } else {
            let reason = if self.rng.random_bool(0.5) {
                "tables missing".to_string()
            } else {
                String::new()
            };
            if !reason.is_empty() {
                for &j in &jobs {
                    self.refusals.entry(j).or_default().push((h, true));
                }
            }
            let progress = jobs
                .iter()
                .map(|&j| JobProgress {
                    job_id: j,
                    lower_bound: self.rng.random_range(0..30),
                    nodes: 5,
                    reason: reason.clone(),
                })
                .collect();
            for j in &jobs {
                self.held.remove(j);
            }
            let r = self.release(h, token, progress).await;
            if let Err(e) = &r {
                self.keep_held(&jobs, Holder { cred: h, session }, e);
            }
            self.note_step(format!(
                "{name}/{session} releases its {jobs:?} (reason {reason:?}): {}",
                outcome(&r)
            ));
        }
    }

    /// A hostile worker registers under any name: an honest worker's, the admin's, odd ones.
    async fn hostile_register(&mut self) {
        let h = self.pick_hostile();
        let names = [
            "farm1".to_string(),
            "farm2".to_string(),
            "root".to_string(),
            "alice".to_string(),
            "evil1".to_string(),
            String::new(),
            "x".repeat(200),
            "a\nb\u{1b}[31m".to_string(),
            format!("host-{}", self.rng.random::<u32>()),
        ];
        let name = names[self.rng.random_range(0..names.len())].clone();
        let threads = [0, 1, 2, 1024, 5000][self.rng.random_range(0..5)];
        let r = self.register(h, &name, threads).await;
        let who = self.creds[h].name.clone();
        self.note_step(format!(
            "{who} registers as {name:?} with {threads} threads: {}",
            outcome(&r)
        ));
    }

    // --------------------------------------------------------------------------------------
    // Roles

    /// Someone without the admin role tries to revoke, or a credential calls the other
    /// service, or a caller has no valid token: all refused (invariant 8).
    async fn role_probe(&mut self) {
        let hostiles = self.hostiles(false);
        let victim = if hostiles.is_empty() {
            "nobody".to_string()
        } else {
            self.creds[hostiles[self.rng.random_range(0..hostiles.len())]]
                .name
                .clone()
        };
        match self.rng.random_range(0..6) {
            0 if self.admin_role => {
                // the client revokes a hostile worker (the admin's call)
                let mut c = self.client(ALICE);
                let r = within(c.batches.revoke(RevokeRequest {
                    worker: victim.clone(),
                }))
                .await;
                self.note_step(format!("alice revokes {victim}: {}", outcome(&r)));
                self.expect_role_refusal(&r, &format!("the client alice revoked {victim}"));
                if r.is_ok() {
                    if let Some(v) = self.cred_named(&victim) {
                        self.mark_revoked(v);
                    }
                }
            }
            1 => {
                // a worker revokes another
                let w = if self.rng.random_bool(0.5) {
                    FARMS[0]
                } else {
                    self.pick_hostile()
                };
                let target = if self.creds[w].kind == Kind::Honest {
                    victim.clone()
                } else {
                    "farm2".into()
                };
                let mut c = self.client(w);
                let r = within(c.batches.revoke(RevokeRequest {
                    worker: target.clone(),
                }))
                .await;
                let who = self.creds[w].name.clone();
                self.note_step(format!("{who} revokes {target}: {}", outcome(&r)));
                self.expect_role_refusal(&r, &format!("the worker {who} revoked {target}"));
                if r.is_ok() {
                    if let Some(v) = self.cred_named(&target) {
                        self.mark_revoked(v);
                    }
                }
            }
            2 => {
                // the client registers as a worker
                let mut c = self.client(ALICE);
                let r = within(c.workers.register(RegisterRequest {
                    name: "alice-worker".into(),
                    threads: 1,
                    table_fingerprint: "x".into(),
                    protocol: cubefleet_proto::PROTOCOL,
                }))
                .await;
                self.note_step(format!("alice registers as a worker: {}", outcome(&r)));
                self.expect_role_refusal(&r, "the client alice registered as a worker");
            }
            3 => {
                // a worker reads results
                let w = self.pick_hostile();
                let Some(b) = (!self.batches.is_empty())
                    .then(|| self.rng.random_range(0..self.batches.len()))
                else {
                    return;
                };
                let mut c = self.client(w);
                let r = within(c.batches.list_results(ResultsRequest {
                    batch_id: self.batches[b].id.clone(),
                    ..ResultsRequest::default()
                }))
                .await;
                let who = self.creds[w].name.clone();
                self.note_step(format!("{who} reads results: {}", outcome(&r)));
                self.expect_role_refusal(&r, &format!("the worker {who} read results"));
            }
            _ => {
                // no token, or a wrong one
                let token = if self.rng.random_bool(0.5) {
                    None
                } else {
                    Some("guess-1234")
                };
                let Ok(mut c) = Client::connect(&self.coord.url, token).await else {
                    return;
                };
                let r = within(c.workers.register(RegisterRequest {
                    name: "anonymous".into(),
                    threads: 1,
                    table_fingerprint: "x".into(),
                    protocol: cubefleet_proto::PROTOCOL,
                }))
                .await;
                let r2 = within(c.batches.revoke(RevokeRequest {
                    worker: victim.clone(),
                }))
                .await;
                self.note_step(format!(
                    "a caller with token {token:?} registers: {}, revokes {victim}: {}",
                    outcome(&r),
                    outcome(&r2)
                ));
                for (r, what) in [(r.map(|_| ()), "registered"), (r2.map(|_| ()), "revoked")] {
                    match r {
                        Err(e) if e.code() == Code::Unauthenticated => {}
                        other => self.violation(
                            8,
                            format!("tokenless:{what}"),
                            format!(
                                "a caller with token {token:?} {what}: {}, not refused as \
                                 unauthenticated",
                                outcome(&other)
                            ),
                        ),
                    }
                }
            }
        }
    }

    /// A call a role may not make must be refused as not permitted (invariant 8).
    fn expect_role_refusal<T>(&mut self, r: &Result<T, Status>, what: &str) {
        match r {
            Err(e) if refused_as_unauthorised(e) => {}
            other => {
                let o = outcome(other);
                self.violation(8, format!("role:{what}"), format!("{what}: {o}"));
            }
        }
    }

    /// The model learns that credential `c` is revoked.
    fn mark_revoked(&mut self, c: usize) {
        if !self.creds[c].revoked {
            self.creds[c].revoked = true;
            self.revokes += 1;
            self.held.retain(|_, h| h.cred != c);
        }
        // the oldest revoked credentials are retired, so the connections the test keeps stay
        // far below the coordinator's bound on open connections
        let probed: Vec<usize> = self
            .hostiles(true)
            .into_iter()
            .filter(|&h| self.creds[h].revoked)
            .collect();
        for &old in probed.iter().rev().skip(PROBED_REVOKED) {
            self.creds[old].retired = true;
            self.creds[old].client = None;
        }
    }

    // --------------------------------------------------------------------------------------
    // Client and admin

    /// The client submits a new batch of short positions (or, now and then, an old one again).
    async fn client_submit(&mut self) {
        let busy = self.last_queued > 700;
        if self.batches.len() > 1 && (!self.may_submit || busy || self.rng.random_bool(0.25)) {
            let b = self.rng.random_range(0..self.batches.len());
            let id = self.batches[b].id.clone();
            self.note_step(format!("alice submits {id} again"));
            self.submit_batch(b).await;
            return;
        }
        let question = match self.rng.random_range(0..10) {
            0..=2 => Question::TwoPhase(20),
            3 => Question::TwoPhase(3),
            4..=6 => Question::Optimal,
            _ => Question::Depth(self.rng.random_range(1..=4)),
        };
        let confirm = if self.rng.random_bool(0.5) { 2 } else { 1 };
        let n = self.rng.random_range(3..=10);
        let mut lines = BTreeSet::new();
        while lines.len() < n {
            lines.insert(self.pool[self.rng.random_range(0..self.pool.len())]);
        }
        let id = format!("b{}", self.batches.len());
        self.batches.push(Batch {
            id: id.clone(),
            question,
            confirm,
            priority: 0,
            lines: lines.into_iter().collect(),
            acknowledged: false,
        });
        self.note_step(format!(
            "alice submits {id}: {question:?}, confirm {confirm}, {n} lines"
        ));
        self.submit_batch(self.batches.len() - 1).await;
    }

    /// The admin revokes a hostile credential; `timing` says how a SIGKILL meets the call.
    async fn admin_revoke(&mut self, timing: RevokeTiming) {
        // an unnamed credential is revoked by its name once known
        let live: Vec<usize> = self
            .hostiles(false)
            .into_iter()
            .filter(|&c| !self.creds[c].name.ends_with('?'))
            .collect();
        if live.is_empty() {
            return;
        }
        let v = live[self.rng.random_range(0..live.len())];
        let name = self.creds[v].name.clone();
        let leased: Vec<u64> = self.held_by(v).iter().map(|&(j, _)| j).collect();
        let mut c = self.client(ROOT);
        let request = RevokeRequest {
            worker: name.clone(),
        };
        let r = match timing {
            RevokeTiming::KillDuring => {
                let call = tokio::spawn(async move { within(c.batches.revoke(request)).await });
                let wait = self.rng.random_range(0..=15);
                tokio::time::sleep(Duration::from_millis(wait)).await;
                self.coord.kill();
                let r = call.await.expect("the revoke task");
                self.note_step(format!(
                    "root revokes {name}, SIGKILL after {wait} ms: {}",
                    outcome(&r)
                ));
                r
            }
            _ => {
                let r = within(c.batches.revoke(request)).await;
                self.note_step(format!("root revokes {name} ({timing:?}): {}", outcome(&r)));
                self.check_answered(&r, "Revoke");
                r
            }
        };
        match &r {
            Ok(resp) => {
                let resp = resp.get_ref();
                if !resp.credential_revoked {
                    self.violation(
                        4,
                        format!("credential-not-revoked:{name}"),
                        format!(
                            "revoking {name}, a credential's name, did not revoke the credential"
                        ),
                    );
                }
                self.mark_revoked(v);
            }
            Err(e) if timing != RevokeTiming::KillDuring => self.violation(
                8,
                format!("admin-revoke:{:?}", e.code()),
                format!("the admin's revoke of {name} was refused: {e:?}"),
            ),
            Err(_) => {}
        }
        match timing {
            RevokeTiming::Plain => {
                if self.creds[v].revoked {
                    self.probe_revoked(v, "its revoke").await;
                    for j in leased {
                        let r = self.get_job(j).await;
                        if r.as_ref().is_ok_and(|r| r.state == JobState::Leased as i32) {
                            self.violation(
                                4,
                                format!("revoked-lease-kept:{j}"),
                                format!("job {j}, leased to the revoked {name}, is still leased after its revoke"),
                            );
                        }
                    }
                }
                self.check_changed().await;
            }
            RevokeTiming::KillAfter => {
                self.coord.kill();
                self.restart_after_stop(true).await;
            }
            RevokeTiming::KillDuring => {
                // it may or may not have happened; after the start, what the coordinator says
                // of the credential must be what it does with the answers
                self.restart_after_stop(true).await;
                if !self.creds[v].revoked {
                    let refused = self.is_refused(v).await;
                    if refused {
                        self.note_step(format!("{name} is refused after the restart: revoked"));
                        self.mark_revoked(v);
                        self.check_changed().await;
                    }
                }
            }
        }
    }

    /// Whether credential `c`'s register is refused as unauthorised.
    async fn is_refused(&mut self, c: usize) -> bool {
        let mut client = self.client(c);
        let r = within(client.workers.register(RegisterRequest {
            name: "probe".into(),
            threads: 1,
            table_fingerprint: "x".into(),
            protocol: cubefleet_proto::PROTOCOL,
        }))
        .await;
        match r {
            Ok(r) => {
                let r = r.into_inner();
                self.creds[c].sessions.push(Session {
                    token: r.worker_id,
                    public: r.session,
                    name: "probe".into(),
                });
                false
            }
            Err(e) => refused_as_unauthorised(&e),
        }
    }

    /// A revoked credential's calls are refused: a register and a lease with an old session
    /// (invariant 4).
    async fn probe_revoked(&mut self, c: usize, after: &str) {
        let name = self.creds[c].name.clone();
        if !self.is_refused(c).await {
            self.violation(
                4,
                format!("revoked-accepted:{name}:{after}"),
                format!("the revoked credential {name} may register again after {after}"),
            );
        }
        if let Some(s) = self.creds[c].sessions.first().cloned() {
            let mut client = self.client(c);
            let r = within(client.workers.lease(LeaseRequest {
                worker_id: s.token,
                max_jobs: 5,
                wait_millis: 0,
                max_seconds: 0.0,
            }))
            .await;
            let refused = matches!(&r, Err(e) if refused_as_unauthorised(e));
            if !refused {
                self.violation(
                    4,
                    format!("revoked-lease:{name}:{after}"),
                    format!(
                        "the revoked credential {name}'s old session may lease after {after}: {}",
                        outcome(&r)
                    ),
                );
                if let Ok(r) = r {
                    for j in r.into_inner().jobs {
                        self.held.remove(&j.job_id);
                    }
                }
            }
        }
    }

    // --------------------------------------------------------------------------------------
    // Restarts

    /// Stops the coordinator by SIGKILL or SIGTERM and starts it again.
    async fn restart(&mut self, kill: bool) {
        self.note_step(format!(
            "restart by {}",
            if kill { "SIGKILL" } else { "SIGTERM" }
        ));
        if kill {
            self.coord.kill();
        } else if let Err(e) = self.coord.terminate() {
            self.violation(0, format!("sigterm:{}", self.step), e);
        }
        self.restart_after_stop(kill).await;
    }

    /// Starts the coordinator again over the store (the last one has stopped), with a fresh
    /// hostile credential for each revoked one; every held lease becomes stale; revoked
    /// credentials are probed and every batch checked.
    async fn restart_after_stop(&mut self, killed: bool) {
        if killed {
            self.restarts.0 += 1;
        } else {
            self.restarts.1 += 1;
        }
        while self.hostiles(false).len() < 2 {
            self.hostile_made += 1;
            let name = format!("evil{}", self.hostile_made);
            let secret = format!("{name}-secret-{:016x}", self.rng.random::<u64>());
            self.creds.push(Cred {
                name,
                secret,
                kind: Kind::Hostile,
                named: true,
                revoked: false,
                retired: false,
                client: None,
                sessions: Vec::new(),
            });
        }
        self.write_tokens();
        match Coordinator::start(
            &self.data(),
            &self.tokens(),
            &self.log(),
            self.lease,
            &self.unnamed_args(),
        ) {
            Ok(c) => self.coord = c,
            Err(e) => {
                self.violation(0, "start".into(), format!("after a restart: {e}"));
                self.fail();
            }
        }
        self.connect().await;
        for (j, h) in std::mem::take(&mut self.held) {
            self.stale.insert(j, h);
        }
        for (j, (h, _)) in std::mem::take(&mut self.last) {
            self.stale.insert(j, h);
        }
        self.renewed.clear();
        // sessions outlive a restart; an honest worker whose session is refused registers
        for f in FARMS {
            if self.creds[f].revoked {
                continue;
            }
            if let Some(s) = self.creds[f].sessions.last().cloned() {
                let r = self.heartbeat(f, s.token, Vec::new()).await;
                if let Err(e) = r {
                    let name = self.creds[f].name.clone();
                    self.note(format!(
                        "{name}'s session did not survive a restart: {:?} {}",
                        e.code(),
                        e.message()
                    ));
                    self.creds[f].sessions.clear();
                }
            }
        }
        for b in 0..self.batches.len() {
            if !self.batches[b].acknowledged {
                self.submit_batch(b).await;
            }
        }
        for c in self.hostiles(true) {
            if self.creds[c].revoked {
                self.probe_revoked(c, "a restart").await;
            }
        }
        self.check_changed().await;
    }

    // --------------------------------------------------------------------------------------
    // Invariants

    /// Checks every batch's results.
    async fn check_all(&mut self) {
        for b in 0..self.batches.len() {
            self.check_batch(b).await;
        }
        let _ = self.signatures_changed().await;
    }

    /// Checks the batches whose counts changed since their last check (by one ListBatches),
    /// a rotating window of the others, and all of them while there are few; and a lookup.
    async fn check_changed(&mut self) {
        self.check_lookup().await;
        let changed = self.signatures_changed().await;
        let n = self.batches.len();
        if n <= 64 {
            return self.check_all().await;
        }
        let mut todo: BTreeSet<usize> = changed.into_iter().collect();
        for i in 0..16 {
            todo.insert((self.rotor + i) % n);
        }
        self.rotor = (self.rotor + 16) % n;
        for b in todo {
            self.check_batch(b).await;
        }
    }

    /// The batches whose ListBatches counts differ from the last call's (all of them when the
    /// call fails); notes the jobs queued.
    async fn signatures_changed(&mut self) -> Vec<usize> {
        let mut client = self.client(ALICE);
        let r = within(client.batches.list_batches(ListBatchesRequest {}))
            .await
            .map(|r| r.into_inner().batches);
        self.check_answered(&r, "ListBatches");
        let Ok(list) = r else {
            return (0..self.batches.len()).collect();
        };
        self.last_queued = list.iter().map(|b| b.queued).sum();
        let index: HashMap<&str, usize> = self
            .batches
            .iter()
            .enumerate()
            .map(|(i, b)| (b.id.as_str(), i))
            .collect();
        let mut changed = Vec::new();
        for b in &list {
            let sig = format!(
                "{} {} {} {} {} {} {:?}",
                b.queued, b.leased, b.done, b.invalid, b.cancelled, b.failed, b.length_histogram
            );
            if self.signatures.get(&b.batch_id) != Some(&sig) {
                if let Some(&i) = index.get(b.batch_id.as_str()) {
                    changed.push(i);
                }
                self.signatures.insert(b.batch_id.clone(), sig);
            }
        }
        changed
    }

    /// Checks the results of batch `b` (invariants 1 to 4 and 7).
    async fn check_batch(&mut self, b: usize) {
        let Ok(results) = self.results(b).await else {
            return;
        };
        if self.rng.random_bool(0.1) {
            self.check_stream(b, &results).await;
        }
        for r in results {
            self.check_result(b, &r);
        }
    }

    /// StreamResults of batch `b` shows what ListResults showed (`page`), job by job
    /// (invariant 1: one answer, whichever way it is read).
    async fn check_stream(&mut self, b: usize, page: &[JobResult]) {
        let mut client = self.client(ALICE);
        let request = ResultsRequest {
            batch_id: self.batches[b].id.clone(),
            ..ResultsRequest::default()
        };
        let streamed = within(async {
            let mut stream = client.batches.stream_results(request).await?.into_inner();
            let mut all = Vec::new();
            while let Some(r) = stream.message().await? {
                all.push(r);
            }
            Ok(all)
        })
        .await;
        self.check_answered(&streamed, "StreamResults");
        let Ok(streamed) = streamed else {
            return;
        };
        // whether an unfinished job is leased at this instant is no answer: a lease may
        // expire (or be taken) between the two reads, so both read as queued here
        let unleased = |r: &JobResult| {
            let mut r = r.clone();
            if r.state == JobState::Leased as i32 {
                r.state = JobState::Queued as i32;
            }
            fingerprint(&Ok(r))
        };
        let listed: Vec<String> = page.iter().map(unleased).collect();
        let got: Vec<String> = streamed.iter().map(unleased).collect();
        if listed != got {
            let id = self.batches[b].id.clone();
            self.violation(
                1,
                format!("stream:{id}:{}", self.step),
                format!("batch {id}: StreamResults shows {got:?}, ListResults {listed:?}"),
            );
        }
    }

    /// Lookup of a pool position serves only a true solution of it, resting on no revoked
    /// credential and, when claimed optimal, of the optimal length unless a hostile said so
    /// (invariants 1, 2 and 4).
    async fn check_lookup(&mut self) {
        let p = self.pool[self.rng.random_range(0..self.pool.len())];
        let pos = self.positions[p].clone();
        let mut client = self.client(ALICE);
        let r = within(client.batches.lookup(LookupRequest {
            position: pos.line.clone(),
        }))
        .await
        .map(|r| r.into_inner());
        self.check_answered(&r, "Lookup");
        let Ok(r) = r else {
            return;
        };
        if !r.found {
            return;
        }
        let Some(res) = r.result else {
            return self.violation(
                1,
                "lookup-empty".into(),
                "Lookup found a result it does not show".into(),
            );
        };
        let here = format!(
            "Lookup of {:?} (optimum {:?}) serves {:?} optimal {} bound {} worker {:?} claimed {} confirmed_by {:?}",
            pos.line, pos.optimum, res.solution, res.optimal, res.lower_bound, res.worker, res.claimed, res.confirmed_by
        );
        let length = MoveSeq::parse(&res.solution)
            .ok()
            .filter(|m| pos.cube.apply_moves(&m.0).is_solved())
            .map(|m| m.len() as u32);
        if !res.solution.is_empty() && length.is_none() {
            self.violation(
                1,
                format!("lookup-wrong:{}", pos.line),
                format!("{here}: does not solve it"),
            );
        }
        let false_claim = (res.optimal && length != pos.optimum)
            || pos.optimum.is_some_and(|k| res.lower_bound > k);
        if false_claim && !(res.claimed && self.is_hostile(&res.worker)) {
            self.violation(
                2,
                format!("lookup-false:{}", pos.line),
                format!("{here}: a false claim not marked as a hostile's"),
            );
        }
        let mut resting: Vec<String> = res.confirmed_by.clone();
        if res.claimed {
            resting.push(res.worker.clone());
        }
        for name in resting {
            if self
                .cred_named(&name)
                .is_some_and(|c| self.creds[c].revoked)
            {
                self.violation(
                    4,
                    format!("lookup-revoked:{}:{name}", pos.line),
                    format!("{here}: rests on {name}, revoked"),
                );
            }
        }
    }

    /// Checks one result of batch `b` against the model.
    fn check_result(&mut self, b: usize, r: &JobResult) {
        let batch = self.batches[b].clone();
        let job = r.job_id;
        let Some(&p) = batch.lines.get(r.index as usize) else {
            self.violation(
                1,
                format!("no-line:{job}"),
                format!(
                    "batch {} has a result for line {}, never submitted",
                    batch.id, r.index
                ),
            );
            return;
        };
        let pos = self.positions[p].clone();
        if r.input != pos.line {
            self.violation(
                1,
                format!("input:{job}"),
                format!(
                    "job {job}'s input is {:?}, its line {:?}",
                    r.input, pos.line
                ),
            );
        }
        let state = JobState::try_from(r.state).unwrap_or(JobState::Unspecified);
        match state {
            JobState::Queued | JobState::Leased => return,
            JobState::Invalid | JobState::Unspecified => {
                self.violation(
                    1,
                    format!("invalid:{job}"),
                    format!("job {job} ({:?}) is {state:?}: {}", pos.line, r.error),
                );
                return;
            }
            JobState::Failed => {
                self.check_failed(&batch, r);
                return;
            }
            JobState::Done | JobState::Cancelled => {}
        }
        let status = r.outcome();
        let here = format!(
            "job {job} (batch {} {:?} confirm {}, line {:?}, optimum {:?}): {} {:?} optimal {} bound {} \
             worker {:?} claimed {} confirmed_by {:?} from_store {}",
            batch.id,
            batch.question,
            batch.confirm,
            pos.line,
            pos.optimum,
            status,
            r.solution,
            r.optimal,
            r.lower_bound,
            r.worker,
            r.claimed,
            r.confirmed_by,
            r.from_store
        );
        // 1: every solution solves the line as written, its length is its turns
        let mut length = None;
        if !r.solution.is_empty() {
            match MoveSeq::parse(&r.solution) {
                Ok(m) if pos.cube.apply_moves(&m.0).is_solved() => {
                    length = Some(m.len() as u32);
                    if m.len() as u32 != r.length {
                        self.violation(
                            1,
                            format!("length:{job}"),
                            format!("{here}: length {}", r.length),
                        );
                    }
                }
                _ => self.violation(
                    1,
                    format!("wrong:{job}"),
                    format!("{here}: does not solve it"),
                ),
            }
        } else if status == ResultStatus::Solved {
            self.violation(
                1,
                format!("empty:{job}"),
                format!("{here}: solved without a solution"),
            );
        }
        // is it the truth, and a verified answer to the batch's question?
        let k = pos.optimum;
        let bound_true = r.lower_bound <= k.unwrap_or(pos.undo_len);
        let optimal_true = !r.optimal || (k.is_some() && length == k);
        let truthful = bound_true
            && optimal_true
            && match (status, length) {
                (ResultStatus::Solved, Some(len)) => match batch.question {
                    Question::TwoPhase(t) => len <= t,
                    Question::Optimal => r.optimal && Some(len) == k,
                    Question::Depth(d) => len <= d,
                },
                (ResultStatus::NoneWithin, None) => {
                    matches!(batch.question, Question::Depth(d) if k.is_some_and(|k| k > d))
                }
                _ => false,
            };
        let verified = truthful
            && status == ResultStatus::Solved
            && !r.optimal
            && r.lower_bound == 0
            && state == JobState::Done;
        // 2: anything else is a claim, recorded with the credential that made it
        if !verified && !r.claimed {
            self.violation(
                2,
                format!("unclaimed:{job}"),
                format!("{here}: rests on a claim but is not marked claimed"),
            );
        }
        // an unnamed credential's name is the coordinator's, learnt here, never a name its
        // workers registered with
        if !r.session.is_empty() && !r.from_store && !r.worker.is_empty() {
            let owner = self
                .creds
                .iter()
                .position(|c| c.sessions.iter().any(|s| s.public == r.session));
            if let Some(o) = owner.filter(|&o| !self.creds[o].named) {
                if self.creds[o].sessions.iter().any(|s| s.name == r.worker) {
                    self.violation(
                        2,
                        format!("identity:{}", r.worker),
                        format!(
                            "{here}: the unnamed credential's answer names the worker by the \
                             name its session registered with"
                        ),
                    );
                } else if self.creds[o].name.ends_with('?') {
                    self.note(format!(
                        "the unnamed worker credential is named {}",
                        r.worker
                    ));
                    self.creds[o].name = r.worker.clone();
                }
            }
        }
        let worker = self.cred_named(&r.worker);
        // the session that sent it is one of the named credential's (public ids are known)
        if !r.session.is_empty() && !r.from_store {
            let owner = self
                .creds
                .iter()
                .position(|c| c.sessions.iter().any(|s| s.public == r.session));
            if let Some(o) = owner {
                if Some(o) != worker {
                    let real = self.creds[o].name.clone();
                    self.violation(
                        2,
                        format!("session:{job}"),
                        format!("{here}: its session {} is {real}'s", r.session),
                    );
                }
            }
        }
        if !verified {
            match worker {
                None => self.violation(
                    2,
                    format!("no-worker:{job}"),
                    format!("{here}: a claim whose worker names no credential"),
                ),
                Some(w)
                    if self.creds[w].kind != Kind::Honest
                        && self.creds[w].kind != Kind::Hostile =>
                {
                    self.violation(
                        2,
                        format!("not-a-worker:{job}"),
                        format!("{here}: a claim whose worker is not a worker credential"),
                    )
                }
                Some(_) => {}
            }
            if !truthful && !self.is_hostile(&r.worker) {
                self.violation(
                    2,
                    format!("false-honest:{job}"),
                    format!("{here}: a false answer that does not rest on a hostile credential"),
                );
            }
        }
        if !r.from_store && state == JobState::Done {
            if let Some(w) = worker {
                let said = self.said.get(&job).cloned().unwrap_or_default();
                let same: Vec<&Said> = said
                    .iter()
                    .filter(|s| s.cred == w && s.status == Some(status) && s.length == length)
                    .collect();
                if same.is_empty() {
                    self.violation(
                        2,
                        format!("not-said:{job}"),
                        format!("{here}: {} never said this about the job", r.worker),
                    );
                } else if !same.iter().any(|s| s.holder) {
                    self.violation(
                        7,
                        format!("stored-foreign:{job}"),
                        format!(
                            "{here}: stored from {}'s report, made while it did not hold the job",
                            r.worker
                        ),
                    );
                }
                let stated = self.bounds.get(&(job, w)).copied().unwrap_or(0);
                if r.lower_bound > stated {
                    self.violation(
                        2,
                        format!("bound:{job}"),
                        format!(
                            "{here}: the bound {} is not one {} stated (at most {stated})",
                            r.lower_bound, r.worker
                        ),
                    );
                }
            } else if !r.worker.is_empty() {
                self.violation(
                    2,
                    format!("worker-name:{job}"),
                    format!("{here}: worker {:?} is no credential's name", r.worker),
                );
            }
        }
        // 3: under confirm 2, a claim rests on two credentials that both said it
        let confirmers: BTreeSet<&str> = r.confirmed_by.iter().map(String::as_str).collect();
        if batch.confirm >= 2 && !verified {
            if confirmers.len() < 2 {
                self.violation(
                    3,
                    format!("one-credential:{job}"),
                    format!("{here}: a claim of a confirm-2 batch resting on fewer than two credentials"),
                );
            }
            for name in &confirmers {
                self.learn_unnamed(name, job);
                let Some(c) = self.cred_named(name) else {
                    self.violation(
                        3,
                        format!("confirmer:{job}"),
                        format!("{here}: {name} is no credential"),
                    );
                    continue;
                };
                if !truthful && self.creds[c].kind != Kind::Hostile {
                    self.violation(
                        3,
                        format!("false-confirmed:{job}"),
                        format!("{here}: a false answer confirmed by the honest {name}"),
                    );
                }
                if !r.from_store {
                    // the same claim: the status, and an optimal claim's length (a timeout's
                    // solution is verified, so only its status and bound are claimed)
                    let said = self.said.get(&job).cloned().unwrap_or_default();
                    let same = said.iter().any(|s| {
                        s.cred == c
                            && s.status == Some(status)
                            && (status != ResultStatus::Solved || s.length == length)
                    });
                    if !same {
                        self.violation(
                            3,
                            format!("confirmer-not-said:{job}"),
                            format!("{here}: confirmed by {name}, which never said this"),
                        );
                    }
                }
            }
        }
        // 4: nothing rests on a revoked credential
        let mut resting: Vec<&str> = confirmers.iter().copied().collect();
        if !verified || r.claimed {
            resting.push(&r.worker);
        }
        for name in resting {
            if let Some(c) = self.cred_named(name) {
                if self.creds[c].revoked {
                    self.violation(
                        4,
                        format!("revoked-answer:{job}:{name}"),
                        format!("{here}: rests on {name}, revoked"),
                    );
                }
            }
        }
    }

    /// Learns the unnamed credential's name from `name`, a confirmer of job `job` that names
    /// no credential the model knows: when the unnamed credential's name is still unknown and
    /// it made a claim about `job`, `name` is its name as the coordinator derived it (its
    /// answers name it as `worker` only when it answers first; confirming another's claim, it
    /// shows in `confirmed_by` alone).
    fn learn_unnamed(&mut self, name: &str, job: u64) {
        if self.cred_named(name).is_some() {
            return;
        }
        let Some(o) = self
            .creds
            .iter()
            .position(|c| !c.named && c.name.ends_with('?'))
        else {
            return;
        };
        let said = self
            .said
            .get(&job)
            .is_some_and(|s| s.iter().any(|s| s.cred == o));
        if said {
            self.note(format!("the unnamed worker credential is named {name}"));
            self.creds[o].name = name.to_string();
        }
    }

    /// A failed job rests on refusals of its lease holders from two credentials, none of them
    /// revoked (invariants 4 and 7).
    fn check_failed(&mut self, batch: &Batch, r: &JobResult) {
        let job = r.job_id;
        let refusals = self.refusals.get(&job).cloned().unwrap_or_default();
        let holders: Vec<usize> = refusals
            .iter()
            .filter(|(_, holder)| *holder)
            .map(|&(c, _)| c)
            .collect();
        let creds: BTreeSet<usize> = holders.iter().copied().collect();
        let names: Vec<String> = refusals
            .iter()
            .map(|&(c, h)| {
                format!(
                    "{}{}",
                    self.creds[c].name,
                    if h { "" } else { " (not holding)" }
                )
            })
            .collect();
        let here = format!(
            "job {job} of batch {} failed ({:?}); refusals: {names:?}",
            batch.id, r.error
        );
        if holders.len() < MAX_REJECTIONS || creds.len() < 2 {
            self.violation(
                7,
                format!("failed:{job}"),
                format!(
                    "{here}: not {MAX_REJECTIONS} refusals of lease holders from two credentials"
                ),
            );
        }
        // without the refusals of revoked credentials, the failure must still stand
        let live: Vec<usize> = holders
            .iter()
            .copied()
            .filter(|&c| !self.creds[c].revoked)
            .collect();
        let live_creds: BTreeSet<usize> = live.iter().copied().collect();
        let revoked: Vec<String> = creds
            .iter()
            .filter(|&&c| self.creds[c].revoked)
            .map(|&c| self.creds[c].name.clone())
            .collect();
        if !revoked.is_empty() && (live.len() < MAX_REJECTIONS || live_creds.len() < 2) {
            self.violation(
                4,
                format!("failed-revoked:{job}"),
                format!("{here}: rests on {revoked:?}, revoked"),
            );
        }
    }

    /// The coordinator is alive and under the memory bound (invariants 0 and 6).
    async fn check_process(&mut self) {
        if let Some(st) = self.coord.exited() {
            self.violation(
                0,
                format!("exited:{}", self.step),
                format!("the coordinator exited: {st}"),
            );
            self.coord.proc = None;
            self.restart_after_stop(true).await;
        }
        if let Some(rss) = self.coord.resident() {
            if rss > MEMORY_BOUND {
                self.violation(
                    6,
                    "memory".into(),
                    format!(
                        "the coordinator's resident memory is {} MB, above {} MB",
                        rss >> 20,
                        MEMORY_BOUND >> 20
                    ),
                );
            }
        }
    }

    // --------------------------------------------------------------------------------------
    // The run

    /// One random action.
    async fn act(&mut self) {
        self.expire();
        let farm = FARMS[self.rng.random_range(0..2)];
        let expiring = self.lease < Duration::from_secs(10);
        let roll = self.rng.random_range(0..if expiring { 1080 } else { 1000 });
        match roll {
            1000.. => self.pause().await,
            0..=149 => self.honest_lease(farm).await,
            150..=299 => self.honest_complete(farm).await,
            300..=339 => self.honest_heartbeat(farm).await,
            340..=359 => self.honest_release(farm).await,
            360..=439 => self.hostile_lease().await,
            440..=539 => self.hostile_complete_held().await,
            540..=679 => self.hostile_foreign().await,
            680..=719 => self.hostile_own().await,
            720..=739 => self.hostile_register().await,
            740..=759 => self.hostile_hoard().await,
            760..=789 => self.role_probe().await,
            790..=929 => self.client_submit().await,
            930..=959 => {
                let timing = match self.rng.random_range(0..3) {
                    0 => RevokeTiming::Plain,
                    1 => RevokeTiming::KillAfter,
                    _ => RevokeTiming::KillDuring,
                };
                if self.rng.random_bool(0.4) {
                    self.admin_revoke(timing).await;
                }
            }
            _ => {
                let kill = self.rng.random_bool(0.5);
                self.restart(kill).await;
            }
        }
    }

    /// Runs `steps` steps (or until `wall` has passed, when given), checking after each.
    async fn run(&mut self, steps: u64, wall: Option<Duration>) {
        let start = Instant::now();
        self.check_all().await;
        while self.step < steps {
            self.step += 1;
            self.act().await;
            self.check_process().await;
            let every = (self.batches.len() as u64 / 32).max(2);
            if self.step % every == 0 {
                self.check_changed().await;
            }
            if self.step % PROGRESS_EVERY == 0 {
                eprintln!(
                    "{} of {steps} steps in {:.0} s: {} restarts, {} batches",
                    self.step,
                    start.elapsed().as_secs_f64(),
                    self.restarts.0 + self.restarts.1,
                    self.batches.len()
                );
            }
            if wall.is_some_and(|w| start.elapsed() > w) {
                eprintln!(
                    "stopping after {} steps: the wall-time limit {wall:?} passed",
                    self.step
                );
                break;
            }
        }
        // the end: a clean stop and start, then everything once more
        self.restart(false).await;
        eprintln!(
            "{} steps in {:.1} s: {} restarts by SIGKILL, {} by SIGTERM, {} revokes, {} batches, \
             {} jobs known, {} reports on jobs not held judged ({} late); {} violation(s), \
             {} note(s)",
            self.step,
            start.elapsed().as_secs_f64(),
            self.restarts.0,
            self.restarts.1,
            self.revokes,
            self.batches.len(),
            self.jobs.len(),
            self.judged.0,
            self.judged.1,
            self.violations.len(),
            self.notes.len()
        );
    }
}

/// A completion in a few words, for the trace.
fn describe(c: &Completion) -> String {
    let sol = if !c.moves.is_empty() {
        MoveSeq::from_indices(&c.moves).map_or("?".into(), |m| m.text())
    } else {
        c.solution.clone()
    };
    format!(
        "{}:{}/{}{}{} {:?} lb {}",
        c.job_id,
        c.status,
        c.result_status,
        if c.optimal { " optimal" } else { "" },
        if c.has_solution { "" } else { " no-solution" },
        sol,
        c.lower_bound
    )
}

/// A call's outcome in a few words.
fn outcome<T>(r: &Result<T, Status>) -> String {
    match r {
        Ok(_) => "ok".into(),
        Err(e) => format!("{:?} ({})", e.code(), e.message()),
    }
}

#[test]
fn canonical_sequences_of_up_to_three_turns_are_optimal() {
    // every shorter solution would make two sequences of at most three turns one position
    let all = all_canonical(3);
    assert_eq!(all.len(), 18 + 243 + 3240);
    let distinct: HashSet<String> = all
        .iter()
        .map(|s| facelets(&CubieCube::from_moves(s)))
        .collect();
    assert_eq!(distinct.len(), all.len());
    assert!(all.iter().all(|s| !CubieCube::from_moves(s).is_solved()));
}

/// Runs the adversary with leases of `lease`: `CUBEFLEET_ADVERSARY_STEPS` steps divided by
/// `share` (else `default_steps`, cut at [`DEFAULT_WALL`]); fails with every violation.
async fn adversary(lease: Duration, default_steps: u64, share: u64) {
    let seed = seed();
    let given: Option<u64> = std::env::var("CUBEFLEET_ADVERSARY_STEPS")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .map(|n: u64| (n / share).max(1));
    let steps = given.unwrap_or(default_steps);
    let wall = given.is_none().then_some(DEFAULT_WALL);
    eprintln!(
        "CUBEFLEET_ADVERSARY_SEED={seed}: {steps} steps, leases of {}s",
        lease.as_secs()
    );
    let mut adv = Adversary::new(seed, lease).await;
    adv.run(steps, wall).await;
    for n in &adv.notes {
        eprintln!("note: {n}");
    }
    if !adv.violations.is_empty() {
        adv.fail();
    }
    adv.coord.kill();
    let _ = std::fs::remove_dir_all(&adv.dir);
}

/// Invariant 5 when little work is left (found by the long run, seed 1001, step 28,453): five
/// worker credentials are live, three jobs are queued; farm1 and farm2 lease one each; the
/// third is queued and nobody holds it, so farm1's next lease must return it (a worker of a
/// credential that asks is never left idle while a job waits for nobody).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_honest_worker_gets_the_last_queued_job() {
    let dir = tempfile::tempdir().expect("tempdir");
    let names = ["alice", "farm1", "farm2", "evil1", "evil2", "evil3"];
    let secret = |n: &str| format!("{n}-secret-last-job");
    let mut tokens = String::new();
    for n in names {
        let role = if n == "alice" { "client" } else { "worker" };
        let _ = writeln!(tokens, "{n} {role} {}", secret(n));
    }
    let tokens_file = dir.path().join("tokens");
    std::fs::write(&tokens_file, tokens).expect("tokens");
    let mut coord = Coordinator::start(
        &dir.path().join("store"),
        &tokens_file,
        &dir.path().join("coordinator.log"),
        LONG_LEASE,
        &[],
    )
    .expect("the coordinator starts");
    let url = coord.url.clone();
    let mut alice = Client::connect(&url, Some(&secret("alice")))
        .await
        .expect("connects");
    let lines: Vec<String> = ["R U", "F2 L'", "B D2 R"].map(String::from).to_vec();
    let requests = vec![
        SubmitRequest {
            part: Some(submit_request::Part::Spec(BatchSpec {
                batch_id: "last-jobs".into(),
                mode: Some(Question::TwoPhase(20).mode()),
                ..BatchSpec::default()
            })),
        },
        SubmitRequest {
            part: Some(submit_request::Part::Chunk(LineChunk { lines })),
        },
    ];
    alice
        .batches
        .submit(tokio_stream::iter(requests))
        .await
        .expect("submitted");
    // every worker credential registers (and so is live); the hostile ones lease nothing
    let mut sessions = BTreeMap::new();
    for n in &names[1..] {
        let mut c = Client::connect(&url, Some(&secret(n)))
            .await
            .expect("connects");
        let token = c
            .workers
            .register(RegisterRequest {
                name: format!("{n}-host"),
                threads: 1,
                table_fingerprint: "last-job".into(),
                protocol: cubefleet_proto::PROTOCOL,
            })
            .await
            .expect("registers")
            .into_inner()
            .worker_id;
        sessions.insert(n.to_string(), (c, token));
    }
    let lease = |n: &str| {
        let (mut c, token) = sessions[n].clone();
        async move {
            c.workers
                .lease(LeaseRequest {
                    worker_id: token,
                    max_jobs: 1,
                    wait_millis: 0,
                    max_seconds: 0.0,
                })
                .await
                .expect("leases")
                .into_inner()
                .jobs
                .len()
        }
    };
    assert_eq!(lease("farm1").await, 1, "farm1's first job");
    assert_eq!(lease("farm2").await, 1, "farm2's first job");
    let again = lease("farm1").await;
    coord.kill();
    assert_eq!(
        again, 1,
        "one job is queued and held by nobody, yet farm1 (holding one) gets none: the fair \
         share of 3 outstanding jobs among 5 live worker credentials leaves it idle"
    );
}

/// The adversary with leases that outlive the run: only holders and restarts end them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stateful_adversary_breaks_no_promise() {
    adversary(LONG_LEASE, DEFAULT_STEPS, 1).await;
}

/// The adversary with leases of two seconds and pauses: leases expire, late reports come in
/// within and after the grace, and others lease the jobs meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stateful_adversary_with_expiring_leases_breaks_no_promise() {
    adversary(SHORT_LEASE, EXPIRING_STEPS, 8).await;
}
