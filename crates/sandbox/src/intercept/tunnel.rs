//! A passthrough tunnel: bytes carried both ways until either side closes or nothing has moved
//! either way for the idle timeout (as nginx's `proxy_timeout` closes a stream proxy's quiet
//! connection), so that an abandoned tunnel does not hold two sockets for ever.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::Instant;

/// Carries `a` ↔ `b` until one closes or both stay quiet for `idle`.
pub(crate) async fn carry<A, B>(a: A, b: B, idle: Duration)
where
    A: AsyncRead + AsyncWrite + Unpin,
    B: AsyncRead + AsyncWrite + Unpin,
{
    let start = Instant::now();
    let last = Arc::new(AtomicU64::new(0));
    let mut a = Active {
        io: a,
        start,
        last: Arc::clone(&last),
    };
    let mut b = Active {
        io: b,
        start,
        last: Arc::clone(&last),
    };
    let quiet = async {
        loop {
            let at = start + Duration::from_millis(last.load(Ordering::Relaxed)) + idle;
            if Instant::now() >= at {
                return;
            }
            tokio::time::sleep_until(at).await;
        }
    };
    tokio::select! {
        _ = tokio::io::copy_bidirectional(&mut a, &mut b) => {}
        () = quiet => tracing::debug!(?idle, "passthrough tunnel closed: idle"),
    }
}

/// An IO that notes when bytes last came through it.
struct Active<I> {
    io: I,
    start: Instant,
    /// Milliseconds from `start` to the last read that brought bytes, shared by both sides.
    last: Arc<AtomicU64>,
}

impl<I: AsyncRead + Unpin> AsyncRead for Active<I> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.io).poll_read(cx, buf);
        if buf.filled().len() > before {
            let ms = u64::try_from(self.start.elapsed().as_millis()).unwrap_or(u64::MAX);
            self.last.store(ms, Ordering::Relaxed);
        }
        polled
    }
}

impl<I: AsyncWrite + Unpin> AsyncWrite for Active<I> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

    use super::*;

    /// A tunnel that carries bytes stays; one quiet for the idle timeout closes.
    #[tokio::test(start_paused = true)]
    async fn a_quiet_tunnel_closes_after_the_idle_timeout() {
        let (client, a) = tokio::io::duplex(64);
        let (b, mut server) = tokio::io::duplex(64);
        let idle = Duration::from_secs(2);
        let tunnel = tokio::spawn(carry(a, b, idle));
        let mut client = client;
        for _ in 0..3 {
            tokio::time::sleep(Duration::from_millis(1500)).await;
            client.write_all(b"ping").await.unwrap();
            let mut got = [0u8; 4];
            server.read_exact(&mut got).await.unwrap();
            assert_eq!(&got, b"ping");
        }
        assert!(!tunnel.is_finished());
        tokio::time::sleep(Duration::from_millis(2100)).await;
        tokio::task::yield_now().await;
        assert!(tunnel.is_finished());
        let mut rest = Vec::new();
        assert_eq!(client.read_to_end(&mut rest).await.unwrap(), 0);
    }
}
