//! The shared front-end functions against the real tables (built once into
//! `target/test-tables`): lines solved on a pool with their answers checked, and scrambles.

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, LazyLock};

use cubefleet_proto::ResultStatus;
use cubefleet_search::{
    solve_all, solve_line, LineStatus, Question, Request, ResultLine, Scrambler, Solver, Threads,
};
use cubefleet_tables::{CubieCube, InputFormat, Tables};

static TABLES: LazyLock<Tables> = LazyLock::new(|| {
    let dir = cubefleet_testkit::tables_dir();
    Tables::load_or_build(&dir, &|_, _, _| {}).expect("tables build and load")
});

/// Lines of every kind: positions, a blank line, a comment, a refused line.
fn inputs() -> Vec<String> {
    [
        "R U",
        "",
        "# a comment",
        "R U F' D2 L B",
        "not a position",
        "UUUUUUUUURRRRRRRRRFFFFFFFFFDDDDDDDDDLLLLLLLLLBBBBBBBBB",
        "F2 U' R' L2 D B' R2 U",
    ]
    .into_iter()
    .map(String::from)
    .collect()
}

/// A row without its wall time (which no two runs share).
fn timeless(mut r: ResultLine) -> ResultLine {
    r.millis = 0.0;
    r
}

#[test]
fn every_line_is_answered_once_in_order_and_checked() {
    let lines = inputs();
    let rows = solve_all(&TABLES, &Request::default(), &lines, Threads::one_each(3)).expect("pool");
    assert_eq!(rows.len(), lines.len());
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(r.index, i);
        assert_eq!(r.input, lines[i]);
    }
    let status = |i: usize| rows[i].status;
    assert_eq!(status(1), LineStatus::Result(ResultStatus::Skipped));
    assert_eq!(status(2), LineStatus::Result(ResultStatus::Skipped));
    assert_eq!(status(4), LineStatus::Result(ResultStatus::Invalid));
    assert!(rows[4].error.is_some() && rows[4].nodes.is_none());
    for i in [0, 3, 5, 6] {
        let r = &rows[i];
        assert_eq!(r.status, LineStatus::Result(ResultStatus::Solved), "{r:?}");
        let cube = cubefleet_tables::parse_position(&lines[i], InputFormat::Auto).expect("valid");
        let moves = cubefleet_tables::MoveSeq::parse(&r.solution).expect("notation");
        assert!(cube.apply_moves(&moves.0).is_solved(), "{r:?}");
        assert_eq!(r.length, Some(moves.len() as u32));
        assert!(r.lower_bound.is_none(), "two-phase rows carry no bound");
    }
    assert_eq!(rows[0].solution, "U' R'");
    assert_eq!(rows[5].solution, "");
}

#[test]
fn the_pool_gives_the_rows_one_solver_gives() {
    let lines = inputs();
    let req = Request {
        mode: Question::two_phase(20),
        ..Request::default()
    };
    let pooled = solve_all(&TABLES, &req, &lines, Threads::one_each(2)).expect("pool");
    let mut solver = Solver::new(&TABLES);
    for (i, line) in lines.iter().enumerate() {
        let alone = solve_line(&mut solver, &TABLES, &req, 1, i, line);
        assert_eq!(timeless(alone), timeless(pooled[i].clone()));
    }
}

#[test]
fn a_raised_cancel_flag_ends_every_search() {
    let req = Request {
        mode: Question::new(
            cubefleet_search::Algorithm::Optimal,
            Default::default(),
            cubefleet_search::MoveSet::ALL,
            None,
        )
        .expect("optimal"),
        cancel: Some(Arc::new(AtomicBool::new(true))),
        ..Request::default()
    };
    let lines = ["R U F D L B R2 U' F2 D' L2 B' R U2"; 3];
    let rows = solve_all(&TABLES, &req, &lines, Threads::one_each(2)).expect("pool");
    assert_eq!(rows.len(), 3);
    for r in rows {
        assert_eq!(
            r.status,
            LineStatus::Result(ResultStatus::Cancelled),
            "{r:?}"
        );
        assert!(r.lower_bound.is_some());
    }
}

#[test]
fn a_single_line_gets_every_thread() {
    assert_eq!(
        Threads::for_lines(1, 4),
        Threads {
            lines: 1,
            per_line: 4
        }
    );
    assert_eq!(Threads::for_lines(5, 4), Threads::one_each(4));
    assert_eq!(Threads::one_each(0).lines, 1);
}

#[test]
fn the_same_seed_gives_the_same_scrambles() {
    let draw = |seed| {
        let mut s = Scrambler::new(&TABLES, Some(seed), 21);
        (0..5)
            .map(|_| s.next_scramble().expect("scramble"))
            .collect::<Vec<_>>()
    };
    let (a, b) = (draw(7), draw(7));
    assert_eq!(a, b);
    assert_ne!(a, draw(8));
    for s in &a {
        assert!(s.len() <= 21);
        assert!(!CubieCube::from_moves(&s.0).is_solved());
    }
}
