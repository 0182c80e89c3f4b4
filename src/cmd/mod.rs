//! One module per subcommand.

pub(crate) mod bench;
pub(crate) mod scramble;
pub(crate) mod solve;
pub(crate) mod tables;

use std::path::PathBuf;

/// Where the tables live and whether missing ones may be built.
#[derive(clap::Args, Clone, Debug)]
pub(crate) struct TablesArgs {
    /// Tables directory (default: $CUBEFLEET_TABLES, else the user's cache directory).
    #[arg(long = "tables", value_name = "DIR")]
    pub(crate) dir: Option<PathBuf>,
    /// Refuse to build missing tables (fail with a message instead).
    #[arg(long)]
    pub(crate) no_build: bool,
}

impl TablesArgs {
    pub(crate) fn dir(&self) -> PathBuf {
        self.dir
            .clone()
            .unwrap_or_else(cubefleet_tables::default_dir)
    }

    pub(crate) fn load(&self) -> anyhow::Result<cubefleet_tables::Tables> {
        crate::progress::load_tables(&self.dir(), !self.no_build)
    }
}
