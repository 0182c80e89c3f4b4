//! Partial goals (`--goal`) against counts made here: a breadth-first search over every state
//! of the cross (190,080: where the four D-layer edges are and how they are flipped) and over
//! the edge orientations (2,048) gives each state's distance, and the goal search's optimal and
//! depth-limited lengths must equal it (every length from 0 to the largest appears), in HTM,
//! in QTM and with a restricted move set; every solution is applied by this file's own cube
//! model (stickers in space, turned by rotations; nothing of the tables crate) and checked
//! against the goal's definition in stickers.

use std::collections::HashMap;
use std::sync::LazyLock;

use cubefleet_proto::goal::Goal;
use cubefleet_search::lines::{solve_line, Request};
use cubefleet_search::metric::Metric;
use cubefleet_search::{Algorithm, Budget, MoveSet, Question, Solver, Status};
use cubefleet_tables::{CubieCube, MoveSeq, Tables};
use rand::{Rng, SeedableRng};

static TABLES: LazyLock<Tables> = LazyLock::new(|| {
    Tables::load_or_build(&cubefleet_testkit::tables_dir(), &|_, _, _| {}).expect("tables build")
});

/// The test's own cube: 54 stickers, each a position in space (coordinates in -1..=1), the
/// outward normal of the face it is on, and its colour (the normal it had when solved). Axes:
/// R = +x, U = +y, F = +z.
mod model {
    pub(crate) type V = [i8; 3];

    #[derive(Clone, PartialEq, Eq, Hash)]
    pub(crate) struct Cube(pub(crate) Vec<(V, V, V)>);

    /// The outward normal of a face letter.
    pub(crate) fn normal(face: char) -> V {
        match face {
            'U' => [0, 1, 0],
            'D' => [0, -1, 0],
            'R' => [1, 0, 0],
            'L' => [-1, 0, 0],
            'F' => [0, 0, 1],
            'B' => [0, 0, -1],
            _ => panic!("no face {face}"),
        }
    }

    fn dot(a: V, b: V) -> i8 {
        a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
    }

    fn cross(a: V, b: V) -> V {
        [
            a[1] * b[2] - a[2] * b[1],
            a[2] * b[0] - a[0] * b[2],
            a[0] * b[1] - a[1] * b[0],
        ]
    }

    /// A quarter turn clockwise as seen facing `n`: `v -> n (n . v) - n x v`.
    fn quarter(n: V, v: V) -> V {
        let (c, d) = (cross(n, v), dot(n, v));
        [n[0] * d - c[0], n[1] * d - c[1], n[2] * d - c[2]]
    }

    impl Cube {
        pub(crate) fn solved() -> Cube {
            let mut s = Vec::new();
            for f in "URFDLB".chars() {
                let n = normal(f);
                for a in -1..=1i8 {
                    for b in -1..=1i8 {
                        // the two coordinates the face's normal leaves free
                        let mut p = n;
                        let free: Vec<usize> = (0..3).filter(|&i| n[i] == 0).collect();
                        p[free[0]] = a;
                        p[free[1]] = b;
                        s.push((p, n, n));
                    }
                }
            }
            Cube(s)
        }

        /// Turns `face` by `quarters` quarter turns clockwise.
        pub(crate) fn turn(&mut self, face: char, quarters: u8) {
            let n = normal(face);
            for (p, m, _) in &mut self.0 {
                if dot(*p, n) == 1 {
                    for _ in 0..quarters {
                        *p = quarter(n, *p);
                        *m = quarter(n, *m);
                    }
                }
            }
        }

        /// Applies a sequence in standard notation (`R U2 F'`).
        pub(crate) fn apply(&mut self, moves: &str) {
            for t in moves.split_whitespace() {
                let face = t.chars().next().expect("a face");
                let q = match &t[1..] {
                    "" => 1,
                    "2" => 2,
                    "'" => 3,
                    other => panic!("turn {t} ({other})"),
                };
                self.turn(face, q);
            }
        }

        /// The stickers of the piece at position `p` (a corner or edge position), as (normal,
        /// colour).
        fn piece(&self, p: V) -> Vec<(V, V)> {
            self.0
                .iter()
                .filter(|s| s.0 == p)
                .map(|s| (s.1, s.2))
                .collect()
        }

        /// True when the piece at `p` is its own and untwisted: every sticker its colour.
        pub(crate) fn solved_at(&self, p: V) -> bool {
            self.piece(p).iter().all(|(n, c)| n == c)
        }

