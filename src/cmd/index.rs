//! `cubefleet index` and `cubefleet position`: the state index (see
//! `cubefleet_tables::index`), from positions to numbers and back.

use std::io::{BufRead, Write};
use std::process::ExitCode;

use cubefleet_tables::facelet::FaceletCube;
use cubefleet_tables::index::{index_of, parse_index, state_at};
use cubefleet_tables::{parse_position, InputFormat};

use super::solve::Format;
use crate::output::Stdout;

#[derive(clap::Args, Debug)]
pub(crate) struct IndexArgs {
    /// Positions: move sequences or facelet strings. None: read stdin, one per line.
    positions: Vec<String>,
    /// Output format: the index alone, or a JSON object (`input`, `index` as a decimal
    /// string, `error`).
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
}

#[derive(clap::Args, Debug)]
#[command(allow_negative_numbers = true)]
pub(crate) struct PositionArgs {
    /// State indices, decimal, `0 <= index < 43252003274489856000`. None: read stdin.
    indices: Vec<String>,
    /// Output format: the facelet string alone, or a JSON object (`index`, `facelets`,
    /// `error`).
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
}

/// The arguments, else stdin's lines (blank ones and `#` comments skipped).
fn inputs(args: &[String]) -> anyhow::Result<Vec<String>> {
    if !args.is_empty() {
        return Ok(args.to_vec());
    }
    let mut out = Vec::new();
    for line in std::io::stdin().lock().lines() {
        let line = line?;
        let t = line.trim();
        if !t.is_empty() && !t.starts_with('#') {
            out.push(t.to_string());
        }
    }
    Ok(out)
}

/// Writes one answer per input (`answer` gives the text and the JSON key and value, or the
/// reason the input is refused, which goes to stderr in text format); exit code 1 when any
/// input was refused.
fn answer_each(
    inputs: &[String],
    format: Format,
    input_key: &str,
    answer: impl Fn(&str) -> Result<(&'static str, String), cubefleet_tables::Error>,
) -> anyhow::Result<ExitCode> {
    let mut out = std::io::BufWriter::new(Stdout::new());
    let mut refused = false;
    for input in inputs {
        let got = answer(input);
        refused |= got.is_err();
        match (format, got) {
            (Format::Text, Ok((_, v))) => writeln!(out, "{v}")?,
            (Format::Text, Err(e)) => {
                out.flush()?;
                eprintln!("error: `{input}`: {e}");
            }
            (Format::Parquet, _) => anyhow::bail!("index and position write text or json"),
            (Format::Json, got) => {
                let mut o = serde_json::Map::new();
                o.insert(input_key.into(), input.as_str().into());
                let error = match got {
                    Ok((key, v)) => {
                        o.insert(key.into(), v.into());
                        serde_json::Value::Null
                    }
                    Err(e) => e.to_string().into(),
                };
                o.insert("error".into(), error);
                writeln!(out, "{}", serde_json::Value::Object(o))?;
            }
        }
    }
    out.flush()?;
    Ok(if refused {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

pub(crate) fn index(args: IndexArgs) -> anyhow::Result<ExitCode> {
    answer_each(&inputs(&args.positions)?, args.format, "input", |p| {
        let cube = parse_position(p, InputFormat::Auto)?;
        Ok(("index", index_of(&cube).to_string()))
    })
}

pub(crate) fn position(args: PositionArgs) -> anyhow::Result<ExitCode> {
    answer_each(&inputs(&args.indices)?, args.format, "index", |i| {
        let cube = state_at(parse_index(i)?)?;
        Ok(("facelets", FaceletCube::from_cubie(&cube).to_string()))
    })
}
