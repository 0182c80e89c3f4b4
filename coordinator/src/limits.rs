//! The limits of the boundary: every field of every message the coordinator takes is checked
//! here, by the rules the CLI applies to its flags, whoever sent it (a client, a worker, an
//! old version, a fuzzer). A value out of range is refused with `INVALID_ARGUMENT` naming the
//! field; nothing a message says is cut or wrapped into another value.
//!
//! | field | accepted |
//! | --- | --- |
//! | `Mode` (all its fields) | what the one mode type reads ([`check_mode`], through `cubefleet_proto::question::Question::from_wire`): |
//! | `Mode.timeout_seconds` | 0 (none) or more than 0 up to [`MAX_SECONDS`] (a year) |
//! | `TwoPhase.max_length` | any (0 means [`cubefleet_proto::DEFAULT_MAX_LENGTH`]) |
//! | `DepthLimited.max_depth` | 0 to [`MAX_DEPTH`] |
//! | `Optimal.metric`, `DepthLimited.metric` | unspecified (HTM), HTM or QTM |
//! | `Mode.moves` | 0 (every turn), or a mask of the 18 turns in which each face gives all its turns, its half turn or none; only with an optimal or depth-limited search |
//! | `Mode.to_high`, `Mode.to_low` | a state index `to_high << 64 \| to_low` below `cubefleet_proto::question::N_STATES` (0: the solved cube), named `mode.to` |
//! | `Mode.goal` | unset (the whole cube), or only with an optimal or depth-limited search to the solved cube (named `mode.goal`): `Goal.kind` a named goal or custom (named `mode.goal.kind`); a named goal's masks 0; a custom goal's `place_corners`, `orient_corners` within 8 bits and `place_edges`, `orient_edges` within 12, not all 0 (each named `mode.goal.<field>`) |
//! | `BatchSpec.batch_id` | at most [`MAX_BATCH_ID`] bytes |
//! | `BatchSpec.name` | at most [`MAX_BATCH_NAME`] bytes |
//! | `BatchSpec.content_hash`, `SubmitEnd.content_hash` | at most [`MAX_CONTENT_HASH`] bytes |
//! | a submitted line, `LookupRequest.position` | longer lines are invalid jobs / refused ([`crate::MAX_LINE_LEN`]) |
//! | `RegisterRequest.name` | 1 to [`MAX_WORKER_NAME`] bytes |
//! | `RegisterRequest.threads` | 1 to [`MAX_THREADS`] |
//! | `RegisterRequest.table_fingerprint` | at most [`MAX_FINGERPRINT`] bytes |
//! | `LeaseRequest.max_seconds` | 0 up to [`MAX_SECONDS`] |
//! | `worker_id` | a session token of at most [`crate::session::MAX_TOKEN_BYTES`] bytes |
//! | `Completion.result_status`, or `.status` when it is unset | `solved`, `timeout`, `over_target`, `none_within`, `cancelled` |
//! | `Completion.solution` / `.moves` | at most [`MAX_SOLUTION_TEXT`] bytes / [`MAX_SOLUTION_MOVES`] moves |
//! | `Completion.millis` | 0 up to [`MAX_SECONDS`] in milliseconds |
//! | `JobProgress.reason` | at most [`MAX_REASON`] bytes |
//! | jobs named in one heartbeat, release or completion | at most the jobs the session may hold ([`crate::core::Core::max_held`]) |
//! | `ResultsRequest.status` | "", a status a result can have, `queued` or `leased` ([`StatusFilter`]) |
//! | `RevokeRequest.worker` | 1 to [`MAX_WORKER_NAME`] bytes; an admin's call only; at most [`MAX_REVOKED`] names revoked (`RESOURCE_EXHAUSTED`) |
//! | new batches of one client credential | at most [`MAX_OPEN_BATCHES`] unfinished at once (`RESOURCE_EXHAUSTED`) |
//! | jobs held by one worker session | [`crate::core::HELD_WORK`] (5 s) of search per registered thread at the mean search time of the batch a lease serves next, at least [`crate::core::MIN_HELD_PER_THREAD`] (2) per thread, which is also all it may hold of a batch with no result yet, and at most [`crate::core::MAX_HELD_PER_THREAD`]: a lease gets fewer or none |
//! | jobs held by one worker credential, all its sessions together | what one worker of [`MAX_THREADS`] threads may hold, and while workers of other credentials ask for work (a lease within a lease duration), its share of the outstanding work (outstanding / credentials asking, rounded up) and one job more: a lease gets fewer or none, so a credential holding less than its share always finds work while any is queued |
//! | worker sessions of one credential | at most [`crate::core::MAX_SESSIONS_PER_CREDENTIAL`] (`RESOURCE_EXHAUSTED`) |
//!
//! Stored texts that a worker's input shapes (rejection reasons) are cut to [`MAX_REASON`]
//! bytes each.
//!
//! The transport's bounds, per credential or per connection (figures below; a test may
//! shorten them through [`crate::conn::Transport`]):
//!
//! | resource | most | what a caller gets past it |
//! | --- | --- | --- |
//! | `WatchBatch` streams open, per credential name | [`MAX_WATCHES`] | `RESOURCE_EXHAUSTED` naming `limits::MAX_WATCHES`; other credentials are not affected |
//! | `StreamResults` streams open, per credential name | [`MAX_RESULT_STREAMS`] | `RESOURCE_EXHAUSTED` naming `limits::MAX_RESULT_STREAMS`; other credentials are not affected |
//! | what a results stream never read holds | one page being sent and the next read (1000 results each), 256 in its channel; a watch: 4 updates | (HTTP/2 flow control stops it) |
//! | gRPC connections open at once | [`MAX_CONNECTIONS`] | a new connection is closed at once (logged, at most every 10 s) |
//! | calls in flight on one gRPC connection | [`MAX_STREAMS_PER_CONNECTION`] | HTTP/2 `SETTINGS_MAX_CONCURRENT_STREAMS`: the client waits |
//! | silence of a new connection (gRPC and HTTP): its first 24 bytes, a TLS handshake | [`SILENT_CONNECTION`] | the connection is closed |
//! | an unanswered gRPC keepalive ping | every [`KEEPALIVE_INTERVAL`], answered within [`KEEPALIVE_TIMEOUT`] | the connection is closed |
//! | a gRPC connection's age (so an idle one too) | [`MAX_CONNECTION_AGE`] | HTTP/2 GOAWAY: calls in flight end, the client reconnects for the next |
//! | HTTP connections (status page, `/metrics`) open at once | [`MAX_HTTP_CONNECTIONS`] | a new connection is closed at once (logged, at most every 10 s) |
//! | an HTTP request's headers, and an idle kept-alive HTTP connection | [`HTTP_HEADER_TIMEOUT`] | the connection is closed (HTTP/1.1 only) |
//! | a call still in flight when the coordinator stops (a stream never read) | [`STOP_GRACE`] after the stop began | its connection is closed, so the store is flushed and the process ends |

