//! Parquet output of the commands that write results (`results --format parquet`, `run --out
//! FILE.parquet`, `solve --format parquet`): every field of the JSON line as a typed column
//! ([`cubefleet_columns`], the schema the Python package's tables have too; a field the line
//! leaves out is a null, `false` or empty list there), written a row group at a time, so an
//! export of any size runs in constant memory.

use std::path::Path;

use cubefleet_columns::Row;

use crate::output::ResultLine;

/// A result line as a row of the shared columns (the search crate's one mapping, which the
/// Python package's tables use too).
pub(crate) fn row(line: &ResultLine) -> Row<'_> {
    line.row()
}

/// True when `path` names a Parquet file (`.parquet` or `.pq`): `run --out` writes it so.
pub(crate) fn is_parquet_path(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("parquet") || e.eq_ignore_ascii_case("pq"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parquet_paths_are_told_by_their_extension() {
        assert!(is_parquet_path(Path::new("out.parquet")));
        assert!(is_parquet_path(Path::new("dir/OUT.PQ")));
        assert!(!is_parquet_path(Path::new("out.jsonl")));
        assert!(!is_parquet_path(Path::new("parquet")));
    }
}
