//! The dashboard at `/ui`: three files embedded in the binary (no CDN: the machines may have no
//! internet). They hold no secrets and are served without the token; everything they show comes
//! from the management API, which asks for it.

use axum::Router;
use axum::body::Body;
use axum::extract::Path;
use axum::response::Redirect;
use axum::routing::get;
use http::{HeaderValue, Response, StatusCode, header};

const FILES: [(&str, &str, &str); 3] = [
    (
        "index.html",
        "text/html; charset=utf-8",
        include_str!("../ui/index.html"),
    ),
    (
        "app.js",
        "text/javascript; charset=utf-8",
        include_str!("../ui/app.js"),
    ),
    (
        "style.css",
        "text/css; charset=utf-8",
        include_str!("../ui/style.css"),
    ),
];

/// Only this page's own scripts, styles and API calls.
const CSP: &str = "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'";

pub(crate) fn router<S: Clone + Send + Sync + 'static>() -> Router<S> {
    Router::new()
        .route("/ui", get(|| async { Redirect::permanent("/ui/") }))
        .route("/ui/", get(|| async { file("index.html") }))
        .route(
            "/ui/{name}",
            get(|Path(name): Path<String>| async move { file(&name) }),
        )
}

fn file(name: &str) -> Response<Body> {
    let Some((_, media, text)) = FILES.iter().find(|(n, _, _)| *n == name) else {
        // The name asked for is not echoed: a 404 is no place to reflect a request.
        let mut r = served(
            Body::from("no such file in the dashboard\n"),
            "text/plain; charset=utf-8",
        );
        *r.status_mut() = StatusCode::NOT_FOUND;
        return r;
    };
    served(Body::from(*text), media)
}

/// `body` with the headers of every answer of the dashboard's: its media type, no caching
/// without revalidation, no sniffing, the content security policy.
fn served(body: Body, media: &'static str) -> Response<Body> {
    let mut r = Response::new(body);
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(media));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    r
}
