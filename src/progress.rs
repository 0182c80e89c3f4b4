//! Progress bars on stderr (data goes to stdout).

use std::sync::Mutex;

use indicatif::{ProgressBar, ProgressStyle};

/// A progress callback for table builds that draws one bar per table.
pub(crate) struct TableBuildBar {
    bar: Mutex<Option<(String, ProgressBar)>>,
}

impl TableBuildBar {
    pub(crate) fn new() -> Self {
        TableBuildBar {
            bar: Mutex::new(None),
        }
    }

    /// Reports `filled` of `total` entries of table `name`.
    pub(crate) fn update(&self, name: &str, filled: u64, total: u64) {
        let Ok(mut guard) = self.bar.lock() else {
            return;
        };
        if guard.as_ref().is_none_or(|(n, _)| n != name) {
            if let Some((_, old)) = guard.take() {
                old.finish();
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
            *guard = Some((name.to_string(), bar));
        }
        if let Some((_, bar)) = guard.as_ref() {
            bar.set_position(filled);
            if filled >= total {
                bar.finish();
            }
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
        let bar = TableBuildBar::new();
        let built = cubefleet_tables::Tables::build(
            dir,
            &cubefleet_tables::TWO_PHASE_TABLES,
            false,
            &|n, f, t| bar.update(n, f, t),
        )?;
        if !built.is_empty() {
            tracing::info!(dir = %dir.display(), ?built, "built missing tables");
        }
    }
    let start = std::time::Instant::now();
    let tables = cubefleet_tables::Tables::load_with(dir, optimal_bound)?;
    tracing::debug!(elapsed = ?start.elapsed(), "tables loaded and verified");
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
