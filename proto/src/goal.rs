//! Partial goals (`--goal`): a solution need only bring some pieces home, or orient them,
//! instead of solving the whole cube. A [`Goal`] is a named goal or a custom one, on the
//! standard face or on any face; at heart it is one or more [`Pieces`] (the positions that must
//! hold their own piece untwisted, the positions whose piece must only be oriented, and for
//! `dr` the E-slice edges in the E slice), and a solution reaches the goal when it reaches any
//! one of them, on any of its faces.
//!
//! The named goals, as a speedcuber holds the cube (the goal on the bottom, D):
//!
//! | name | pieces |
//! | --- | --- |
//! | `cross` | the four D-layer edges solved (DR DF DL DB) |
//! | `xcross` | the cross and any one F2L pair (a D-layer corner with the E-slice edge above it; the shortest over the four slots) |
//! | `f2l` | the D layer and the four E-slice edges solved (the first two layers) |
//! | `eo` | every edge oriented on the F/B axis (F and B quarter turns flip edges) |
//! | `dr` | every corner and edge oriented and the E-slice edges in the E slice: Kociemba's G1 = ⟨U, D, R2, L2, F2, B2⟩ (domino reduction) |
//! | `corners` | every corner solved |
//! | `edges` | every edge solved |
//!
//! A custom goal is written as lists of pieces: `place:DF,DR,DFR;orient:UF,UB` — the pieces
//! after `place:` solved (home, untwisted), the positions after `orient:` holding an oriented
//! piece (corners: its U or D sticker on the U or D face; edges: unflipped on the F/B axis),
//! whichever piece it is. Pieces are named by their faces in any order (`DFR`, `FRD`); either
//! list may be left out. (The CLI and Python also read a facelet string whose ignored stickers
//! are written `.`: the search crate's `goal::parse`.)
//!
//! On any face ([`Goal::any_face`], `--on any-face`, "colour neutral"): the shortest over the
//! whole-cube rotations that move the goal to each face — 6 for `cross`, `xcross` and `f2l`
//! (the face the cross is on), 3 axes for `eo` and `dr`, the 24 rotations for a custom goal;
//! `corners` and `edges` are the same on every face.
//!
//! The cube-level side (a [`Pieces`] reached by a cube, the alternatives of a goal with their
//! rotations) needs the cube model: the feature `batch`.

use std::fmt;

use crate::question::ModeError;

/// The corners by position, in the protocol's numbering (Kociemba's order, the tables' too):
/// bit `i` of a corner mask is position `CORNER_NAMES[i]`.
pub const CORNER_NAMES: [&str; 8] = ["URF", "UFL", "ULB", "UBR", "DFR", "DLF", "DBL", "DRB"];

/// The edges by position, in the protocol's numbering: bit `i` of an edge mask is position
/// `EDGE_NAMES[i]`; FR FL BL BR (8 to 11) are the E-slice edges.
pub const EDGE_NAMES: [&str; 12] = [
    "UR", "UF", "UL", "UB", "DR", "DF", "DL", "DB", "FR", "FL", "BL", "BR",
];

/// Every corner position (8 bits).
const ALL_CORNERS: u8 = 0xff;
/// Every edge position (12 bits).
const ALL_EDGES: u16 = 0xfff;
/// The D-layer edges DR DF DL DB.
const D_EDGES: u16 = 0xf0;
/// The D-layer corners DFR DLF DBL DRB.
const D_CORNERS: u8 = 0xf0;
/// The E-slice edges FR FL BL BR.
const E_EDGES: u16 = 0xf00;

