//! The request rules of an OpenAPI description: each operation's [`Contract`], imported from the
//! official description, committed as an archive (`data/NAME-requests.pack`) and read in place
//! like the answers — the index on a service's first request, an operation's contract inflated
//! and compiled on its own first call, and kept.

use std::path::Path;
use std::sync::{Arc, OnceLock};

use apistend_catalog::Method;
use bytes::Bytes;
use foldhash::HashMap;
use serde_json::Value;

use super::compiled::Compiled;
use super::contract::Contract;
use super::convert::Dialect;
use super::import::contract;
use crate::error::AnswersError;
use crate::openapi::operations;
use crate::pack::{Entry, Indexed, Pack};

/// An operation's record in the archive's index.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
struct RuleMeta {
    method: String,
    path: String,
}

/// One operation's rules: its contract's bytes, and the contract compiled on first use.
#[derive(Debug)]
pub(crate) struct Rule {
    meta: RuleMeta,
    entry: Entry,
    prepared: OnceLock<Option<Prepared>>,
}

/// A contract ready to check requests.
#[derive(Debug)]
pub(crate) struct Prepared {
    pub(crate) contract: Contract,
    pub(crate) compiled: Compiled,
}

impl Rule {
    /// The rule of `method path`: `contract`, written as the archive keeps it.
    fn of(method: Method, path: String, contract: &Contract) -> Self {
        Self {
            meta: RuleMeta {
                method: method.as_str().to_owned(),
                path,
            },
            entry: Entry::ready(Bytes::from(
                serde_json::to_vec(contract).unwrap_or_default(),
            )),
            prepared: OnceLock::new(),
        }
    }

    /// The compiled contract (`None` for one that does not read or compile: the tests compile
    /// every embedded one, so only a hand-made file gets there, and its operation is unchecked).
    pub(crate) fn prepared(&self) -> Option<&Prepared> {
        self.prepared.get_or_init(|| self.prepare().ok()).as_ref()
    }

    fn prepare(&self) -> Result<Prepared, String> {
        let bytes = self.entry.try_bytes()?;
        let contract: Contract = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
        let compiled = Compiled::new(contract.schema.clone())?;
        Ok(Prepared { contract, compiled })
    }

    /// Its contract, read (not compiled).
    fn contract(&self) -> Result<Contract, String> {
        serde_json::from_slice(self.entry.try_bytes()?).map_err(|e| e.to_string())
    }
}

/// Path template → its operations' rules by method.
type Rules = HashMap<String, Vec<(Method, Rule)>>;

/// The request rules of a service's official description.
#[derive(Debug, Clone, Default)]
pub struct RequestRules {
    rules: Arc<Indexed<Rules>>,
    /// The rules of the operations these do not have (a description under a definition's
    /// own `request`s).
    under: Option<Arc<RequestRules>>,
}

/// What a request-rules archive is called in errors.
const WHAT: &str = "request rules file";

/// Name → the committed request rules (the names of the answers sets).
const EMBEDDED: [(&str, &[u8]); 7] = [
    ("wb", include_bytes!("../../data/wb-requests.pack")),
    ("apify", include_bytes!("../../data/apify-requests.pack")),
    ("ozon", include_bytes!("../../data/ozon-requests.pack")),
    (
        "ymarket",
        include_bytes!("../../data/ymarket-requests.pack"),
    ),
    (
        "moysklad",
        include_bytes!("../../data/moysklad-requests.pack"),
    ),
    ("b24", include_bytes!("../../data/b24-requests.pack")),
    ("amocrm", include_bytes!("../../data/amocrm-requests.pack")),
];

impl RequestRules {
    /// The embedded rules `name` (a definition's `examples`), if there are any: only the
    /// archive's header is read here.
    ///
    /// ```
    /// let ozon = apistend_answers::RequestRules::embedded("ozon")?.unwrap();
    /// assert!(ozon.len() > 400);
    /// # Ok::<(), apistend_answers::AnswersError>(())
    /// ```
    ///
    /// # Errors
    /// [`AnswersError`] for a corrupt header (a build problem).
    pub fn embedded(name: &str) -> Result<Option<Self>, AnswersError> {
        let Some((_, bytes)) = EMBEDDED.iter().find(|(n, _)| *n == name) else {
            return Ok(None);
        };
        let pack = Pack::open(WHAT, &Bytes::from_static(bytes))?;
        Ok(Some(Self {
            rules: Arc::new(Indexed::packed(pack)),
            under: None,
        }))
    }

