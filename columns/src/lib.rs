//! cubefleet's results as typed columns: the one Arrow schema of a result row ([`schema`]),
//! rows gathered into record batches ([`Columns`]), and Parquet files written a row group at
//! a time ([`ParquetWriter`]), so an export of any number of rows holds one row group in
//! memory. The CLI (`results --format parquet`, `run --out F.parquet`, `solve --format
//! parquet`) and the Python package (`pyarrow.Table`s) write the same columns.
//!
//! The columns, in order (the JSON line's fields, typed):
//!
//! | column | Arrow type | null when |
//! | --- | --- | --- |
//! | `index` | uint64 | never |
//! | `input` | utf8 | never (`""` for a range or sample batch's line) |
//! | `status` | dictionary<int8, utf8> | never |
//! | `solution` | utf8 | never (`""` when there is none) |
//! | `length` | uint32 | there is no solution |
//! | `optimal` | bool | never |
//! | `lower_bound` | uint32 | not known |
//! | `millis` | float64 | never |
//! | `nodes` | uint64 | not counted |
//! | `state_index` | utf8 (decimal: an index can exceed `u64`) | a file's line |
//! | `error` | utf8 | the line was not refused |

#[cfg(feature = "parquet")]
use std::io::Write;
use std::sync::{Arc, OnceLock};

use arrow_array::builder::{
    BooleanBuilder, Float64Builder, StringBuilder, StringDictionaryBuilder, UInt32Builder,
    UInt64Builder,
};
use arrow_array::types::Int8Type;
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
#[cfg(feature = "parquet")]
use parquet::arrow::ArrowWriter;
#[cfg(feature = "parquet")]
use parquet::basic::Compression;
#[cfg(feature = "parquet")]
use parquet::file::properties::WriterProperties;

/// Rows per Parquet row group (and per record batch the writers hand on): large enough for
/// good compression and fast scans, small enough that the row group being filled stays a few
/// megabytes.
pub const ROW_GROUP_ROWS: usize = 65_536;

/// Why columns could not be made or written.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Arrow refused the arrays (a bug: the builders follow [`schema`]).
    #[error("arrow: {0}")]
    Arrow(#[from] arrow_schema::ArrowError),
    /// The Parquet encoder or the output failed.
    #[cfg(feature = "parquet")]
    #[error("parquet: {0}")]
    Parquet(#[from] parquet::errors::ParquetError),
}

/// One result row, borrowed from whatever holds it (a JSON line's struct, a stored result).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Row<'a> {
    /// 0-based line (or argument, or position) number of the input.
    pub index: u64,
    /// The input as written (`""` for a range or sample batch's line).
    pub input: &'a str,
    /// `solved`, `timeout`, `over_target`, `none_within`, `cancelled`, `invalid`, `skipped`,
    /// `failed`, or `queued`/`leased` in a batch still running.
    pub status: &'a str,
    /// Space-separated standard notation; `""` for a solved cube or when there is none.
    pub solution: &'a str,
    /// Turns in `solution` in the search's metric; `None` when there is no solution.
    pub length: Option<u32>,
    /// True only when `solution` is proven shortest.
    pub optimal: bool,
    /// No solution is shorter than this (optimal and depth-limited searches), when known.
    pub lower_bound: Option<u32>,
    /// Time spent on this line, milliseconds.
    pub millis: f64,
    /// Search nodes visited, when counted.
    pub nodes: Option<u64>,
    /// A range or sample batch's state index (decimal), else `None`.
    pub state_index: Option<&'a str>,
    /// Why the line was refused (invalid and failed lines only).
    pub error: Option<&'a str>,
}

/// The schema of result columns (see the module's table). Made once.
pub fn schema() -> SchemaRef {
    static SCHEMA: OnceLock<SchemaRef> = OnceLock::new();
    SCHEMA
        .get_or_init(|| {
            let status = DataType::Dictionary(Box::new(DataType::Int8), Box::new(DataType::Utf8));
            Arc::new(Schema::new(vec![
                Field::new("index", DataType::UInt64, false),
                Field::new("input", DataType::Utf8, false),
                Field::new("status", status, false),
                Field::new("solution", DataType::Utf8, false),
                Field::new("length", DataType::UInt32, true),
                Field::new("optimal", DataType::Boolean, false),
                Field::new("lower_bound", DataType::UInt32, true),
                Field::new("millis", DataType::Float64, false),
                Field::new("nodes", DataType::UInt64, true),
                Field::new("state_index", DataType::Utf8, true),
                Field::new("error", DataType::Utf8, true),
            ]))
        })
        .clone()
}

