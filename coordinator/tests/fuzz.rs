//! A property test of the boundary: rounds of arbitrary messages (random fields, huge repeated
//! fields, unknown ids, extreme numbers) sent over raw gRPC to every RPC of a live coordinator,
//! as a client and as a worker that hold credentials. After each round the coordinator must be
//! up (health), its memory bounded, the honest worker still served, and no stored answer
//! changed. `CUBEFLEET_FUZZ_SEED` replays a run; `CUBEFLEET_FUZZ_ROUNDS` sets its length.

#![allow(clippy::unwrap_used)]

use std::time::Duration;

mod common;

use common::{optimal, resident, two_phase, undo, Server};
use cubefleet_coordinator::credentials::from_flags;
use cubefleet_coordinator::Config;
use cubefleet_proto::client::Client;
use cubefleet_proto::{
    mode, submit_request, BatchRef, BatchSpec, CompleteRequest, Completion, DepthLimited,
    HeartbeatRequest, JobProgress, JobRef, JobResult, LeaseRequest, LineChunk, ListBatchesRequest,
    LookupRequest, Mode, Optimal, RegisterRequest, ReleaseRequest, ResultsRequest, RevokeRequest,
    SubmitEnd, SubmitRequest, TwoPhase,
};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Arbitrary values, extremes more often than chance would give them.
struct Gen(StdRng);