    /// The rules of the OpenAPI documents `docs` of a service that reads JSON as `dialect`
    /// (each operation's contract, relaxed where the document's own request examples break it).
    pub fn of_documents(docs: &[Value], dialect: Dialect) -> Self {
        let mut rules = Rules::default();
        for doc in docs {
            for op in operations(doc) {
                let c = contract(doc, &op, dialect);
                insert(
                    &mut rules,
                    op.method,
                    Rule::of(op.method, op.path.clone(), &c),
                );
            }
        }
        Self {
            rules: Arc::new(Indexed::built(rules)),
            under: None,
        }
    }

    /// The rules of Bitrix24's methods, from its documentation's `methods.json` (each
    /// method's parameters: names, required, integer and number types).
    ///
    /// # Errors
    /// [`AnswersError`] for text that is not such a file.
    pub fn of_b24_methods(methods_json: &str) -> Result<Self, AnswersError> {
        let mut rules = Rules::default();
        for (path, c) in super::b24::contracts(methods_json)
            .map_err(|e| AnswersError::corrupt("methods.json", e))?
        {
            insert(&mut rules, Method::Post, Rule::of(Method::Post, path, &c));
        }
        Ok(Self {
            rules: Arc::new(Indexed::built(rules)),
            under: None,
        })
    }

    /// The rules of amoCRM's endpoints, from its documentation's `endpoints.json` (no OpenAPI
    /// exists): the body's shape and scalar types as its example has them, integer ids.
    ///
    /// # Errors
    /// [`AnswersError`] for text that is not such a file.
    pub fn of_amocrm_endpoints(endpoints_json: &str) -> Result<Self, AnswersError> {
        let mut rules = Rules::default();
        for (method, path, c) in super::amocrm::contracts(endpoints_json)
            .map_err(|e| AnswersError::corrupt("endpoints.json", e))?
        {
            let Some(m) = Method::parse(&method) else {
                continue;
            };
            insert(&mut rules, m, Rule::of(m, path, &c));
        }
        Ok(Self {
            rules: Arc::new(Indexed::built(rules)),
            under: None,
        })
    }

    /// The rules of every `*.yaml` of `dir` (WB's specs), or of one document (YAML or JSON).
    ///
    /// # Errors
    /// [`AnswersError`] naming the file that cannot be read or parsed.
    pub fn load(path: &Path, dialect: Dialect) -> Result<Self, AnswersError> {
        let bad = |e: String| AnswersError::corrupt(format!("OpenAPI {}", path.display()), e);
        let yamls = if path.is_dir() {
            apistend_catalog::import::wb::read_specs(path).map_err(|e| bad(e.to_string()))?
        } else {
            let y =
                apistend_catalog::import::wb::read_spec(path).map_err(|e| bad(e.to_string()))?;
            vec![(path.display().to_string(), y)]
        };
        let mut docs = Vec::new();
        for (name, yaml) in yamls {
            docs.push(serde_json::to_value(&yaml).map_err(|e| bad(format!("{name}: {e}")))?);
        }
        Ok(Self::of_documents(&docs, dialect))
    }

