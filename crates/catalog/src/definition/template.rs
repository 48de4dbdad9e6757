//! A definition's path template: what is one, and when two are the same operation.
//!
//! A template is `/` and segments; a segment is literal text or one parameter, `{name}`, whole.
//! Refused: unbalanced or empty braces (`/x/{a`, `/x/{}`), two parameters or a parameter and
//! text in one segment (`/x/{a}{b}`, `/x/a{b}`: the router matches a parameter by whole
//! segment), a query or fragment (`/x?y=1`: a template names a path), dot segments (`/..`,
//! `/.`: a client's URL never reaches them, and `GET /../v1/orders` must not either), and an
//! empty segment inside the path (`/x//y`).

use std::collections::BTreeMap;
use std::ops::Range;

use super::source::Source;
use crate::error::CatalogError;
use crate::model::Method;

/// The operations a definition has defined so far, by method and template shape, each with
/// where it was defined (its span: counting lines scans the file, so only an error does it).
#[derive(Debug, Default)]
pub(crate) struct Defined(BTreeMap<(Method, String), (String, Range<usize>)>);

impl Defined {
    /// Checks `path` as a template and as an operation of `method` not defined before; `field`
    /// and `span` (of `src`) say where it is.
    pub(crate) fn claim(
        &mut self,
        src: &Source<'_>,
        method: Method,
        path: &str,
        field: &str,
        span: Range<usize>,
    ) -> Result<(), CatalogError> {
        let at = format!("{field}.paths");
        check(path).map_err(|why| src.err(span.clone(), &at, why))?;
        let first = self
            .0
            .insert((method, shape(path)), (field.to_owned(), span.clone()));
        match first {
            None => Ok(()),
            Some((first, first_span)) => Err(src.err(
                span,
                &at,
                format!(
                    "{} {path:?} is defined twice: here and at {first} (line {})",
                    method.as_str(),
                    src.line(first_span)
                ),
            )),
        }
    }
}

/// Why `path` is no template, if it is not.
fn check(path: &str) -> Result<(), String> {
    let Some(rest) = path.strip_prefix('/') else {
        return Err(format!("{path:?}: a path template starts with '/'"));
    };
    if path.contains(['?', '#']) {
        return Err(format!(
            "{path:?}: a template names a path, without a query or fragment"
        ));
    }
    let segments: Vec<&str> = rest.split('/').collect();
    let last = segments.len().saturating_sub(1);
    for (i, seg) in segments.iter().enumerate() {
        if seg.is_empty() {
            // `/` alone, and one trailing `/`, are paths clients send.
            if i == last {
                continue;
            }
            return Err(format!("{path:?}: an empty segment"));
        }
        if matches!(*seg, "." | "..") {
            return Err(format!("{path:?}: a dot segment ({seg:?})"));
        }
        let opens = seg.matches('{').count();
        let closes = seg.matches('}').count();
        if opens == 0 && closes == 0 {
            continue;
        }
        let name = seg
            .strip_prefix('{')
            .and_then(|s| s.strip_suffix('}'))
            .filter(|n| !n.contains(['{', '}']));
        match name {
            Some("") => return Err(format!("{path:?}: a parameter without a name ({seg:?})")),
            Some(_) => {}
            None if opens != closes => {
                return Err(format!("{path:?}: unbalanced braces in {seg:?}"));
            }
            None => {
                return Err(format!(
                    "{path:?}: {seg:?} is not one whole parameter: a segment is text or one {{name}}"
                ));
            }
        }
    }
    Ok(())
}

/// `path` with every parameter unnamed (`/x/{}`): two templates of one method and one shape are
/// one operation, whatever their parameters are called.
fn shape(path: &str) -> String {
    let path = if path.len() > 1 {
        path.trim_end_matches('/')
    } else {
        path
    };
    path.split('/')
        .map(|s| if s.starts_with('{') { "{}" } else { s })
        .collect::<Vec<_>>()
        .join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_are_whole_segments_without_queries_or_dots() {
        for ok in [
            "/",
            "/v1/orders",
            "/v1/orders/",
            "/api/v3/stocks/{warehouseId}",
            "/rest/crm.deal.get",
            "/v2/acts/{actorId}/runs/{runId}",
        ] {
            assert_eq!(check(ok), Ok(()), "{ok}");
        }
        for (bad, says) in [
            ("v1", "starts with '/'"),
            ("/x/{a", "unbalanced"),
            ("/x/a}", "unbalanced"),
            ("/x/{}", "without a name"),
            ("/x/{a}{b}", "one whole parameter"),
            ("/x/a{b}", "one whole parameter"),
            ("/x?y=1", "query"),
            ("/../v1/orders", "dot segment"),
            ("/x/./y", "dot segment"),
            ("/x//y", "empty segment"),
        ] {
            let e = check(bad).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn parameters_do_not_tell_operations_apart() {
        assert_eq!(shape("/x/{a}/y"), shape("/x/{b}/y/"));
        assert_ne!(shape("/x/{a}"), shape("/x/a"));
    }
}
