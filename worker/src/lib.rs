//! The searches of cubefleet and the worker runtime.
//!
//! - [`search`]: single-threaded searches over the shared tables: [`search::twophase`]
//!   (near-optimal, to a target length), [`search::optimal`] (proven shortest, and depth-limited
//!   in HTM or QTM), and [`search::Solver`], which runs whichever a job's [`search::Mode`] asks for;
//! - [`pool`]: search threads that take jobs and hand back results, cancellable, with progress;
//! - [`runtime`]: the worker loop (lease, heartbeat, report, drain) over any [`runtime::Coordinator`];
//! - [`remote`]: that coordinator over gRPC;
//! - [`metrics`]: the worker's own counters, taken by a wrapper around any coordinator;
//! - [`distribution`]: mean, nearest-rank percentiles and maximum of benchmark figures.
pub mod distribution;
pub mod metrics;
pub mod pool;
pub mod remote;
pub mod runtime;
pub mod search;
