//! A user's OpenAPI document, named by a definition's `openapi` (its path relative to the
//! definition file): read when the service is built, its operations added to the service's.
//! The sandbox reads the same file for the answers and the request rules.

use std::path::{Path, PathBuf};

use super::file::ServiceFile;
use super::source::Source;
use crate::error::CatalogError;
use crate::model::{Method, Operation};
use crate::wb::Parts;

/// The document and its operations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Document {
    /// Where it is (resolved against the definition's directory).
    pub(crate) path: PathBuf,
    /// Its operations: method, path template (under its first server's path), summary.
    pub(crate) operations: Vec<(Method, String, Option<String>)>,
}

impl Document {
    /// The document `file`'s `openapi` names, read from beside `src`'s file.
    ///
    /// # Errors
    /// [`CatalogError::Definition`] at the `openapi` field: a file that cannot be read, or
    /// is not an OpenAPI document (or a build without the importers, feature `import`).
    pub(crate) fn read(
        src: &Source<'_>,
        named: &toml::Spanned<String>,
    ) -> Result<Self, CatalogError> {
        let dir = Path::new(src.file).parent().unwrap_or(Path::new(""));
        let path = dir.join(named.get_ref());
        let bad = |why: String| {
            src.err(
                named.span(),
                "openapi",
                format!("{}: {why}", path.display()),
            )
        };
        let text = std::fs::read_to_string(&path).map_err(|e| bad(e.to_string()))?;
        let operations = operations(&text).map_err(bad)?;
        if operations.is_empty() {
            return Err(bad("the document has no operations".into()));
        }
        Ok(Self { path, operations })
    }

    /// Adds its operations that `file` does not write itself to `parts` (what an import adds to
    /// a definition), each in no group yet (the service's fallback groups,
    /// [`super::operations::imported`]), with the file's `weight`.
    pub(crate) fn add_to(&self, file: &ServiceFile, parts: &mut Parts) {
        let written: Vec<(Method, &str)> = file
            .operations
            .iter()
            .filter_map(|o| Method::parse(o.method.get_ref()).map(|m| (m, &o.paths)))
            .flat_map(|(m, paths)| paths.iter().map(move |p| (m, p.as_str())))
            .collect();
        let weight = file.weight.unwrap_or(1);
        let ops = self
            .operations
            .iter()
            .filter(|(m, p, _)| !written.contains(&(*m, p.as_str())))
            .map(|(method, path, summary)| {
                let op = Operation {
                    host: None,
                    also_hosts: Vec::new(),
                    method: *method,
                    path: path.clone(),
                    spec_path: path.clone(),
                    groups: Vec::new(),
                    cost: std::collections::BTreeMap::new(),
                    deprecated: false,
                    category: None,
                    summary: summary.clone(),
                    weight,
                    weight_from: None,
                    cost_from: None,
                    fixture: None,
                    anonymous: false,
                    repeatable: crate::repeat::repeatable_by_rule(*method, path),
                    binding: None,
                    max_body: None,
                    request: None,
                };
                (op, None)
            });
        parts.operations.extend(ops);
    }
}

#[cfg(feature = "import")]
fn operations(text: &str) -> Result<Vec<(Method, String, Option<String>)>, String> {
    Ok(crate::import::openapi::operations_of(text)?
        .into_iter()
        .map(|o| (o.method, o.path, o.summary))
        .collect())
}

#[cfg(not(feature = "import"))]
fn operations(_: &str) -> Result<Vec<(Method, String, Option<String>)>, String> {
    Err("this build reads no OpenAPI documents (apistend-catalog's feature `import`)".into())
}
