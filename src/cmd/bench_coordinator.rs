//! `cubefleet bench coordinator`: the job system's own throughput, without any search. An
//! in-process coordinator on a fresh sled store serves loopback gRPC; one client submits a batch
//! of scrambles (random 20-move sequences), then worker tasks lease in groups and complete every
//! job with the inverse scramble, which the coordinator verifies like any result. Figures:
//! submission lines/s, lease -> complete (verified, stored) jobs/s, end to end jobs/s, and the
//! process's peak memory.

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use cubefleet_proto::{
    submit_request, BatchSpec, CompleteRequest, Completion, LeaseRequest, LineChunk,
    RegisterRequest, SubmitRequest,
};
use cubefleet_tables::{parse_position, FaceletCube, InputFormat, Move, MoveSeq};
use cubefleet_worker::remote::mode_to_proto;
use cubefleet_worker::search::Mode;
use rand::{Rng, SeedableRng};

use super::connect::{runtime, Embedded};

#[derive(clap::Args, Debug)]
pub(crate) struct CoordinatorArgs {
    /// Jobs in the batch.
    #[arg(long, default_value_t = 200_000)]
    jobs: usize,
    /// Concurrent worker tasks leasing and completing.
    #[arg(long, default_value_t = 4)]
    workers: usize,
    /// Jobs per lease and per completion call (default: the group a busy worker reports, half
    /// of the most jobs it holds).
    #[arg(long, default_value_t = (cubefleet_worker::runtime::MAX_HELD / 2) as u32)]
    group: u32,
    /// Store directory (default: a fresh directory under the system's temp dir, removed after).
    #[arg(long)]
    data: Option<PathBuf>,
}

/// Lines per submission message.
const CHUNK: usize = 2000;

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
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / 1024.0)
}

pub(crate) fn run(args: CoordinatorArgs) -> anyhow::Result<ExitCode> {
    let (dir, remove) = match &args.data {
        Some(d) => (d.clone(), false),
        None => (
            std::env::temp_dir().join(format!("cubefleet-bench-{}", std::process::id())),
            true,
        ),
    };
    // the positions, and for each its facelet string -> solution (what a worker would find)
    let mut rng = rand::rngs::StdRng::seed_from_u64(42);
    let mut lines = Vec::with_capacity(args.jobs);
    let mut answers: HashMap<String, String> = HashMap::with_capacity(args.jobs);
    for _ in 0..args.jobs {
        let s = scramble(&mut rng);
        let cube = parse_position(&s.to_string(), InputFormat::Moves)?;
        answers.insert(
            FaceletCube::from_cubie(&cube).to_string(),
            s.inverse().to_string(),
        );
        lines.push(s.to_string());
    }
    let answers = Arc::new(answers);
    let result = runtime()?.block_on(async {
        let embedded = Embedded::start(&dir).await?;
        let client = embedded.client.clone();

        let (start, cpu0) = (Instant::now(), cpu_seconds());
        let spec = BatchSpec {
            batch_id: "bench".into(),
            name: "bench coordinator".into(),
            mode: Some(mode_to_proto(&Mode::TwoPhase { max_length: 20 }, None)),
            priority: 0,
        };
        let mut msgs = vec![SubmitRequest {
            part: Some(submit_request::Part::Spec(spec)),
        }];
        msgs.extend(lines.chunks(CHUNK).map(|c| SubmitRequest {
            part: Some(submit_request::Part::Chunk(LineChunk { lines: c.to_vec() })),
        }));
        let r = client
            .batches
            .clone()
            .submit(tokio_stream::iter(msgs))
            .await?
            .into_inner();
        anyhow::ensure!(r.total == args.jobs as u64, "stored {} lines", r.total);
        let submitted = start.elapsed();
        let cpu1 = cpu_seconds();

        let work = Instant::now();
        let mut tasks = Vec::new();
        for w in 0..args.workers {
            let (client, answers, group) = (client.clone(), answers.clone(), args.group);
            tasks.push(tokio::spawn(async move {
                let id = client
                    .workers
                    .clone()
                    .register(RegisterRequest {
                        name: format!("bench-{w}"),
                        threads: 1,
                        table_fingerprint: String::new(),
                    })
                    .await?
                    .into_inner()
                    .worker_id;
                let mut done = 0u64;
                loop {
                    let jobs = client
                        .workers
                        .clone()
                        .lease(LeaseRequest {
                            worker_id: id.clone(),
                            max_jobs: group,
                            wait_millis: 0,
                            max_seconds: 0.0,
                        })
                        .await?
                        .into_inner()
                        .jobs;
                    if jobs.is_empty() {
                        return anyhow::Ok(done);
                    }
                    let results = jobs
                        .iter()
                        .map(|j| Completion {
                            job_id: j.job_id,
                            status: "solved".into(),
                            solution: answers.get(&j.facelets).cloned().unwrap_or_default(),
                            has_solution: true,
                            ..Completion::default()
                        })
                        .collect();
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
                    done += u64::from(r.accepted);
                }
            }));
        }
        let mut completed = 0;
        for t in tasks {
            completed += t.await??;
        }
        let worked = work.elapsed();
        let cpu2 = cpu_seconds();
        anyhow::ensure!(completed == args.jobs as u64, "completed {completed}");
        embedded.stop().await?;
        anyhow::Ok((submitted, worked, [cpu1 - cpu0, cpu2 - cpu1]))
    });
    if remove {
        let _ = std::fs::remove_dir_all(&dir);
    }
    let (submitted, worked, cpu) = result?;
    let n = args.jobs as f64;
    println!(
        "| jobs | workers x group | submit lines/s | lease+complete jobs/s | end to end jobs/s | CPU µs/job submit, lease+complete | peak RSS MB |"
    );
    println!("| ---: | --- | ---: | ---: | ---: | ---: | ---: |");
    println!(
        "| {} | {} x {} | {:.0} | {:.0} | {:.0} | {:.1}, {:.1} | {:.0} |",
        args.jobs,
        args.workers,
        args.group,
        n / submitted.as_secs_f64(),
        n / worked.as_secs_f64(),
        n / (submitted + worked).as_secs_f64(),
        cpu[0] * 1e6 / n,
        cpu[1] * 1e6 / n,
        peak_rss_mb()
    );
    Ok(ExitCode::SUCCESS)
}
