//! `--services DIR` and `--only IDS`: the service definitions every command that reads the
//! catalog loads — the built-in ones, plus (and replaced by) the `*.toml` files of DIR, kept to
//! the services of IDS when given.

use std::path::PathBuf;

use anyhow::Context;
use apistend_catalog::{Catalog, Overrides, definition::Definitions};
use clap::Args;

#[derive(Debug, Clone, Args)]
pub(crate) struct ServicesArg {
    /// A directory of service definitions (`*.toml`, see docs/services.md): they add services
    /// and replace built-ins with the same id.
    #[arg(long = "services", env = "APISTEND_SERVICES", value_name = "DIR")]
    dir: Option<PathBuf>,
    /// Only these services (ids, comma-separated or repeated: `--only wb,ozon`); the others are
    /// not loaded, and their paths answer 404.
    #[arg(long, env = "APISTEND_ONLY", value_delimiter = ',', value_name = "IDS")]
    only: Vec<String>,
}

impl ServicesArg {
    /// The definitions to load.
    pub(crate) fn definitions(&self) -> anyhow::Result<Definitions> {
        let builtin = Definitions::builtin();
        let all = match &self.dir {
            // Its errors name the file (under DIR), its line and field, as the catalog's
            // build errors do: one format, no prefix of ours.
            Some(dir) => builtin.with_dir(dir)?,
            None => builtin,
        };
        if self.only.is_empty() {
            return Ok(all);
        }
        all.only(&self.only).context("--only")
    }

    /// The catalog of those definitions, with `overrides` applied.
    pub(crate) fn catalog(&self, overrides: &Overrides) -> anyhow::Result<Catalog> {
        Ok(Catalog::load(&self.definitions()?, None)?.with_overrides(overrides)?)
    }
}
