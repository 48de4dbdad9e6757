//! The importer of WB's official OpenAPI specs: turns the limit blocks written in prose inside
//! operation descriptions into the catalog's table of facts.
//!
//! Every operation's description may hold a `<div class="description_limit">` block with either a
//! one-row table `| Период | Лимит | Интервал | Всплеск |` or a sentence ("Максимум 3 запроса за 30
//! секунд"); the text before the table says whether the limit is the method's own or shared by a
//! named group of methods on the same host. Text the importer does not recognise is reported with
//! its file and operation, never guessed.

mod body_size;
mod limits;

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use yaml_serde::Value;

use crate::error::CatalogError;
use crate::model::short_host;
use crate::wb_catalog::{WbCatalogFile, WbGroupRecord, WbOperationRecord};
use limits::{Limit, Numbers, limit_block, parse_block, slug, variant_hosts};

/// The result of an import: the catalog, and every problem found on the way.
#[derive(Debug)]
#[non_exhaustive]
pub struct ImportReport {
    /// What could be imported.
    pub catalog: WbCatalogFile,
    /// Limit text that was malformed or unfamiliar; empty when the import is complete.
    pub errors: Vec<CatalogError>,
}

const METHODS: [&str; 5] = ["get", "post", "put", "patch", "delete"];

/// Reads every `*.yaml` file of `dir` (in name order) and imports its operations.
///
/// # Errors
/// [`CatalogError::Spec`] when the directory or a file cannot be read or parsed as YAML. Problems
/// with single limit blocks do not stop the import; they are listed in [`ImportReport::errors`].
pub fn import_dir(dir: &Path) -> Result<ImportReport, CatalogError> {
    let mut importer = Importer::default();
    for (name, doc) in read_specs(dir)? {
        importer.file(&name, &doc);
    }
    Ok(importer.finish())
}

/// Every `*.yaml` / `*.yml` file of `dir`, in name order: its file name and its parsed document.
///
/// # Errors
/// [`CatalogError::Spec`] naming the directory or file that cannot be read or parsed, or a
/// directory without any spec.
pub fn read_specs(dir: &Path) -> Result<Vec<(String, Value)>, CatalogError> {
    let spec_err = |file: &Path, reason: String| CatalogError::Spec {
        file: file.display().to_string(),
        reason,
    };
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| spec_err(dir, format!("cannot read the directory: {e}")))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml" || x == "yml"))
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(spec_err(
            dir,
            "no *.yaml files: expected WB's 14 OpenAPI specs".into(),
        ));
    }
    files
        .iter()
        .map(|path| {
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            Ok((name, read_spec(path)?))
        })
        .collect()
}

/// One OpenAPI document, YAML or JSON (JSON is YAML).
///
/// # Errors
/// [`CatalogError::Spec`] naming the file that cannot be read or parsed.
pub fn read_spec(path: &Path) -> Result<Value, CatalogError> {
    let spec_err = |reason: String| CatalogError::Spec {
        file: path.display().to_string(),
        reason,
    };
    let text = std::fs::read_to_string(path).map_err(|e| spec_err(e.to_string()))?;
    parse_document(&text).map_err(spec_err)
}

/// An OpenAPI document's text: JSON (which may hold characters YAML does not allow, as Ozon's
/// does), else YAML.
pub(crate) fn parse_document(text: &str) -> Result<Value, String> {
    if text.trim_start().starts_with('{')
        && let Ok(json) = serde_json::from_str::<serde_json::Value>(text)
    {
        return yaml_serde::to_value(json).map_err(|e| e.to_string());
    }
    yaml_serde::from_str(text).map_err(|e| format!("not valid YAML: {e}"))
}

#[derive(Default)]
struct Importer {
    ops: Vec<(WbOperationRecord, Option<Limit>)>,
    errors: Vec<CatalogError>,
}

impl Importer {
    fn file(&mut self, file: &str, doc: &Value) {
        let Some(paths) = doc.get("paths").and_then(Value::as_mapping) else {
            self.errors.push(CatalogError::Spec {
                file: file.into(),
                reason: "no `paths`".into(),
            });
            return;
        };
        let doc_host = first_server(doc);
        for (path, item) in paths {
            let Some(path) = path.as_str() else { continue };
            let host = first_server(item).or_else(|| doc_host.clone());
            for method in METHODS {
                let Some(op) = item.get(method) else { continue };
                // Most operations take the path's host; some set their own.
                self.operation(
                    file,
                    path,
                    method,
                    first_server(op).or_else(|| host.clone()),
                    op,
                );
            }
        }
    }