/// What a cube must have for one goal: positions that hold their own piece untwisted,
/// positions whose piece is oriented (whichever it is), and (`slice`) the E-slice edges in the
/// E slice.
///
/// Invariant: only the 8 low bits of a corner mask and the 12 low bits of an edge mask are
/// set (the types' widths and [`Goal::custom`] keep it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Pieces {
    /// Corner positions that must hold their own corner, untwisted.
    pub place_corners: u8,
    /// Edge positions that must hold their own edge, unflipped.
    pub place_edges: u16,
    /// Corner positions whose corner must be untwisted.
    pub orient_corners: u8,
    /// Edge positions whose edge must be unflipped (F/B axis).
    pub orient_edges: u16,
    /// The four E-slice edges must be in the E slice (in any order and orientation).
    pub slice: bool,
}

impl Pieces {
    /// True when nothing is asked (every cube reaches it).
    pub fn is_empty(&self) -> bool {
        *self == Pieces::default()
    }
}

/// The piece-list form (`place:DF,DR;orient:UF`), as [`Goal::parse`] reads it; `slice` (only
/// a named goal has it) is written as `;slice`.
impl fmt::Display for Pieces {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let list = |corners: u8, edges: u16| {
            let e = (0..12)
                .filter(|i| edges >> i & 1 != 0)
                .map(|i| EDGE_NAMES[i]);
            let c = (0..8)
                .filter(|i| corners >> i & 1 != 0)
                .map(|i| CORNER_NAMES[i]);
            e.chain(c).collect::<Vec<_>>().join(",")
        };
        let mut parts = Vec::new();
        if self.place_corners != 0 || self.place_edges != 0 {
            parts.push(format!(
                "place:{}",
                list(self.place_corners, self.place_edges)
            ));
        }
        if self.orient_corners != 0 || self.orient_edges != 0 {
            parts.push(format!(
                "orient:{}",
                list(self.orient_corners, self.orient_edges)
            ));
        }
        if self.slice {
            parts.push("slice".into());
        }
        f.write_str(&parts.join(";"))
    }
}

/// The named goals (see the module's table).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GoalName {
    /// The four D-layer edges solved.
    Cross,
    /// The cross and any one F2L pair.
    Xcross,
    /// The first two layers (D layer and E-slice edges) solved.
    F2l,
    /// Every edge oriented (F/B axis).
    Eo,
    /// Domino reduction: Kociemba's G1.
    Dr,
    /// Every corner solved.
    Corners,
    /// Every edge solved.
    Edges,
}

impl GoalName {
    /// Every named goal, in the protocol's order.
    pub const ALL: [GoalName; 7] = [
        GoalName::Cross,
        GoalName::Xcross,
        GoalName::F2l,
        GoalName::Eo,
        GoalName::Dr,
        GoalName::Corners,
        GoalName::Edges,
    ];

    /// The name the CLI, Python and JSON use.
    pub fn as_str(self) -> &'static str {
        match self {
            GoalName::Cross => "cross",
            GoalName::Xcross => "xcross",
            GoalName::F2l => "f2l",
            GoalName::Eo => "eo",
            GoalName::Dr => "dr",
            GoalName::Corners => "corners",
            GoalName::Edges => "edges",
        }
    }

    fn to_wire(self) -> crate::GoalKind {
        match self {
            GoalName::Cross => crate::GoalKind::Cross,
            GoalName::Xcross => crate::GoalKind::Xcross,
            GoalName::F2l => crate::GoalKind::F2l,
            GoalName::Eo => crate::GoalKind::Eo,
            GoalName::Dr => crate::GoalKind::Dr,
            GoalName::Corners => crate::GoalKind::Corners,
            GoalName::Edges => crate::GoalKind::Edges,
        }
    }
}

/// The xcross slots: a D-layer corner and the E-slice edge above it, named by the edge.
const SLOTS: [(&str, u8, u16); 4] = [
    ("FR", 1 << 4, 1 << 8),
    ("FL", 1 << 5, 1 << 9),
    ("BL", 1 << 6, 1 << 10),
    ("BR", 1 << 7, 1 << 11),
];