/// Rows gathered column by column until [`Columns::finish`] makes them a record batch.
pub struct Columns {
    index: UInt64Builder,
    input: StringBuilder,
    status: StringDictionaryBuilder<Int8Type>,
    solution: StringBuilder,
    length: UInt32Builder,
    optimal: BooleanBuilder,
    lower_bound: UInt32Builder,
    millis: Float64Builder,
    nodes: UInt64Builder,
    state_index: StringBuilder,
    error: StringBuilder,
    /// Rows pushed since the last [`Columns::finish`].
    rows: usize,
}

impl Default for Columns {
    fn default() -> Self {
        Columns::new()
    }
}

impl Columns {
    /// No rows.
    pub fn new() -> Columns {
        Columns {
            index: UInt64Builder::new(),
            input: StringBuilder::new(),
            status: StringDictionaryBuilder::new(),
            solution: StringBuilder::new(),
            length: UInt32Builder::new(),
            optimal: BooleanBuilder::new(),
            lower_bound: UInt32Builder::new(),
            millis: Float64Builder::new(),
            nodes: UInt64Builder::new(),
            state_index: StringBuilder::new(),
            error: StringBuilder::new(),
            rows: 0,
        }
    }

    /// Appends a row.
    pub fn push(&mut self, row: &Row<'_>) {
        self.index.append_value(row.index);
        self.input.append_value(row.input);
        // a dictionary of at most 128 distinct statuses: there are ten
        self.status.append_value(row.status);
        self.solution.append_value(row.solution);
        self.length.append_option(row.length);
        self.optimal.append_value(row.optimal);
        self.lower_bound.append_option(row.lower_bound);
        self.millis.append_value(row.millis);
        self.nodes.append_option(row.nodes);
        self.state_index.append_option(row.state_index);
        self.error.append_option(row.error);
        self.rows += 1;
    }

    /// Rows pushed since the last [`Columns::finish`].
    pub fn len(&self) -> usize {
        self.rows
    }

    /// True when no row was pushed since the last [`Columns::finish`].
    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }

    /// The rows pushed so far as a record batch of [`schema`]; the builders start over empty.
    pub fn finish(&mut self) -> Result<RecordBatch, Error> {
        let columns: Vec<ArrayRef> = vec![
            Arc::new(self.index.finish()),
            Arc::new(self.input.finish()),
            Arc::new(self.status.finish()),
            Arc::new(self.solution.finish()),
            Arc::new(self.length.finish()),
            Arc::new(self.optimal.finish()),
            Arc::new(self.lower_bound.finish()),
            Arc::new(self.millis.finish()),
            Arc::new(self.nodes.finish()),
            Arc::new(self.state_index.finish()),
            Arc::new(self.error.finish()),
        ];
        self.rows = 0;
        Ok(RecordBatch::try_new(schema(), columns)?)
    }
}

/// The writer properties of every file: Snappy pages, row groups of [`ROW_GROUP_ROWS`].
#[cfg(feature = "parquet")]
fn properties() -> WriterProperties {
    WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_max_row_group_row_count(Some(ROW_GROUP_ROWS))
        .build()
}

/// Writes result rows to a Parquet file, one row group per [`ROW_GROUP_ROWS`] rows: memory
/// holds the rows of the group being filled and nothing of those written, whatever the
/// file's size.
///
/// The encoder writes into a buffer of its own, which is moved to `out` after each row group
/// (only bytes the encoder has already written are taken, in order, and it counts offsets
/// itself), so `out` may be any writer, `Send` or not (`dyn Write`, standard output).
#[cfg(feature = "parquet")]
pub struct ParquetWriter<W: Write> {
    writer: ArrowWriter<Vec<u8>>,
    columns: Columns,
    out: W,
    written: u64,
}

#[cfg(feature = "parquet")]
impl<W: Write> ParquetWriter<W> {
    /// Starts a file of result rows on `out`.
    pub fn new(out: W) -> Result<Self, Error> {
        Ok(ParquetWriter {
            writer: ArrowWriter::try_new(Vec::new(), schema(), Some(properties()))?,
            columns: Columns::new(),
            out,
            written: 0,
        })
    }

    /// Appends a row; a full row group is encoded and written.
    pub fn write(&mut self, row: &Row<'_>) -> Result<(), Error> {
        self.columns.push(row);
        self.written += 1;
        if self.columns.len() >= ROW_GROUP_ROWS {
            self.end_row_group()?;
        }
        Ok(())
    }

    /// Rows written so far.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// Ends the row group being filled (if it has rows) and writes it to the output (not yet
    /// readable as a file: the footer comes last).
    pub fn end_row_group(&mut self) -> Result<(), Error> {
        if !self.columns.is_empty() {
            let batch = self.columns.finish()?;
            self.writer.write(&batch)?;
        }
        self.writer.flush()?;
        let bytes = std::mem::take(self.writer.inner_mut());
        self.out
            .write_all(&bytes)
            .map_err(parquet::errors::ParquetError::from)?;
        Ok(())
    }

