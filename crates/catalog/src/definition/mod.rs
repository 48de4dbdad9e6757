//! Service definitions: one TOML file per service. The built-in ones (`services/*.toml` at the
//! repository root) are embedded; a directory of a user's files adds services and replaces
//! built-ins with the same id.

mod build;
mod document;
mod file;
mod groups;
mod operations;
mod request;
mod resources;
mod responses;
mod source;
mod template;

use std::path::Path;

pub use file::{
    BatchDef, Documented, GroupDef, Import, OperationDef, PlanDef, QuotaDef, RejectionDef,
    ServiceFile,
};

pub(crate) use build::{Imports, build};
pub(crate) use source::Source;

use crate::error::CatalogError;

/// The built-in definitions, in catalog order: file name and text.
pub const BUILTIN: [(&str, &str); 7] = [
    ("wb.toml", include_str!("../../../../services/wb.toml")),
    ("b24.toml", include_str!("../../../../services/b24.toml")),
    (
        "apify.toml",
        include_str!("../../../../services/apify.toml"),
    ),
    ("ozon.toml", include_str!("../../../../services/ozon.toml")),
    (
        "amocrm.toml",
        include_str!("../../../../services/amocrm.toml"),
    ),
    (
        "moysklad.toml",
        include_str!("../../../../services/moysklad.toml"),
    ),
    (
        "ymarket.toml",
        include_str!("../../../../services/ymarket.toml"),
    ),
];

/// An API with no definition of its own (`apistend proxy --service generic`, or a client whose
/// catalog is loaded [`with_generic`](Definitions::with_generic)): one bucket per account at a
/// nominal 10 requests a second, learned from every family of rate-limit headers an API may
/// send. Its file name and text; not one of the sandbox's services.
pub const GENERIC: (&str, &str) = ("generic.toml", include_str!("generic.toml"));

/// The id [`GENERIC`] defines.
pub const GENERIC_ID: &str = "generic";

/// The text of the built-in definition in `file` (`"b24.toml"`): what a user copies and edits.
///
/// ```
/// let b24 = apistend_catalog::definition::builtin_text("b24.toml").unwrap();
/// assert!(b24.contains("operating_budget"));
/// assert!(apistend_catalog::definition::builtin_text("nope.toml").is_none());
/// ```
#[must_use]
pub fn builtin_text(file: &str) -> Option<&'static str> {
    BUILTIN.iter().find(|(n, _)| *n == file).map(|(_, t)| *t)
}

/// Definition texts to load, each with the name its errors give.
#[derive(Debug, Clone, Default)]
pub struct Definitions {
    files: Vec<Added>,
}

/// One definition text.
#[derive(Debug, Clone)]
struct Added {
    name: String,
    text: String,
    /// Its service id, read when it was added.
    id: String,
    /// A user's file, as parsed when it was added (built once, not parsed again); `None` for
    /// a built-in, parsed only when a catalog is built and which a user's file may replace.
    parsed: Option<ServiceFile>,
}

impl Definitions {
    /// The built-in definitions.
    #[must_use]
    pub fn builtin() -> Self {
        Self {
            files: BUILTIN
                .iter()
                .map(|(n, t)| Added {
                    name: (*n).to_owned(),
                    text: (*t).to_owned(),
                    // A built-in file is named by its id (`tests/it/definitions.rs` checks it).
                    id: n.trim_end_matches(".toml").to_owned(),
                    parsed: None,
                })
                .collect(),
        }
    }

    /// Adds the `*.toml` files of `dir`, in name order. A file whose `id` is a built-in's
    /// replaces it in place; the others are appended.
    ///
    /// # Errors
    /// [`CatalogError::Definition`] for a directory or file that cannot be read, or a file whose
    /// id cannot be read (the full check happens when the catalog is built).
    pub fn with_dir(mut self, dir: &Path) -> Result<Self, CatalogError> {
        let unreadable = |what: &Path, e: std::io::Error| CatalogError::Definition {
            file: what.display().to_string(),
            line: 0,
            field: String::new(),
            reason: e.to_string(),
        };
        let mut paths = Vec::new();
        for entry in std::fs::read_dir(dir).map_err(|e| unreadable(dir, e))? {
            let path = entry.map_err(|e| unreadable(dir, e))?.path();
            if path.extension().is_some_and(|x| x == "toml") {
                paths.push(path);
            }
        }
        paths.sort();
        for path in paths {
            let text = std::fs::read_to_string(&path).map_err(|e| unreadable(&path, e))?;
            self = self.with_file(path.display().to_string(), text)?;
        }
        Ok(self)
    }