/// A goal's pieces: a named goal or a custom one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GoalKind {
    /// A named goal.
    Named(GoalName),
    /// Custom pieces (never empty, never `slice`).
    Custom(Pieces),
}

/// Where a goal may be reached: which whole-cube rotations `--on any-face` tries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Faces {
    /// The goal as it is (the standard face), or a goal that is the same on every face.
    One,
    /// The six faces (the face the cross-type goal's D layer is turned to).
    Six,
    /// The three axes (`eo`'s F/B axis, `dr`'s U/D axis, turned to each).
    Axes,
    /// The 24 rotations of the whole cube (a custom goal).
    Rotations,
}

/// A partial goal: what a solution must reach instead of the solved cube (see the module's
/// documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Goal {
    kind: GoalKind,
    any_face: bool,
}

impl Goal {
    /// The named goal `name` on its standard face.
    pub fn named(name: GoalName) -> Goal {
        Goal {
            kind: GoalKind::Named(name),
            any_face: false,
        }
    }

    /// The custom goal of `pieces`, refused when it asks nothing or asks `slice` (a named
    /// goal's part only).
    pub fn custom(pieces: Pieces) -> Result<Goal, String> {
        if pieces.is_empty() {
            return Err("names no piece: give pieces to place or to orient".into());
        }
        if pieces.slice {
            return Err("asks the E slice, which only the named goal dr does".into());
        }
        Ok(Goal {
            kind: GoalKind::Custom(pieces),
            any_face: false,
        })
    }

    /// This goal on any face when `any_face` (`--on any-face`), on its standard face when not.
    pub fn on_any_face(self, any_face: bool) -> Goal {
        Goal { any_face, ..self }
    }

