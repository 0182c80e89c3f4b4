//! What `cubefleet bench` measures with, kept out of the libraries it measures (nothing that
//! solves a position or serves a job needs it):
//!
//! - [`distribution`]: mean, nearest-rank percentiles and maximum of per-position figures
//!   (`bench optimal` and `bench twophase` report through it, so their percentiles mean the
//!   same thing);
//! - [`optimal`]: the optimal solver run over positions one after the other, with the figures of
//!   `cubefleet bench optimal` ([`optimal::BenchStats`]);
//! - [`walk`]: the state index's walk against decoding each index (`cubefleet bench walk`);
//! - [`coordinator`]: the job system alone, an in-process coordinator over loopback gRPC and
//!   stand-in workers (`cubefleet bench coordinator`).

pub mod coordinator;
pub mod distribution;
pub mod optimal;
pub mod walk;
