//! `cubefleet solve`: solve positions given as arguments or on stdin, here and now.

use std::collections::BTreeMap;
use std::io::Write;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use cubefleet_proto::ResultStatus;
use cubefleet_search::{solve_lines, Request, Threads};
use cubefleet_tables::input::Lines;
use cubefleet_tables::{InputFormat, Tables};

use super::TablesArgs;
use crate::output::{LineStatus, ResultLine};

/// How positions are written.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub(crate) enum Input {
    /// Facelet string when it looks like one, else a move sequence.
    Auto,
    /// Move sequences.
    Moves,
    /// 54-sticker facelet strings.
    Facelets,
    /// The 9-line colour net (positions separated by blank lines).
    Net,
}

impl From<Input> for InputFormat {
    fn from(i: Input) -> Self {
        match i {
            Input::Auto => InputFormat::Auto,
            Input::Moves => InputFormat::Moves,
            Input::Facelets => InputFormat::Facelets,
            Input::Net => InputFormat::Net,
        }
    }
}

/// Output format.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub(crate) enum Format {
    /// `R U2 F' ... (19)` per line.
    Text,
    /// One JSON object per input line.
    Json,
    /// Apache Parquet on stdout (redirect it to a file): the JSON lines' fields as typed
    /// columns (`solve` only).
    Parquet,
}

#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// Positions: move sequences or facelet strings. None: read stdin, one per line.
    positions: Vec<String>,
    /// How positions are written.
    #[arg(long, value_enum, default_value = "auto")]
    input: Input,
    #[command(flatten)]
    mode: super::ModeArgs,
    /// Time budget per position, in seconds (more than 0); the best solution so far is
    /// returned after it.
    #[arg(long, default_value_t = 300.0, value_parser = super::flags::timeout)]
    timeout: f64,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
    /// Search threads: several positions are solved this many at once, one thread each; a
    /// single position is searched by all of them (two-phase: the six directions shared out;
    /// optimal and depth-limited: the first levels of the tree).
    #[arg(long, default_value_t = 1, value_parser = super::flags::threads)]
    threads: usize,
    #[command(flatten)]
    tables: TablesArgs,
}

/// How long the printer lets results pile up before it prints them (while searches remain).
const PRINT_EVERY: Duration = Duration::from_millis(5);

/// Reads the inputs in order: input `i` is line `i` (numbered from 0, blank lines and `#`
/// comments too: they are answered `skipped`, so every index is the line of the input); each
/// line is read as [`Lines`] reads it (cut past the line-length limit, which then refuses it).
/// Nets are groups of non-blank lines, numbered by group.
fn read_inputs(args: &Args) -> anyhow::Result<Vec<String>> {
    if !args.positions.is_empty() {
        return Ok(args.positions.clone());
    }
    let lines = Lines::new(std::io::stdin().lock());
    let mut out = Vec::new();
    if matches!(args.input, Input::Net) {
        let mut group = String::new();
        for line in lines {
            let line = line?;
            if line.trim().is_empty() {
                if !group.is_empty() {
                    out.push(std::mem::take(&mut group));
                }
            } else {
                group.push_str(&line);
                group.push('\n');
            }
        }
        if !group.is_empty() {
            out.push(group);
        }
        return Ok(out);
    }
    for line in lines {
        out.push(line?);
    }
    Ok(out)
}

/// What `solve` says when searches ran out of time before finding any solution (optimal and
/// depth-limited searches find one only at the depth they prove): what they proved, and what
/// would help.
fn timeout_note(lines: &[(usize, Option<u32>)], timeout: f64, has_bound_table: bool) -> String {
    let shown: Vec<String> = lines
        .iter()
        .take(5)
        .map(|(i, bound)| match bound {
            Some(b) => format!("line {i}: no solution shorter than {b} moves"),
            None => format!("line {i}"),
        })
        .collect();
    let more = if lines.len() > shown.len() {
        format!(" and {} more", lines.len() - shown.len())
    } else {
        String::new()
    };
    let table = if has_bound_table {
        ""
    } else {
        "build a bound table (`cubefleet tables build --huge`, about a minute), "
    };
    format!(
        "timeout: {} position(s) ran out of the {timeout} s budget before a solution was \
         proven ({}{more}); {table}give more --timeout, or leave out --optimal/--max-depth for a \
         solution of at most 20 moves at once",
        lines.len(),
        shown.join("; ")
    )
}