    /// The goal `text` writes: a name (`cross`, `xcross`, `f2l`, `eo`, `dr`, `corners`,
    /// `edges`) or a piece list (`place:DF,DR,DFR;orient:UF`); refused with the reason.
    pub fn parse(text: &str) -> Result<Goal, String> {
        let text = text.trim();
        if let Some(&name) = GoalName::ALL.iter().find(|n| n.as_str() == text) {
            return Ok(Goal::named(name));
        }
        let mut pieces = Pieces::default();
        for part in text.split(';').map(str::trim) {
            let (which, list) = part.split_once(':').ok_or_else(|| {
                format!(
                    "goal {text:?}: {part:?} is neither a goal's name (cross, xcross, f2l, eo, \
                     dr, corners, edges) nor a list (place:DF,DR,DFR;orient:UF)"
                )
            })?;
            let (corners, edges) = match which.trim() {
                "place" => (&mut pieces.place_corners, &mut pieces.place_edges),
                "orient" => (&mut pieces.orient_corners, &mut pieces.orient_edges),
                other => {
                    return Err(format!(
                        "goal {text:?}: {other:?}: give place: or orient: before a list of \
                         pieces"
                    ))
                }
            };
            for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
                match piece_named(name) {
                    Some(Piece::Corner(i)) => *corners |= 1 << i,
                    Some(Piece::Edge(i)) => *edges |= 1 << i,
                    None => {
                        return Err(format!(
                            "goal {text:?}: {name:?} is not a piece; name an edge (UF, DR, FR, \
                             ...) or a corner (URF, DLF, ...) by its faces"
                        ))
                    }
                }
            }
        }
        Goal::custom(pieces).map_err(|e| format!("goal {text:?} {e}"))
    }

    /// The goal's pieces (named or custom).
    pub fn kind(&self) -> GoalKind {
        self.kind
    }

    /// True when the goal is reached on any face (`--on any-face`).
    pub fn any_face(&self) -> bool {
        self.any_face
    }

    /// The rotations a search tries: the standard face alone unless on any face.
    pub fn faces(&self) -> Faces {
        if !self.any_face {
            return Faces::One;
        }
        match self.kind {
            GoalKind::Named(GoalName::Cross | GoalName::Xcross | GoalName::F2l) => Faces::Six,
            GoalKind::Named(GoalName::Eo | GoalName::Dr) => Faces::Axes,
            GoalKind::Named(GoalName::Corners | GoalName::Edges) => Faces::One,
            GoalKind::Custom(_) => Faces::Rotations,
        }
    }

    /// The pieces of each way of reaching the goal on its standard face, with the name of
    /// the way when there are several (the xcross slots, by their edge): a cube reaches the
    /// goal there when it reaches any of them.
    pub fn variants(&self) -> Vec<(Option<&'static str>, Pieces)> {
        let named = |place_corners, place_edges, orient_corners, orient_edges, slice| Pieces {
            place_corners,
            place_edges,
            orient_corners,
            orient_edges,
            slice,
        };
        let one = |p: Pieces| vec![(None, p)];
        match self.kind {
            GoalKind::Named(GoalName::Cross) => one(named(0, D_EDGES, 0, 0, false)),
            GoalKind::Named(GoalName::Xcross) => SLOTS
                .iter()
                .map(|&(slot, corner, edge)| {
                    (Some(slot), named(corner, D_EDGES | edge, 0, 0, false))
                })
                .collect(),
            GoalKind::Named(GoalName::F2l) => one(named(D_CORNERS, D_EDGES | E_EDGES, 0, 0, false)),
            GoalKind::Named(GoalName::Eo) => one(named(0, 0, 0, ALL_EDGES, false)),
            GoalKind::Named(GoalName::Dr) => one(named(0, 0, ALL_CORNERS, ALL_EDGES, true)),
            GoalKind::Named(GoalName::Corners) => one(named(ALL_CORNERS, 0, 0, 0, false)),
            GoalKind::Named(GoalName::Edges) => one(named(0, ALL_EDGES, 0, 0, false)),
            GoalKind::Custom(p) => one(p),
        }
    }

    /// The goal's text without its face: the name, or the piece list.
    pub fn pieces_text(&self) -> String {
        match self.kind {
            GoalKind::Named(n) => n.as_str().to_string(),
            GoalKind::Custom(p) => p.to_string(),
        }
    }

    /// The protocol form (`Mode.goal`), which [`Goal::from_wire`] reads back as this goal.
    pub fn to_wire(&self) -> crate::Goal {
        let (kind, p) = match self.kind {
            GoalKind::Named(n) => (n.to_wire(), Pieces::default()),
            GoalKind::Custom(p) => (crate::GoalKind::Custom, p),
        };
        crate::Goal {
            kind: kind as i32,
            place_corners: p.place_corners.into(),
            place_edges: p.place_edges.into(),
            orient_corners: p.orient_corners.into(),
            orient_edges: p.orient_edges.into(),
            any_face: self.any_face,
        }
    }

    /// The goal a protocol `Mode.goal` asks, every field checked and refused naming it: the
    /// kind must be set; a named goal carries no mask; a custom goal's masks stay within the
    /// 8 corners and 12 edges and name at least one piece.
    pub fn from_wire(g: &crate::Goal) -> Result<Goal, ModeError> {
        let kind = crate::GoalKind::try_from(g.kind).map_err(|_| {
            ModeError::new(
                "mode.goal.kind",
                "--goal",
                format!("is {}: give a goal kind of 1 to 8", g.kind),
            )
        })?;
        let masks = [
            ("mode.goal.place_corners", g.place_corners, 8),
            ("mode.goal.place_edges", g.place_edges, 12),
            ("mode.goal.orient_corners", g.orient_corners, 8),
            ("mode.goal.orient_edges", g.orient_edges, 12),
        ];
        let name = GoalName::ALL.into_iter().find(|n| n.to_wire() == kind);
        let goal =
            match (kind, name) {
                (crate::GoalKind::Unspecified, _) => return Err(ModeError::new(
                    "mode.goal.kind",
                    "--goal",
                    "is unspecified: give a named goal or custom (leave the goal unset for the \
                     whole cube)"
                        .into(),
                )),
                (_, Some(name)) => {
                    if let Some(&(field, mask, _)) = masks.iter().find(|m| m.1 != 0) {
                        return Err(ModeError::new(
                            field,
                            "--goal",
                            format!(
                            "is {mask:#x}: only a custom goal has masks ({} has its own pieces)",
                            name.as_str()
                        ),
                        ));
                    }
                    Goal::named(name)
                }
                (_, None) => {
                    if let Some(&(field, mask, bits)) = masks.iter().find(|m| m.1 >> m.2 != 0) {
                        return Err(ModeError::new(
                            field,
                            "--goal",
                            format!("is {mask:#x}: give a mask of the {bits} positions' bits"),
                        ));
                    }
                    // in range: checked just above
                    Goal::custom(Pieces {
                        place_corners: g.place_corners as u8,
                        place_edges: g.place_edges as u16,
                        orient_corners: g.orient_corners as u8,
                        orient_edges: g.orient_edges as u16,
                        slice: false,
                    })
                    .map_err(|reason| ModeError::new("mode.goal", "--goal", reason))?
                }
            };
        Ok(goal.on_any_face(g.any_face))
    }

    /// The bytes of the goal in a question's key.
    pub(crate) fn key(&self) -> [u8; 8] {
        let w = self.to_wire();
        let [pe0, pe1] = (w.place_edges as u16).to_le_bytes();
        let [oe0, oe1] = (w.orient_edges as u16).to_le_bytes();
        [
            w.kind as u8,
            w.place_corners as u8,
            pe0,
            pe1,
            w.orient_corners as u8,
            oe0,
            oe1,
            u8::from(w.any_face),
        ]
    }
}

