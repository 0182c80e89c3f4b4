//! The order an iteration's subtrees are searched in: one subtree per prefix of
//! [`PREFIX_LEN`] moves, the densest at the previous depth first (vcube's ordering), and once an
//! iteration takes [`REFINE_AFTER`] nodes, one per prefix of [`FINE_PREFIX_LEN`] moves.
//!
//! An iteration that finds a solution stops at the first one, so where in its tree it looks
//! first decides its cost: up to the whole tree (about ten times the iteration before) when the
//! solutions sit at its end. The subtrees that held the most nodes one depth shallower are the
//! ones with the most positions close to solved, so they are the likeliest to hold a solution
//! at the next depth. Each prefix's node count is weighted for the moves that may follow its
//! last one (after D, L or B, their opposite faces U, R or F may not come next, so such a
//! subtree is smaller by nature).
//!
//! Finer prefixes sort the tree finer (18 times as many subtrees), but walking 43,239 of them
//! costs tens of milliseconds an iteration and their counts say little while the subtrees hold
//! a few nodes each, so the search starts coarse and refines once iterations are large. The
//! fine prefixes first inherit the order of the coarse ones they start with, so the iteration
//! after the switch visits the subtrees in the order the coarse prefixes would have.

use cubefleet_proto::question::MoveSet;
use cubefleet_tables::Move;

use super::Metric;
use crate::metric::TurnCost;
use crate::{skip_after, NO_MOVE};

/// Moves in a prefix at first: 3,240 prefixes of three canonical moves. Searching them one by
/// one costs about a millisecond's lookups per iteration.
pub(super) const PREFIX_LEN: usize = 3;

/// Moves in a prefix once an iteration has taken [`REFINE_AFTER`] nodes: 43,239 prefixes of four
/// canonical moves (vcube's length).
pub(super) const FINE_PREFIX_LEN: usize = 4;

/// The nodes an iteration takes for the next ones to use [`FINE_PREFIX_LEN`] moves. The walk
/// down the 43,239 prefixes costs tens of thousands of nodes an iteration; measured on 12 random
/// states (docs/benchmarks-history.md), refining from 1,000,000 nodes on saved a third of what
/// fine prefixes from the start save.
pub(super) const REFINE_AFTER: u64 = 100_000;

/// One subtree: the canonical move sequence that leads to it, its cost in the search's metric,
/// and the nodes its search took at the last depth it was searched at (0 before that).
#[derive(Clone, Debug)]
pub(super) struct Prefix {
    pub(super) moves: Vec<Move>,
    pub(super) cost: u32,
    nodes: u64,
}

/// Every canonical move sequence of 1 to `len` moves, in the order to search them.
///
/// Invariant: `len` is [`PREFIX_LEN`] or [`FINE_PREFIX_LEN`], and `list` holds each canonical
/// sequence of 1 to `len` moves of the set `moves` exactly once.
#[derive(Clone, Debug)]
pub(super) struct Prefixes {
    list: Vec<Prefix>,
    len: usize,
    metric: Metric,
    moves: MoveSet,
    /// The nodes an iteration must take for the next ones to use finer prefixes
    /// ([`REFINE_AFTER`] unless a test lowers it).
    refine_after: u64,
}

impl Prefixes {
    /// All prefixes of up to [`PREFIX_LEN`] moves of the set `moves`, in move order (the order
    /// of a plain depth-first search), costed in `metric`; refined after an iteration of
    /// `refine_after` nodes.
    pub(super) fn new(metric: Metric, moves: MoveSet, refine_after: u64) -> Prefixes {
        Prefixes {
            list: Self::all(metric, moves, PREFIX_LEN),
            len: PREFIX_LEN,
            metric,
            moves,
            refine_after,
        }
    }

    /// Every canonical sequence of 1 to `len` moves of `set` as a prefix with no nodes, in move
    /// order.
    fn all(metric: Metric, set: MoveSet, len: usize) -> Vec<Prefix> {
        canonical_sequences(len)
            .into_iter()
            .filter(|moves| moves.iter().all(|m| set.contains(m.index())))
            .map(|moves| Prefix {
                cost: metric.length(&moves),
                moves,
                nodes: 0,
            })
            .collect()
    }

