//! `cubefleet solve`: solve positions given as arguments or on stdin, here and now.

use std::collections::BTreeMap;
use std::io::Write;
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use cubefleet_proto::ResultStatus;
use cubefleet_tables::{is_blank_or_comment, parse_position, InputFormat, Tables};
use cubefleet_worker::search::{solve_parallel, Budget, Mode, Solver};

use super::TablesArgs;
use crate::output::{LineStatus, ResultLine};
use cubefleet_tables::input::Lines;

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

/// Reads the inputs: (index, text) in order. Lines are numbered from 0, blank lines and `#`
/// comments too (they are answered `skipped`, so every index is the line of the input); each
/// line is read as [`Lines`] reads it (cut past the line-length limit, which then refuses it).
/// Nets are groups of non-blank lines, numbered by group.
fn read_inputs(args: &Args) -> anyhow::Result<Vec<(usize, String)>> {
    if !args.positions.is_empty() {
        return Ok(args.positions.iter().cloned().enumerate().collect());
    }
    let lines = Lines::new(std::io::stdin().lock());
    let mut out = Vec::new();
    if matches!(args.input, Input::Net) {
        let mut group = String::new();
        for line in lines {
            let line = line?;
            if line.trim().is_empty() {
                if !group.is_empty() {
                    out.push((out.len(), std::mem::take(&mut group)));
                }
            } else {
                group.push_str(&line);
                group.push('\n');
            }
        }
        if !group.is_empty() {
            out.push((out.len(), group));
        }
        return Ok(out);
    }
    for (i, line) in lines.enumerate() {
        out.push((i, line?));
    }
    Ok(out)
}

/// Solves one input line with a reusable searcher, or with `threads` threads of its own when
/// more than one.
fn solve_line(
    solver: &mut Solver<'_>,
    tables: &Tables,
    threads: usize,
    args: &Args,
    index: usize,
    input: &str,
) -> ResultLine {
    let start = Instant::now();
    let mut line = ResultLine {
        index,
        input: input.to_string(),
        status: LineStatus::Result(ResultStatus::Invalid),
        solution: String::new(),
        length: None,
        optimal: false,
        millis: 0.0,
        error: None,
        lower_bound: None,
        nodes: None,
        state_index: None,
        worker: None,
        claimed: false,
        confirmed_by: Vec::new(),
    };
    // a blank or comment line holds no position (a net's blank lines separate nets)
    let skipped = !matches!(args.input, Input::Net) && is_blank_or_comment(input);
    match (!skipped).then(|| parse_position(input, args.input.into())) {
        None => line.status = LineStatus::Result(ResultStatus::Skipped),
        Some(Err(e)) => line.error = Some(e.to_string()),
        Some(Ok(cube)) => {
            let budget = Budget {
                deadline: Some(start + Duration::from_secs_f64(args.timeout)),
                cancel: None,
            };
            let mode = args.mode.mode();
            let out = if threads > 1 {
                solve_parallel(tables, &cube, &mode, &budget, threads)
            } else {
                solver.solve(&cube, &mode, 0, &budget, &mut |_| {})
            };
            line.status = LineStatus::Result(out.status.into());
            if let Some(s) = &out.solution {
                // the searcher verified it; checked again here, where it is printed
                if cube.apply_moves(&s.0).is_solved() {
                    line.solution = s.to_string();
                    line.length = Some(args.mode.length_metric().length(&s.0));
                } else {
                    line.status = LineStatus::Error;
                    line.error = Some(format!("internal error: {s} does not solve it"));
                }
            }
            line.optimal = out.optimal;
            line.nodes = Some(out.nodes);
            if !matches!(args.mode.mode(), Mode::TwoPhase { .. }) {
                line.lower_bound = Some(out.lower_bound);
            }
        }
    }
    line.millis = start.elapsed().as_secs_f64() * 1000.0;
    line
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
    let tables: Tables = args.tables.load_for(&args.mode.mode())?;
    let next = AtomicUsize::new(0);
    let (tx, rx) = mpsc::channel::<(usize, ResultLine)>();
    let mut any_invalid = false;
    // (index, lower bound) of the searches whose time ran out before any solution
    let mut empty_timeouts = Vec::new();
    // one position gets every thread; several get one thread each
    let (workers, per_position) = if inputs.len() == 1 {
        (1, args.threads.max(1))
    } else {
        (args.threads.max(1), 1)
    };
    std::thread::scope(|s| -> anyhow::Result<()> {
        for _ in 0..workers {
            let tx = tx.clone();
            let (tables, inputs, next, args) = (&tables, &inputs, &next, &args);
            s.spawn(move || {
                let mut solver = Solver::new(tables);
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some((index, text)) = inputs.get(i) else {
                        break;
                    };
                    let line = solve_line(&mut solver, tables, per_position, args, *index, text);
                    if tx.send((i, line)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
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
        while let Ok((pos, line)) = rx.recv() {
            pending.insert(pos, line);
            received += 1;
            if received < inputs.len() {
                std::thread::sleep(PRINT_EVERY);
            }
            for (pos, line) in rx.try_iter() {
                pending.insert(pos, line);
                received += 1;
            }
            while let Some(line) = pending.remove(&printed) {
                any_invalid |= line.error.is_some();
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
        Ok(())
    })?;
    if !empty_timeouts.is_empty() {
        eprintln!(
            "{}",
            timeout_note(
                &empty_timeouts,
                args.timeout,
                tables.optimal_bound.is_some()
            )
        );
    }
    Ok(if any_invalid {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