use cubefleet_proto::{Completion, JobProgress, JobResult, JobState, Mode, ResultStatus};

use crate::error::Error;

/// The longest time any field takes, in seconds: a year (the mode type's limit, which the
/// CLI's time flags share).
pub use cubefleet_proto::question::MAX_SECONDS;

/// The deepest depth-limited search (`--max-depth`'s limit): the mode type's.
pub use cubefleet_proto::question::MAX_DEPTH;

/// Most search threads a worker registers with (`--threads`' limit).
pub const MAX_THREADS: u32 = 1024;

/// Longest batch id, in bytes.
pub const MAX_BATCH_ID: usize = 200;

/// Longest batch name, in bytes.
pub const MAX_BATCH_NAME: usize = 256;

/// Longest worker name (`--name`), in bytes; also of the name `revoke` takes.
pub const MAX_WORKER_NAME: usize = 128;

/// Longest table fingerprint, in bytes.
pub const MAX_FINGERPRINT: usize = 256;

/// Longest content hash, in bytes.
pub const MAX_CONTENT_HASH: usize = 64;

/// Longest solution text, in bytes (a solution of 256 turns written with spaces is 768).
pub const MAX_SOLUTION_TEXT: usize = 1024;

/// Most turns of a solution sent as moves.
pub const MAX_SOLUTION_MOVES: usize = 256;

/// Longest reason (a worker's for handing a job back; each stored rejection reason), in bytes.
pub const MAX_REASON: usize = 256;

/// Most unfinished batches one client credential may have at once (more submissions of new
/// batches are refused with `RESOURCE_EXHAUSTED` until some finish or are cancelled).
pub const MAX_OPEN_BATCHES: usize = 1000;

/// Most names a coordinator keeps revoked (more revocations are refused with
/// `RESOURCE_EXHAUSTED`): what `revoke` can make the store and memory hold.
pub const MAX_REVOKED: usize = 10_000;

/// What a results request asks for (`ResultsRequest.status`, read by [`StatusFilter::parse`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StatusFilter {
    /// Every result ("").
    All,
    /// The results of one status.
    Status(ResultStatus),
    /// The unfinished jobs in a state (`queued` or `leased`, as results show them).
    Unfinished(JobState),
}