/// The goal as the CLI, Python, JSON and Parquet name it: its name or piece list, and
/// ` on any face` when it is.
impl fmt::Display for Goal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.pieces_text())?;
        if self.any_face {
            f.write_str(" on any face")?;
        }
        Ok(())
    }
}

/// A piece by position.
enum Piece {
    Corner(usize),
    Edge(usize),
}

/// The piece whose faces are the letters of `name`, in any order (`FRD` is `DFR`).
fn piece_named(name: &str) -> Option<Piece> {
    let sorted = |s: &str| {
        let mut b = s.as_bytes().to_vec();
        b.sort_unstable();
        b
    };
    let want = sorted(name);
    if let Some(i) = CORNER_NAMES.iter().position(|c| sorted(c) == want) {
        return Some(Piece::Corner(i));
    }
    EDGE_NAMES
        .iter()
        .position(|e| sorted(e) == want)
        .map(Piece::Edge)
}

#[cfg(feature = "batch")]
pub use cube::Alternative;

/// The cube-level side: which cubes reach a goal, and a goal's alternatives with their
/// rotations.
#[cfg(feature = "batch")]
mod cube {
    use super::{Faces, Goal, GoalKind, Pieces};
    use cubefleet_tables::moves::Face;
    use cubefleet_tables::symmetry::{N_SYM, SYMMETRIES};
    use cubefleet_tables::CubieCube;

    impl Pieces {
        /// True when `cube` has every piece this asks: each placed position its own piece
        /// untwisted, each oriented position an oriented piece, the E-slice edges in the slice.
        pub fn reached(&self, cube: &CubieCube) -> bool {
            let corners = (0..8).all(|i| {
                (self.place_corners >> i & 1 == 0 || (cube.cp[i] == i as u8 && cube.co[i] == 0))
                    && (self.orient_corners >> i & 1 == 0 || cube.co[i] == 0)
            });
            let edges = (0..12).all(|i| {
                (self.place_edges >> i & 1 == 0 || (cube.ep[i] == i as u8 && cube.eo[i] == 0))
                    && (self.orient_edges >> i & 1 == 0 || cube.eo[i] == 0)
            });
            corners && edges && (!self.slice || cube.ep[8..].iter().all(|&e| e >= 8))
        }
    }