    /// Adds one definition text; `name` is what its errors call it. A file whose `id` is a
    /// built-in's replaces it in place; one whose `id` is another added file's is refused.
    ///
    /// # Errors
    /// As [`Definitions::with_dir`], and a second added file of one id (naming both files).
    pub fn with_file(mut self, name: String, text: String) -> Result<Self, CatalogError> {
        let source = Source {
            file: &name,
            text: &text,
        };
        let parsed = source.parse()?;
        let id = parsed.id.get_ref().clone();
        let span = parsed.id.span();
        let slot = self.files.iter().position(|f| f.id == id);
        if let Some(other) = slot
            .and_then(|i| self.files.get(i))
            .filter(|f| f.parsed.is_some())
        {
            return Err(source.err(
                span,
                "id",
                format!(
                    "{id:?} is also the id of {}: two files of one service",
                    other.name
                ),
            ));
        }
        let added = Added {
            name,
            text,
            id,
            parsed: Some(parsed),
        };
        match slot.and_then(|i| self.files.get_mut(i)) {
            Some(builtin) => *builtin = added,
            None => self.files.push(added),
        }
        Ok(self)
    }

    /// These definitions and [`GENERIC`], unless one of them has its id (a user's file of id
    /// `generic` is kept instead).
    ///
    /// ```
    /// use apistend_catalog::{Catalog, definition::Definitions};
    /// let catalog = Catalog::load(&Definitions::builtin().with_generic()?, None)?;
    /// let generic = catalog.service(catalog.service_id("generic")?).unwrap();
    /// assert_eq!(generic.groups[0].id, "default");
    /// # Ok::<(), apistend_catalog::CatalogError>(())
    /// ```
    ///
    /// # Errors
    /// None in practice: [`GENERIC`] is a valid definition (a test loads it).
    pub fn with_generic(self) -> Result<Self, CatalogError> {
        if self.files.iter().any(|f| f.id == GENERIC_ID) {
            return Ok(self);
        }
        self.with_file(GENERIC.0.into(), GENERIC.1.into())
    }

    /// Only the services of `ids`, in catalog order (`apistend serve --only wb,ozon`): a
    /// sandbox for a suite that calls two services holds two.
    ///
    /// ```
    /// use apistend_catalog::{Catalog, definition::Definitions};
    /// let two = Definitions::builtin().only(&["wb", "ozon"])?;
    /// let catalog = Catalog::load(&two, None)?;
    /// assert_eq!(catalog.services().len(), 2);
    /// assert!(Definitions::builtin().only(&["wildberries"]).is_err());
    /// # Ok::<(), apistend_catalog::CatalogError>(())
    /// ```
    ///
    /// # Errors
    /// [`CatalogError::UnknownService`] for an id no definition has (naming those there are).
    pub fn only<S: AsRef<str>>(mut self, ids: &[S]) -> Result<Self, CatalogError> {
        if let Some(id) = ids
            .iter()
            .map(AsRef::as_ref)
            .find(|id| !self.files.iter().any(|f| f.id == *id))
        {
            let known: Vec<&str> = self.files.iter().map(|f| f.id.as_str()).collect();
            return Err(CatalogError::UnknownService {
                id: id.to_owned(),
                known: known.join(", "),
            });
        }
        self.files
            .retain(|f| ids.iter().any(|id| id.as_ref() == f.id));
        Ok(self)
    }

    /// The files in catalog order: name, text, and the parsed file where it was parsed when
    /// added.
    pub(crate) fn files(
        &self,
    ) -> impl ExactSizeIterator<Item = (&str, &str, Option<&ServiceFile>)> {
        self.files
            .iter()
            .map(|f| (f.name.as_str(), f.text.as_str(), f.parsed.as_ref()))
    }

    /// Each file's service id and where it came from: `None` for a built-in, else the name it
    /// was added under (a user's file path), in catalog order — what a start banner lists.
    ///
    /// ```
    /// use apistend_catalog::definition::Definitions;
    /// let d = Definitions::builtin();
    /// assert!(d.sources().iter().any(|(id, from)| id == "wb" && from.is_none()));
    /// ```
    #[must_use]
    pub fn sources(&self) -> Vec<(String, Option<String>)> {
        self.files
            .iter()
            .map(|f| (f.id.clone(), f.parsed.as_ref().map(|_| f.name.clone())))
            .collect()
    }

    /// Parses every file, without building it (for round trips and tooling).
    ///
    /// # Errors
    /// [`CatalogError::Definition`] for the first file that does not parse.
    pub fn parse(&self) -> Result<Vec<ServiceFile>, CatalogError> {
        self.files()
            .map(|(file, text, parsed)| match parsed {
                Some(f) => Ok(f.clone()),
                None => Source { file, text }.parse(),
            })
            .collect()
    }
}

/// A definition back as TOML (what `apistend catalog definition` prints).
///
/// # Errors
/// [`CatalogError::Data`] if a value has no TOML form (never for parsed files).
pub fn to_toml(file: &ServiceFile) -> Result<String, CatalogError> {
    toml::to_string(file).map_err(|e| CatalogError::Data(format!("definition to TOML: {e}")))
}