    /// The prefixes to search at depth `d`, by index, in order: those of the full length
    /// costing at most `d` (their subtrees hold every solution of that many moves or more), and
    /// the shorter ones costing exactly `d` (solutions of fewer moves). Each canonical sequence
    /// costing `d` lies below exactly one of them.
    pub(super) fn at_depth(&self, d: u32) -> Vec<usize> {
        (0..self.list.len())
            .filter(|&i| {
                let p = &self.list[i];
                if p.moves.len() == self.len {
                    p.cost <= d
                } else {
                    p.cost == d
                }
            })
            .collect()
    }

    /// Prefix `i`.
    pub(super) fn get(&self, i: usize) -> &Prefix {
        &self.list[i]
    }

    /// Records the nodes of prefix `i`'s search at the depth just finished.
    pub(super) fn record(&mut self, i: usize, nodes: u64) {
        self.list[i].nodes = nodes;
    }

    /// Puts the densest prefixes first for the next depth: by nodes at the last depth, weighted
    /// by the moves that may follow the last one (the order before breaks ties); the counts
    /// start again from 0. After an iteration of `refine_after` nodes or more, the prefixes
    /// become the finer ones, in the order just found ([`Prefixes::refine`]).
    pub(super) fn reorder(&mut self) {
        let total: u64 = self.list.iter().map(|p| p.nodes).sum();
        // about sqrt(3) : sqrt(2), the ratio of the subtree sizes after a face that bars its
        // opposite (D, L, B) and after one that does not (U, R, F)
        let weight = |p: &Prefix| {
            let bars_opposite = p.moves.last().is_some_and(|m| m.index() / 3 >= 3);
            p.nodes * if bars_opposite { 58_206 } else { 47_525 }
        };
        self.list.sort_by_key(|p| std::cmp::Reverse(weight(p)));
        for p in &mut self.list {
            p.nodes = 0;
        }
        if self.len < FINE_PREFIX_LEN && total >= self.refine_after {
            self.refine();
        }
    }

    /// Replaces the prefixes by those of [`FINE_PREFIX_LEN`] moves, each placed where the
    /// coarse prefix it starts with (itself when it is no longer) stands now, in move order
    /// among those (a stable sort).
    fn refine(&mut self) {
        let mut rank = vec![usize::MAX; sequence_keys(self.len)];
        for (i, p) in self.list.iter().enumerate() {
            rank[sequence_key(&p.moves)] = i;
        }
        let mut fine = Self::all(self.metric, self.moves, FINE_PREFIX_LEN);
        let coarse = self.len;
        fine.sort_by_key(|p| rank[sequence_key(&p.moves[..p.moves.len().min(coarse)])]);
        self.list = fine;
        self.len = FINE_PREFIX_LEN;
    }
}

/// The number of keys [`sequence_key`] gives sequences of at most `len` moves.
fn sequence_keys(len: usize) -> usize {
    19usize.pow(len as u32)
}

/// A number for a sequence of moves, distinct for distinct sequences of up to the same length:
/// its moves in base 19, each as its index plus one.
fn sequence_key(moves: &[Move]) -> usize {
    moves.iter().fold(0, |k, m| 19 * k + m.index() + 1)
}

