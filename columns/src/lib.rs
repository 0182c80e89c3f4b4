//! cubefleet's results as typed columns: the one Arrow schema of a result row ([`schema`]),
//! rows gathered into record batches ([`Columns`]), and Parquet files written a row group at
//! a time ([`ParquetWriter`]), so an export of any number of rows holds one row group in
//! memory. The CLI (`results --format parquet`, `run --out F.parquet`, `solve --format
//! parquet`) and the Python package (`pyarrow.Table`s) write the same columns.
//!
//! The columns, in order (the JSON line's fields, typed), with the [schema
//! version](SCHEMA_VERSION) that brought each:
//!
//! | column | Arrow type | null when | since |
//! | --- | --- | --- | --- |
//! | `index` | uint64 | never | 1 |
//! | `input` | utf8 | never (`""` for a range or sample batch's line) | 1 |
//! | `status` | dictionary<int8, utf8> | never | 1 |
//! | `solution` | utf8 | never (`""` when there is none) | 1 |
//! | `length` | uint32 | there is no solution | 1 |
//! | `optimal` | bool | never | 1 |
//! | `lower_bound` | uint32 | not known | 1 |
//! | `millis` | float64 | never | 1 |
//! | `nodes` | uint64 | not counted | 1 |
//! | `state_index` | utf8 (decimal: an index can exceed `u64`) | a file's line | 1 |
//! | `error` | utf8 | the line was not refused | 1 |
//! | `worker` | utf8 | no worker searched the line (a local search, an unfinished job) | 2 |
//! | `claimed` | bool | never (false: the answer is checked, or there is none) | 2 |
//! | `confirmed_by` | list of utf8 | never (empty: no confirmations) | 2 |
//! | `moves` | utf8 | every turn was allowed (the search had no move set) | 3 |
//! | `to` | utf8 | the position was solved (the search had no other target) | 4 |
//! | `goal` | utf8 | the whole cube was solved (the search had no partial goal) | 5 |
//! | `solutions` | list of utf8 | the question asked for one solution, or for a count alone | 5 |
//! | `count` | uint64 | the question asked for one solution | 5 |
//!
//! Columns are only ever added, at the end, each with a new [`SCHEMA_VERSION`], which the
//! schema's metadata (and so every Parquet file's) carries under [`SCHEMA_VERSION_KEY`]; a
//! file without it is of version 1. [`upgrade`] (and [`ParquetReader`], which reads a file
//! with it) makes a batch of any version one of the current [`schema`].

#[cfg(feature = "parquet")]
use std::io::Write;
use std::sync::{Arc, OnceLock};

use arrow_array::builder::{
    BooleanBuilder, Float64Builder, ListBuilder, StringBuilder, StringDictionaryBuilder,
    UInt32Builder, UInt64Builder,
};
use arrow_array::types::Int8Type;
use arrow_array::{ArrayRef, BooleanArray, RecordBatch};
use arrow_schema::{DataType, Field, FieldRef, Schema, SchemaRef};
#[cfg(feature = "parquet")]
use parquet::arrow::arrow_reader::{ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder};
#[cfg(feature = "parquet")]
use parquet::arrow::ArrowWriter;
#[cfg(feature = "parquet")]
use parquet::basic::Compression;
#[cfg(feature = "parquet")]
use parquet::file::metadata::KeyValue;
#[cfg(feature = "parquet")]
use parquet::file::properties::WriterProperties;
#[cfg(feature = "parquet")]
use parquet::file::reader::ChunkReader;

/// Rows per Parquet row group (and per record batch the writers hand on): large enough for
/// good compression and fast scans, small enough that the row group being filled stays a few
/// megabytes.
pub const ROW_GROUP_ROWS: usize = 65_536;

/// The version of [`schema`]: 1 the eleven columns from `index` to `error`; 2 adds `worker`,
/// `claimed` and `confirmed_by`; 3 adds `moves`; 4 adds `to`; 5 adds `goal`,
/// `solutions` and `count`. Raised by one with every
/// column added (columns are never renamed, retyped or removed), so a reader knows which
/// columns a file must have.
pub const SCHEMA_VERSION: u32 = 5;

