//! The gRPC protocol of cubefleet, package `cubefleet.v1`: generated messages, clients and
//! servers (`proto/cubefleet/v1/cubefleet.proto`), the encoded descriptor set for gRPC
//! reflection, and the values both sides agree on (`defaults`: the default target, the
//! message limits), among them the one mode type ([`question::Question`]: what a job asks,
//! checked and converted to and from the wire's `Mode` in one place).
//!
//! The clients, the servers and [`client`] need the feature `grpc` (on by default); without it
//! the crate depends on prost alone (no tonic, no tokio), for crates that only read the
//! messages and the status enum.

#[allow(missing_docs, unreachable_pub, clippy::all, rust_2018_idioms)]
mod generated {
    include!(concat!(env!("OUT_DIR"), "/cubefleet.v1.rs"));
}

pub use generated::*;

mod defaults;
pub use defaults::{DEFAULT_MAX_LENGTH, MAX_REQUEST_BYTES, MAX_RESPONSE_BYTES};

/// The revision of the worker protocol this build speaks, sent both ways at registration
/// (`RegisterRequest.protocol`, `RegisterResponse.protocol`). Revisions only add to what a
/// peer may send; each names what its speakers need the other side to understand:
///
/// - 0: sent by builds older than the field (they send nothing);
/// - 1: never sent (the revision the field was added in is 2);
/// - 2: completions may carry the status `over_target` (a two-phase solution verified above
///   the target) and moves as bytes (`Completion.moves`); workers need a coordinator of this
///   revision or later, as an older one rejects `over_target` and fails the job after
///   repeated rejections.
/// - 3: a release may name why the worker cannot run a job (`JobProgress.reason`), which the
///   coordinator counts like a refused result; `RegisterResponse.worker_id` is a session
///   secret and `session` its public id. An older coordinator ignores the reason (the job is
///   queued again), so workers of this revision still work for revision 2.
/// - 4: results and completions carry their status as an enum (`result_status`, see
///   [`status`]) beside its text (`status`), which they still write: a worker of this
///   revision works for coordinators of revision 2 and 3, which read the text, and a
///   coordinator reads the text of a completion without the enum (older workers).
/// - 5: a mode may restrict the turns a solution uses (`Mode.moves`,
///   [`question::MOVES_PROTOCOL`]); a coordinator leases such a job only to a worker of this
///   revision or later, since an older one would drop the field and search every turn.
/// - 6: a mode may name a target other than the solved cube (`Mode.to_high`, `Mode.to_low`,
///   [`question::TARGET_PROTOCOL`]); a coordinator leases such a job only to a worker of this
///   revision or later, since an older one would drop the fields and solve to the solved cube.
/// - 7: a mode may ask for a partial goal (`Mode.goal`, [`question::GOAL_PROTOCOL`]); a
///   coordinator leases such a job only to a worker of this revision or later, since an older
///   one would drop the field and solve the whole cube.
/// - 7 (also): a mode may ask for several solutions, every optimal one or their count
///   (`Mode.solutions`, `Mode.all_solutions`, [`question::SOLUTIONS_PROTOCOL`]); completions
///   carry them (`Completion.solutions`, `count`, `spot_solutions`), a lease may name a spot
///   check (`LeasedJob.spot_seed`); a coordinator leases such a job only to a worker of this
///   revision or later, since an older one would answer with one solution.
/// - 7 (also): a mode may ask for a whole coset (`Mode.coset`, [`question::COSET_PROTOCOL`]): the
///   lease carries the coset and a sample seed (`LeasedJob.coset`, `sample_seed`), the
///   completion the counts and the samples' answers (`Completion.coset`, `coset_samples`); a
///   coordinator leases such a job only to a worker of this revision or later.
pub const PROTOCOL: u32 = 7;

/// The lowest coordinator revision a worker of this build works for.
pub const MIN_COORDINATOR_PROTOCOL: u32 = 2;

impl JobState {
    /// True for the states a job never leaves: done, invalid, cancelled, failed.
    pub fn is_finished(self) -> bool {
        matches!(
            self,
            JobState::Done | JobState::Invalid | JobState::Cancelled | JobState::Failed
        )
    }
}

#[cfg(feature = "batch")]
pub mod batch;
#[cfg(feature = "grpc")]
pub mod client;
pub mod goal;
pub mod question;
pub mod status;
pub mod view;

/// The encoded `FileDescriptorSet` of the protocol (for the reflection service).
pub const FILE_DESCRIPTOR_SET: &[u8] =
    include_bytes!(concat!(env!("OUT_DIR"), "/cubefleet_descriptor.bin"));

#[cfg(test)]
mod tests {
    use prost::Message;

    #[test]
    fn descriptor_set_decodes_and_names_both_services() {
        let fds = prost_types_free_decode(super::FILE_DESCRIPTOR_SET);
        assert!(fds.contains("cubefleet.v1"));
        assert!(fds.contains("Batches") && fds.contains("Workers"));
    }

    /// Decodes the set far enough to read names, without depending on prost-types.
    fn prost_types_free_decode(bytes: &[u8]) -> String {
        #[derive(Clone, PartialEq, Message)]
        struct Fds {
            #[prost(message, repeated, tag = "1")]
            file: Vec<Fd>,
        }
        #[derive(Clone, PartialEq, Message)]
        struct Fd {
            #[prost(string, optional, tag = "2")]
            package: Option<String>,
            #[prost(message, repeated, tag = "6")]
            service: Vec<Svc>,
        }
        #[derive(Clone, PartialEq, Message)]
        struct Svc {
            #[prost(string, optional, tag = "1")]
            name: Option<String>,
        }
        let fds = Fds::decode(bytes).expect("descriptor set decodes");
        let mut out = String::new();
        for f in fds.file {
            out.push_str(&f.package.unwrap_or_default());
            for s in f.service {
                out.push(' ');
                out.push_str(&s.name.unwrap_or_default());
            }
        }
        out
    }
}