        /// True when the edge at `p` is oriented on the F/B axis: its reference colour (U or D
        /// if it has one, else F or B) is on the position's reference face (U or D in those
        /// layers, else F or B).
        pub(crate) fn edge_oriented(&self, p: V) -> bool {
            let piece = self.piece(p);
            let reference_face = if p[1] != 0 { 1 } else { 2 };
            let colour_axis = if piece.iter().any(|(_, c)| c[1] != 0) {
                1
            } else {
                2
            };
            piece
                .iter()
                .any(|(n, c)| n[reference_face] != 0 && c[colour_axis] != 0)
        }

        /// True when the corner at `p` has its U or D colour on the U or D face.
        pub(crate) fn corner_oriented(&self, p: V) -> bool {
            self.piece(p).iter().any(|(n, c)| n[1] != 0 && c[1] != 0)
        }

        /// True when the edge at `p` belongs to the E slice (neither U nor D colour).
        pub(crate) fn slice_piece_at(&self, p: V) -> bool {
            self.piece(p).iter().all(|(_, c)| c[1] == 0)
        }
    }

    /// The edge positions (one coordinate 0), corner positions (none 0).
    pub(crate) fn positions(zeros: usize) -> Vec<V> {
        let mut out = Vec::new();
        for x in -1..=1i8 {
            for y in -1..=1i8 {
                for z in -1..=1i8 {
                    if [x, y, z].iter().filter(|&&c| c == 0).count() == zeros {
                        out.push([x, y, z]);
                    }
                }
            }
        }
        out
    }
}

use model::{positions, Cube, V};

/// The D-layer edge positions.
fn cross_edges() -> Vec<V> {
    positions(1).into_iter().filter(|p| p[1] == -1).collect()
}

/// The goals' definitions in stickers (the bottom cross, as speedcubers hold it).
fn has_cross(c: &Cube) -> bool {
    cross_edges().into_iter().all(|p| c.solved_at(p))
}

fn has_xcross(c: &Cube) -> bool {
    has_cross(c)
        && [[1, 1], [1, -1], [-1, 1], [-1, -1]]
            .iter()
            .any(|&[x, z]| c.solved_at([x, -1, z]) && c.solved_at([x, 0, z]))
}

fn has_eo(c: &Cube) -> bool {
    positions(1).into_iter().all(|p| c.edge_oriented(p))
}

fn has_dr(c: &Cube) -> bool {
    has_eo(c)
        && positions(0).into_iter().all(|p| c.corner_oriented(p))
        && positions(1)
            .into_iter()
            .filter(|p| p[1] == 0)
            .all(|p| c.slice_piece_at(p))
}

/// The cross state: where each D-layer edge piece is and where its D sticker faces.
fn cross_state(c: &Cube) -> Vec<(V, V)> {
    let mut state: Vec<(V, V, V)> =
        c.0.iter()
            .filter(|s| s.2 == [0, -1, 0] && s.0.iter().filter(|&&x| x == 0).count() == 1)
            .map(|s| {
                // the piece's other colour names it
                let other =
                    c.0.iter()
                        .find(|t| t.0 == s.0 && t.1 != s.1)
                        .expect("an edge has two stickers");
                (other.2, s.0, s.1)
            })
            .collect();
    state.sort();
    state.into_iter().map(|(_, p, n)| (p, n)).collect()
}

/// The edge orientation state: each edge position's orientation.
fn eo_state(c: &Cube) -> Vec<bool> {
    positions(1)
        .into_iter()
        .map(|p| c.edge_oriented(p))
        .collect()
}

/// The turns of `faces`, each as (face, quarter turns, cost in `metric`).
fn turns(faces: &str, metric: Metric) -> Vec<(char, u8, u32)> {
    faces
        .chars()
        .flat_map(|f| (1..=3).map(move |q| (f, q, metric.turn_cost(q))))
        .collect()
}

/// A shortest-path search over the states `state` makes of cubes, from the solved cube by
/// `turns` (costs 1 or 2, a Dijkstra by layers): every state's distance and a cube of it
/// (the first reached).
fn breadth_first<S: Clone + Eq + std::hash::Hash>(
    state: impl Fn(&Cube) -> S,
    turns: &[(char, u8, u32)],
) -> HashMap<S, (u32, Cube, String)> {
    let start = Cube::solved();
    let mut seen = HashMap::from([(state(&start), (0, start, String::new()))]);
    let mut layers: Vec<Vec<S>> = vec![seen.keys().cloned().collect()];
    let mut d = 0;
    while d < layers.len() {
        let layer = std::mem::take(&mut layers[d]);
        for s in layer {
            let (ds, cube, path) = seen[&s].clone();
            if ds != d as u32 {
                continue;
            }
            for &(f, q, cost) in turns {
                let mut next = cube.clone();
                next.turn(f, q);
                let key = state(&next);
                let nd = ds + cost;
                if seen.get(&key).is_none_or(|e| e.0 > nd) {
                    let turn = format!("{f}{}", ["", "", "2", "'"][q as usize]);
                    seen.insert(key.clone(), (nd, next, format!("{path} {turn}")));
                    if layers.len() <= nd as usize {
                        layers.resize(nd as usize + 1, Vec::new());
                    }
                    layers[nd as usize].push(key);
                }
            }
        }
        d += 1;
    }
    seen
}

