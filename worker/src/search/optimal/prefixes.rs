//! The order an iteration's subtrees are searched in: one subtree per prefix of
//! [`PREFIX_LEN`] moves, the densest at the previous depth first (vcube's ordering).
//!
//! An iteration that finds a solution stops at the first one, so where in its tree it looks
//! first decides its cost: up to the whole tree (about ten times the iteration before) when the
//! solutions sit at its end. The subtrees that held the most nodes one depth shallower are the
//! ones with the most positions close to solved, so they are the likeliest to hold a solution
//! at the next depth. Each prefix's node count is weighted for the moves that may follow its
//! last one (after D, L or B, their opposite faces U, R or F may not come next, so such a
//! subtree is smaller by nature).

use cubefleet_tables::Move;

use super::Metric;
use crate::search::{skip_after, NO_MOVE};

/// Moves in a prefix: 3,240 prefixes of three canonical moves. Searching them one by one
/// costs about a millisecond's lookups per iteration.
pub(super) const PREFIX_LEN: usize = 3;

/// One subtree: the canonical move sequence that leads to it, its cost in the search's metric,
/// and the nodes its search took at the last depth it was searched at (0 before that).
#[derive(Clone, Debug)]
pub(super) struct Prefix {
    pub(super) moves: Vec<Move>,
    pub(super) cost: u32,
    nodes: u64,
}

/// Every canonical move sequence of 1 to [`PREFIX_LEN`] moves, in the order to search them.
#[derive(Clone, Debug)]
pub(super) struct Prefixes {
    list: Vec<Prefix>,
}

impl Prefixes {
    /// All prefixes, in move order (the order of a plain depth-first search), costed in
    /// `metric`.
    pub(super) fn new(metric: Metric) -> Prefixes {
        let list = canonical_sequences(PREFIX_LEN)
            .into_iter()
            .map(|moves| Prefix {
                cost: metric.length(&moves),
                moves,
                nodes: 0,
            })
            .collect();
        Prefixes { list }
    }

    /// The prefixes to search at depth `d`, by index, in order: those of [`PREFIX_LEN`] moves
    /// costing at most `d` (their subtrees hold every solution of that many moves or more), and
    /// the shorter ones costing exactly `d` (solutions of fewer moves). Each canonical sequence
    /// costing `d` lies below exactly one of them.
    pub(super) fn at_depth(&self, d: u32) -> Vec<usize> {
        (0..self.list.len())
            .filter(|&i| {
                let p = &self.list[i];
                if p.moves.len() == PREFIX_LEN {
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
    /// start again from 0.
    pub(super) fn reorder(&mut self) {
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
    }
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
    /// costs more than `d`.
    #[test]
    fn prefixes_at_a_depth_cover_each_sequence_once() {
        for metric in [Metric::Htm, Metric::Qtm] {
            let prefixes = Prefixes::new(metric);
            let all = canonical_sequences(5);
            for d in 1..=5 {
                let runs = prefixes.at_depth(d);
                assert!(runs.iter().all(|&i| prefixes.get(i).cost <= d));
                let searched: std::collections::HashSet<&[Move]> =
                    runs.iter().map(|&i| &prefixes.get(i).moves[..]).collect();
                for s in all.iter().filter(|s| metric.length(s) == d) {
                    let covering = (1..=s.len().min(PREFIX_LEN))
                        .filter(|&k| searched.contains(&s[..k]))
                        .count();
                    assert_eq!(covering, 1, "{metric:?} depth {d}: {s:?}");
                }
            }
        }
    }

    /// The densest prefix goes first; among equal counts, the earlier order stays, and a
    /// subtree after D counts more than one after U.
    #[test]
    fn reorder_puts_the_densest_first() {
        let mut p = Prefixes::new(Metric::Htm);
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
