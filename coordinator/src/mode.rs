//! A batch's mode as the core reads it: the protocol's `Mode`, stored with the batch, read
//! through the one mode type ([`Question`], `cubefleet_proto::question`), which checks every
//! field, fills the defaults, names what a result answers ([`Question::key`]) and gives the
//! metric. Read by the core (intake, dedup, leases, completion) and by [`crate::verify`].

use cubefleet_proto::question::Question;
use cubefleet_proto::Mode;

use crate::error::Error;

/// The mode a submission's `mode` asks, every field checked and the defaults filled in
/// (two-phase to [`cubefleet_proto::DEFAULT_MAX_LENGTH`] moves, every turn): what is stored
/// with the batch. A field out of range is refused naming it ([`Question::from_wire`]).
pub(crate) fn normalize_mode(m: &Mode) -> Result<Mode, Error> {
    Ok(Question::from_wire(m)?.to_wire())
}

/// The question of a stored mode. Every stored mode passed [`normalize_mode`] at submission
/// (and those of earlier versions passed the same checks), so reading it fails only for a
/// store altered by hand; such a mode is read as the default question, whose answers
/// verification then holds to every turn and God's number.
pub(crate) fn question_of(m: &Mode) -> Question {
    Question::from_wire(m).unwrap_or_default()
}

/// A short key naming what a result of mode `m` answers ([`Question::key`]): two results with
/// equal keys are interchangeable.
pub(crate) fn mode_key(m: &Mode) -> Vec<u8> {
    question_of(m).key()
}

/// The key the symmetry index files a finished job of mode `m` under ([`mode_key`]), or None
/// when its answers do not carry over to the symmetric and inverse copies of its position: a
/// restricted move set, which a symmetry maps to other turns (a copy's shortest solution in
/// the set may be longer, or not exist), or a target other than the solved cube, which a
/// symmetry or the inversion maps to another target (a copy's answer reaches that one, not
/// the batch's); a partial goal, which a symmetry turns to another face and the inversion
/// does not keep (a copy's goal distance is another); a question for several solutions,
/// whose lists a symmetry would have to map and put in order again (and whose count-only
/// claims rest on one lease's spot check); or a coset, whose counts are its own (a symmetric
/// position is in another coset, and a result holds no solution). Such results are never
/// indexed, so never reused.
pub(crate) fn index_key(m: &Mode) -> Option<Vec<u8>> {
    let q = question_of(m);
    let plain = q.goal().is_none() && !q.count().is_many() && !q.is_coset();
    (q.moves().is_all() && !q.has_target() && plain).then(|| q.key())
}

#[cfg(test)]
mod tests {
    use super::*;
    use cubefleet_proto::{mode, DepthLimited, Optimal, TwoPhase};

    /// No two questions share a key (a target is never cut to a byte), and the two spellings
    /// of HTM (unspecified and HTM) share one, as do the stored and the submitted forms.
    #[test]
    fn keys_name_whole_questions() {
        let tp = |max_length| Mode {
            kind: Some(mode::Kind::TwoPhase(TwoPhase { max_length })),
            ..Mode::default()
        };
        let dl = |max_depth, metric| Mode {
            kind: Some(mode::Kind::DepthLimited(DepthLimited { max_depth, metric })),
            ..Mode::default()
        };
        let opt = |metric| Mode {
            kind: Some(mode::Kind::Optimal(Optimal { metric })),
            ..Mode::default()
        };
        let restricted = Mode {
            moves: 0b111_000_111,
            ..opt(1)
        };
        let to = |to_high, to_low| Mode {
            to_high,
            to_low,
            ..opt(1)
        };
        let goal = |text: &str, any_face| Mode {
            goal: Some(
                cubefleet_proto::goal::Goal::parse(text)
                    .expect("goal")
                    .on_any_face(any_face)
                    .to_wire(),
            ),
            ..opt(1)
        };
        let keys = [
            mode_key(&goal("cross", false)),
            mode_key(&goal("cross", true)),
            mode_key(&goal("eo", false)),
            mode_key(&goal("place:DF", false)),
            mode_key(&goal("place:DR", false)),
            mode_key(&tp(255)),
            mode_key(&tp(256)),
            mode_key(&tp(u32::MAX)),
            mode_key(&dl(1, 1)),
            mode_key(&dl(1, 2)),
            mode_key(&dl(40, 1)),
            mode_key(&opt(1)),
            mode_key(&opt(2)),
            mode_key(&restricted),
            mode_key(&to(0, 1)),
            mode_key(&to(1, 0)),
            mode_key(&Mode {
                moves: 0b111_000_111,
                ..to(0, 1)
            }),
        ];
        for (i, a) in keys.iter().enumerate() {
            for b in &keys[..i] {
                assert_ne!(a, b);
            }
        }
        assert_eq!(mode_key(&opt(0)), mode_key(&opt(1)));
        assert_eq!(mode_key(&dl(3, 0)), mode_key(&dl(3, 1)));
        let stored = normalize_mode(&restricted).expect("in range");
        assert_eq!(mode_key(&stored), mode_key(&restricted));
        assert_eq!(mode_key(&tp(0)), mode_key(&tp(20)));
        assert_eq!(mode_key(&to(0, 0)), mode_key(&opt(1)));
        // answers to a target or in a move set are never indexed for symmetric copies
        assert!(index_key(&to(0, 1)).is_none() && index_key(&restricted).is_none());
        assert!(index_key(&goal("cross", false)).is_none());
        assert_eq!(index_key(&to(0, 0)), Some(mode_key(&opt(1))));
    }
}