impl StatusFilter {
    /// The unfinished states a filter may name, with their names.
    const UNFINISHED: [(JobState, &'static str); 2] =
        [(JobState::Queued, "queued"), (JobState::Leased, "leased")];

    /// Reads a filter: "", a status's name, `queued` or `leased`; anything else is refused.
    pub fn parse(text: &str) -> Result<StatusFilter, Error> {
        if text.is_empty() {
            return Ok(StatusFilter::All);
        }
        if let Some(s) = ResultStatus::from_name(text) {
            return Ok(StatusFilter::Status(s));
        }
        if let Some((state, _)) = Self::UNFINISHED.iter().find(|(_, n)| *n == text) {
            return Ok(StatusFilter::Unfinished(*state));
        }
        let names: Vec<&str> = ResultStatus::FINISHED
            .iter()
            .map(|s| s.name())
            .chain(Self::UNFINISHED.iter().map(|(_, n)| *n))
            .collect();
        Err(Error::InvalidArgument(format!(
            "status {:?}: give one of {} (or none)",
            cut(text, 32),
            names.join(", ")
        )))
    }

    /// Whether the stored result `r` may pass (a job in an unfinished state passes only when
    /// its state, which a lease changes in memory, is the one asked for: see
    /// [`StatusFilter::admits`]).
    pub fn admits_stored(self, r: &JobResult) -> bool {
        match self {
            StatusFilter::All => true,
            StatusFilter::Status(s) => r.outcome() == s,
            StatusFilter::Unfinished(_) => r.outcome() == ResultStatus::Unspecified,
        }
    }

    /// Whether the result `r`, as the coordinator shows it (its leases overlaid), passes.
    pub fn admits(self, r: &JobResult) -> bool {
        match self {
            StatusFilter::Unfinished(state) => self.admits_stored(r) && r.state == state as i32,
            _ => self.admits_stored(r),
        }
    }
}

/// Refuses `value` of `field` when longer than `max` bytes.
pub fn check_len(field: &str, value: &[u8], max: usize) -> Result<(), Error> {
    if value.len() > max {
        return Err(Error::InvalidArgument(format!(
            "{field} is {} bytes long, more than the {max} allowed",
            value.len()
        )));
    }
    Ok(())
}

/// Refuses an empty `value` of `field`, or one longer than `max` bytes.
pub fn check_name(field: &str, value: &str, max: usize) -> Result<(), Error> {
    if value.is_empty() {
        return Err(Error::InvalidArgument(format!("{field} is empty")));
    }
    check_len(field, value.as_bytes(), max)
}

/// Refuses a time budget (`field`, seconds) that is not 0 or a number in (0, [`MAX_SECONDS`]].
pub fn check_seconds(field: &str, seconds: f64) -> Result<(), Error> {
    if seconds.is_finite() && (0.0..=MAX_SECONDS).contains(&seconds) {
        Ok(())
    } else {
        Err(Error::InvalidArgument(format!(
            "{field} is {seconds}: give 0 (none) or a number of seconds up to {MAX_SECONDS} \
             (a year)"
        )))
    }
}

/// Checks every field of a mode (see the module table): the one reading of the mode type.
pub fn check_mode(m: &Mode) -> Result<(), Error> {
    cubefleet_proto::question::Question::from_wire(m)?;
    Ok(())
}

/// Checks what a worker reports of one job (status, solution size, time).
pub fn check_completion(c: &Completion) -> Result<(), Error> {
    if !c
        .reported()
        .is_some_and(|s| ResultStatus::REPORTED.contains(&s))
    {
        let names: Vec<&str> = ResultStatus::REPORTED.iter().map(|s| s.name()).collect();
        let given = if c.result_status == 0 {
            format!("status {:?}", cut(&c.status, 32))
        } else {
            format!("result_status {}", c.result_status)
        };
        return Err(Error::InvalidArgument(format!(
            "results[job {}].{given}: give one of {}",
            c.job_id,
            names.join(", ")
        )));
    }
    check_len("results.solution", c.solution.as_bytes(), MAX_SOLUTION_TEXT)?;
    check_len("results.moves", &c.moves, MAX_SOLUTION_MOVES)?;
    if !(c.millis.is_finite() && (0.0..=MAX_SECONDS * 1000.0).contains(&c.millis)) {
        return Err(Error::InvalidArgument(format!(
            "results[job {}].millis is {}: give a time from 0 to a year",
            c.job_id, c.millis
        )));
    }
    Ok(())
}

/// Checks what a worker says of the jobs it holds: their number (at most `max` entries, the
/// jobs the session may hold) and each reason's length.
pub fn check_progress(field: &str, jobs: &[JobProgress], max: usize) -> Result<(), Error> {
    check_count(field, jobs.len(), max)?;
    for p in jobs {
        check_len("jobs.reason", p.reason.as_bytes(), MAX_REASON)?;
    }
    Ok(())
}

/// Refuses `count` entries of the repeated `field` when above `max`.
pub fn check_count(field: &str, count: usize, max: usize) -> Result<(), Error> {
    if count > max {
        return Err(Error::InvalidArgument(format!(
            "{field} names {count} jobs, more than the {max} this session may hold"
        )));
    }
    Ok(())
}

/// `text` cut to at most `max` bytes (at a character boundary), with "..." when cut: how a
/// text a peer chose is kept or echoed.
pub fn cut(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut end = max.saturating_sub(3);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &text[..end])
}

// The transport's bounds (the second table of the module doc).

/// Most `WatchBatch` streams one credential holds open at once (`submit --wait`, `status
/// --watch`: one each); with no credentials configured every caller is one credential.
pub const MAX_WATCHES: usize = 64;

/// Most `StreamResults` streams one credential holds open at once (`results`: one each). A
/// stream never read holds up to about 2,300 results (see the table), 8 MB at most with
/// lines of 4 KB.
pub const MAX_RESULT_STREAMS: usize = 8;

/// Most gRPC connections open at once (a worker or a client command holds one).
pub const MAX_CONNECTIONS: usize = 1024;

/// Most calls in flight on one gRPC connection (HTTP/2's `SETTINGS_MAX_CONCURRENT_STREAMS`;
/// a client past it waits for one to end).
pub const MAX_STREAMS_PER_CONNECTION: u32 = 64;

/// How long a new connection (gRPC or HTTP) may take to send its first 24 bytes, and a TLS
/// handshake to end, before it is closed.
pub const SILENT_CONNECTION: std::time::Duration = std::time::Duration::from_secs(10);

/// How often gRPC pings each connection (HTTP/2 PING).
pub const KEEPALIVE_INTERVAL: std::time::Duration = std::time::Duration::from_secs(30);

/// How long gRPC waits for a ping's answer before it closes the connection.
pub const KEEPALIVE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(20);

/// After how long a gRPC connection is asked to go away (GOAWAY; calls in flight end, the
/// client's next call opens a new one): the longest an idle connection is held.
pub const MAX_CONNECTION_AGE: std::time::Duration = std::time::Duration::from_secs(30 * 60);

/// Most HTTP connections (status page, `/metrics`) open at once.
pub const MAX_HTTP_CONNECTIONS: usize = 64;

/// How long the HTTP port waits for a request's headers, also for the next request of a
/// kept-alive connection, before it closes the connection.
pub const HTTP_HEADER_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// How long a stopping coordinator lets the calls in flight end before it closes their
/// connections (a caller that never reads its stream cannot hold the stop up).
pub const STOP_GRACE: std::time::Duration = std::time::Duration::from_secs(10);

#[cfg(test)]
mod tests {
    use super::*;
    use cubefleet_proto::{mode::Kind, DepthLimited, Optimal};

