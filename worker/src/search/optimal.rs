//! Optimal and depth-limited search (in progress).
