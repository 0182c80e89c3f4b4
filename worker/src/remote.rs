//! The runtime's [`Coordinator`] over gRPC: a registered worker's calls to `cubefleet.v1.Workers`.

use std::time::Duration;

use cubefleet_proto::client::{CallError, Client};
use cubefleet_proto::question::{spot_ranks, Question, MAX_DEPTH, MAX_SECONDS};
use cubefleet_proto::{
    CompleteRequest, Completion, HeartbeatRequest, JobProgress, LeaseRequest, RegisterRequest,
    ReleaseRequest,
};
use cubefleet_tables::coset::{Coset, SEED_BYTES};
use cubefleet_tables::{parse_position, CubieCube, InputFormat, MoveSeq};
use tonic::Status;

use crate::pool::{Finished, Job};
use crate::runtime::{Coordinator, HeartbeatReply};
use cubefleet_search::Progress;

/// A worker registered with a coordinator.
pub struct GrpcCoordinator {
    client: Client,
    /// The coordinator's URL, named by every error (what the logs show).
    url: String,
    /// The session secret the coordinator issued (sent with every call, never shown).
    worker_id: String,
    /// The session's public id (what logs and the status page show).
    session: String,
    lease: Duration,
}

/// Refuses a coordinator whose protocol revision (`RegisterResponse.protocol`) is below
/// [`cubefleet_proto::MIN_COORDINATOR_PROTOCOL`]: it would reject results this worker sends
/// (each rejected five times fails its job), so the worker stops at once with what to do.
fn check_protocol(coordinator: u32) -> Result<(), Status> {
    if coordinator < cubefleet_proto::MIN_COORDINATOR_PROTOCOL {
        return Err(Status::failed_precondition(format!(
            "the coordinator speaks worker protocol {coordinator}, older than the {} this worker \
             needs: upgrade the coordinator (or run a worker of its version)",
            cubefleet_proto::MIN_COORDINATOR_PROTOCOL
        )));
    }
    Ok(())
}

impl GrpcCoordinator {
    /// Registers with the coordinator at `url` behind `client`; a failure names the URL and
    /// its cause ([`CallError`]).
    pub async fn register(
        client: Client,
        url: &str,
        name: String,
        threads: u32,
        fingerprint: String,
    ) -> Result<GrpcCoordinator, CallError> {
        let explain = |s: Status| CallError::from_status(url, &s);
        let r = client
            .workers
            .clone()
            .register(RegisterRequest {
                name,
                threads,
                table_fingerprint: fingerprint,
                protocol: cubefleet_proto::PROTOCOL,
            })
            .await
            .map_err(explain)?
            .into_inner();
        check_protocol(r.protocol).map_err(explain)?;
        let lease = if r.lease_seconds.is_finite() {
            r.lease_seconds.clamp(1.0, MAX_SECONDS)
        } else {
            1.0
        };
        Ok(GrpcCoordinator {
            client,
            url: url.to_string(),
            worker_id: r.worker_id,
            session: r.session,
            lease: Duration::from_secs_f64(lease),
        })
    }

    /// The public id of this worker's session (its secret is never shown).
    pub fn session(&self) -> &str {
        &self.session
    }

    /// How long a lease lasts without a heartbeat.
    pub fn lease_duration(&self) -> Duration {
        self.lease
    }
}

/// The pool job for a leased job: its position, the question its protocol mode asks (read by
/// the one reading of a wire mode, [`Question::from_wire`]), where an optimal search resumes,
/// and of a coset job its coset's number and sample seed (`LeasedJob.coset`,
/// `sample_seed`). The one conversion of every leased job, whoever leased it: a value out of
/// range (any field of the mode, a lower bound above [`MAX_DEPTH`], a seed not of 32 bytes, a
/// coset that is not the position's) is refused with the reason, which the worker hands back
/// with the job, never a panic in a search thread. So is a coset job when the system says
/// less memory is available than a coset's solve takes
/// (`cubefleet_search::coset::check_memory`): the coordinator counts that as a refused
/// result and leases the coset to another worker.
pub fn leased_job(
    id: u64,
    cube: CubieCube,
    mode: &cubefleet_proto::Mode,
    lower_bound: u32,
    spot_seed: u64,
    (coset, seed): (u64, &[u8]),
) -> Result<Job, String> {
    let mode = Question::from_wire(mode).map_err(|e| e.to_string())?;
    if lower_bound > MAX_DEPTH {
        return Err(format!("lower bound {lower_bound} is above {MAX_DEPTH}"));
    }
    let seed = if mode.is_coset() {
        let seed: [u8; SEED_BYTES] = seed.try_into().map_err(|_| {
            format!(
                "sample_seed has {} bytes: a coset job's has {SEED_BYTES}",
                seed.len()
            )
        })?;
        if Coset::of(&cube).number() != coset || Coset::of(&cube).representative() != cube {
            return Err(format!(
                "coset {coset}: the position is not that coset's representative"
            ));
        }
        cubefleet_search::coset::check_memory().map_err(|e| e.to_string())?;
        Some(seed)
    } else {
        None
    };
    Ok(Job {
        id,
        cube,
        mode,
        start_lower_bound: lower_bound,
        spot_seed,
        seed,
    })
}