/// Every canonical move sequence (no face twice in a row, of two opposite faces only U before
/// D, R before L, F before B) of 1 to `len` moves, the shorter first, each length in move
/// order.
fn canonical_sequences(len: usize) -> Vec<Vec<Move>> {
    let mut all = Vec::new();
    let mut last: Vec<Vec<Move>> = vec![Vec::new()];
    for _ in 0..len {
        let mut next = Vec::new();
        for pre in &last {
            let after = pre.last().map_or(NO_MOVE, |m| m.index());
            for m in Move::ALL
                .into_iter()
                .filter(|m| !skip_after(after, m.index()))
            {
                let mut moves = pre.clone();
                moves.push(m);
                next.push(moves);
            }
        }
        all.extend(next.iter().cloned());
        last = next;
    }
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every canonical sequence of cost `d` (in either metric, from 1 to 5 quarter or half
    /// turns) starts with exactly one of the prefixes searched at depth `d`, and none of those
    /// costs more than `d`: for the coarse prefixes and for the fine ones after a refinement.
    #[test]
    fn prefixes_at_a_depth_cover_each_sequence_once() {
        for metric in [Metric::Htm, Metric::Qtm] {
            let coarse = Prefixes::new(metric, MoveSet::ALL, REFINE_AFTER);
            let mut fine = Prefixes::new(metric, MoveSet::ALL, 1);
            fine.record(0, 1);
            fine.reorder();
            assert_eq!(fine.len, FINE_PREFIX_LEN);
            assert_eq!(fine.list.len(), canonical_sequences(FINE_PREFIX_LEN).len());
            let all = canonical_sequences(5);
            for prefixes in [coarse, fine] {
                for d in 1..=5 {
                    let runs = prefixes.at_depth(d);
                    assert!(runs.iter().all(|&i| prefixes.get(i).cost <= d));
                    let searched: std::collections::HashSet<&[Move]> =
                        runs.iter().map(|&i| &prefixes.get(i).moves[..]).collect();
                    for s in all.iter().filter(|s| metric.length(s) == d) {
                        let covering = (1..=s.len().min(prefixes.len))
                            .filter(|&k| searched.contains(&s[..k]))
                            .count();
                        assert_eq!(covering, 1, "{metric:?} depth {d}: {s:?}");
                    }
                }
            }
        }
    }

    /// An iteration below the threshold keeps the coarse prefixes; one at it refines them, and
    /// the fine prefixes follow the coarse order just found: grouped by the coarse prefix they
    /// start with, the groups in the coarse order, move order inside a group.
    #[test]
    fn refining_keeps_the_coarse_order() {
        let mut p = Prefixes::new(Metric::Htm, MoveSet::ALL, 1000);
        let fresh: Vec<Vec<Move>> = p.list.iter().map(|x| x.moves.clone()).collect();
        let at = |p: &Prefixes, moves: &[Move]| {
            p.list
                .iter()
                .position(|x| x.moves == moves)
                .expect("listed")
        };
        let (first, second) = (&fresh[fresh.len() - 2], &fresh[5]);
        p.record(at(&p, &fresh[fresh.len() - 1]), 999);
        p.reorder();
        assert_eq!(p.len, PREFIX_LEN);
        p.record(at(&p, first), 600);
        p.record(at(&p, second), 400);
        p.reorder();
        assert_eq!(p.len, FINE_PREFIX_LEN);
        let head = |x: &Prefix| x.moves[..x.moves.len().min(PREFIX_LEN)].to_vec();
        // the densest coarse prefix's group first, then the second's
        let first_group = p.list.iter().take_while(|x| head(x) == *first).count();
        assert!(first_group > 1, "{first:?} has fine prefixes below it");
        assert!(p.list[first_group..]
            .first()
            .is_some_and(|x| head(x) == *second));
        // inside a group, move order: the coarse prefix itself, then its extensions in turn
        let group: Vec<&Prefix> = p.list[..first_group].iter().collect();
        assert_eq!(group[0].moves, *first);
        assert!(group.windows(2).skip(1).all(|w| w[0].moves < w[1].moves));
        // every fine prefix once, none counted yet
        let mut all: Vec<Vec<Move>> = p.list.iter().map(|x| x.moves.clone()).collect();
        all.sort();
        all.dedup();
        assert_eq!(all.len(), canonical_sequences(FINE_PREFIX_LEN).len());
        assert!(p.list.iter().all(|x| x.nodes == 0));
    }

    /// The densest prefix goes first; among equal counts, the earlier order stays, and a
    /// subtree after D counts more than one after U.
    #[test]
    fn reorder_puts_the_densest_first() {
        let mut p = Prefixes::new(Metric::Htm, MoveSet::ALL, REFINE_AFTER);
        let n = p.list.len();
        let u = p
            .list
            .iter()
            .position(|x| x.moves == [Move::ALL[0]])
            .expect("U");
        let d = p
            .list
            .iter()
            .position(|x| x.moves == [Move::ALL[9]])
            .expect("D");
        p.record(n - 1, 10);
        p.record(u, 100);
        p.record(d, 100);
        let before: Vec<Vec<Move>> = p.list.iter().map(|x| x.moves.clone()).collect();
        p.reorder();
        assert_eq!(p.list[0].moves, [Move::ALL[9]]);
        assert_eq!(p.list[1].moves, [Move::ALL[0]]);
        assert_eq!(p.list[2].moves, before[n - 1]);
        assert_eq!(p.list[3].moves, before[1]);
        assert!(p.list.iter().all(|x| x.nodes == 0));
    }
}