    fn operation(
        &mut self,
        file: &str,
        path: &str,
        method: &str,
        host: Option<String>,
        op: &Value,
    ) {
        let method = method.to_ascii_uppercase();
        let text = |k: &str| op.get(k).and_then(Value::as_str).map(str::to_owned);
        let description = text("description").unwrap_or_default();
        let err = |reason: &str, text: &str| CatalogError::LimitText {
            file: file.into(),
            method: method.clone(),
            path: path.into(),
            reason: reason.into(),
            text: text.into(),
        };
        let Some(host) = host else {
            self.errors
                .push(err("no host (servers) for the operation", ""));
            return;
        };
        let mut record = WbOperationRecord {
            file: file.into(),
            host,
            method: method.clone(),
            path: path.into(),
            category: text("x-category"),
            summary: text("summary").map(|s| s.trim().to_owned()),
            group: None,
            cost: BTreeMap::new(),
            deprecated: op
                .get("deprecated")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            also_hosts: Vec::new(),
            max_body_bytes: body_size::body_size(&description),
        };
        let limit = match limit_block(&description) {
            None => {
                record.deprecated = true;
                None
            }
            Some(block) => match parse_block(&block, &mut record.cost) {
                Ok(limit) => {
                    if limit.per_host {
                        record.also_hosts = variant_hosts(&description, &record.host, path);
                    }
                    Some(limit)
                }
                Err((reason, text)) => {
                    self.errors.push(err(&reason, &text));
                    None
                }
            },
        };
        self.ops.push((record, limit));
    }

    fn finish(self) -> ImportReport {
        // One bucket per (host, label, numbers); a label with several sets of numbers gets the
        // numbers in its ids so that none of them is silently merged.
        let mut numbers_per_label: HashMap<(String, String), Vec<Numbers>> = HashMap::new();
        for (record, limit) in &self.ops {
            if let Some(Limit {
                label: Some(label),
                period_ms,
                limit,
                interval_ms,
                burst,
                ..
            }) = limit
            {
                let sets = numbers_per_label
                    .entry((record.host.clone(), label.clone()))
                    .or_default();
                let n = (*period_ms, *limit, *interval_ms, *burst);
                if !sets.contains(&n) {
                    sets.push(n);
                }
            }
        }
        let mut groups: Vec<WbGroupRecord> = Vec::new();
        let mut ops = Vec::with_capacity(self.ops.len());
        for (mut record, limit) in self.ops {
            if let Some(l) = limit {
                let host_short = short_host(&record.host).to_owned();
                let id = match &l.label {
                    Some(label) => {
                        let mut id = format!("{host_short}.{}", slug(label));
                        let several = numbers_per_label
                            .get(&(record.host.clone(), label.clone()))
                            .is_some_and(|s| s.len() > 1);
                        if several {
                            id.push_str(&format!(
                                ".{}-per-{}ms-burst-{}",
                                l.limit, l.period_ms, l.burst
                            ));
                        }
                        id
                    }
                    None => format!(
                        "{host_short}.{}.{}",
                        record.method.to_ascii_lowercase(),
                        slug(&record.path)
                    ),
                };
                if !groups.iter().any(|g| g.id == id) {
                    groups.push(WbGroupRecord {
                        id: id.clone(),
                        host: record.host.clone(),
                        label: l.label.clone(),
                        period_ms: l.period_ms,
                        limit: l.limit,
                        interval_ms: l.interval_ms,
                        burst: l.burst,
                        form: l.form.into(),
                        per_host: l.per_host,
                    });
                }
                record.group = Some(id);
            }
            ops.push(record);
        }
        ImportReport {
            catalog: WbCatalogFile {
                generator: "apistend catalog import-wb-openapi".into(),
                groups,
                operations: ops,
            },
            errors: self.errors,
        }
    }
}

fn first_server(v: &Value) -> Option<String> {
    let url = v
        .get("servers")?
        .as_sequence()?
        .first()?
        .get("url")?
        .as_str()?;
    let host = url.split("://").nth(1).unwrap_or(url);
    Some(
        host.trim_end_matches('/')
            .split('/')
            .next()
            .unwrap_or(host)
            .to_owned(),
    )
}

/// Entry points for the fuzz targets (`fuzz/`), built only by `cargo fuzz` (`--cfg fuzzing`).
#[cfg(fuzzing)]
#[doc(hidden)]
pub mod fuzzing {
    use super::{Importer, Value};

    /// Imports one spec file's text as the importer reads a file (YAML, then every operation's
    /// limit block).
    pub fn import_yaml(text: &str) {
        let Ok(doc) = yaml_serde::from_str::<Value>(text) else {
            return;
        };
        let mut importer = Importer::default();
        importer.file("fuzz.yaml", &doc);
        let _ = importer.finish();
    }

    /// Parses one limit block (`Лимит … | … | …`) as it stands in an operation's description.
    pub fn limit_block(text: &str) {
        let mut cost = std::collections::BTreeMap::new();
        let _ = super::parse_block(text, &mut cost);
    }
}
