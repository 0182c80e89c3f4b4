//! `cubefleet tables build|info|verify`.

use std::path::PathBuf;
use std::process::ExitCode;

use cubefleet_tables::file::{Table, TableKind};
use cubefleet_tables::{prune, Tables, TWO_PHASE_TABLES};
use serde::Serialize;

use crate::progress::TableBuildBar;

#[derive(clap::Subcommand, Debug)]
pub(crate) enum Command {
    /// Build the tables that are missing.
    Build {
        /// Tables directory (default: $CUBEFLEET_TABLES, else the user's cache directory).
        #[arg(long)]
        dir: Option<PathBuf>,
        /// Also build the huge table for the optimal solver (0.9 GB, about a minute).
        #[arg(long)]
        huge: bool,
        /// Also build the giant table for the optimal solver (2.5 GB, a few minutes): a
        /// stronger bound than the huge table's, used instead of it when present.
        #[arg(long)]
        giant: bool,
        /// Also build the colossal table for the optimal solver (7.55 GB with its floors,
        /// 8.8 GB of memory; about 3 minutes on 2 cores with AVX-512 VBMI, longer without):
        /// a stronger bound than the giant table's, used instead of it when present.
        #[arg(long)]
        colossal: bool,
        /// Rebuild even when the files exist.
        #[arg(long)]
        force: bool,
    },
    /// Per table: file, size, checksum status and entries per depth.
    Info {
        /// Tables directory.
        #[arg(long)]
        dir: Option<PathBuf>,
        /// Print exactly one JSON object on stdout.
        #[arg(long)]
        json: bool,
    },
    /// Re-check every table's header and checksum; non-zero exit on any problem.
    Verify {
        /// Tables directory.
        #[arg(long)]
        dir: Option<PathBuf>,
    },
}

/// What `tables info` reports about one table.
#[derive(Serialize)]
struct TableInfo {
    name: &'static str,
    file: String,
    bytes: u64,
    entries: u64,
    checksum_ok: bool,
    /// Entries at each depth, index = depth.
    distribution: Vec<u64>,
}

fn dir_or_default(dir: Option<PathBuf>) -> PathBuf {
    dir.unwrap_or_else(cubefleet_tables::default_dir)
}

fn kinds(huge: bool, giant: bool, colossal: bool) -> Vec<TableKind> {
    // the coordinate tables too: without their file, the first load computes and writes it
    let mut k = TWO_PHASE_TABLES.to_vec();
    k.push(TableKind::Coords);
    if huge {
        k.push(TableKind::Huge);
    }
    if giant {
        k.push(TableKind::Giant);
    }
    if colossal {
        k.push(TableKind::Colossal);
    }
    k
}

pub(crate) fn run(cmd: Command) -> anyhow::Result<ExitCode> {
    match cmd {
        Command::Build {
            dir,
            huge,
            giant,
            colossal,
            force,
        } => {
            let dir = dir_or_default(dir);
            let bar = TableBuildBar::new();
            let start = std::time::Instant::now();
            let built = Tables::build(&dir, &kinds(huge, giant, colossal), force, &|n, f, t| {
                bar.update(n, f, t)
            })?;
            bar.finish();
            for k in &built {
                eprintln!("built {} in {}", k.name(), dir.display());
            }
            if built.is_empty() {
                eprintln!("all tables present in {}", dir.display());
            } else {
                eprintln!("done in {:.1} s", start.elapsed().as_secs_f64());
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Info { dir, json } => {
            let dir = dir_or_default(dir);
            let mut infos = Vec::new();
            for kind in TableKind::ALL {
                let path = dir.join(kind.file_name());
                if !path.exists() {
                    continue;
                }
                let t = Table::open_verified(&dir, kind);
                let bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
                let (entries, checksum_ok, distribution) = match &t {
                    Ok(t) => (
                        t.header().entries,
                        true,
                        prune::table_distribution(t.header(), t.payload()),
                    ),
                    Err(_) => (0, false, Vec::new()),
                };
                infos.push(TableInfo {
                    name: kind.name(),
                    file: path.display().to_string(),
                    bytes,
                    entries,
                    checksum_ok,
                    distribution,
                });
            }
            if json {
                println!("{}", serde_json::json!({ "tables": infos }));
            } else {
                if infos.is_empty() {
                    println!(
                        "no tables in {} (build them with `cubefleet tables build`)",
                        dir.display()
                    );
                }
                for t in &infos {
                    println!(
                        "{:<12} {:>14} entries {:>12} bytes  checksum {}  {}",
                        t.name,
                        t.entries,
                        t.bytes,
                        if t.checksum_ok { "ok" } else { "BAD" },
                        t.file
                    );
                    for (d, n) in t.distribution.iter().enumerate() {
                        println!("    depth {d:>2}: {n:>12}");
                    }
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Verify { dir } => {
            let dir = dir_or_default(dir);
            let mut bad = false;
            let mut found = 0;
            for kind in TableKind::ALL {
                let required = TWO_PHASE_TABLES.contains(&kind);
                if !required && !dir.join(kind.file_name()).exists() {
                    continue;
                }
                match Table::open_verified(&dir, kind) {
                    Ok(_) => {
                        found += 1;
                        println!("{}: ok", kind.name());
                    }
                    Err(e) => {
                        bad = true;
                        println!("{}: {e}", kind.name());
                    }
                }
            }
            Ok(if bad || found == 0 {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            })
        }
    }
}
