//! Which collection, and a sandbox's objects as a value.

use std::collections::BTreeMap;

use serde_json::Value;

/// One collection of one sandbox.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Coll<'a> {
    /// The sandbox.
    pub(crate) sandbox: &'a str,
    /// The service's id.
    pub(crate) service: &'a str,
    /// The collection's name.
    pub(crate) name: &'a str,
}

/// A sandbox's objects, by service and collection, in the order they were created.
pub(crate) type Export = BTreeMap<String, BTreeMap<String, Vec<Value>>>;
