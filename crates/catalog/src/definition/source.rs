//! Where a definition came from: its file and text, for errors that name a line.

use std::ops::Range;

use super::file::ServiceFile;
use crate::error::CatalogError;

/// Where a definition came from, for its error messages.
pub(crate) struct Source<'a> {
    pub(crate) file: &'a str,
    pub(crate) text: &'a str,
}

impl Source<'_> {
    pub(crate) fn line(&self, span: Range<usize>) -> usize {
        let end = span.start.min(self.text.len());
        self.text.get(..end).map_or(0, |t| t.matches('\n').count()) + 1
    }

    pub(crate) fn err(
        &self,
        span: Range<usize>,
        field: &str,
        reason: impl Into<String>,
    ) -> CatalogError {
        CatalogError::Definition {
            file: self.file.to_owned(),
            line: self.line(span),
            field: field.to_owned(),
            reason: reason.into(),
        }
    }

    /// Parses the file's TOML.
    pub(crate) fn parse(&self) -> Result<ServiceFile, CatalogError> {
        toml::from_str(self.text).map_err(|e| {
            let span = e.span().unwrap_or(0..0);
            self.err(span, "", e.message().trim_end())
        })
    }
}
