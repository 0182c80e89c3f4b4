//! Progress bars on stderr (data goes to stdout).

use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::Instant;

use indicatif::{ProgressBar, ProgressStyle};

/// A progress callback for table builds: one bar per table on a terminal; elsewhere (a log
/// file, a pipe) a line when each table starts and when it is built, with its time.
pub(crate) struct TableBuildBar {
    bar: Mutex<Option<(String, ProgressBar, Instant)>>,
    /// Standard error is not a terminal: lines instead of bars.
    plain: bool,
}

impl TableBuildBar {
    pub(crate) fn new() -> Self {
        TableBuildBar {
            bar: Mutex::new(None),
            plain: !std::io::stderr().is_terminal(),
        }
    }

    /// Reports `filled` of `total` entries of table `name`.
    pub(crate) fn update(&self, name: &str, filled: u64, total: u64) {
        let Ok(mut guard) = self.bar.lock() else {
            return;
        };
        if guard.as_ref().is_none_or(|(n, _, _)| n != name) {
            if let Some((old, bar, start)) = guard.take() {
                self.done(&old, &bar, start);
            }
            let bar = ProgressBar::new(total);
            bar.set_style(
                ProgressStyle::with_template(
                    "building {msg:>12} [{bar:40}] {percent:>3}% {elapsed_precise}",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
            );
            bar.set_message(name.to_string());
            if self.plain {
                eprintln!("building table {name}");
            }
            *guard = Some((name.to_string(), bar, Instant::now()));
        }
        if let Some((n, bar, start)) = guard.as_ref() {
            bar.set_position(filled);
            if filled >= total && !bar.is_finished() {
                self.done(n, bar, *start);
            }
        }
    }

    /// Ends the bar of the last table, if its build did not report its end.
    pub(crate) fn finish(&self) {
        if let Ok(guard) = self.bar.lock() {
            if let Some((name, bar, start)) = guard.as_ref() {
                self.done(name, bar, *start);
            }
        }
    }

    /// Ends the bar of table `name` (on a terminal) or says it was built (elsewhere).
    fn done(&self, name: &str, bar: &ProgressBar, start: Instant) {
        if bar.is_finished() {
            return;
        }
        bar.finish();
        if self.plain {
            eprintln!(
                "built table {name} in {:.1} s",
                start.elapsed().as_secs_f64()
            );
        }
    }
}

/// The bar of one stage at one depth: the stage's name and depth, the bar, its start.
type StageBar = ((String, u32), ProgressBar, Instant);

/// Progress of `coset solve`: a bar per stage and depth on a terminal; elsewhere a line when
/// each ends, with its time.
pub(crate) struct CosetBar {
    bar: Mutex<Option<StageBar>>,
    /// Standard error is not a terminal: lines instead of bars.
    plain: bool,
}

impl CosetBar {
    pub(crate) fn new() -> Self {
        CosetBar {
            bar: Mutex::new(None),
            plain: !std::io::stderr().is_terminal(),
        }
    }

    /// Reports `done` of `all` of stage `name` at `depth`.
    pub(crate) fn update(&self, name: &str, depth: u32, done: u64, all: u64) {
        let Ok(mut guard) = self.bar.lock() else {
            return;
        };
        let key = (name.to_string(), depth);
        if guard.as_ref().is_none_or(|(k, _, _)| *k != key) {
            if let Some((old, bar, start)) = guard.take() {
                self.done(&old, &bar, start);
            }
            let bar = if self.plain {
                ProgressBar::hidden()
            } else {
                ProgressBar::new(all)
            };
            bar.set_style(
                ProgressStyle::with_template(
                    "depth {prefix:>2} {msg:>10} [{bar:40}] {percent:>3}% {elapsed_precise}",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
            );
            bar.set_prefix(depth.to_string());
            bar.set_message(name.to_string());
            *guard = Some((key, bar, Instant::now()));
        }
        if let Some((_, bar, _)) = guard.as_ref() {
            bar.set_length(all);
            bar.set_position(done);
        }
    }

    /// Ends the last bar.
    pub(crate) fn finish(&self) {
        if let Ok(mut guard) = self.bar.lock() {
            if let Some((key, bar, start)) = guard.take() {
                self.done(&key, &bar, start);
            }
        }
    }

    fn done(&self, (name, depth): &(String, u32), bar: &ProgressBar, start: Instant) {
        bar.finish();
        if self.plain {
            eprintln!(
                "depth {depth} {name}: {:.1} s",
                start.elapsed().as_secs_f64()
            );
        }
    }
}

/// Loads the two-phase tables from `dir`, building missing ones with a progress bar, and the
/// optimal searches' bound table (the first built of the colossal, giant and huge tables, in
/// that order; never built here) when `optimal_bound`.
pub(crate) fn load_tables(
    dir: &std::path::Path,
    build: bool,
    optimal_bound: bool,
) -> anyhow::Result<cubefleet_tables::Tables> {
    if build {
        let missing: Vec<&str> = cubefleet_tables::TWO_PHASE_TABLES
            .iter()
            .filter(|k| !dir.join(k.file_name()).exists())
            .map(|k| k.name())
            .collect();
        if !missing.is_empty() {
            eprintln!(
                "building the two-phase tables in {} ({}): once per machine, about 1 GB, \
                 10-60 s on 2 cores",
                dir.display(),
                missing.join(", ")
            );
        }
        let bar = TableBuildBar::new();
        let built = cubefleet_tables::Tables::build(
            dir,
            &cubefleet_tables::TWO_PHASE_TABLES,
            false,
            &|n, f, t| bar.update(n, f, t),
        )?;
        bar.finish();
        if !built.is_empty() {
            let names: Vec<&str> = built.iter().map(|k| k.name()).collect();
            tracing::info!(dir = %dir.display(), tables = names.join(","), "built missing tables");
        }
    }
    let start = std::time::Instant::now();
    let tables = cubefleet_tables::Tables::load_with(dir, optimal_bound)?;
    tracing::debug!(
        seconds = start.elapsed().as_secs_f64(),
        "tables loaded and verified"
    );
    if hugepages_asked(std::env::var("CUBEFLEET_HUGEPAGES").ok().as_deref()) {
        return Ok(tables.into_private_hugepages()?);
    }
    Ok(tables)
}

/// Whether `CUBEFLEET_HUGEPAGES` (its value, if set) asks for the tables in private huge-page
/// memory: any value but empty, `0`, `false`, `no` and `off`.
fn hugepages_asked(value: Option<&str>) -> bool {
    value.is_some_and(|v| {
        !matches!(
            v.trim().to_ascii_lowercase().as_str(),
            "" | "0" | "false" | "no" | "off"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::hugepages_asked;

    #[test]
    fn hugepages_are_asked_for_by_a_true_value_only() {
        for on in ["1", "yes", "true", "on"] {
            assert!(hugepages_asked(Some(on)), "{on}");
        }
        for off in [
            None,
            Some(""),
            Some("0"),
            Some("false"),
            Some("No"),
            Some("off"),
        ] {
            assert!(!hugepages_asked(off), "{off:?}");
        }
    }
}