pub(crate) fn run(args: Args) -> anyhow::Result<ExitCode> {
    let inputs = read_inputs(&args)?;
    let mode = args.mode.question(Some(args.timeout))?;
    let tables: Tables = args.tables.load_for(&mode)?;
    let (tx, rx) = mpsc::channel::<ResultLine>();
    let mut any_invalid = false;
    // (index, lower bound) of the searches whose time ran out before any solution
    let mut empty_timeouts = Vec::new();
    // raised when the printer stopped (it failed to write): the searches left end at once
    let stopped = Arc::new(AtomicBool::new(false));
    let req = Request {
        mode,
        format: args.input.into(),
        cancel: Some(stopped.clone()),
    };
    // one position gets every thread; several get one thread each
    let threads = Threads::for_lines(inputs.len(), args.threads);
    std::thread::scope(|s| -> anyhow::Result<()> {
        let (tables, inputs, req) = (&tables, &inputs, &req);
        let searches = s.spawn(move || {
            solve_lines(tables, req, inputs, threads, |line| {
                if tx.send(line).is_err() {
                    stopped.store(true, Ordering::Relaxed);
                }
            })
        });
        // print in input order, in groups: after a result arrives the printer lets more pile
        // up for a moment while searches remain, so it neither wakes (and preempts a search
        // thread) nor writes once per position
        let mut pending = BTreeMap::new();
        let (mut printed, mut received) = (0, 0);
        let mut out = std::io::BufWriter::new(crate::output::Stdout::new());
        let mut parquet = match args.format {
            Format::Parquet => Some(cubefleet_columns::ParquetWriter::new(
                std::io::BufWriter::new(crate::output::Stdout::new()),
            )?),
            _ => None,
        };
        while let Ok(line) = rx.recv() {
            pending.insert(line.index, line);
            received += 1;
            if received < inputs.len() {
                std::thread::sleep(PRINT_EVERY);
            }
            for line in rx.try_iter() {
                pending.insert(line.index, line);
                received += 1;
            }
            while let Some(line) = pending.remove(&printed) {
                // a refused line or a failed check (an `unreachable` answer's error is its
                // reason, an answer like any other)
                any_invalid |= line.error.is_some()
                    && line.status != LineStatus::Result(ResultStatus::Unreachable);
                if line.status == LineStatus::Result(ResultStatus::Timeout)
                    && line.solution.is_empty()
                {
                    empty_timeouts.push((line.index, line.lower_bound));
                }
                match args.format {
                    Format::Text => writeln!(out, "{}", line.text())?,
                    Format::Json => writeln!(out, "{}", serde_json::to_string(&line)?)?,
                    Format::Parquet => {
                        if let Some(p) = &mut parquet {
                            p.write(&crate::parquet::row(&line))?;
                        }
                    }
                }
                printed += 1;
            }
            out.flush()?;
        }
        if let Some(p) = parquet {
            p.finish()?;
        }
        searches
            .join()
            .map_err(|_| anyhow::anyhow!("a search thread panicked"))??;
        Ok(())
    })?;
    if !empty_timeouts.is_empty() {
        eprintln!(
            "{}",
            timeout_note(
                &empty_timeouts,
                args.timeout,
                // a goal search reads no bound table: building one would not help it
                tables.optimal_bound.is_some() || mode.goal().is_some()
            )
        );
    }
    Ok(if any_invalid {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
