//! The hand-written head of a definition an importer regenerates the rest of.

/// The (method, path) pairs of the operations the head writes itself.
pub(crate) fn written_operations(head: &str) -> std::collections::BTreeSet<(String, String)> {
    #[derive(serde::Deserialize)]
    struct Head {
        #[serde(default)]
        operations: Vec<Written>,
    }
    #[derive(serde::Deserialize)]
    struct Written {
        method: String,
        paths: Vec<String>,
    }
    let Ok(h) = toml::from_str::<toml::Table>(head).and_then(|t| t.try_into::<Head>()) else {
        return std::collections::BTreeSet::new();
    };
    h.operations
        .into_iter()
        .flat_map(|o| {
            let m = o.method.to_ascii_uppercase();
            o.paths.into_iter().map(move |p| (m.clone(), p))
        })
        .collect()
}

/// The hand-written head of a definition whose rest an importer generates: the text up to the
/// importer's marker line, the operations it writes itself, and its first fallback group (the
/// bucket generated operations draw from).
pub(crate) struct Head<'a> {
    /// The text before the marker.
    pub(crate) top: &'a str,
    /// The (method, path) pairs it writes.
    pub(crate) written: std::collections::BTreeSet<(String, String)>,
    /// Its first `fallback_groups` entry.
    pub(crate) fallback_group: String,
}

impl<'a> Head<'a> {
    /// Splits `definition` at `marker`; `err` makes the importer's error from a reason.
    pub(crate) fn of(
        definition: &'a str,
        marker: &str,
        err: impl Fn(String) -> crate::error::CatalogError,
    ) -> Result<Self, crate::error::CatalogError> {
        let end = definition
            .find(marker)
            .ok_or_else(|| err(format!("the definition has no line {marker:?}")))?;
        let top = definition.get(..end).unwrap_or("");
        let fallback_group = toml::from_str::<toml::Table>(top)
            .ok()
            .and_then(|t| {
                t.get("fallback_groups")?
                    .as_array()?
                    .first()?
                    .as_str()
                    .map(str::to_owned)
            })
            .ok_or_else(|| err("the head names no fallback group".into()))?;
        Ok(Self {
            top,
            written: written_operations(top),
            fallback_group,
        })
    }

    /// The whole definition: the head, the marker, then `generated`.
    pub(crate) fn with(&self, marker: &str, generated: &str) -> String {
        format!("{}{marker}\n\n{generated}", self.top)
    }
}