/// The key of the schema version (decimal) in the schema's metadata and in a Parquet file's
/// key-value metadata (for readers that do not decode the Arrow schema a file embeds).
pub const SCHEMA_VERSION_KEY: &str = "cubefleet.schema_version";

/// The version of files and schemas without [`SCHEMA_VERSION_KEY`] (written before it).
const FIRST_VERSION: u32 = 1;

/// Why columns could not be made or written.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Arrow refused the arrays (a bug: the builders follow [`schema`]).
    #[error("arrow: {0}")]
    Arrow(#[from] arrow_schema::ArrowError),
    /// A batch or file is not of result columns (a column missing or of another type, a
    /// schema version that is no number).
    #[error("not cubefleet results: {0}")]
    Schema(String),
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
    /// The worker whose search answered (its credential's name, or its `--name`: what
    /// `revoke` takes); `None` when no worker searched the line.
    pub worker: Option<&'a str>,
    /// True when the answer rests on a claim the coordinator cannot check (`optimal`,
    /// `none_within`, a lower bound).
    pub claimed: bool,
    /// The workers whose equal claims made the answer final (a `--confirm 2` batch; one per
    /// credential); empty otherwise.
    pub confirmed_by: &'a [String],
    /// The turns the search was limited to, as `--moves` reads them (`U,R`); `None` when
    /// every turn was allowed.
    pub moves: Option<&'a str>,
    /// The facelet string of the position the solution reaches (`--to`); `None` when it is
    /// the solved cube.
    pub to: Option<&'a str>,
    /// The partial goal the solution reaches (`--goal`: its name or piece list, and ` on any
    /// face`); `None` when it solves the whole cube.
    pub goal: Option<&'a str>,
    /// The solutions of a question for several (`--solutions N`, `--all-optimal`), in the
    /// canonical order; `None` for other questions and for a count alone.
    pub solutions: Option<&'a [String]>,
    /// How many solutions there are, of a question for several; `None` otherwise.
    pub count: Option<u64>,
}

/// The field of a `confirmed_by` list's items: worker names, never null.
fn name_item() -> FieldRef {
    Arc::new(Field::new_list_field(DataType::Utf8, false))
}

/// The field of a `solutions` list's items: solutions, never null.
fn solution_item() -> FieldRef {
    Arc::new(Field::new_list_field(DataType::Utf8, false))
}

/// The schema version that brought column `name` (see the module's table).
fn since(name: &str) -> u32 {
    match name {
        "worker" | "claimed" | "confirmed_by" => 2,
        "moves" => 3,
        "to" => 4,
        "goal" => 5,
        "solutions" | "count" => 5,
        _ => FIRST_VERSION,
    }
}

/// The schema of result columns (see the module's table), its metadata holding
/// [`SCHEMA_VERSION_KEY`]. Made once.
pub fn schema() -> SchemaRef {
    static SCHEMA: OnceLock<SchemaRef> = OnceLock::new();
    SCHEMA
        .get_or_init(|| {
            let status = DataType::Dictionary(Box::new(DataType::Int8), Box::new(DataType::Utf8));
            let metadata = [(SCHEMA_VERSION_KEY.to_string(), SCHEMA_VERSION.to_string())];
            Arc::new(Schema::new_with_metadata(
                vec![
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
                    Field::new("worker", DataType::Utf8, true),
                    Field::new("claimed", DataType::Boolean, false),
                    Field::new("confirmed_by", DataType::List(name_item()), false),
                    Field::new("moves", DataType::Utf8, true),
                    Field::new("to", DataType::Utf8, true),
                    Field::new("goal", DataType::Utf8, true),
                    Field::new("solutions", DataType::List(solution_item()), true),
                    Field::new("count", DataType::UInt64, true),
                ],
                metadata.into(),
            ))
        })
        .clone()
}

/// The schema version `schema`'s metadata gives ([`SCHEMA_VERSION_KEY`]; 1 without it).
pub fn schema_version(schema: &Schema) -> Result<u32, Error> {
    match schema.metadata().get(SCHEMA_VERSION_KEY) {
        None => Ok(FIRST_VERSION),
        Some(v) => match v.parse() {
            Ok(n) if n >= FIRST_VERSION => Ok(n),
            _ => Err(Error::Schema(format!(
                "{SCHEMA_VERSION_KEY} is {v:?}, not a version"
            ))),
        },
    }
}

