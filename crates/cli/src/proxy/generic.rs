//! `--service generic`: the proxy in front of an API with no definition. Its definition
//! (`generic.toml`, beside this file) is added to the catalog the proxy loads when the service
//! is named and no file of `--services DIR` defines it: one bucket per account, learned from the
//! rate-limit headers any API may send and from its refusals.

use anyhow::Context as _;
use apistend_catalog::Catalog;

use crate::services_arg::ServicesArg;

/// Its id, as `--service` names it.
const ID: &str = "generic";

/// Its definition.
const DEFINITION: &str = include_str!("generic.toml");

/// The catalog of `dir`'s definitions, with the generic one when `services` names it.
///
/// # Errors
/// When a definition does not load (its file, line and field named).
pub(super) fn catalog(dir: &ServicesArg, services: &[String]) -> anyhow::Result<Catalog> {
    let mut defs = dir.definitions()?;
    let defined = defs.sources().iter().any(|(id, _)| id == ID);
    if services.iter().any(|s| s == ID) && !defined {
        defs = defs
            .with_file(
                "generic.toml (built into apistend proxy)".into(),
                DEFINITION.into(),
            )
            .context("the generic definition")?;
    }
    Ok(Catalog::load(&defs, None)?)
}