/// A job this worker cannot run, handed back with `reason` (a release that names it).
fn refused(job_id: u64, reason: String) -> JobProgress {
    JobProgress {
        job_id,
        reason,
        ..JobProgress::default()
    }
}

/// The protocol form of a finished job, its solution as turn numbers (`moves`), which the
/// coordinator verifies and writes out itself instead of parsing a text. Every coordinator
/// this worker works for reads them (revision 2, [`cubefleet_proto::MIN_COORDINATOR_PROTOCOL`]).
///
/// Of a question for several solutions: the first [`Count::listed`](cubefleet_proto::question::Count::listed) of them (`solutions`),
/// their count, and the solutions of the ranks the lease's spot seed names past the list
/// ([`spot_ranks`]), each as turn numbers.
pub fn completion(f: &Finished) -> Completion {
    let all = &f.outcome.solutions;
    let (solutions, count, spot_solutions) = if f.asked.is_many() && !all.is_empty() {
        let listed = f.asked.listed().min(all.len());
        let count = all.len() as u64;
        let spots = spot_ranks(f.spot_seed, listed as u64, count)
            .into_iter()
            .map(|r| all[r as usize].indices())
            .collect();
        let list = all[..listed].iter().map(MoveSeq::indices).collect();
        (list, count, spots)
    } else {
        (Vec::new(), 0, Vec::new())
    };
    let (coset, coset_samples) = f
        .coset
        .clone()
        .map_or((None, Vec::new()), |(c, s)| (Some(c), s));
    Completion {
        moves: f
            .outcome
            .solution
            .as_ref()
            .map(MoveSeq::indices)
            .unwrap_or_default(),
        solutions,
        count,
        spot_solutions,
        coset,
        coset_samples,
        ..completion_without_solution(f)
    }
}

/// [`completion`] without the solution.
fn completion_without_solution(f: &Finished) -> Completion {
    let mut c = Completion {
        job_id: f.id,
        has_solution: f.outcome.solution.is_some(),
        optimal: f.outcome.optimal,
        lower_bound: f.outcome.lower_bound,
        nodes: f.outcome.nodes,
        millis: f.millis,
        ..Completion::default()
    };
    // the enum and its text: coordinators before revision 4 read only the text
    c.set_outcome(f.outcome.status.into());
    c
}

/// The protocol form of held jobs' progress.
pub fn progress_list(jobs: Vec<(u64, Progress)>) -> Vec<JobProgress> {
    jobs.into_iter()
        .map(|(job_id, p)| JobProgress {
            job_id,
            lower_bound: p.lower_bound,
            nodes: p.nodes,
            reason: String::new(),
        })
        .collect()
}

impl GrpcCoordinator {
    /// A call's failure as what it means for this coordinator.
    fn explain(&self, s: &Status) -> CallError {
        CallError::from_status(&self.url, s)
    }
}

impl Coordinator for GrpcCoordinator {
    type Error = CallError;

    async fn lease(&self, max: u32, wait: Duration) -> Result<Vec<Job>, CallError> {
        let r = self
            .client
            .workers
            .clone()
            .lease(LeaseRequest {
                worker_id: self.worker_id.clone(),
                max_jobs: max,
                wait_millis: wait.as_millis().min(u128::from(u32::MAX)) as u32,
                max_seconds: 0.0,
            })
            .await
            .map_err(|s| self.explain(&s))?
            .into_inner();
        let mut jobs = Vec::with_capacity(r.jobs.len());
        let mut cannot = Vec::new();
        for j in r.jobs {
            let job = parse_position(&j.facelets, InputFormat::Facelets)
                .map_err(|e| format!("the position does not parse: {e}"))
                .and_then(|cube| {
                    let mode = j.mode.unwrap_or_default();
                    let coset_of = (j.coset, &j.sample_seed[..]);
                    leased_job(j.job_id, cube, &mode, j.lower_bound, j.spot_seed, coset_of)
                });
            match job {
                Ok(job) => jobs.push(job),
                Err(reason) => {
                    tracing::warn!(job = j.job_id, %reason, "leased a job this worker cannot run; handing it back");
                    cannot.push(refused(j.job_id, reason));
                }
            }
        }
        if !cannot.is_empty() {
            self.client
                .workers
                .clone()
                .release(ReleaseRequest {
                    worker_id: self.worker_id.clone(),
                    jobs: cannot,
                })
                .await
                .map_err(|s| self.explain(&s))?;
        }
        Ok(jobs)
    }

    async fn heartbeat(&self, held: Vec<(u64, Progress)>) -> Result<HeartbeatReply, CallError> {
        let r = self
            .client
            .workers
            .clone()
            .heartbeat(HeartbeatRequest {
                worker_id: self.worker_id.clone(),
                jobs: progress_list(held),
            })
            .await
            .map_err(|s| self.explain(&s))?
            .into_inner();
        Ok(HeartbeatReply { cancel: r.cancel })
    }

