//! The values both sides of the protocol agree on, named once for every crate that speaks it
//! (coordinator, worker, CLI, Python package): the default two-phase target, and the largest
//! gRPC message in each direction.

/// The two-phase target when none is given (`TwoPhase.max_length` 0 means it; the CLI's
/// `--max-length` and the Python functions' `max_length` default to it): God's number in the
/// half-turn metric, so every position has a solution within it and a default search never
/// ends `over_target` for want of a shorter solution.
pub const DEFAULT_MAX_LENGTH: u32 = 20;

/// Largest gRPC message a coordinator accepts, in bytes (client and worker to coordinator:
/// submission chunks, completions, heartbeats). The coordinator decodes every message of an
/// untrusted peer into memory, so this bounds what one call can make it allocate; it is many
/// times what a well-behaved peer sends (the CLI's submission chunks are 1 MiB, a group of
/// completions of the most jobs a worker holds is a few hundred kB).
pub const MAX_REQUEST_BYTES: usize = 16 << 20;

/// Largest gRPC message a coordinator sends and the clients accept, in bytes (coordinator to
/// client and worker: leases, result pages, statuses). The coordinator builds its answers in
/// bounded pages, so this is no defence against a peer but room: larger than the request
/// limit so that no page an answer is cut into comes near it.
pub const MAX_RESPONSE_BYTES: usize = 64 << 20;
