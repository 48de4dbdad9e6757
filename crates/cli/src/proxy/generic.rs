//! `--service generic`: the proxy in front of an API with no definition. The catalog's
//! [`GENERIC`](apistend_catalog::definition::GENERIC) definition is added to the catalog the
//! proxy loads when the service is named and no file of `--services DIR` defines it: one bucket
//! per account, learned from the rate-limit headers any API may send and from its refusals.

use apistend_catalog::Catalog;
use apistend_catalog::definition::GENERIC_ID;

use crate::services_arg::ServicesArg;

/// The catalog of `dir`'s definitions, with the generic one when `services` names it.
///
/// # Errors
/// When a definition does not load (its file, line and field named).
pub(super) fn catalog(dir: &ServicesArg, services: &[String]) -> anyhow::Result<Catalog> {
    let mut defs = dir.definitions()?;
    if services.iter().any(|s| s == GENERIC_ID) {
        defs = defs.with_generic()?;
    }
    Ok(Catalog::load(&defs, None)?)
}
