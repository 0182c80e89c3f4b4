//! The stored form of a block of jobs (tree `job_blocks`): up to `BLOCK_JOBS` prost-encoded
//! job records with consecutive ids, with offsets so that one record is read without decoding
//! the others, and (format version 4) a [`JobTag`] per job, so that an open after a crash
//! counts the jobs without decoding any record. Malformed bytes are an error, never a panic.

use cubefleet_proto::JobState;
use prost::Message;

use crate::error::Error;
use crate::record::JobRecord;

/// First four bytes of a tagged block (little-endian); an untagged block (format version 3
/// and before) starts with its job count instead, which is at most `BLOCK_JOBS`, so the two
/// never meet.
pub(super) const TAGGED: u32 = 0xC0BE_7A64;

/// Bytes of one stored [`JobTag`].
const TAG_BYTES: usize = 4;

/// What an open needs of a job to count it, kept beside its record in the block and written
/// with it in the same swap, so it always describes the record next to it: state, whether it
/// was answered from the store at submission, and its solution length when it has one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct JobTag {
    /// The job's state.
    pub(crate) state: JobState,
    /// Whether the job was answered from the store at submission.
    pub(crate) from_store: bool,
    /// The solution length counted in the batch's histogram (`JobResult::has_length`).
    pub(crate) length: Option<u32>,
}

/// Flag bits of a stored tag's second byte.
const FROM_STORE: u8 = 1;
const HAS_LENGTH: u8 = 2;
/// The tag does not describe the record (a length past `u16`): decode the record.
const OPAQUE: u8 = 0x80;

impl JobTag {
    /// The tag of `job`.
    pub(crate) fn of(job: &JobRecord) -> JobTag {
        match job.result.as_deref() {
            Some(r) => JobTag {
                state: JobState::try_from(r.state).unwrap_or(JobState::Unspecified),
                from_store: r.from_store,
                length: r.has_length().then_some(r.length),
            },
            // (a record without its result part counts as nothing)
            None => JobTag {
                state: JobState::Unspecified,
                from_store: false,
                length: None,
            },
        }
    }

    /// The stored form: state, flags, length (u16, little-endian); a length that does not fit
    /// is stored as [`OPAQUE`].
    fn encode(self) -> [u8; TAG_BYTES] {
        let mut flags = if self.from_store { FROM_STORE } else { 0 };
        let length = match self.length.map(u16::try_from) {
            None => 0,
            Some(Ok(n)) => {
                flags |= HAS_LENGTH;
                n
            }
            Some(Err(_)) => return [0, OPAQUE, 0, 0],
        };
        let [lo, hi] = length.to_le_bytes();
        [self.state as u8, flags, lo, hi]
    }

    /// The tag stored as `b` (None: opaque or unknown, decode the record).
    fn decode(b: &[u8]) -> Option<JobTag> {
        let flags = b[1];
        if flags & OPAQUE != 0 {
            return None;
        }
        Some(JobTag {
            state: JobState::try_from(i32::from(b[0])).ok()?,
            from_store: flags & FROM_STORE != 0,
            length: (flags & HAS_LENGTH != 0).then(|| u32::from(u16::from_le_bytes([b[2], b[3]]))),
        })
    }
}

/// A block of jobs as stored. Tagged (written by this version): the marker [`TAGGED`], the
/// count `n`, `n` tags of [`TAG_BYTES`], `n + 1` offsets into the payload, then the payload,
/// the prost-encoded records one after another. Untagged (earlier versions): the count, the
/// offsets, the payload. All numbers are u32, little-endian. Record `i` is
/// `payload[offset[i]..offset[i + 1]]`, so one record is found without decoding the others.
pub(super) struct Block<'a> {
    tags: Option<&'a [u8]>,
    offsets: &'a [u8],
    payload: &'a [u8],
}

impl<'a> Block<'a> {
    /// The stored form of `jobs` (consecutive ids).
    pub(super) fn encode(jobs: &[(u64, JobRecord)]) -> Vec<u8> {
        let records: Vec<Vec<u8>> = jobs.iter().map(|(_, j)| j.encode_to_vec()).collect();
        let records: Vec<&[u8]> = records.iter().map(Vec::as_slice).collect();
        let tags: Vec<JobTag> = jobs.iter().map(|(_, j)| JobTag::of(j)).collect();
        Block::encode_raw(&records, &tags)
    }

