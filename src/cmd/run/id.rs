//! The batch ids of `cubefleet run`: the same input and mode give the same id, so running it
//! again resumes its batch from the store instead of starting over. A file is named by its
//! lines' content hash; a range or sample by a hash of its definition's fields.
//!
//! Invariant: the id of an input never changes from one version to the next (a store made by
//! an earlier version holds batches under the ids it derived). The bytes hashed for a
//! definition are a fixed encoding of its fields, written here and nowhere else, never the
//! text shown to people; they are the bytes earlier versions hashed (which took them from
//! the description `run` printed), and the tests pin the ids of known definitions.

use cubefleet_coordinator::range::States;
use sha2::Digest;

/// The bytes that name a definition: `range START..END step STEP keep KEPT`,
/// `sample COUNT seed SEED keep KEPT` or `cosets START..END canonical true|false`, numbers in
/// decimal, `KEPT` `histogram` when
/// `histogram_only` (`--keep histogram`) else `all`. Fixed: a change here changes the id of
/// every range and sample batch in existing stores.
fn definition_bytes(states: &States, histogram_only: bool) -> Vec<u8> {
    let kept = if histogram_only { "histogram" } else { "all" };
    match *states {
        States::Range { start, end, step } => {
            format!("range {start}..{end} step {step} keep {kept}")
        }
        States::Sample { count, seed } => format!("sample {count} seed {seed} keep {kept}"),
        States::Cosets {
            start,
            end,
            canonical,
        } => format!("cosets {start}..{end} canonical {canonical}"),
    }
    .into_bytes()
}

/// What names a range or sample batch as a file's content hash names a file: SHA-256 over
/// its definition's fields and what it keeps ([`definition_bytes`]).
pub(super) fn definition_hash(states: &States, histogram_only: bool) -> [u8; 32] {
    sha2::Sha256::digest(definition_bytes(states, histogram_only)).into()
}

/// A batch id naming this input and mode: the same input and mode give the same id, another
/// input or another mode (but for a SHA-256 collision) another. `content` is the file's
/// content hash or the definition's ([`definition_hash`]); the id is `run-` and the first
/// 128 bits of SHA-256 over it and the mode (prost-encoded), in hex.
pub(super) fn batch_id(content: &[u8; 32], mode: &cubefleet_proto::Mode) -> String {
    use prost::Message;
    let mut h = sha2::Sha256::new();
    h.update(content);
    h.update(mode.encode_to_vec());
    let digest = h.finalize();
    let hex: String = digest[..16].iter().map(|b| format!("{b:02x}")).collect();
    format!("run-{hex}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use cubefleet_proto::{mode, Mode, TwoPhase};

    /// The mode of `cubefleet run` without mode flags.
    fn default_mode() -> Mode {
        Mode {
            kind: Some(mode::Kind::TwoPhase(TwoPhase { max_length: 20 })),
            timeout_seconds: 0.0,
            ..Mode::default()
        }
    }

    fn hex(b: &[u8]) -> String {
        b.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// The ids earlier versions gave these definitions (computed from their bytes with an
    /// independent SHA-256): a store they made resumes, and a reworded message cannot change
    /// them.
    #[test]
    fn known_definitions_keep_their_ids() {
        let cases = [
            (
                States::range(0, 1000, 1).expect("valid"),
                false,
                "a5f3a80dd2ed9d2ba4ced73991b3dd65ceb5f4ef53980fb81d7ebcf9a6bcd927",
                "run-fc25b3b8641cf12f5d79ac94fcb3e4b2",
            ),
            (
                States::sample(500, 7).expect("valid"),
                true,
                "45f34809e7414dad022d305ed96a45c5a5fdcaa237d5aa70729966a8205e036c",
                "run-62d8e78fe867e129b048018f44b9c9d6",
            ),
            (
                States::range(43_252_003_274_489_855_000, 43_252_003_274_489_856_000, 10)
                    .expect("valid"),
                false,
                "b23a2a3dc6fe0bd2e55f402daea5a45ae9d0d749d7b715b2c9f56f2c2da6ab8f",
                "run-516d18374ded906f3695c9f2e41283a2",
            ),
        ];
        for (states, histogram_only, hash, id) in cases {
            let content = definition_hash(&states, histogram_only);
            assert_eq!(hex(&content), hash, "{states:?} {histogram_only}");
            assert_eq!(
                batch_id(&content, &default_mode()),
                id,
                "{states:?} {histogram_only}"
            );
        }
    }

    #[test]
    fn what_is_kept_and_the_mode_name_other_batches() {
        let range = States::range(0, 1000, 1).expect("valid");
        let all = definition_hash(&range, false);
        assert_ne!(all, definition_hash(&range, true));
        let mut longer = default_mode();
        longer.kind = Some(mode::Kind::TwoPhase(TwoPhase { max_length: 21 }));
        assert_ne!(batch_id(&all, &default_mode()), batch_id(&all, &longer));
        let to = Mode {
            to_low: 1,
            ..default_mode()
        };
        assert_ne!(batch_id(&all, &default_mode()), batch_id(&all, &to));
        let goal = |any_face| Mode {
            goal: Some(cubefleet_proto::Goal {
                kind: cubefleet_proto::GoalKind::Cross as i32,
                any_face,
                ..Default::default()
            }),
            ..default_mode()
        };
        assert_ne!(
            batch_id(&all, &default_mode()),
            batch_id(&all, &goal(false))
        );
        assert_ne!(batch_id(&all, &goal(true)), batch_id(&all, &goal(false)));
    }
}
