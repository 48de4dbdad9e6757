//! The listeners and their connections: the plain HTTP listener (the services by path prefix
//! or by hostname, the management API, `CONNECT` and absolute-form proxy requests), the TLS
//! listener and `CONNECT` tunnels (the services only). Every connection keeps nginx's clock
//! ([`crate::transport`]) and finishes its request in flight on shutdown ([`crate::drain`]).

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use futures_util::FutureExt;
use http::{Request, Response};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;

use crate::intercept::connect::Opened;
use crate::intercept::{self, Target};
use crate::routes::{self, Surface};
use crate::state::AppState;
use crate::{admin, drain, pieces, tls, transport};

/// What every connection shares.
pub(crate) struct Server {
    pub(crate) state: Arc<AppState>,
    admin: hyper_util::service::TowerToHyperService<Router>,
    /// The plain listener's address, for answers that point to it.
    pub(crate) plain_addr: String,
    /// Its port: an absolute-form request to a loopback address names the sandbox only there.
    plain_port: u16,
    /// Where a passthrough tunnel may go (never to these listeners).
    pub(crate) egress: intercept::egress::Egress,
    drain: drain::Watch,
}

/// An answer in the making.
type Boxed = Pin<Box<dyn Future<Output = Response<Body>> + Send>>;

/// Numbers the connections (the request journal tells a request sent on the connection that
/// carried a refusal from one of another, maybe sent before the client read it).
static CONNECTIONS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

impl Server {
    /// Serves `http` (and `https`) until `shutdown`, then lets requests in flight finish for
    /// at most 30 s.
    pub(crate) async fn run(
        state: Arc<AppState>,
        admin: Router,
        http: TcpListener,
        https: Option<TcpListener>,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        let (drain, watch) = drain::channel();
        let mut own = vec![http.local_addr()?];
        if let Some(l) = &https {
            own.push(l.local_addr()?);
        }
        let egress = intercept::egress::Egress {
            allow: state.passthrough_allow.clone(),
            own,
        };
        let server = Arc::new(Self {
            state,
            admin: hyper_util::service::TowerToHyperService::new(admin),
            plain_addr: http.local_addr()?.to_string(),
            plain_port: http.local_addr()?.port(),
            egress,
            drain: watch,
        });
        if let Some(listener) = https {
            let server = Arc::clone(&server);
            tokio::spawn(async move { server.accept_tls(listener).await });
        }
        let mut shutdown = std::pin::pin!(shutdown);
        loop {
            let stream = tokio::select! {
                a = transport::accept(&http) => a,
                () = &mut shutdown => break,
            };
            let peer = stream.peer_addr().ok().map(|a| a.ip());
            server.connection(stream, Surface::Sandbox, peer);
        }
        drop(http);
        server.state.watch.stop();
        drop(server);
        drain.drain(Duration::from_secs(30)).await;
        Ok(())
    }

    async fn accept_tls(self: Arc<Self>, listener: TcpListener) {
        let mut stop = self.drain.clone();
        loop {
            let stream = tokio::select! {
                a = transport::accept(&listener) => a,
                () = stop.signaled() => return,
            };
            let server = Arc::clone(&self);
            tokio::spawn(async move { server.tls_connection(stream, None).await });
        }
    }

    /// Takes a TLS handshake on `io` and serves the emulated services over it. `name` is the
    /// host a `CONNECT` named (certificates go by the client's server name either way).
    pub(crate) async fn tls_connection<IO>(self: Arc<Self>, io: IO, name: Option<&str>)
    where
        IO: AsyncRead + AsyncWrite + Send + Unpin + 'static,
    {
        let tls = &self.state.tls;
        let head = self.state.limits.read_timeout;
        match tls::accept(io, &tls.certs, &tls.config, &self.plain_addr, head).await {
            Ok(stream) => self.connection(stream, Surface::Emulation, None),
            Err(e) => tracing::debug!(error = %e, connect = name, "TLS connection refused"),
        }
    }