    /// The stored form of a block of encoded records and their tags (one each).
    pub(super) fn encode_raw(records: &[&[u8]], tags: &[JobTag]) -> Vec<u8> {
        debug_assert_eq!(records.len(), tags.len());
        let size: usize = records.iter().map(|r| r.len()).sum();
        let mut out = Vec::with_capacity(12 + (TAG_BYTES + 4) * records.len() + size);
        out.extend_from_slice(&TAGGED.to_le_bytes());
        out.extend_from_slice(&(records.len() as u32).to_le_bytes());
        for t in tags {
            out.extend_from_slice(&t.encode());
        }
        let mut at = 0u32;
        out.extend_from_slice(&at.to_le_bytes());
        for r in records {
            at += r.len() as u32;
            out.extend_from_slice(&at.to_le_bytes());
        }
        for r in records {
            out.extend_from_slice(r);
        }
        out
    }

    /// The stored form of `jobs` as versions before 4 wrote it (no tags), for tests of reading
    /// such stores.
    #[cfg(test)]
    pub(super) fn encode_untagged(jobs: &[(u64, JobRecord)]) -> Vec<u8> {
        let tagged = Block::encode(jobs);
        let block = Block::parse(&tagged).expect("just encoded");
        let mut out = (jobs.len() as u32).to_le_bytes().to_vec();
        out.extend_from_slice(block.offsets);
        out.extend_from_slice(block.payload);
        out
    }

    /// Reads a stored block (tagged or not), checking that its offsets stay inside it.
    pub(super) fn parse(bytes: &'a [u8]) -> Result<Block<'a>, Error> {
        let bad = || Error::Internal("malformed job block".into());
        let u32_at = |at: usize| -> Result<usize, Error> {
            let b = bytes.get(at..at + 4).ok_or_else(bad)?;
            Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
        };
        let first = u32_at(0)?;
        let (n, tags, at) = if first == TAGGED as usize {
            let n = u32_at(4)?;
            let tags = bytes.get(8..8 + TAG_BYTES * n).ok_or_else(bad)?;
            (n, Some(tags), 8 + TAG_BYTES * n)
        } else {
            (first, None, 4)
        };
        let offsets = bytes.get(at..at + 4 * (n + 1)).ok_or_else(bad)?;
        let payload = &bytes[at + 4 * (n + 1)..];
        let block = Block {
            tags,
            offsets,
            payload,
        };
        if block.offset(n) != payload.len() || (0..n).any(|i| block.offset(i) > block.offset(i + 1))
        {
            return Err(bad());
        }
        Ok(block)
    }

    /// Jobs in the block.
    pub(super) fn len(&self) -> usize {
        self.offsets.len() / 4 - 1
    }

    fn offset(&self, i: usize) -> usize {
        let b = &self.offsets[4 * i..4 * i + 4];
        u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize
    }

    /// The encoded record of the block's job `i` (None past its end).
    pub(super) fn record(&self, i: u64) -> Option<&'a [u8]> {
        let i = usize::try_from(i).ok().filter(|&i| i < self.len())?;
        Some(&self.payload[self.offset(i)..self.offset(i + 1)])
    }

    /// The tag of the block's job `i`: the stored one, or (an untagged block, an opaque tag)
    /// the one of its record, decoded.
    pub(super) fn tag(&self, i: usize) -> Result<JobTag, Error> {
        if let Some(tag) = self
            .tags
            .and_then(|t| t.get(TAG_BYTES * i..TAG_BYTES * (i + 1)))
            .and_then(JobTag::decode)
        {
            return Ok(tag);
        }
        let record = self
            .record(i as u64)
            .ok_or_else(|| Error::Internal("a job past its block's end".into()))?;
        Ok(JobTag::of(&JobRecord::decode(record)?))
    }

    /// The tags of all the block's jobs, in order (see [`Block::tag`]).
    pub(super) fn tags(&self) -> Result<Vec<JobTag>, Error> {
        (0..self.len()).map(|i| self.tag(i)).collect()
    }
}
