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
    /// A blocking task panicked or was cancelled.
    #[error("internal: {0}")]
    Internal(String),
}

impl From<Error> for tonic::Status {
    fn from(e: Error) -> Self {
        match e {
            Error::InvalidArgument(m) => tonic::Status::invalid_argument(m),
            Error::NotFound(m) => tonic::Status::not_found(format!("{m} not found")),
            other => tonic::Status::internal(other.to_string()),
        }
    }
}

impl From<tokio::task::JoinError> for Error {
    fn from(e: tokio::task::JoinError) -> Self {
        Error::Internal(e.to_string())
    }
}
