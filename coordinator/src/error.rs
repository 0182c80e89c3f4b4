//! The coordinator's error type and its mapping to gRPC statuses.

/// Everything that can go wrong in the coordinator.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The store failed (disk full, corruption, ...).
    #[error("store: {0}")]
    Store(#[from] sled::Error),
    /// A stored record does not decode.
    #[error("store record does not decode: {0}")]
    Decode(#[from] prost::DecodeError),
    /// The request is malformed.
    #[error("{0}")]
    InvalidArgument(String),
    /// A batch, job or worker that does not exist.
    #[error("{0} not found")]
    NotFound(String),
    /// The gRPC server failed.
    #[error("server: {0}")]
    Transport(#[from] tonic::transport::Error),
    /// Reading certificates or binding failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// A limit of the store's key space was reached (batch numbers, lines of a batch).
    #[error("the store is full: {0}")]
    Full(String),
    /// A submission under an existing batch id whose lines are not the batch's.
    #[error("batch {batch} exists with other lines: {what}; submit these lines under another batch id (or none: a new one is made)")]
    ContentDiffers {
        /// The batch id.
        batch: String,
        /// What differs.
        what: String,
    },
    /// The store was written by a newer cubefleet, in a format this one does not know.
    #[error("the store in {dir} has format version {found}; this cubefleet reads versions up to {known}: open it with a newer cubefleet, or use another --data directory")]
    NewerStore {
        /// The store's directory.
        dir: String,
        /// Its format version.
        found: u32,
        /// The newest version this build reads.
        known: u32,
    },
    /// A store of an earlier version (format 1) whose batch numbers overflowed their 24 bits:
    /// jobs of different batches may have shared keys, so its results are not trusted.
    #[error("the store in {dir} was written by an earlier cubefleet whose batch numbers overflowed ({why}), so jobs of different batches may have overwritten each other and its results cannot be trusted: move the directory away (or use another --data directory) and submit the files again")]
    AliasedStore {
        /// The store's directory.
        dir: String,
        /// Which batch showed it.
        why: String,
    },
    /// The coordinator is stopping: it takes no more changes (try again once it runs again).
    #[error("{0}")]
    Unavailable(String),
    /// The caller presented no valid credential or session.
    #[error("{0}")]
    Unauthenticated(String),
    /// The caller's credential may not do this (wrong role, revoked, another's session).
    #[error("{0}")]
    PermissionDenied(String),
    /// A limit of the caller's (jobs held, sessions of a credential) was reached.
    #[error("{0}")]
    Exhausted(String),
    /// A blocking task panicked or was cancelled.
    #[error("internal: {0}")]
    Internal(String),
}

/// A mode field out of range: refused naming the field.
impl From<cubefleet_proto::question::ModeError> for Error {
    fn from(e: cubefleet_proto::question::ModeError) -> Self {
        Error::InvalidArgument(e.to_string())
    }
}

impl From<Error> for tonic::Status {
    fn from(e: Error) -> Self {
        match e {
            Error::InvalidArgument(m) => tonic::Status::invalid_argument(m),
            Error::NotFound(m) => tonic::Status::not_found(format!("{m} not found")),
            e @ Error::Full(_) => tonic::Status::resource_exhausted(e.to_string()),
            e @ Error::ContentDiffers { .. } => tonic::Status::failed_precondition(e.to_string()),
            Error::Unavailable(m) => tonic::Status::unavailable(m),
            Error::Unauthenticated(m) => tonic::Status::unauthenticated(m),
            Error::PermissionDenied(m) => tonic::Status::permission_denied(m),
            Error::Exhausted(m) => tonic::Status::resource_exhausted(m),
            other => tonic::Status::internal(other.to_string()),
        }
    }
}

impl From<tokio::task::JoinError> for Error {
    fn from(e: tokio::task::JoinError) -> Self {
        Error::Internal(e.to_string())
    }
}