fn question(algorithm: Algorithm, metric: Metric, moves: &str, goal: &str) -> Question {
    let set = MoveSet::parse(moves).expect("set");
    Question::new(algorithm, metric, set, None)
        .and_then(|q| q.with_goal(Some(Goal::parse(goal).expect("goal"))))
        .expect("question")
}

/// Solves the position `path` makes (from solved) and checks the answer with the model:
/// `reached` holds after it, it uses only `faces`; returns its length in `metric`.
fn solve_checked(
    solver: &mut Solver<'_>,
    path: &str,
    q: &Question,
    faces: &str,
    reached: fn(&Cube) -> bool,
) -> Option<u32> {
    let cube = CubieCube::from_moves(&MoveSeq::parse(path).expect("parses").0);
    let out = solver.solve(&cube, q, 0, &Budget::unlimited(), &mut |_| {});
    let sol = out.solution?;
    let text = sol.to_string();
    let mut model = Cube::solved();
    model.apply(path);
    model.apply(&text);
    assert!(
        reached(&model),
        "{text} does not reach the goal from {path}"
    );
    assert!(
        text.split_whitespace().all(|t| faces.contains(&t[..1])),
        "{text} turns outside {faces}"
    );
    assert!(out.optimal && out.status == Status::Solved);
    Some(
        q.metric()
            .length_of(sol.0.iter().map(|m| m.quarter_turns())),
    )
}

/// Every cross state's distance from the breadth-first search equals the goal search's length
/// for a cube of that state, for samples of every distance (0 to 8 in HTM); depth-limited
/// searches find it at the distance and none within one less.
#[test]
fn cross_lengths_are_the_breadth_first_distances() {
    let all = turns("URFDLB", Metric::Htm);
    let dist = breadth_first(cross_state, &all);
    assert_eq!(dist.len(), 190_080);
    let mut by_length: Vec<Vec<&(u32, Cube, String)>> = vec![];
    for v in dist.values() {
        if by_length.len() <= v.0 as usize {
            by_length.resize(v.0 as usize + 1, vec![]);
        }
        by_length[v.0 as usize].push(v);
    }
    assert_eq!(by_length.len(), 9, "the cross's depth is 8");
    let mut rng = rand::rngs::StdRng::seed_from_u64(31);
    let mut solver = Solver::new(&TABLES);
    let all_set = Question::new(Algorithm::Optimal, Metric::Htm, MoveSet::ALL, None)
        .and_then(|q| q.with_goal(Some(Goal::parse("cross").expect("goal"))))
        .expect("q");
    for (d, states) in by_length.iter().enumerate() {
        for _ in 0..6 {
            let (_, _, path) = states[rng.random_range(0..states.len())];
            // the position the breadth-first search reached the state by
            let len = solve_checked(&mut solver, path, &all_set, "URFDLB", has_cross);
            assert_eq!(len, Some(d as u32), "{path}");
            let dl = |max_depth| {
                question(
                    Algorithm::DepthLimited { max_depth },
                    Metric::Htm,
                    "U,R,F,D,L,B",
                    "cross",
                )
            };
            let cube = CubieCube::from_moves(&MoveSeq::parse(path).expect("parses").0);
            if d > 0 {
                let out = solver.solve(
                    &cube,
                    &dl(d as u32 - 1),
                    0,
                    &Budget::unlimited(),
                    &mut |_| {},
                );
                assert_eq!(out.status, Status::NoneWithin, "{path}");
                assert_eq!(out.lower_bound, d as u32);
            }
            let len = solve_checked(&mut solver, path, &dl(d as u32), "URFDLB", has_cross);
            assert_eq!(len, Some(d as u32));
        }
    }
    // random positions: the distance of their cross state
    for _ in 0..40 {
        let scramble: Vec<String> = (0..25)
            .map(|_| {
                let f = "URFDLB".as_bytes()[rng.random_range(0..6)] as char;
                format!("{f}{}", ["", "2", "'"][rng.random_range(0..3)])
            })
            .collect();
        let path = scramble.join(" ");
        let mut model = Cube::solved();
        model.apply(&path);
        let want = dist[&cross_state(&model)].0;
        let len = solve_checked(&mut solver, &path, &all_set, "URFDLB", has_cross);
        assert_eq!(len, Some(want), "{path}");
    }
}

