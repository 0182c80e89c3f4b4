//! The worker runtime of cubefleet: it leases jobs, searches them through `cubefleet-search`
//! (which holds every search and knows nothing of jobs or the network) and reports.
//!
//! - [`pool`]: search threads that take jobs and hand back results, cancellable, with progress;
//!   each thread reuses one `cubefleet_search::Solver`;
//! - [`runtime`]: the worker loop (lease, heartbeat, report, drain) over any [`runtime::Coordinator`];
//! - [`remote`]: that coordinator over gRPC;
//! - `local` (feature `local`): that coordinator in the coordinator's own process;
//! - [`metrics`]: the worker's own counters, taken by a wrapper around any coordinator.
#[cfg(feature = "local")]
pub mod local;
pub mod metrics;
pub mod pool;
pub mod remote;
pub mod runtime;
