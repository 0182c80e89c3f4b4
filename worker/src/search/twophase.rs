//! Two-phase search (in progress).