    /// One way of reaching a goal: its pieces, seen after conjugating the cube by symmetry
    /// `sym` (a rotation: the cube `S c S⁻¹` reaches `pieces` exactly when `c` reaches the
    /// goal on the face this alternative names).
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct Alternative {
        /// What a solution that reaches this alternative reached, for the result
        /// (`cross on U`, `xcross on D, slot FR`, `eo on R/L`).
        pub label: String,
        /// The symmetry (one of the 24 rotations of the 48) the cube is conjugated by.
        pub sym: usize,
        /// The pieces the conjugated cube must reach.
        pub pieces: Pieces,
    }

    impl Alternative {
        /// True when `cube` reaches this alternative.
        pub fn reached(&self, cube: &CubieCube) -> bool {
            self.pieces.reached(&SYMMETRIES.conjugate(cube, self.sym))
        }
    }

    /// The rotations (symmetries without a reflection), in symmetry order.
    fn rotations() -> impl Iterator<Item = usize> {
        (0..N_SYM).filter(|&s| !SYMMETRIES.cube[s].mirrored())
    }

    /// The face the turns of `face` become under conjugation by `sym`.
    fn image(sym: usize, face: Face) -> Face {
        SYMMETRIES.move_conj[sym][3 * face as usize].face()
    }

    /// The first rotation that turns `from`'s turns into turns of one of `to`.
    fn rotation_taking(from: Face, to: &[Face]) -> usize {
        rotations()
            .find(|&s| to.contains(&image(s, from)))
            .unwrap_or(0)
    }

    impl Goal {
        /// Every way of reaching the goal: each variant ([`Goal::variants`]) on each face it is
        /// tried on ([`Goal::faces`]), in face order (U R F D L B, axes U/D R/L F/B).
        pub fn alternatives(&self) -> Vec<Alternative> {
            let name = self.pieces_text();
            // (label of the face, symmetry)
            let faces: Vec<(String, usize)> = match self.faces() {
                Faces::One => vec![(self.standard_face().into(), 0)],
                Faces::Six => Face::ALL
                    .into_iter()
                    .map(|f| (format!("on {}", f.letter()), rotation_taking(f, &[Face::D])))
                    .collect(),
                Faces::Axes => {
                    let to: &[Face] = match self.kind {
                        GoalKind::Named(super::GoalName::Eo) => &[Face::F, Face::B],
                        _ => &[Face::U, Face::D],
                    };
                    [Face::U, Face::R, Face::F]
                        .into_iter()
                        .map(|f| {
                            let axis = format!("on {}/{}", f.letter(), f.opposite().letter());
                            (axis, rotation_taking(f, to))
                        })
                        .collect()
                }
                Faces::Rotations => rotations()
                    .map(|s| {
                        let on = |standard: Face| {
                            Face::ALL
                                .into_iter()
                                .find(|&f| image(s, f) == standard)
                                .map_or('?', Face::letter)
                        };
                        (
                            format!("with D on {}, F on {}", on(Face::D), on(Face::F)),
                            s,
                        )
                    })
                    .collect(),
            };
            let mut all = Vec::new();
            for (face, sym) in faces {
                for (variant, pieces) in self.variants() {
                    let mut label = name.clone();
                    if !face.is_empty() {
                        label = format!("{label} {face}");
                    }
                    if let Some(v) = variant {
                        // the slot as the original cube has it: conjugate position k looks at
                        // the cube's position S⁻¹.ep[k]
                        let back = &SYMMETRIES.cube[SYMMETRIES.inverse[sym] as usize];
                        let edge = super::EDGE_NAMES
                            .iter()
                            .position(|e| *e == v)
                            .map_or(v, |k| super::EDGE_NAMES[back.ep[k] as usize]);
                        label = format!("{label}, slot {edge}");
                    }
                    all.push(Alternative { label, sym, pieces });
                }
            }
            all
        }

