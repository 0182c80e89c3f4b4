//! Writes N synthetic result rows (default 10,000,000) to a Parquet file and prints the time
//! and the process's peak resident memory: the writer holds one row group, whatever N.
//!
//! `cargo run --release -p cubefleet-columns --example parquet_rows -- FILE [N]`

use std::io::BufWriter;

use cubefleet_columns::{ParquetWriter, Row};

/// Peak resident memory of this process, from `/proc/self/status` (Linux), in KiB.
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args.next().ok_or("usage: parquet_rows FILE [N]")?;
    let n: u64 = args.next().map_or(Ok(10_000_000), |a| a.parse())?;
    let moves = ["R", "U'", "F2", "D", "L'", "B2"];
    let start = std::time::Instant::now();
    let mut w = ParquetWriter::new(BufWriter::new(std::fs::File::create(&path)?))?;
    let mut solution = String::new();
    for i in 0..n {
        // a solution of 16-20 turns, different on every row
        solution.clear();
        let len = 16 + (i % 5) as u32;
        for k in 0..len as u64 {
            if k > 0 {
                solution.push(' ');
            }
            solution.push_str(moves[((i / 7 + k * 5) % 6) as usize]);
        }
        let state_index = (i * 4_294_967_311).to_string();
        w.write(&Row {
            index: i,
            input: "",
            status: if i % 1000 == 999 { "timeout" } else { "solved" },
            solution: &solution,
            length: Some(len),
            optimal: false,
            lower_bound: None,
            millis: (i % 97) as f64 / 10.0,
            nodes: Some(i % 100_000),
            state_index: Some(&state_index),
            error: None,
            worker: Some(["farm-1", "farm-2", "farm-3"][(i % 3) as usize]),
            claimed: false,
            confirmed_by: &[],
            moves: None,
            to: None,
            goal: None,
            solutions: None,
            count: None,
        })?;
    }
    let (rows, _) = w.finish()?;
    let size = std::fs::metadata(&path)?.len();
    println!(
        "{rows} rows, {size} bytes, {:.1} s, peak RSS {} KiB",
        start.elapsed().as_secs_f64(),
        peak_rss_kib().map_or_else(|| "?".into(), |k| k.to_string())
    );
    Ok(())
}