impl Gen {
    fn u64(&mut self) -> u64 {
        match self.0.random_range(0..6) {
            0 => 0,
            1 => u64::MAX,
            2 => self.0.random_range(0..100),
            3 => (self.0.random_range(1..4u64) << 40) | self.0.random_range(0..20),
            _ => self.0.random(),
        }
    }
    fn u32(&mut self) -> u32 {
        match self.0.random_range(0..5) {
            0 => 0,
            1 => u32::MAX,
            2 => self.0.random_range(0..50),
            _ => self.0.random(),
        }
    }
    fn i32(&mut self) -> i32 {
        match self.0.random_range(0..4) {
            0 => i32::MIN,
            1 => i32::MAX,
            2 => self.0.random_range(-3..300),
            _ => self.0.random(),
        }
    }
    fn f64(&mut self) -> f64 {
        let pick = [
            0.0,
            -1.0,
            f64::NAN,
            f64::INFINITY,
            -f64::INFINITY,
            1e20,
            1e-300,
            5.0,
        ];
        if self.0.random_bool(0.7) {
            pick[self.0.random_range(0..pick.len())]
        } else {
            self.0.random::<f64>() * 1e9
        }
    }
    fn text(&mut self) -> String {
        let len = match self.0.random_range(0..8) {
            0 => 0,
            1 => self.0.random_range(5_000..300_000),
            _ => self.0.random_range(1..40),
        };
        let alphabet = "URFDLB2' \u{0}é\"\\\n.xyz0123456789";
        let chars: Vec<char> = alphabet.chars().collect();
        (0..len)
            .map(|_| chars[self.0.random_range(0..chars.len())])
            .collect()
    }
    /// A text of at most 40 characters (for repeated fields, whose count is what is huge).
    fn short(&mut self) -> String {
        let len = self.0.random_range(0..40);
        let chars: Vec<char> = "URFDLB2' ,x0".chars().collect();
        (0..len)
            .map(|_| chars[self.0.random_range(0..chars.len())])
            .collect()
    }
    fn bytes(&mut self) -> Vec<u8> {
        let len = self.0.random_range(0..100);
        (0..len).map(|_| self.0.random()).collect()
    }
    fn count(&mut self) -> usize {
        match self.0.random_range(0..6) {
            0 => self.0.random_range(10_000..60_000),
            _ => self.0.random_range(0..5),
        }
    }
    fn mode(&mut self) -> Mode {
        let kind = match self.0.random_range(0..5) {
            0 => None,
            1 => Some(mode::Kind::TwoPhase(TwoPhase {
                max_length: self.u32(),
            })),
            2 => Some(mode::Kind::Optimal(Optimal { metric: self.i32() })),
            3 => Some(mode::Kind::DepthLimited(DepthLimited {
                max_depth: self.u32(),
                metric: self.i32(),
            })),
            _ => Some(mode::Kind::Coset(cubefleet_proto::CosetSolve {
                max_depth: self.0.random_range(0..3),
                exact_depth: self.u32(),
            })),
        };
        Mode {
            kind,
            timeout_seconds: self.f64(),
            moves: self.u32(),
            to_high: self.u64(),
            to_low: self.u64(),
            goal: self.0.random_bool(0.5).then(|| cubefleet_proto::Goal {
                kind: self.i32(),
                place_corners: self.u32(),
                place_edges: self.u32(),
                orient_corners: self.u32(),
                orient_edges: self.u32(),
                any_face: self.0.random_bool(0.5),
            }),
            solutions: self.u32(),
            all_solutions: self.i32(),
        }
    }
    fn progress(&mut self) -> Vec<JobProgress> {
        let n = self.count();
        (0..n)
            .map(|_| JobProgress {
                job_id: self.u64(),
                lower_bound: self.u32(),
                nodes: self.u64(),
                reason: if self.0.random_bool(0.2) {
                    self.short()
                } else {
                    String::new()
                },
            })
            .collect()
    }
    fn completion(&mut self) -> Completion {
        let statuses = [
            "solved",
            "timeout",
            "over_target",
            "none_within",
            "cancelled",
            "x",
        ];
        Completion {
            job_id: self.u64(),
            status: if self.0.random_bool(0.8) {
                statuses[self.0.random_range(0..statuses.len())].into()
            } else {
                self.short()
            },
            solution: if self.0.random_bool(0.01) {
                self.text()
            } else {
                self.short()
            },
            optimal: self.0.random(),
            lower_bound: self.u32(),
            nodes: self.u64(),
            millis: self.f64(),
            has_solution: self.0.random(),
            moves: self.bytes(),
            // unset (the text is read), a status, or no status at all
            result_status: if self.0.random_bool(0.5) {
                0
            } else {
                self.0.random_range(-1..10)
            },
            solutions: (0..self.0.random_range(0..4))
                .map(|_| self.bytes())
                .collect(),
            count: self.u64(),
            spot_solutions: (0..self.0.random_range(0..4))
                .map(|_| self.bytes())
                .collect(),
            coset: self
                .0
                .random_bool(0.1)
                .then(|| cubefleet_proto::CosetCounts {
                    number: self.u64(),
                    // nested lists short: a list of `count()` completions stays in bounds
                    counts: (0..self.0.random_range(0..25))
                        .map(|_| self.u64())
                        .collect(),
                    exact_through: self.u32(),
                    unsolved: self.u64(),
                    unsolved_local: (0..self.0.random_range(0..5)).map(|_| self.u64()).collect(),
                    one_by_one: self.u64(),
                }),
            coset_samples: (0..self.0.random_range(0..20))
                .map(|_| cubefleet_proto::CosetSample {
                    unsolved: self.0.random(),
                    depth: self.u32(),
                    moves: self.bytes(),
                })
                .collect(),
        }
    }
}