    #[test]
    fn modes_out_of_range_are_refused_naming_the_field() {
        let with = |kind, timeout_seconds| Mode {
            kind: Some(kind),
            timeout_seconds,
            ..Default::default()
        };
        let optimal = |metric| Kind::Optimal(Optimal { metric });
        let depth = |max_depth, metric| Kind::DepthLimited(DepthLimited { max_depth, metric });
        for (m, field) in [
            (with(optimal(1), 1e20), "timeout_seconds"),
            (with(optimal(1), f64::NAN), "timeout_seconds"),
            (with(optimal(1), f64::INFINITY), "timeout_seconds"),
            (with(optimal(1), -1.0), "timeout_seconds"),
            (with(optimal(258), 0.0), "optimal.metric"),
            (with(optimal(-1), 0.0), "optimal.metric"),
            (with(depth(41, 1), 0.0), "max_depth"),
            (with(depth(5, 3), 0.0), "depth_limited.metric"),
            (with(depth(u32::MAX, 1), 0.0), "max_depth"),
            (
                Mode {
                    moves: 1 << 31,
                    ..with(optimal(1), 0.0)
                },
                "mode.moves",
            ),
            (
                Mode {
                    moves: 0b001,
                    ..with(optimal(1), 0.0)
                },
                "mode.moves",
            ),
            (
                Mode {
                    moves: 0b111,
                    ..Mode::default()
                },
                "mode.moves",
            ),
            (
                Mode {
                    to_high: u64::MAX,
                    ..with(depth(5, 1), 0.0)
                },
                "mode.to",
            ),
            (
                Mode {
                    goal: Some(cubefleet_proto::Goal {
                        kind: 77,
                        ..Default::default()
                    }),
                    ..with(depth(5, 1), 0.0)
                },
                "mode.goal.kind",
            ),
            (
                Mode {
                    goal: Some(cubefleet_proto::Goal {
                        kind: cubefleet_proto::GoalKind::Custom as i32,
                        orient_edges: 1 << 12,
                        ..Default::default()
                    }),
                    ..with(depth(5, 1), 0.0)
                },
                "mode.goal.orient_edges",
            ),
            (
                Mode {
                    goal: Some(cubefleet_proto::Goal {
                        kind: cubefleet_proto::GoalKind::Cross as i32,
                        ..Default::default()
                    }),
                    ..Mode::default()
                },
                "mode.goal",
            ),
            (
                Mode {
                    goal: Some(cubefleet_proto::Goal {
                        kind: cubefleet_proto::GoalKind::Eo as i32,
                        ..Default::default()
                    }),
                    to_low: 1,
                    ..with(optimal(1), 0.0)
                },
                "mode.goal",
            ),
        ] {
            let e = check_mode(&m).expect_err(field);
            assert!(e.to_string().contains(field), "{e}");
        }
        for m in [
            with(optimal(0), 0.0),
            with(optimal(2), MAX_SECONDS),
            with(depth(40, 2), 0.5),
            Mode::default(),
            Mode {
                to_low: u64::MAX,
                ..Mode::default()
            },
            Mode {
                goal: Some(cubefleet_proto::Goal {
                    kind: cubefleet_proto::GoalKind::Custom as i32,
                    place_corners: 0xff,
                    orient_edges: 0xfff,
                    any_face: true,
                    ..Default::default()
                }),
                ..with(depth(40, 2), 0.5)
            },
        ] {
            check_mode(&m).expect("in range");
        }
    }

