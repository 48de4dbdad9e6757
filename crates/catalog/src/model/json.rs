//! How a service reads a JSON body: what its server's decoder takes beyond the letter of its
//! description.

use serde::{Deserialize, Serialize};

/// How a service's server decodes a JSON request body (a definition's `json`).
///
/// ```
/// # use apistend_catalog::{Catalog, JsonReading};
/// let catalog = Catalog::builtin()?;
/// let ozon = catalog.service(catalog.service_id("ozon")?).unwrap();
/// assert_eq!(ozon.json, JsonReading::Protobuf);
/// # Ok::<(), apistend_catalog::CatalogError>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JsonReading {
    /// As its description says: a `null` only where a field is nullable.
    #[default]
    Strict,
    /// As Go's `encoding/json` does (WB's servers): a `null` leaves any field as it was.
    Go,
    /// As protobuf's JSON mapping does (a grpc-gateway: Ozon's Seller API): a `null` is a
    /// field's default, and a 64-bit integer or a number may come as decimal text.
    Protobuf,
}
