//! What `cubefleet bench` measures the searches of `cubefleet-search` with, kept out of that
//! library (nothing that solves a position needs it):
//!
//! - [`distribution`]: mean, nearest-rank percentiles and maximum of per-position figures
//!   (`bench optimal` and `bench twophase` report through it, so their percentiles mean the
//!   same thing);
//! - [`optimal`]: the optimal solver run over positions one after the other, with the figures of
//!   `cubefleet bench optimal` ([`optimal::BenchStats`]).

pub mod distribution;
pub mod optimal;