    /// The rules a definition writes itself (`[operations.request]`: each operation's method,
    /// path and OpenAPI request part), over `under` (its description's, if any): an operation
    /// of both is checked by these.
    ///
    /// ```
    /// use apistend_answers::RequestRules;
    /// use apistend_catalog::Method;
    /// let request = serde_json::json!({"parameters": [
    ///     {"name": "limit", "in": "query", "required": true, "schema": {"type": "integer"}}
    /// ]});
    /// let rules = RequestRules::declared([(Method::Get, "/items", &request)], None)?;
    /// assert_eq!(rules.len(), 1);
    /// # Ok::<(), apistend_answers::AnswersError>(())
    /// ```
    ///
    /// # Errors
    /// [`AnswersError`] naming the first operation whose schemas do not compile.
    pub fn declared<'a>(
        requests: impl IntoIterator<Item = (Method, &'a str, &'a Value)>,
        under: Option<Self>,
    ) -> Result<Self, AnswersError> {
        let mut paths = serde_json::Map::new();
        for (method, path, request) in requests {
            let entry = paths
                .entry(path.to_owned())
                .or_insert_with(|| Value::Object(serde_json::Map::new()));
            if let Some(ops) = entry.as_object_mut() {
                ops.insert(method.as_str().to_ascii_lowercase(), request.clone());
            }
        }
        let doc = serde_json::json!({"openapi": "3.1.0", "paths": paths});
        let mut own = Self::of_documents(&[doc], Dialect::Json);
        for (path, ops) in own.rules() {
            for (method, rule) in ops {
                let what = || format!("the `request` of {method} {path}");
                let prepared = rule
                    .prepare()
                    .map_err(|e| AnswersError::corrupt(what(), e))?;
                // What an official description gets relaxed (a vendor's own type), a
                // definition's author means: it is refused, not left unchecked.
                if let Some(r) = prepared.contract.relaxed.first() {
                    let why = format!("cannot be checked as written: {r}");
                    return Err(AnswersError::corrupt(what(), why));
                }
            }
        }
        own.under = under.map(Arc::new);
        Ok(own)
    }

    /// Reads an archive [`to_file_bytes`](Self::to_file_bytes) wrote.
    ///
    /// # Errors
    /// [`AnswersError`] for bytes that are not such a file.
    pub fn from_file_bytes(bytes: impl Into<Bytes>) -> Result<Self, AnswersError> {
        let pack = Pack::open(WHAT, &bytes.into())?;
        let rules = Self::read(&pack)?;
        Ok(Self {
            rules: Arc::new(Indexed::built(rules)),
            under: None,
        })
    }

    /// The archive of these rules: operations in path and method order (the same documents
    /// always give the same bytes).
    pub fn to_file_bytes(&self) -> Vec<u8> {
        let mut all: Vec<&Rule> = self.rules().values().flatten().map(|(_, r)| r).collect();
        all.sort_by(|a, b| (&a.meta.path, &a.meta.method).cmp(&(&b.meta.path, &b.meta.method)));
        Pack::write(
            all.into_iter()
                .map(|r| (&r.meta, r.entry.bytes().as_ref()))
                .collect(),
        )
    }

    fn read(pack: &Pack) -> Result<Rules, AnswersError> {
        let mut rules = Rules::default();
        for (meta, entry) in pack.index::<RuleMeta>(WHAT)? {
            let bad = || AnswersError::corrupt(WHAT, format!("method {:?}", meta.method));
            let method = Method::parse(&meta.method).ok_or_else(bad)?;
            insert(
                &mut rules,
                method,
                Rule {
                    meta,
                    entry,
                    prepared: OnceLock::new(),
                },
            );
        }
        Ok(rules)
    }

    fn rules(&self) -> &Rules {
        self.rules.get(Self::read)
    }

    /// The rule of `method path` (a path template of the description).
    pub(crate) fn rule(&self, method: Method, path: &str) -> Option<&Rule> {
        let own = self
            .rules()
            .get(path)
            .and_then(|ops| ops.iter().find_map(|(m, r)| (*m == method).then_some(r)));
        own.or_else(|| self.under.as_ref()?.rule(method, path))
    }

    /// Number of operations (its own, and those of the rules under it).
    pub fn len(&self) -> usize {
        let under = self.under.as_ref().map_or(0, |u| u.len());
        self.rules.len(|r| r.values().map(Vec::len).sum()) + under
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every operation's contract read and compiled now; each operation's relaxations.
    ///
    /// # Errors
    /// [`AnswersError`] naming the first operation whose contract does not read or compile.
    pub fn check_all(&self) -> Result<Vec<(String, String, Vec<String>)>, AnswersError> {
        self.rules.read_now(Self::read)?;
        let mut out = Vec::new();
        for (path, ops) in self.rules() {
            for (method, rule) in ops {
                let what = || format!("{method} {path}");
                let c = rule
                    .contract()
                    .map_err(|e| AnswersError::corrupt(WHAT, format!("{}: {e}", what())))?;
                Compiled::new(c.schema.clone())
                    .map_err(|e| AnswersError::corrupt(WHAT, format!("{}: {e}", what())))?;
                out.push((method.as_str().to_owned(), path.clone(), c.relaxed));
            }
        }
        out.sort();
        Ok(out)
    }
}

/// Adds (or replaces) the rule of `method path`.
fn insert(rules: &mut Rules, method: Method, rule: Rule) {
    let list = rules.entry(rule.meta.path.clone()).or_default();
    match list.iter_mut().find(|(m, _)| *m == method) {
        Some((_, old)) => *old = rule,
        None => list.push((method, rule)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every embedded set reads, every contract compiles, and the archive writes back the very
    /// bytes it was read from; the relaxations are counted (docs/requests.md lists them).
    #[test]
    fn every_embedded_rule_compiles() {
        for (name, bytes) in EMBEDDED {
            let rules = RequestRules::embedded(name).unwrap().unwrap();
            let all = rules.check_all().unwrap();
            let relaxed = all.iter().filter(|(_, _, r)| !r.is_empty()).count();
            eprintln!("{name}: {} operations, {relaxed} relaxed", all.len());
            for (m, p, r) in all.iter().filter(|(_, _, r)| !r.is_empty()) {
                eprintln!("  {m} {p}: {}", r.join("; "));
            }
            assert!(rules.to_file_bytes() == bytes, "{name}");
        }
    }
}