/// Edge orientation: the distance of every state, in QTM over every turn (2,048 states) and in
/// HTM over R, U and F only (256: R and U never flip an edge, and DL, DB and BL never move), is
/// the goal search's length.
#[test]
fn eo_lengths_are_the_breadth_first_distances_in_qtm_and_over_a_move_set() {
    let mut solver = Solver::new(&TABLES);
    let mut rng = rand::rngs::StdRng::seed_from_u64(5);
    for (metric, faces, set, states) in [
        (Metric::Qtm, "URFDLB", "U,R,F,D,L,B", 2048),
        (Metric::Htm, "RUF", "R,U,F", 256),
    ] {
        let dist = breadth_first(eo_state, &turns(faces, metric));
        assert_eq!(dist.len(), states);
        let q = question(Algorithm::Optimal, metric, set, "eo");
        let most = dist.values().map(|v| v.0).max().expect("states");
        let mut seen = vec![false; most as usize + 1];
        for (d, _, path) in dist.values() {
            if seen[*d as usize] && rng.random_range(0..20) != 0 {
                continue;
            }
            seen[*d as usize] = true;
            let len = solve_checked(&mut solver, path, &q, faces, has_eo);
            assert_eq!(len, Some(*d), "{path} ({metric:?}, {set})");
        }
        assert!(seen.iter().all(|&s| s));
    }
}

/// On any face: the shortest cross over the six faces is the least of the six faces' own
/// searches, and the row names the face the solution reached; xcross, dr and on-any-face eo
/// solutions reach their goals in the model.
#[test]
fn any_face_is_the_least_over_the_faces_and_rows_say_which() {
    let mut solver = Solver::new(&TABLES);
    let mut rng = rand::rngs::StdRng::seed_from_u64(11);
    let any = question(Algorithm::Optimal, Metric::Htm, "-B", "cross");
    let any = any
        .with_goal(Some(Goal::parse("cross").expect("goal").on_any_face(true)))
        .expect("q");
    let plain = question(Algorithm::Optimal, Metric::Htm, "-B", "cross");
    for _ in 0..8 {
        let path: Vec<String> = (0..20)
            .map(|_| {
                let f = "URFDL".as_bytes()[rng.random_range(0..5)] as char;
                format!("{f}{}", ["", "2", "'"][rng.random_range(0..3)])
            })
            .collect();
        let path = path.join(" ");
        let some_cross = |c: &Cube| {
            "URFDLB".chars().any(|f| {
                let n = model::normal(f);
                positions(1)
                    .into_iter()
                    .filter(|p| (0..3).any(|i| n[i] != 0 && p[i] == n[i]))
                    .all(|p| c.solved_at(p))
            })
        };
        let best = solve_checked(&mut solver, &path, &any, "URFDL", some_cross).expect("solved");
        let d_only = solve_checked(&mut solver, &path, &plain, "URFDL", has_cross).expect("solved");
        assert!(best <= d_only);
        let req = Request {
            mode: any,
            ..Request::default()
        };
        let row = solve_line(&mut solver, &TABLES, &req, 1, 0, &path);
        assert_eq!(row.length, Some(best));
        assert_eq!(row.goal.as_deref(), Some("cross on any face"));
        let reached = row.goal_reached.expect("the face reached");
        assert!(reached.starts_with("cross on "), "{reached}");
    }
    for (goal, check) in [
        ("xcross", has_xcross as fn(&Cube) -> bool),
        ("dr", has_dr),
        ("eo", has_eo),
    ] {
        let q = question(Algorithm::Optimal, Metric::Htm, "U,R,F,D,L,B", goal);
        for _ in 0..3 {
            let path: Vec<String> = (0..20)
                .map(|_| {
                    let f = "URFDLB".as_bytes()[rng.random_range(0..6)] as char;
                    format!("{f}{}", ["", "2", "'"][rng.random_range(0..3)])
                })
                .collect();
            let len = solve_checked(&mut solver, &path.join(" "), &q, "URFDLB", check);
            assert!(len.is_some_and(|l| l <= 12), "{goal}");
        }
    }
    // a goal the set never reaches: D turns alone never bring a flipped edge back
    let q = question(Algorithm::Optimal, Metric::Htm, "D", "eo");
    let cube = CubieCube::from_moves(&MoveSeq::parse("F").expect("parses").0);
    let out = solver.solve(&cube, &q, 0, &Budget::unlimited(), &mut |_| {});
    assert_eq!(out.status, Status::Unreachable);
}
