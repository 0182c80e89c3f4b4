//! The stored form of a block of jobs (tree `job_blocks`): up to `BLOCK_JOBS` prost-encoded
//! job records with consecutive ids, with offsets so that one record is read without decoding
//! the others. Malformed bytes are an error, never a panic.

use prost::Message;

use crate::error::Error;
use crate::record::JobRecord;

/// A block of jobs as stored: the count `n` (u32, little-endian), `n + 1` offsets (u32) into
/// the payload, then the payload, the prost-encoded records one after another; record `i` is
/// `payload[offset[i]..offset[i + 1]]`, so one record is found without decoding the others.
pub(super) struct Block<'a> {
    offsets: &'a [u8],
    payload: &'a [u8],
}

impl<'a> Block<'a> {
    /// The stored form of `jobs` (consecutive ids).
    pub(super) fn encode(jobs: &[(u64, JobRecord)]) -> Vec<u8> {
        let records: Vec<Vec<u8>> = jobs.iter().map(|(_, j)| j.encode_to_vec()).collect();
        let records: Vec<&[u8]> = records.iter().map(Vec::as_slice).collect();
        Block::encode_raw(&records)
    }

    /// The stored form of a block of encoded records.
    pub(super) fn encode_raw(records: &[&[u8]]) -> Vec<u8> {
        let size: usize = records.iter().map(|r| r.len()).sum();
        let mut out = Vec::with_capacity(8 + 4 * records.len() + size);
        out.extend_from_slice(&(records.len() as u32).to_le_bytes());
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

    /// Reads a stored block, checking that its offsets stay inside it.
    pub(super) fn parse(bytes: &'a [u8]) -> Result<Block<'a>, Error> {
        let bad = || Error::Internal("malformed job block".into());
        let n = u32::from_le_bytes(
            bytes
                .get(..4)
                .ok_or_else(bad)?
                .try_into()
                .map_err(|_| bad())?,
        ) as usize;
        let offsets = bytes.get(4..4 + 4 * (n + 1)).ok_or_else(bad)?;
        let payload = &bytes[4 + 4 * (n + 1)..];
        let block = Block { offsets, payload };
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
}
