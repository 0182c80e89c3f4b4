//! The pruning tables against the cube they describe (built once into `target/test-tables`).

use cubefleet_tables::movetable::PHASE2_MOVES;
use cubefleet_tables::prune::Phase1Moves;
use cubefleet_tables::symmetry::SYMMETRIES;
use cubefleet_tables::{CubieCube, Move, Tables};
use rand::{Rng, SeedableRng};

fn tables() -> Tables {
    let dir = cubefleet_testkit::tables_dir();
    Tables::load_or_build(&dir, &|_, _, _| {}).expect("tables build and load")
}

/// Phase-1 depth of a cube straight from its cubies, with its table index and symmetry.
fn phase1_depth(t: &Tables, c: &CubieCube) -> (u8, usize, usize) {
    let (index, sym) = t
        .coords
        .phase1_index(c.slice() * 2048 + c.flip(), c.twist());
    (t.phase1.payload()[index], index, sym)
}

/// Every move-delta entry agrees with the depths of the cube's 18 neighbours (the naive oracle),
/// and depths agree with the definition: 0 exactly in G1, neighbours differ by at most one.
#[test]
fn phase1_move_deltas_match_neighbour_depths() {
    let t = tables();
    // the lookups below read the coordinate tables where loading moved them
    assert!(t.coords.flipslice.sym.is_mapped() && t.coords.twist_conj.is_mapped());
    let mut rng = rand::rngs::StdRng::seed_from_u64(11);
    for _ in 0..3000 {
        let c = CubieCube::random(&mut rng);
        let (d, index, sym) = phase1_depth(&t, &c);
        let in_g1 = c.twist() == 0 && c.flip() == 0 && c.slice() == 0;
        assert_eq!(d == 0, in_g1);
        let deltas = Phase1Moves::entry(t.phase1_moves.payload(), index);
        for m in Move::ALL {
            let (d1, _, _) = phase1_depth(&t, &c.apply_move(m));
            assert!((d1 as i32 - d as i32).abs() <= 1);
            let conj = SYMMETRIES.move_conj[sym][m.index()].index();
            let delta = (deltas >> (2 * conj)) & 3;
            assert_eq!(d as i32 + delta as i32 - 1, d1 as i32, "move {m}");
        }
    }
}

/// Phase-2 depths: 0 only when solved, and a phase-2 move changes them by at most one.
#[test]
fn phase2_depths_are_consistent() {
    let t = tables();
    let phase2 = |c: &CubieCube| {
        let sc = t.coords.corners_sym.sym[c.corners()];
        let e = t.coords.ud_edges_conj[16 * c.ud_edges().expect("in G1") + sc.sym()] as usize;
        t.phase2.payload()[40320 * sc.class() + e] as i32
    };
    assert_eq!(phase2(&CubieCube::SOLVED), 0);
    let mut rng = rand::rngs::StdRng::seed_from_u64(5);
    for _ in 0..200 {
        let mut c = CubieCube::SOLVED;
        for _ in 0..rng.random_range(1..30) {
            c = c.apply_move(Move::from_index(PHASE2_MOVES[rng.random_range(0..10)]));
            let d = phase2(&c);
            assert_eq!(d == 0, c.corners() == 0 && c.ud_edges() == Some(0));
            for &m in &PHASE2_MOVES {
                assert!((phase2(&c.apply_move(Move::from_index(m))) - d).abs() <= 1);
            }
        }
    }
}