    /// Writes the last row group and the footer, flushes the output; returns the rows written
    /// and the output.
    pub fn finish(mut self) -> Result<(u64, W), Error> {
        if !self.columns.is_empty() {
            let batch = self.columns.finish()?;
            self.writer.write(&batch)?;
        }
        let rest = self.writer.into_inner()?;
        let map = |e: std::io::Error| parquet::errors::ParquetError::from(e);
        self.out.write_all(&rest).map_err(map)?;
        self.out.flush().map_err(map)?;
        Ok((self.written, self.out))
    }
}

/// The schema of a length histogram: `length` (uint32, turns) and `count` (uint64, lines
/// solved in that many turns), one row per length from 0 to the longest.
pub fn histogram_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("length", DataType::UInt32, false),
        Field::new("count", DataType::UInt64, false),
    ]))
}

/// A length histogram (`counts[l]` lines solved in `l` turns) as a record batch of
/// [`histogram_schema`].
pub fn histogram_batch(counts: &[u64]) -> Result<RecordBatch, Error> {
    let lengths: arrow_array::UInt32Array = (0..counts.len() as u32).collect();
    let columns: Vec<ArrayRef> = vec![
        Arc::new(lengths),
        Arc::new(arrow_array::UInt64Array::from(counts.to_vec())),
    ];
    Ok(RecordBatch::try_new(histogram_schema(), columns)?)
}

/// Writes a length histogram as a Parquet file of [`histogram_schema`]; returns the output.
#[cfg(feature = "parquet")]
pub fn write_histogram<W: Write>(mut out: W, counts: &[u64]) -> Result<W, Error> {
    let mut writer = ArrowWriter::try_new(Vec::new(), histogram_schema(), Some(properties()))?;
    writer.write(&histogram_batch(counts)?)?;
    let bytes = writer.into_inner()?;
    let map = |e: std::io::Error| parquet::errors::ParquetError::from(e);
    out.write_all(&bytes).map_err(map)?;
    out.flush().map_err(map)?;
    Ok(out)
}

#[cfg(all(test, feature = "parquet"))]
mod tests {
    use super::*;
    use arrow_array::cast::AsArray;
    use arrow_array::types::{UInt32Type, UInt64Type};
    use arrow_array::Array;
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

    fn row(i: u64) -> Row<'static> {
        Row {
            index: i,
            input: "R U",
            status: if i.is_multiple_of(3) {
                "invalid"
            } else {
                "solved"
            },
            solution: if i.is_multiple_of(3) { "" } else { "U' R'" },
            length: (!i.is_multiple_of(3)).then_some(2),
            optimal: i.is_multiple_of(2),
            lower_bound: (i.is_multiple_of(5)).then_some(2),
            millis: i as f64 / 4.0,
            nodes: (!i.is_multiple_of(7)).then_some(i * 10),
            state_index: None,
            error: (i.is_multiple_of(3)).then_some("one corner is twisted"),
        }
    }

    /// A file of several row groups reads back as the rows written, typed, in order.
    #[test]
    fn rows_round_trip_through_parquet_in_row_groups() {
        let n = ROW_GROUP_ROWS as u64 * 2 + 17;
        let file = tempfile::tempfile().expect("temp file");
        let mut w = ParquetWriter::new(file).expect("writer");
        for i in 0..n {
            w.write(&row(i)).expect("write");
        }
        let (written, file) = w.finish().expect("finish");
        assert_eq!(written, n);
        let reader = ParquetRecordBatchReaderBuilder::try_new(file).expect("reader");
        assert_eq!(reader.metadata().num_row_groups(), 3);
        assert_eq!(reader.schema(), &schema());
        let mut next = 0;
        for batch in reader.build().expect("build") {
            let batch = batch.expect("batch");
            let index = batch.column(0).as_primitive::<UInt64Type>();
            let length = batch.column(4).as_primitive::<UInt32Type>();
            let status = batch.column(2).as_dictionary::<Int8Type>();
            let values = status.values().as_string::<i32>();
            let error = batch.column(10).as_string::<i32>();
            for k in 0..batch.num_rows() {
                let want = row(next);
                assert_eq!(index.value(k), want.index);
                assert_eq!(length.is_null(k), want.length.is_none());
                let key = status.keys().value(k) as usize;
                assert_eq!(values.value(key), want.status);
                assert_eq!(error.is_null(k), want.error.is_none());
                next += 1;
            }
        }
        assert_eq!(next, n);
    }

    #[test]
    fn a_histogram_has_a_row_per_length() {
        let b = histogram_batch(&[1, 0, 3]).expect("batch");
        assert_eq!(b.num_rows(), 3);
        let bytes = write_histogram(Vec::new(), &[1, 0, 3]).expect("write");
        assert!(bytes.starts_with(b"PAR1") && bytes.ends_with(b"PAR1"));
    }
}