        /// The face or axis the goal is on when not turned (`on D`, `on F/B`, `on U/D`), ""
        /// for the goals that have none.
        fn standard_face(&self) -> &'static str {
            match self.kind {
                GoalKind::Named(super::GoalName::Cross)
                | GoalKind::Named(super::GoalName::Xcross)
                | GoalKind::Named(super::GoalName::F2l) => "on D",
                GoalKind::Named(super::GoalName::Eo) => "on F/B",
                GoalKind::Named(super::GoalName::Dr) => "on U/D",
                _ => "",
            }
        }

        /// The first alternative `cube` reaches (its label says which face and slot), None
        /// when it reaches none: the check of every answer to a goal question.
        pub fn reached_by(&self, cube: &CubieCube) -> Option<Alternative> {
            self.alternatives().into_iter().find(|a| a.reached(cube))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn goals_read_and_write_back() {
        for name in GoalName::ALL {
            let g = Goal::parse(name.as_str()).expect("a name");
            assert_eq!(g, Goal::named(name));
            assert_eq!(g.to_string(), name.as_str());
            assert_eq!(Goal::from_wire(&g.to_wire()), Ok(g));
            let any = g.on_any_face(true);
            assert_eq!(Goal::from_wire(&any.to_wire()), Ok(any));
            assert_ne!(any.key(), g.key());
        }
        let g = Goal::parse("place:DF, FRD ,DR;orient:UF,ubl").expect_err("lower case");
        assert!(g.contains("ubl"), "{g}");
        let g = Goal::parse("place:DF,FRD,DR;orient:UF").expect("a list");
        assert_eq!(
            g.kind(),
            GoalKind::Custom(Pieces {
                place_corners: 1 << 4,
                place_edges: 1 << 4 | 1 << 5,
                orient_edges: 1 << 1,
                ..Pieces::default()
            })
        );
        assert_eq!(g.to_string(), "place:DR,DF,DFR;orient:UF");
        assert_eq!(Goal::parse(&g.to_string()), Ok(g));
        assert_eq!(Goal::from_wire(&g.to_wire()), Ok(g));
        for bad in [
            "",
            "crosses",
            "place:",
            "place:XY",
            "put:DF",
            "place:DF;slice",
        ] {
            assert!(Goal::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn hostile_wire_goals_are_refused_naming_the_field() {
        let custom = |place_corners, place_edges, orient_corners, orient_edges| crate::Goal {
            kind: crate::GoalKind::Custom as i32,
            place_corners,
            place_edges,
            orient_corners,
            orient_edges,
            any_face: false,
        };
        for (g, field) in [
            (crate::Goal::default(), "mode.goal.kind"),
            (
                crate::Goal {
                    kind: 9,
                    ..crate::Goal::default()
                },
                "mode.goal.kind",
            ),
            (
                crate::Goal {
                    kind: -1,
                    ..crate::Goal::default()
                },
                "mode.goal.kind",
            ),
            (custom(0x100, 0, 0, 0), "mode.goal.place_corners"),
            (custom(0, 0x1000, 0, 0), "mode.goal.place_edges"),
            (custom(0, 0, u32::MAX, 0), "mode.goal.orient_corners"),
            (custom(0, 1, 0, 1 << 31), "mode.goal.orient_edges"),
            (custom(0, 0, 0, 0), "mode.goal"),
            (
                crate::Goal {
                    kind: crate::GoalKind::Cross as i32,
                    place_edges: 1,
                    ..crate::Goal::default()
                },
                "mode.goal.place_edges",
            ),
        ] {
            let e = Goal::from_wire(&g).expect_err(field);
            assert_eq!(e.field, field, "{g:?}");
            assert!(e.to_string().starts_with(field), "{e}");
        }
    }
}