/// Every stored answer of the reference batches, in line order.
async fn answers(c: &mut Client) -> Vec<JobResult> {
    let mut all = Vec::new();
    for batch in ["ref-tp", "ref-opt"] {
        let page = c
            .batches
            .list_results(ResultsRequest {
                batch_id: batch.into(),
                ..ResultsRequest::default()
            })
            .await
            .unwrap()
            .into_inner();
        all.extend(page.results);
    }
    all
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arbitrary_messages_to_every_rpc_change_nothing_stored() {
    let seed = std::env::var("CUBEFLEET_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(rand::random::<u64>);
    let rounds: usize = std::env::var("CUBEFLEET_FUZZ_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(30);
    eprintln!("fuzz seed {seed} (CUBEFLEET_FUZZ_SEED={seed} replays it), {rounds} rounds");
    let mut g = Gen(StdRng::seed_from_u64(seed));
    let dir = tempfile::TempDir::new().unwrap();
    let mut config = Config::new(dir.path());
    config.lease = Duration::from_secs(2);
    config.credentials = from_flags(
        &["client:client-secret".into()],
        &["farm:farm-secret".into(), "fuzzer:fuzzer-secret".into()],
        None,
    )
    .unwrap();
    let server = Server::start(config).await;
    let mut client = Client::connect(&server.url, Some("client-secret"))
        .await
        .unwrap();
    let mut farm = Client::connect(&server.url, Some("farm-secret"))
        .await
        .unwrap();
    let mut fuzzer = Client::connect(&server.url, Some("fuzzer-secret"))
        .await
        .unwrap();

    // the reference answers, from an honest worker
    let honest = farm
        .workers
        .register(RegisterRequest {
            name: "honest".into(),
            threads: 1,
            table_fingerprint: String::new(),
            protocol: cubefleet_proto::PROTOCOL,
        })
        .await
        .unwrap()
        .into_inner()
        .worker_id;
    let scrambles = ["R U", "F D2 L", "B' U R2 D"];
    for (id, m, optimal) in [
        ("ref-tp", two_phase(20), false),
        ("ref-opt", optimal(), true),
    ] {
        let spec = SubmitRequest {
            part: Some(submit_request::Part::Spec(BatchSpec {
                batch_id: id.into(),
                mode: Some(m),
                ..BatchSpec::default()
            })),
        };
        let chunk = SubmitRequest {
            part: Some(submit_request::Part::Chunk(LineChunk {
                lines: scrambles.iter().map(|s| s.to_string()).collect(),
            })),
        };
        client
            .batches
            .submit(tokio_stream::iter([spec, chunk]))
            .await
            .unwrap();
        let jobs = farm
            .workers
            .lease(LeaseRequest {
                worker_id: honest.clone(),
                max_jobs: 10,
                ..LeaseRequest::default()
            })
            .await
            .unwrap()
            .into_inner()
            .jobs;
        let results = jobs
            .iter()
            .map(|j| {
                let line = (j.job_id & ((1 << 40) - 1)) as usize;
                let solution = undo(scrambles[line]);
                let length = solution.split_whitespace().count() as u32;
                Completion {
                    job_id: j.job_id,
                    status: "solved".into(),
                    solution,
                    optimal,
                    lower_bound: if optimal { length } else { 0 },
                    has_solution: true,
                    millis: 1.0,
                    ..Completion::default()
                }
            })
            .collect();
        farm.workers
            .complete(CompleteRequest {
                worker_id: honest.clone(),
                results,
            })
            .await
            .unwrap();
    }
    let reference = answers(&mut client).await;
    assert_eq!(reference.len(), 6);
    assert!(reference.iter().all(|r| r.status == "solved"));
    let memory_before = resident();

    let mut sessions = vec![String::new()];
    for round in 0..rounds {
        for call in 0..14 {
            let session = sessions[g.0.random_range(0..sessions.len())].clone();
            let worker_id = if g.0.random_bool(0.7) {
                session
            } else {
                g.text()
            };
            // every outcome is allowed but a broken coordinator: refusals are expected
            let _ = match call {
                0 => {
                    let mut parts = vec![SubmitRequest {
                        part: Some(submit_request::Part::Spec(BatchSpec {
                            batch_id: if g.0.random_bool(0.3) {
                                "ref-tp".into()
                            } else {
                                g.text()
                            },
                            name: g.text(),
                            mode: Some(g.mode()),
                            priority: g.i32(),
                            content_hash: g.bytes(),
                            range_start: if g.0.random_bool(0.2) {
                                g.text()
                            } else {
                                String::new()
                            },
                            range_end: if g.0.random_bool(0.2) {
                                g.u64().to_string()
                            } else {
                                String::new()
                            },
                            range_step: g.u64(),
                            sample_count: if g.0.random_bool(0.2) { g.u64() } else { 0 },
                            sample_seed: g.u64(),
                            keep: g.i32(),
                            confirm: g.u32() % 4,
                            coset_start: if g.0.random_bool(0.1) {
                                g.u64() % 3000
                            } else {
                                0
                            },
                            coset_end: if g.0.random_bool(0.1) {
                                g.u64() % 3000
                            } else {
                                0
                            },
                            canonical_only: g.0.random_bool(0.1),
                        })),
                    }];
                    for _ in 0..g.0.random_range(0..3) {
                        let mut lines: Vec<String> =
                            (0..g.count().min(3000)).map(|_| g.short()).collect();
                        lines.push(g.text());
                        parts.push(SubmitRequest {
                            part: Some(submit_request::Part::Chunk(LineChunk { lines })),
                        });
                    }
                    if g.0.random_bool(0.3) {
                        parts.push(SubmitRequest {
                            part: Some(submit_request::Part::End(SubmitEnd {
                                content_hash: g.bytes(),
                            })),
                        });
                    }
                    client
                        .batches
                        .submit(tokio_stream::iter(parts))
                        .await
                        .map(drop)
                }
                1 => client
                    .batches
                    .get_batch(BatchRef { batch_id: g.text() })
                    .await
                    .map(drop),
                2 => client
                    .batches
                    .list_batches(ListBatchesRequest {})
                    .await
                    .map(drop),
                3 => client
                    .batches
                    .cancel_batch(BatchRef { batch_id: g.text() })
                    .await
                    .map(drop),
                4 => client
                    .batches
                    .list_results(ResultsRequest {
                        batch_id: g.text(),
                        status: g.text(),
                        from_index: g.u64(),
                        limit: g.u64(),
                    })
                    .await
                    .map(drop),
                5 => client
                    .batches
                    .get_job(JobRef { job_id: g.u64() })
                    .await
                    .map(drop),
                6 => client
                    .batches
                    .lookup(LookupRequest { position: g.text() })
                    .await
                    .map(drop),
                7 => client
                    .batches
                    .revoke(RevokeRequest { worker: g.text() })
                    .await
                    .map(drop),
                8 => {
                    let r = fuzzer
                        .workers
                        .register(RegisterRequest {
                            name: g.text(),
                            threads: g.u32(),
                            table_fingerprint: g.text(),
                            protocol: g.u32(),
                        })
                        .await;
                    if let Ok(r) = &r {
                        sessions.push(r.get_ref().worker_id.clone());
                    }
                    r.map(drop)
                }
                9 => fuzzer
                    .workers
                    .lease(LeaseRequest {
                        worker_id,
                        max_jobs: g.u32(),
                        wait_millis: g.u32() % 200,
                        max_seconds: g.f64(),
                    })
                    .await
                    .map(drop),
                10 => fuzzer
                    .workers
                    .heartbeat(HeartbeatRequest {
                        worker_id,
                        jobs: g.progress(),
                    })
                    .await
                    .map(drop),
                11 => {
                    let n = g.count().min(2000);
                    let results = (0..n).map(|_| g.completion()).collect();
                    fuzzer
                        .workers
                        .complete(CompleteRequest { worker_id, results })
                        .await
                        .map(drop)
                }
                12 => fuzzer
                    .workers
                    .release(ReleaseRequest {
                        worker_id,
                        jobs: g.progress(),
                    })
                    .await
                    .map(drop),
                _ => client
                    .batches
                    .stream_results(ResultsRequest {
                        batch_id: if g.0.random_bool(0.5) {
                            "ref-opt".into()
                        } else {
                            g.text()
                        },
                        status: g.text(),
                        from_index: g.u64(),
                        limit: g.u64() % 100,
                    })
                    .await
                    .map(drop),
            };
        }
        // up, bounded, serving the honest worker, and every stored answer as it was
        let channel = tonic::transport::Endpoint::from_shared(server.url.clone())
            .unwrap()
            .connect()
            .await
            .unwrap();
        tonic_health::pb::health_client::HealthClient::new(channel)
            .check(tonic_health::pb::HealthCheckRequest::default())
            .await
            .unwrap_or_else(|e| panic!("seed {seed} round {round}: health {e}"));
        farm.workers
            .heartbeat(HeartbeatRequest {
                worker_id: honest.clone(),
                jobs: Vec::new(),
            })
            .await
            .unwrap_or_else(|e| panic!("seed {seed} round {round}: honest worker refused {e}"));
        assert_eq!(
            answers(&mut client).await,
            reference,
            "seed {seed} round {round}: a stored answer changed"
        );
        let grown = resident().saturating_sub(memory_before);
        assert!(
            grown < 512 << 20,
            "seed {seed} round {round}: memory grew by {grown} bytes"
        );
    }
    server.stop().await;
}