    /// Serves HTTP/1.1 on `io` in a task of its own; `peer` is the client's address where the
    /// management API may be reached (the plain listener), for its limit of failed logins.
    pub(crate) fn connection<IO>(
        self: &Arc<Self>,
        io: IO,
        surface: Surface,
        peer: Option<std::net::IpAddr>,
    ) where
        IO: AsyncRead + AsyncWrite + Send + Unpin + 'static,
    {
        let limits = self.state.limits;
        let timeouts = transport::Timeouts {
            idle: limits.idle_timeout,
            head: limits.read_timeout,
        };
        let phase = Arc::new(transport::Phase::default());
        let io = transport::TimedIo::new(io, Arc::clone(&phase), timeouts);
        let server = Arc::clone(self);
        let conn = CONNECTIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let service = hyper::service::service_fn(move |req: Request<hyper::body::Incoming>| {
            server.respond(req, (surface, conn), peer, &phase)
        });
        // No hyper timer: given one, hyper arms its own 30 s head timeout whenever it waits for
        // a request, idle keep-alive time included, which closed pooled connections at 30 s
        // whatever the idle timeout said (and cost a timer per request). `TimedIo` keeps both
        // clocks instead.
        let mut http = hyper::server::conn::http1::Builder::new();
        http.max_buf_size(limits.max_header_bytes);
        // Head and body in one `send` from hyper's per-connection buffer, which stays warm,
        // rather than a `writev` of the head and a body allocated for this answer: the kernel's
        // copy of fresh memory cost more than the copy into that buffer (`perf` on the release
        // binary, rejected path: `_copy_from_iter` 2.4 % → 0.7 % of samples; it was 6.4 % on
        // another VM). Bodies reach hyper in bounded pieces ([`pieces`]), which bounds the
        // buffer.
        http.writev(false);
        let io = hyper_util::rt::TokioIo::new(io);
        let watch = self.drain.clone();
        match surface {
            Surface::Sandbox => {
                let conn = http.serve_connection(io, service).with_upgrades();
                tokio::spawn(watch.run(conn));
            }
            Surface::Emulation => {
                let conn = http.serve_connection(io, service);
                tokio::spawn(watch.run(conn));
            }
        }
    }

    /// One request, on connection number `conn`: its answer, counted as answered and cut into
    /// bounded pieces ([`pieces`]).
    fn respond(
        self: &Arc<Self>,
        req: Request<hyper::body::Incoming>,
        (surface, conn): (Surface, u64),
        peer: Option<std::net::IpAddr>,
        phase: &Arc<transport::Phase>,
    ) -> impl Future<Output = Result<Response<Body>, Infallible>> + Send + use<> {
        phase.busy();
        let done = Arc::clone(phase);
        self.route(req, (surface, conn), peer, phase)
            .map(move |mut resp| {
                done.answered();
                transport::name_status(&mut resp);
                Ok(resp.map(pieces::bounded))
            })
    }

    /// A `CONNECT`: the tunnel it opens is served in a task of its own once the connection is
    /// upgraded.
    async fn connect(
        self: Arc<Self>,
        req: Request<hyper::body::Incoming>,
        phase: Arc<transport::Phase>,
    ) -> Response<Body> {
        let opened = intercept::connect::open(&self.state, &self.egress, req.uri()).await;
        let idle = self.state.limits.idle_timeout;
        let open = async move {
            let Ok(upgraded) = hyper::upgrade::on(req).await else {
                return None;
            };
            phase.tunnel();
            Some(hyper_util::rt::TokioIo::new(upgraded))
        };
        match opened {
            Opened::Refused(resp) => return resp,
            Opened::Emulated { host, port } => tokio::spawn(async move {
                let Some(io) = open.await else { return };
                if port == 80 {
                    self.connection(io, Surface::Emulation, None);
                } else {
                    self.tls_connection(io, Some(&host)).await;
                }
            }),
            Opened::Passthrough(upstream) => tokio::spawn(async move {
                let Some(io) = open.await else { return };
                intercept::tunnel::carry(io, upstream, idle).await;
            }),
        };
        Response::new(Body::empty())
    }

    /// The future of `req`'s answer. Boxed on every path, the emulated one too: that future is
    /// some kilobytes and hyper moves the future it is given by value; a pointer moves for less
    /// (BENCHMARKS.md, the gateway's A/B).
    fn route(
        self: &Arc<Self>,
        mut req: Request<hyper::body::Incoming>,
        (surface, conn): (Surface, u64),
        peer: Option<std::net::IpAddr>,
        phase: &Arc<transport::Phase>,
    ) -> Boxed {
        if surface == Surface::Sandbox && req.method() == http::Method::CONNECT {
            return Box::pin(Arc::clone(self).connect(req, Arc::clone(phase)));
        }
        let state = Arc::clone(&self.state);
        let own_port = (surface == Surface::Sandbox).then_some(self.plain_port);
        let target = intercept::target(&state.catalog, req.uri(), req.headers(), own_port);
        if surface == Surface::Sandbox
            && target == Target::Prefix
            && routes::own(req.uri().path()).is_some_and(routes::Own::routed)
        {
            let (admin, limits) = (self.admin.clone(), state.limits);
            if let Some(ip) = peer {
                req.extensions_mut().insert(admin::Peer(ip));
            }
            return Box::pin(async move {
                match admin::buffer_body(req, limits).await {
                    Ok(req) => match hyper::service::Service::call(&admin, req).await {
                        Ok(resp) => resp,
                        Err(never) => match never {},
                    },
                    Err(early) => early,
                }
            });
        }
        // The box is made before the future is, so the future can be built in it: built on the
        // stack, its kilobytes would be copied into the box on every request.
        let boxed = Box::write(
            Box::new_uninit(),
            routes::handle(state, req.map(Body::new), target, (surface, conn)),
        );
        Box::into_pin(boxed)
    }
}