    async fn complete(&self, results: &[Finished]) -> Result<(), CallError> {
        let results = results.iter().map(completion).collect();
        let r = self
            .client
            .workers
            .clone()
            .complete(CompleteRequest {
                worker_id: self.worker_id.clone(),
                results,
            })
            .await
            .map_err(|s| self.explain(&s))?
            .into_inner();
        for rej in r.rejected {
            tracing::warn!(job = rej.job_id, reason = %rej.reason, "coordinator refused a result");
        }
        Ok(())
    }

    async fn release(&self, jobs: Vec<(u64, Progress)>) -> Result<(), CallError> {
        self.client
            .workers
            .clone()
            .release(ReleaseRequest {
                worker_id: self.worker_id.clone(),
                jobs: progress_list(jobs),
            })
            .await
            .map_err(|s| self.explain(&s))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::{check_protocol, leased_job};
    use cubefleet_proto::{mode::Kind, DepthLimited, Optimal, TwoPhase};
    use cubefleet_tables::CubieCube;

    /// Every extreme value a leased job's fields can hold: converted or refused with a
    /// reason, never a panic (a panic on a leased job killed every worker that leased it).
    #[test]
    fn a_leased_job_of_any_values_converts_or_is_refused() {
        let kinds = [
            None,
            Some(Kind::TwoPhase(TwoPhase { max_length: 0 })),
            Some(Kind::TwoPhase(TwoPhase {
                max_length: u32::MAX,
            })),
            Some(Kind::Optimal(Optimal { metric: 0 })),
            Some(Kind::Optimal(Optimal { metric: 2 })),
            Some(Kind::Optimal(Optimal { metric: 258 })),
            Some(Kind::Optimal(Optimal { metric: -1 })),
            Some(Kind::DepthLimited(DepthLimited {
                max_depth: 40,
                metric: 1,
            })),
            Some(Kind::DepthLimited(DepthLimited {
                max_depth: 41,
                metric: 1,
            })),
            Some(Kind::DepthLimited(DepthLimited {
                max_depth: u32::MAX,
                metric: i32::MIN,
            })),
        ];
        let timeouts = [
            0.0,
            1e-300,
            0.5,
            365.0 * 24.0 * 3600.0,
            365.0 * 24.0 * 3600.0 + 1.0,
            1e20,
            f64::MAX,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            -0.0,
            -1.0,
        ];
        let mut refused = 0;
        for kind in &kinds {
            for &timeout_seconds in &timeouts {
                for bound in [0, 20, 40, 41, u32::MAX] {
                    let mode = cubefleet_proto::Mode {
                        kind: *kind,
                        timeout_seconds,
                        ..Default::default()
                    };
                    match leased_job(1, CubieCube::default(), &mode, bound, 0, (0, &[])) {
                        Ok(job) => {
                            assert!(job.mode.timeout().is_none_or(|t| t.as_secs_f64() <= 3.2e7))
                        }
                        Err(reason) => {
                            assert!(!reason.is_empty());
                            refused += 1;
                        }
                    }
                }
            }
        }
        assert!(refused > 0);
        let ok = cubefleet_proto::Mode::default();
        assert!(leased_job(1, CubieCube::default(), &ok, 0, 0, (0, &[])).is_ok());
        // a target is read whole (both halves), one of the number of states or more refused
        let to = |to_high, to_low| cubefleet_proto::Mode {
            to_high,
            to_low,
            ..Default::default()
        };
        let job = leased_job(1, CubieCube::default(), &to(2, 3), 0, 0, (0, &[])).expect("a state");
        assert_eq!(job.mode.target(), 2 << 64 | 3);
        let e = leased_job(1, CubieCube::default(), &to(u64::MAX, 0), 0, 0, (0, &[])).map(|_| ());
        assert!(e.is_err_and(|e| e.starts_with("mode.to")));
        // a goal is read with its question, a hostile one refused naming its field
        let goal = |kind| cubefleet_proto::Mode {
            kind: Some(cubefleet_proto::mode::Kind::Optimal(
                cubefleet_proto::Optimal::default(),
            )),
            goal: Some(cubefleet_proto::Goal {
                kind,
                ..Default::default()
            }),
            ..Default::default()
        };
        let job = leased_job(1, CubieCube::default(), &goal(1), 0, 0, (0, &[])).expect("a goal");
        assert_eq!(job.mode.goal().map(|g| g.to_string()), Some("cross".into()));
        let e = leased_job(1, CubieCube::default(), &goal(99), 0, 0, (0, &[])).map(|_| ());
        assert!(e.is_err_and(|e| e.starts_with("mode.goal.kind")));
    }

    #[test]
    fn a_coordinator_older_than_over_target_is_refused_with_what_to_do() {
        let e = check_protocol(0).expect_err("a coordinator that sends no revision is too old");
        assert_eq!(e.code(), tonic::Code::FailedPrecondition);
        assert!(
            e.message().contains("upgrade the coordinator"),
            "{}",
            e.message()
        );
        check_protocol(cubefleet_proto::PROTOCOL).expect("this build's own revision");
        check_protocol(cubefleet_proto::PROTOCOL + 1).expect("a newer coordinator only adds");
    }
}
