//! Response bodies cut into frames of at most [`PIECE`] bytes.
//!
//! The server has hyper flatten every response into its per-connection write buffer (one `send`
//! per answer, see `server.rs`). That buffer keeps the capacity of the largest frame it ever
//! held, and hyper copies a frame whole: a body sent as one frame of megabytes (a large example,
//! an export, a proxied download) would leave megabytes behind on every pooled connection that
//! carried one. Cut into pieces, a body never puts more than `max_buf_size` plus one piece in
//! it, since hyper stops polling the body while its buffer is full. Pieces share the frame's
//! memory (`Bytes::split_to`): nothing is copied here.

use std::pin::Pin;
use std::task::{Context, Poll, ready};

use axum::body::{Body, Bytes, HttpBody};
use hyper::body::{Frame, SizeHint};

/// The largest frame given to hyper.
pub(crate) const PIECE: usize = 16 * 1024;

/// `body`, unchanged when it is known to fit in one piece (nearly every answer: no allocation),
/// else wrapped so that no frame is larger than [`PIECE`].
pub(crate) fn bounded(body: Body) -> Body {
    match body.size_hint().exact() {
        Some(n) if n <= PIECE as u64 => body,
        _ => Body::new(Pieces {
            inner: body,
            rest: Bytes::new(),
        }),
    }
}

/// A body whose frames are cut to [`PIECE`] bytes.
struct Pieces {
    inner: Body,
    /// What is left of the inner body's last data frame.
    rest: Bytes,
}

impl HttpBody for Pieces {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let this = &mut *self;
        if this.rest.is_empty() {
            match ready!(Pin::new(&mut this.inner).poll_frame(cx)) {
                Some(Ok(frame)) => match frame.into_data() {
                    Ok(data) => this.rest = data,
                    Err(trailers) => return Poll::Ready(Some(Ok(trailers))),
                },
                done => return Poll::Ready(done),
            }
        }
        let n = this.rest.len().min(PIECE);
        Poll::Ready(Some(Ok(Frame::data(this.rest.split_to(n)))))
    }

    fn is_end_stream(&self) -> bool {
        self.rest.is_empty() && self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        let inner = self.inner.size_hint();
        let rest = self.rest.len() as u64;
        let mut hint = SizeHint::new();
        hint.set_lower(inner.lower().saturating_add(rest));
        if let Some(upper) = inner.upper() {
            hint.set_upper(upper.saturating_add(rest));
        }
        hint
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::stream;
    use http_body_util::BodyExt;

    async fn frames(body: Body) -> Vec<Bytes> {
        let mut body = bounded(body);
        let mut out = Vec::new();
        while let Some(frame) = body.frame().await {
            if let Ok(data) = frame.expect("frame").into_data() {
                out.push(data);
            }
        }
        out
    }

    #[tokio::test]
    async fn a_large_frame_arrives_whole_in_pieces_no_larger_than_piece() {
        let data: Vec<u8> = (0..=250u8).cycle().take(PIECE * 3 + 123).collect();
        let body = Body::from(data.clone());
        assert_eq!(
            bounded(Body::from(data.clone())).size_hint().exact(),
            Some(data.len() as u64)
        );
        let got = frames(body).await;
        assert_eq!(got.len(), 4);
        assert!(got.iter().all(|f| f.len() <= PIECE));
        assert_eq!(got.concat(), data);
    }

    #[tokio::test]
    async fn a_stream_of_unknown_length_is_cut_frame_by_frame() {
        let chunks = [
            vec![1u8; PIECE + 1],
            vec![],
            vec![2u8; 10],
            vec![3u8; PIECE * 2],
        ];
        let expected = chunks.concat();
        let s = stream::iter(chunks.map(|c| Ok::<_, std::io::Error>(Bytes::from(c))));
        let got = frames(Body::from_stream(s)).await;
        assert!(got.iter().all(|f| f.len() <= PIECE));
        assert_eq!(got.concat(), expected);
    }

    #[tokio::test]
    async fn a_small_body_is_left_as_it_is() {
        let got = frames(Body::from("{\"ok\":true}")).await;
        assert_eq!(got, vec![Bytes::from_static(b"{\"ok\":true}")]);
    }
}
