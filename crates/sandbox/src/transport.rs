//! The connection's clock, as nginx keeps it: an idle keep-alive connection stays usable for the
//! idle timeout (75 s by default, like nginx's `keepalive_timeout`), while a request head that
//! has started must arrive whole within the head timeout (10 s, like `client_header_timeout`).
//!
//! hyper's own `header_read_timeout` starts when the connection waits for the next request, so
//! it also cuts idle keep-alive connections — pooled clients (aiohttp keeps them 15 s,
//! urllib3 indefinitely) then fail on their next request. Here the IO knows when a request's
//! first bytes arrive, and the service tells it when a request is being answered and when its
//! answer is ready. (A flush is no such sign: hyper flushes while it still reads a body.)
//!
//! Public for `apistend proxy`, whose connections keep the same clock.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

/// A status HTTP does not name (Yandex Market's 420) goes out with the reason phrase the
/// services send with it ([`apistend_catalog::reason_phrase`]), as the real one writes it:
/// hyper would write `420 <none>`. For the sandbox's answers and those `apistend proxy` passes
/// on (its HTTP client keeps no reason phrase).
pub fn name_status<B>(resp: &mut http::Response<B>) {
    let status = resp.status();
    if status.canonical_reason().is_none()
        && let Some(reason) = apistend_catalog::reason_phrase(status.as_u16())
    {
        resp.extensions_mut()
            .insert(hyper::ext::ReasonPhrase::from_static(reason.as_bytes()));
    }
}

/// The next connection of `listener`, with `TCP_NODELAY` set; a failed accept (out of file
/// descriptors and the like) is logged and retried after a pause rather than in a spin.
pub async fn accept(listener: &tokio::net::TcpListener) -> tokio::net::TcpStream {
    loop {
        match listener.accept().await {
            Ok((stream, _)) => {
                let _ = stream.set_nodelay(true);
                return stream;
            }
            Err(e) => {
                tracing::warn!(error = %e, "accept failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
}

/// Waiting for a request; the idle deadline is armed.
const IDLE: u8 = 0;
/// A request head has started; the head deadline is armed.
const HEAD: u8 = 1;
/// An answer went out: arm the idle deadline from now.
const ANSWERED: u8 = 2;
/// A request is being answered: no read deadline (the pipeline times the body itself).
const BUSY: u8 = 3;
/// The connection became a tunnel (`CONNECT`): the connection inside keeps its own clock.
const TUNNEL: u8 = 4;

/// Where a connection is in its request cycle, shared by its IO and its service.
#[derive(Debug, Default)]
pub struct Phase(AtomicU8);

impl Phase {
    /// A request reached the service.
    pub fn busy(&self) {
        self.0.store(BUSY, Ordering::Relaxed);
    }

    /// Its answer is ready.
    pub fn answered(&self) {
        self.0.store(ANSWERED, Ordering::Relaxed);
    }

    /// The connection carries a tunnel now: no deadline of its own, ever again.
    pub(crate) fn tunnel(&self) {
        self.0.store(TUNNEL, Ordering::Relaxed);
    }
}

/// The two timeouts.
#[derive(Debug, Clone, Copy)]
pub struct Timeouts {
    /// How long an idle keep-alive connection stays open.
    pub idle: Duration,
    /// How long a request head, once started, may take to arrive whole.
    pub head: Duration,
}

/// An IO that fails reads with `TimedOut` past the phase's deadline.
///
/// The timer is not re-armed per request (a timer-wheel update per request costs the gateway
/// measurably): it is kept armed no later than one step (the shorter timeout) ahead, so it can
/// never fire late for a head that starts, and when it fires early it is simply moved on.
pub struct TimedIo<I> {
    io: I,
    phase: Arc<Phase>,
    timeouts: Timeouts,
    /// When the current phase began.
    since: Instant,
    sleep: Pin<Box<Sleep>>,
}

impl<I> std::fmt::Debug for TimedIo<I> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TimedIo")
            .field("phase", &self.phase)
            .field("timeouts", &self.timeouts)
            .finish_non_exhaustive()
    }
}

impl<I> TimedIo<I> {
    /// `io` under the clock of `timeouts`, in the phase its service reports to `phase`.
    pub fn new(io: I, phase: Arc<Phase>, timeouts: Timeouts) -> Self {
        let now = Instant::now();
        Self {
            io,
            phase,
            timeouts,
            since: now,
            sleep: Box::pin(tokio::time::sleep_until(now + timeouts.step())),
        }
    }

    /// Polls the timer; `Err` once the phase's deadline has passed.
    fn poll_deadline(&mut self, cx: &mut Context<'_>) -> Poll<std::io::Error> {
        while self.sleep.as_mut().poll(cx).is_ready() {
            let now = Instant::now();
            let deadline = match self.phase.0.load(Ordering::Relaxed) {
                HEAD => Some((
                    self.since + self.timeouts.head,
                    "the request head did not arrive in time",
                )),
                IDLE => Some((
                    self.since + self.timeouts.idle,
                    "idle keep-alive connection timed out",
                )),
                _ => None,
            };
            if let Some((at, what)) = deadline {
                if now >= at {
                    return Poll::Ready(std::io::Error::new(std::io::ErrorKind::TimedOut, what));
                }
                self.sleep
                    .as_mut()
                    .reset(at.min(now + self.timeouts.step()));
            } else {
                self.sleep.as_mut().reset(now + self.timeouts.step());
            }
        }
        Poll::Pending
    }
}

impl Timeouts {
    /// How far ahead the timer may be armed: never past a head that would start now.
    fn step(&self) -> Duration {
        self.head.min(self.idle)
    }
}

impl<I: AsyncRead + Unpin> AsyncRead for TimedIo<I> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = &mut *self;
        if this.phase.0.load(Ordering::Relaxed) == ANSWERED {
            this.phase.0.store(IDLE, Ordering::Relaxed);
            this.since = Instant::now();
        }
        let before = buf.filled().len();
        match Pin::new(&mut this.io).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                if buf.filled().len() > before && this.phase.0.load(Ordering::Relaxed) == IDLE {
                    this.phase.0.store(HEAD, Ordering::Relaxed);
                    this.since = Instant::now();
                }
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => this.poll_deadline(cx).map(Err),
        }
    }
}

impl<I: AsyncWrite + Unpin> AsyncWrite for TimedIo<I> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let flushed = Pin::new(&mut self.io).poll_flush(cx);
        // hyper flushes after writing an answer: the request was answered.
        if flushed.is_ready() {
            let _ =
                self.phase
                    .0
                    .compare_exchange(BUSY, ANSWERED, Ordering::Relaxed, Ordering::Relaxed);
        }
        flushed
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.io).poll_write_vectored(cx, bufs)
    }
}
