//! What every importer writes below its definition's marker line: operations in the fields of
//! `[[operations]]` (docs/services.md), one serialised shape for all of them, so that an
//! importer says only which operations a description has.

use serde::Serialize;

/// The generated part of a definition: `[[operations]]` tables.
#[derive(Debug, Default, Serialize)]
pub(crate) struct GeneratedOps {
    pub(crate) operations: Vec<GeneratedOp>,
}

/// One generated `[[operations]]` table; fields left at their default are not written.
#[derive(Debug, Default, Serialize)]
pub(crate) struct GeneratedOp {
    pub(crate) method: String,
    pub(crate) paths: Vec<String>,
    pub(crate) groups: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) summary: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) category: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) weight_from: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) cost_from: Option<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub(crate) anonymous: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) answer: Option<GeneratedAnswer>,
}

/// A generated `[operations.answer]`: its status, and its body (none: no content).
#[derive(Debug, Serialize)]
pub(crate) struct GeneratedAnswer {
    pub(crate) status: u16,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) body: Option<String>,
}
