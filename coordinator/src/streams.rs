//! The response streams each credential holds open (`WatchBatch`, `StreamResults`), counted
//! per credential name and per kind: above the kind's most a call is refused with
//! `RESOURCE_EXHAUSTED` naming the limit, whatever connection or session it comes on, while
//! another credential still gets its stream. A stream gives its place back when it ends or
//! its caller goes away (tonic drops it), never sooner.
//!
//! What a stream that is never read holds is bounded by its producer, not here: a watch's
//! channel holds 4 updates, a results stream one page of results being sent, the next page
//! read ([`RESULTS_PAGE`] each) and [`RESULTS_CHANNEL`] results in its channel (HTTP/2 flow
//! control stops tonic from taking more from a stream its caller does not read).

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use tokio_stream::Stream;

use crate::error::Error;

/// Results waiting in a results stream's channel (the page being read and the one being sent
/// come on top).
pub(crate) const RESULTS_CHANNEL: usize = 256;

/// Results a results stream reads from the store at once (while the page before is sent).
pub(crate) const RESULTS_PAGE: u64 = 1000;

/// The kinds of stream counted apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Kind {
    /// `WatchBatch`.
    Watch,
    /// `StreamResults`.
    Results,
}

impl Kind {
    /// The call's name and the limit's, for the refusal.
    fn names(self) -> (&'static str, &'static str) {
        match self {
            Kind::Watch => ("WatchBatch", "limits::MAX_WATCHES"),
            Kind::Results => ("StreamResults", "limits::MAX_RESULT_STREAMS"),
        }
    }
}

/// The open streams of every credential, by kind (shared by the services' clones).
#[derive(Clone, Debug)]
pub(crate) struct OpenStreams {
    /// Open streams per (credential name, kind); an entry at 0 is removed.
    open: Arc<Mutex<HashMap<(String, Kind), usize>>>,
    /// Most watches per credential.
    max_watches: usize,
    /// Most results streams per credential.
    max_results: usize,
}

impl OpenStreams {
    /// Counts with these limits.
    pub(crate) fn new(max_watches: usize, max_results: usize) -> OpenStreams {
        OpenStreams {
            open: Arc::default(),
            max_watches,
            max_results,
        }
    }

    /// A place for one more stream of `kind` for the credential `name`, or `Exhausted` when it
    /// holds the most already.
    pub(crate) fn open(&self, name: &str, kind: Kind) -> Result<Place, Error> {
        let most = match kind {
            Kind::Watch => self.max_watches,
            Kind::Results => self.max_results,
        };
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        let key = (name.to_string(), kind);
        let n = open.get(&key).copied().unwrap_or(0);
        if n >= most {
            let (call, limit) = kind.names();
            return Err(Error::Exhausted(format!(
                "credential {} holds {n} {call} streams open, the most one credential may \
                 ({limit} = {most}): read one to its end or close it first",
                crate::logsafe::text(name)
            )));
        }
        open.insert(key.clone(), n + 1);
        Ok(Place {
            open: self.open.clone(),
            key,
        })
    }

    /// Streams of `kind` the credential `name` holds open now.
    #[cfg(test)]
    pub(crate) fn count(&self, name: &str, kind: Kind) -> usize {
        let open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        open.get(&(name.to_string(), kind)).copied().unwrap_or(0)
    }
}

/// One open stream's place, given back when dropped.
#[derive(Debug)]
pub(crate) struct Place {
    /// The counts.
    open: Arc<Mutex<HashMap<(String, Kind), usize>>>,
    /// Whose and which.
    key: (String, Kind),
}

impl Drop for Place {
    fn drop(&mut self) {
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(n) = open.get_mut(&self.key) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                open.remove(&self.key);
            }
        }
    }
}

/// A response stream that holds its [`Place`] as long as it lives.
#[derive(Debug)]
pub(crate) struct Counted<S> {
    /// The stream.
    inner: S,
    /// Its place (given back when the stream is dropped).
    _place: Place,
}

impl<S> Counted<S> {
    /// `inner`, holding `place`.
    pub(crate) fn new(inner: S, place: Place) -> Counted<S> {
        Counted {
            inner,
            _place: place,
        }
    }
}

impl<S: Stream + Unpin> Stream for Counted<S> {
    type Item = S::Item;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<S::Item>> {
        Pin::new(&mut self.inner).poll_next(cx)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_are_counted_per_credential_and_kind_and_given_back() {
        let streams = OpenStreams::new(2, 1);
        let a1 = streams.open("a", Kind::Watch).expect("first");
        let _a2 = streams.open("a", Kind::Watch).expect("second");
        let e = streams
            .open("a", Kind::Watch)
            .expect_err("third")
            .to_string();
        assert!(e.contains("limits::MAX_WATCHES = 2"), "{e}");
        let _b = streams.open("b", Kind::Watch).expect("another credential");
        let _r = streams.open("a", Kind::Results).expect("another kind");
        assert!(streams.open("a", Kind::Results).is_err());
        drop(a1);
        assert_eq!(streams.count("a", Kind::Watch), 1);
        let _a3 = streams.open("a", Kind::Watch).expect("a place given back");
    }
}
