//! `CONNECT host:port` on the plain listener (`HTTPS_PROXY=http://127.0.0.1:8080`). For a
//! hostname of the definitions the tunnel is answered here: TLS is terminated with a
//! certificate of the local authority (plain HTTP when the port is 80) and the requests inside
//! are emulated. Any other host gets a 502 naming the known hosts — unless the operator passed
//! `--passthrough`, and then the tunnel is carried, bytes only, to that host if it is a public
//! one ([`super::egress`]; 403 otherwise), until it goes quiet for the idle timeout
//! ([`super::tunnel`]).

use std::time::Duration;

use axum::body::Body;
use http::{Response, StatusCode, Uri};

use super::egress::Egress;
use crate::state::AppState;

/// How long a passthrough tunnel may take to reach its host.
const DIAL_TIMEOUT: Duration = Duration::from_secs(10);

/// What a `CONNECT` opens.
pub(crate) enum Opened {
    /// A tunnel to a hostname of the definitions: its requests are emulated (over TLS, or
    /// plain when the port is 80).
    Emulated { host: String, port: u16 },
    /// A passthrough tunnel, and its upstream connection.
    Passthrough(tokio::net::TcpStream),
    /// No tunnel: the answer says why.
    Refused(Response<Body>),
}

/// What the `CONNECT` to `uri`'s authority opens; a passthrough tunnel only where `egress`
/// lets it.
pub(crate) async fn open(state: &AppState, egress: &Egress, uri: &Uri) -> Opened {
    let Some((host, port)) = uri
        .authority()
        .and_then(|a| Some((a.host().to_ascii_lowercase(), a.port_u16()?)))
    else {
        return Opened::Refused(refusal(
            StatusCode::BAD_REQUEST,
            "CONNECT needs host:port; there is no default port (RFC 9110 §9.3.6)",
        ));
    };
    if state.catalog.by_hostname(&host).is_some() {
        return Opened::Emulated { host, port };
    }
    if !state.passthrough {
        return Opened::Refused(refusal(
            StatusCode::BAD_GATEWAY,
            &unknown_host(state, &host),
        ));
    }
    match tokio::time::timeout(DIAL_TIMEOUT, dial(egress, &host, port)).await {
        Ok(Ok(stream)) => Opened::Passthrough(stream),
        Ok(Err(refused)) => Opened::Refused(refused),
        Err(_) => Opened::Refused(refusal(
            StatusCode::GATEWAY_TIMEOUT,
            &format!("passthrough: {host}:{port} did not answer within {DIAL_TIMEOUT:?}"),
        )),
    }
}

/// A connection to `host:port` for a passthrough tunnel, at an address the passthrough may reach
/// (the one checked is the one dialled); a refusal to answer otherwise.
async fn dial(
    egress: &Egress,
    host: &str,
    port: u16,
) -> Result<tokio::net::TcpStream, Response<Body>> {
    let addrs = tokio::net::lookup_host((host, port)).await.map_err(|e| {
        refusal(
            StatusCode::BAD_GATEWAY,
            &format!("passthrough: cannot resolve {host}: {e}"),
        )
    })?;
    let mut refused = None;
    let mut failed = None;
    for addr in addrs {
        if let Err(why) = egress.check(addr) {
            refused.get_or_insert(why);
            continue;
        }
        match tokio::net::TcpStream::connect(addr).await {
            Ok(stream) => return Ok(stream),
            Err(e) => failed = Some(e),
        }
    }
    Err(match (failed, refused) {
        (Some(e), _) => refusal(
            StatusCode::BAD_GATEWAY,
            &format!("passthrough: cannot reach {host}:{port}: {e}"),
        ),
        (None, Some(why)) => {
            tracing::warn!(%host, port, reason = %why, "passthrough refused");
            refusal(
                StatusCode::FORBIDDEN,
                &format!("passthrough to {host}:{port} refused: {why}"),
            )
        }
        (None, None) => refusal(
            StatusCode::BAD_GATEWAY,
            &format!("passthrough: {host} has no address"),
        ),
    })
}

/// The 502 for a host no definition claims: it names the ones there are.
pub(crate) fn unknown_host(state: &AppState, host: &str) -> String {
    let mut known: Vec<&str> = state
        .catalog
        .services()
        .iter()
        .flat_map(|s| s.hostnames.iter().map(String::as_str))
        .collect();
    known.sort_unstable();
    format!(
        "APIStend emulates only the hosts of its service definitions and forwards nothing else \
         (start it with --passthrough to tunnel CONNECTs to other hosts); {host} is not one of: {}",
        known.join(", ")
    )
}

/// A proxy's own refusal: plain text, as proxies answer, and the connection closed.
pub(crate) fn refusal(status: StatusCode, message: &str) -> Response<Body> {
    let mut resp = Response::new(Body::from(format!("{message}\n")));
    *resp.status_mut() = status;
    let headers = resp.headers_mut();
    headers.insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    headers.insert(
        http::header::CONNECTION,
        http::HeaderValue::from_static("close"),
    );
    resp
}