    #[test]
    fn texts_are_cut_at_character_boundaries() {
        assert_eq!(cut("short", 10), "short");
        assert_eq!(cut("abcdefghij", 8), "abcde...");
        let cut_wide = cut(&"é".repeat(100), 10);
        assert!(
            cut_wide.len() <= 10 && cut_wide.ends_with("..."),
            "{cut_wide}"
        );
    }

    /// A filter names a status, an unfinished state, or nothing; a leased job passes
    /// `leased` only once its lease is overlaid (the store holds it as queued).
    #[test]
    fn a_results_filter_reads_statuses_and_unfinished_states() {
        assert_eq!(StatusFilter::parse("").ok(), Some(StatusFilter::All));
        assert_eq!(
            StatusFilter::parse("failed").ok(),
            Some(StatusFilter::Status(ResultStatus::Failed))
        );
        let leased = StatusFilter::parse("leased").expect("a state");
        let e = StatusFilter::parse("done")
            .expect_err("no status")
            .to_string();
        assert!(e.contains("give one of solved, timeout, over_target, none_within, cancelled, invalid, skipped, failed, unreachable, queued, leased"), "{e}");
        let mut r = JobResult {
            state: JobState::Queued as i32,
            ..JobResult::default()
        };
        assert!(leased.admits_stored(&r) && !leased.admits(&r));
        assert!(StatusFilter::parse("queued").expect("a state").admits(&r));
        r.state = JobState::Leased as i32;
        assert!(leased.admits(&r));
        r.set_outcome(ResultStatus::Solved);
        r.state = JobState::Done as i32;
        assert!(!leased.admits_stored(&r));
        assert!(StatusFilter::Status(ResultStatus::Solved).admits(&r));
    }

    /// A worker may report the five statuses of a search, by enum or (older workers) text.
    #[test]
    fn a_completion_names_a_status_a_worker_may_report() {
        let mut c = Completion {
            status: "none_within".into(),
            ..Completion::default()
        };
        assert!(check_completion(&c).is_ok());
        c.set_outcome(ResultStatus::Failed);
        let e = check_completion(&c)
            .expect_err("not a worker's")
            .to_string();
        assert!(
            e.contains("result_status 8: give one of solved, timeout"),
            "{e}"
        );
        c.result_status = 0;
        c.status = "great".into();
        let e = check_completion(&c).expect_err("no status").to_string();
        assert!(e.contains("status \"great\""), "{e}");
    }
}
