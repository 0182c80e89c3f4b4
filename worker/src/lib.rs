//! The searches of cubefleet and the worker runtime.
//!
//! - [`search`]: single-threaded searches over the shared tables: [`search::twophase`]
//!   (near-optimal, to a target length), [`search::optimal`] (proven shortest, and depth-limited
//!   in HTM or QTM).
pub mod search;