/// `batch`, of result columns of any schema version, as a batch of the current [`schema`]:
/// each column taken by its name, those its version did not have yet made of their "none"
/// (`worker`, `moves`, `to`, `goal`, `solutions` and `count` null, `claimed` false,
/// `confirmed_by` empty). Columns of a
/// newer version than this build's are left out (columns are only ever added). An error when
/// a column its version has is missing or of another type: then it is no results file.
pub fn upgrade(batch: &RecordBatch) -> Result<RecordBatch, Error> {
    let version = schema_version(batch.schema_ref())?;
    let rows = batch.num_rows();
    let target = schema();
    let mut columns = Vec::with_capacity(target.fields().len());
    for field in target.fields() {
        let name = field.name();
        match batch.column_by_name(name) {
            Some(c) if c.data_type() == field.data_type() => columns.push(c.clone()),
            Some(c) => {
                return Err(Error::Schema(format!(
                    "column {name} is {}, not {}",
                    c.data_type(),
                    field.data_type()
                )))
            }
            None if since(name) > version => columns.push(absent(name, rows)?),
            None => {
                return Err(Error::Schema(format!(
                    "column {name} is missing (schema version {version})"
                )))
            }
        }
    }
    Ok(RecordBatch::try_new(target, columns)?)
}

/// `rows` values of a column added after version 1, for a batch whose version did not have it.
fn absent(name: &str, rows: usize) -> Result<ArrayRef, Error> {
    Ok(match name {
        "worker" | "moves" | "to" | "goal" => arrow_array::new_null_array(&DataType::Utf8, rows),
        "solutions" => arrow_array::new_null_array(&DataType::List(solution_item()), rows),
        "count" => arrow_array::new_null_array(&DataType::UInt64, rows),
        "claimed" => Arc::new(BooleanArray::from(vec![false; rows])),
        "confirmed_by" => {
            let mut lists = ListBuilder::new(StringBuilder::new()).with_field(name_item());
            for _ in 0..rows {
                lists.append(true);
            }
            Arc::new(lists.finish())
        }
        _ => return Err(Error::Schema(format!("column {name} has no default"))),
    })
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
    worker: StringBuilder,
    claimed: BooleanBuilder,
    confirmed_by: ListBuilder<StringBuilder>,
    moves: StringBuilder,
    to: StringBuilder,
    goal: StringBuilder,
    solutions: ListBuilder<StringBuilder>,
    count: UInt64Builder,
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
            worker: StringBuilder::new(),
            claimed: BooleanBuilder::new(),
            confirmed_by: ListBuilder::new(StringBuilder::new()).with_field(name_item()),
            moves: StringBuilder::new(),
            to: StringBuilder::new(),
            goal: StringBuilder::new(),
            solutions: ListBuilder::new(StringBuilder::new()).with_field(solution_item()),
            count: UInt64Builder::new(),
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
        self.worker.append_option(row.worker);
        self.claimed.append_value(row.claimed);
        for name in row.confirmed_by {
            self.confirmed_by.values().append_value(name);
        }
        self.confirmed_by.append(true);
        self.moves.append_option(row.moves);
        self.to.append_option(row.to);
        self.goal.append_option(row.goal);
        match row.solutions {
            Some(list) => {
                for s in list {
                    self.solutions.values().append_value(s);
                }
                self.solutions.append(true);
            }
            None => self.solutions.append(false),
        }
        self.count.append_option(row.count);
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
            Arc::new(self.worker.finish()),
            Arc::new(self.claimed.finish()),
            Arc::new(self.confirmed_by.finish()),
            Arc::new(self.moves.finish()),
            Arc::new(self.to.finish()),
            Arc::new(self.goal.finish()),
            Arc::new(self.solutions.finish()),
            Arc::new(self.count.finish()),
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

/// The properties of a results file: [`properties`], with the schema version in the file's
/// key-value metadata as well as in the Arrow schema it embeds.
#[cfg(feature = "parquet")]
fn results_properties() -> WriterProperties {
    let version = KeyValue::new(SCHEMA_VERSION_KEY.to_string(), SCHEMA_VERSION.to_string());
    properties()
        .into_builder()
        .set_key_value_metadata(Some(vec![version]))
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
            writer: ArrowWriter::try_new(Vec::new(), schema(), Some(results_properties()))?,
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

/// Reads a Parquet file of result rows of any schema version: its record batches (of up to
/// [`ROW_GROUP_ROWS`] rows), each [upgraded](upgrade) to the current [`schema`], so a file
/// written before a column was added reads with that column's "none" in every row.
#[cfg(feature = "parquet")]
pub struct ParquetReader {
    batches: ParquetRecordBatchReader,
    version: u32,
}

#[cfg(feature = "parquet")]
impl ParquetReader {
    /// Opens a results file (a `File`, or `bytes::Bytes` of one). An error when it is no
    /// Parquet file, or not of result columns.
    pub fn new<R: ChunkReader + 'static>(file: R) -> Result<ParquetReader, Error> {
        let builder =
            ParquetRecordBatchReaderBuilder::try_new(file)?.with_batch_size(ROW_GROUP_ROWS);
        let version = schema_version(builder.schema())?;
        // the columns are checked before any row is read: an empty batch of the file's schema
        upgrade(&RecordBatch::new_empty(builder.schema().clone()))?;
        Ok(ParquetReader {
            batches: builder.build()?,
            version,
        })
    }

    /// The schema version the file was written with (1 for a file without one).
    pub fn version(&self) -> u32 {
        self.version
    }
}

#[cfg(feature = "parquet")]
impl Iterator for ParquetReader {
    type Item = Result<RecordBatch, Error>;

    fn next(&mut self) -> Option<Self::Item> {
        let batch = self.batches.next()?;
        Some(batch.map_err(Error::from).and_then(|b| upgrade(&b)))
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

    /// Names for `confirmed_by`: none, one or two of them by row.
    fn confirmers(i: u64) -> &'static [String] {
        static NAMES: OnceLock<[Vec<String>; 3]> = OnceLock::new();
        let names = NAMES.get_or_init(|| {
            [
                vec![],
                vec!["farm-a".into()],
                vec!["farm-a".into(), "farm-b".into()],
            ]
        });
        &names[(i % 3) as usize]
    }

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
            worker: (!i.is_multiple_of(4)).then_some(["farm-a", "farm-b"][(i % 2) as usize]),
            claimed: i.is_multiple_of(2),
            confirmed_by: confirmers(i),
            moves: (i % 4 == 1).then_some("U,R"),
            to: (i % 5 == 2).then_some(TO),
            goal: (i % 6 == 3).then_some("cross on any face"),
            solutions: (i % 6 == 1).then_some(SOLUTIONS.as_slice()),
            count: (i % 6 == 1 || i % 6 == 5).then_some(i),
        }
    }

    /// A `solutions` list (of `R U`: the optimal one and two longer).
    static SOLUTIONS: std::sync::LazyLock<Vec<String>> =
        std::sync::LazyLock::new(|| vec!["U' R'".into(), "U' R' U2 D2".into(), "U' R2 R'".into()]);

    /// A target's facelet string (the cube after `R U`).
    const TO: &str = "UUBUUBLLLURRURRURRFFUFFRFFRDDDDDDFFFRRDLLDLLDULLBBBBBB";

    /// The rows of a results file as the reader gives them, each as owned values of
    /// (`index`, `status`, `solution`, `error`, `worker`, `claimed`, `confirmed_by`, `moves`,
    /// `to`, `goal`, `solutions`, `count`).
    type Read = (
        u64,
        String,
        String,
        Option<String>,
        Option<String>,
        bool,
        Vec<String>,
        Option<String>,
        Option<String>,
        Option<String>,
        Option<Vec<String>>,
        Option<u64>,
    );

    fn read_all(reader: ParquetReader) -> Vec<Read> {
        let mut rows = Vec::new();
        for batch in reader {
            let batch = batch.expect("batch");
            assert_eq!(batch.schema(), schema());
            let col = |name: &str| batch.column_by_name(name).expect("a column").clone();
            let (index, status, solution) = (col("index"), col("status"), col("solution"));
            let (error, worker, claimed) = (col("error"), col("worker"), col("claimed"));
            let (confirmed_by, moves, to) = (col("confirmed_by"), col("moves"), col("to"));
            let goal = col("goal");
            let (solutions, count) = (col("solutions"), col("count"));
            let status = status.as_dictionary::<Int8Type>();
            let statuses = status.values().as_string::<i32>();
            let text = |a: &ArrayRef, k: usize| {
                let a = a.as_string::<i32>();
                (!a.is_null(k)).then(|| a.value(k).to_string())
            };
            for k in 0..batch.num_rows() {
                let names = confirmed_by.as_list::<i32>().value(k);
                let names = names.as_string::<i32>();
                rows.push((
                    index.as_primitive::<UInt64Type>().value(k),
                    statuses.value(status.keys().value(k) as usize).to_string(),
                    text(&solution, k).expect("never null"),
                    text(&error, k),
                    text(&worker, k),
                    claimed.as_boolean().value(k),
                    (0..names.len())
                        .map(|n| names.value(n).to_string())
                        .collect(),
                    text(&moves, k),
                    text(&to, k),
                    text(&goal, k),
                    (!solutions.is_null(k)).then(|| {
                        let list = solutions.as_list::<i32>().value(k);
                        let list = list.as_string::<i32>();
                        (0..list.len()).map(|n| list.value(n).to_string()).collect()
                    }),
                    (!count.is_null(k)).then(|| count.as_primitive::<UInt64Type>().value(k)),
                ));
            }
        }
        rows
    }

    /// What [`read_all`] gives for `row(i)`, written in a file of `version`.
    fn expected(i: u64, version: u32) -> Read {
        let r = row(i);
        let new = version >= 2;
        (
            r.index,
            r.status.to_string(),
            r.solution.to_string(),
            r.error.map(str::to_string),
            r.worker.filter(|_| new).map(str::to_string),
            r.claimed && new,
            if new { r.confirmed_by.to_vec() } else { vec![] },
            r.moves.filter(|_| version >= 3).map(str::to_string),
            r.to.filter(|_| version >= 4).map(str::to_string),
            r.goal.filter(|_| version >= 5).map(str::to_string),
            r.solutions.filter(|_| version >= 5).map(<[String]>::to_vec),
            r.count.filter(|_| version >= 5),
        )
    }

    /// A file as the writer of schema `version` (1 to 4) made it: the columns of that version,
    /// and (version 1) no version in the schema or in the file's key-value metadata.
    fn old_file(rows: u64, version: u32) -> std::fs::File {
        let kept = schema()
            .fields()
            .iter()
            .take_while(|f| since(f.name()) <= version)
            .count();
        let fields = schema().fields()[..kept].to_vec();
        let metadata = if version > 1 {
            [(SCHEMA_VERSION_KEY.to_string(), version.to_string())].into()
        } else {
            std::collections::HashMap::new()
        };
        let old = Arc::new(Schema::new_with_metadata(fields, metadata));
        assert!(old.field_with_name("goal").is_err());
        assert!(old.field_with_name("solutions").is_err());
        let mut columns = Columns::new();
        for i in 0..rows {
            columns.push(&row(i));
        }
        let batch = columns.finish().expect("batch");
        let batch =
            RecordBatch::try_new(old.clone(), batch.columns()[..kept].to_vec()).expect("old batch");
        let file = tempfile::tempfile().expect("temp file");
        let mut w = ArrowWriter::try_new(file, old, Some(properties())).expect("writer");
        w.write(&batch).expect("write");
        w.into_inner().expect("finish")
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

    /// A file of the current version reads back as written, the version in its metadata
    /// (Arrow's and Parquet's own); a file of version 1 (without `worker`, `claimed`,
    /// `confirmed_by`, `moves`, `to`, `goal`, `solutions` and `count`), 2 (without `moves` and
    /// the later ones), 3 (without `to` and the later ones) or 4 (without `goal`, `solutions`
    /// and `count`) reads as the same rows with those columns' "none".
    #[test]
    fn files_of_either_schema_version_read_as_the_current_schema() {
        let n = 1000;
        let file = tempfile::tempfile().expect("temp file");
        let mut w = ParquetWriter::new(file).expect("writer");
        for i in 0..n {
            w.write(&row(i)).expect("write");
        }
        let (_, file) = w.finish().expect("finish");
        let metadata = ParquetRecordBatchReaderBuilder::try_new(file.try_clone().expect("dup"))
            .expect("reader")
            .metadata()
            .clone();
        let kv = metadata
            .file_metadata()
            .key_value_metadata()
            .expect("key-values");
        assert!(kv
            .iter()
            .any(|e| e.key == SCHEMA_VERSION_KEY && e.value.as_deref() == Some("5")));
        let reader = ParquetReader::new(file).expect("reader");
        assert_eq!(reader.version(), SCHEMA_VERSION);
        let want: Vec<_> = (0..n).map(|i| expected(i, SCHEMA_VERSION)).collect();
        let got = read_all(reader);
        assert_eq!(got, want);
        assert!(got.iter().any(|r| r.6.len() == 2) && got.iter().any(|r| r.4.is_none()));
        assert!(got.iter().any(|r| r.7.is_some()) && got.iter().any(|r| r.7.is_none()));
        assert!(got.iter().any(|r| r.8.is_some()) && got.iter().any(|r| r.8.is_none()));
        assert!(got.iter().any(|r| r.9.is_some()) && got.iter().any(|r| r.9.is_none()));
        assert!(got.iter().any(|r| r.10.is_some()) && got.iter().any(|r| r.10.is_none()));
        assert!(got.iter().any(|r| r.10.is_none() && r.11.is_some()));

        for version in [1, 2, 3, 4] {
            let reader = ParquetReader::new(old_file(n, version)).expect("reader");
            assert_eq!(reader.version(), version);
            let want: Vec<_> = (0..n).map(|i| expected(i, version)).collect();
            assert_eq!(read_all(reader), want, "version {version}");
        }
    }

    /// Neither a batch that lacks a column its version has, nor one with a column of
    /// another type, nor a version that is no number passes for results.
    #[test]
    fn what_is_not_results_is_refused() {
        let mut columns = Columns::new();
        columns.push(&row(1));
        let batch = columns.finish().expect("batch");
        assert_eq!(upgrade(&batch).expect("current"), batch);
        let without = |name: &str, version: Option<&str>| {
            let keep: Vec<usize> = (0..batch.num_columns())
                .filter(|&c| batch.schema().field(c).name() != name)
                .collect();
            let projected = batch.project(&keep).expect("project");
            let metadata = version
                .map(|v| [(SCHEMA_VERSION_KEY.to_string(), v.to_string())].into())
                .unwrap_or_default();
            let schema = Schema::new_with_metadata(projected.schema().fields().clone(), metadata);
            RecordBatch::try_new(Arc::new(schema), projected.columns().to_vec()).expect("batch")
        };
        // version 2 without its column; version 1 (no key) without one of version 1
        assert!(matches!(
            upgrade(&without("claimed", Some("2"))),
            Err(Error::Schema(m)) if m.contains("claimed")
        ));
        assert!(upgrade(&without("claimed", None)).is_ok());
        assert!(upgrade(&without("millis", None)).is_err());
        assert!(upgrade(&without("nothing", Some("two"))).is_err());
        assert!(upgrade(&without("nothing", Some("0"))).is_err());
        // a newer version's columns this build does not know are left out
        assert_eq!(
            upgrade(&without("nothing", Some("6")))
                .expect("newer")
                .num_columns(),
            schema().fields().len()
        );
        let fields: Vec<Field> = batch
            .schema()
            .fields()
            .iter()
            .map(|f| match f.name().as_str() {
                "millis" => Field::new("millis", DataType::Utf8, false),
                _ => f.as_ref().clone(),
            })
            .collect();
        let mut arrays = batch.columns().to_vec();
        arrays[7] = Arc::new(arrow_array::StringArray::from(vec!["0.25"]));
        let retyped = RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays).expect("batch");
        assert!(matches!(upgrade(&retyped), Err(Error::Schema(m)) if m.contains("millis")));
    }

    #[test]
    fn a_histogram_has_a_row_per_length() {
        let b = histogram_batch(&[1, 0, 3]).expect("batch");
        assert_eq!(b.num_rows(), 3);
        let bytes = write_histogram(Vec::new(), &[1, 0, 3]).expect("write");
        assert!(bytes.starts_with(b"PAR1") && bytes.ends_with(b"PAR1"));
    }
}
