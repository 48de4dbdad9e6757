//! Wildberries: the answers that depend on the request (`/ping`'s time); every other operation
//! answers with its spec's example (the embedded `wb` examples, or `--wb-openapi DIR`).

use apistend_catalog::Operation;
use serde_json::json;

use crate::answer::Success;

/// WB's answers that depend on the request (`/ping`'s time); the examples answer the rest.
pub(crate) fn answer(op: &Operation) -> Option<Success> {
    (op.path == "/ping").then(|| {
        Success::ok(json!({"TS": crate::clock::rfc3339(crate::clock::unix_now()), "Status": "OK"}))
    })
}
