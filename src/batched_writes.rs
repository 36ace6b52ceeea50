//! A connection's writes gathered over a few turns of the scheduler
//! before they reach TLS and the socket.
//!
//! HTTP/2 multiplexes many responses on one connection, and each response
//! that sends a frame wakes the connection's task. Tokio runs a task woken
//! this way next (its LIFO slot), so when one change reached the 100 watch
//! streams of a connection, the connection encrypted and sent each stream's
//! frame on its own: one TLS record and one `writev` per watcher per event.
//! Here a flush with bytes waiting yields instead, and the connection's
//! task goes to the back of the run queue: other streams woken by the same
//! change add their frames meanwhile, and it yields again while each turn
//! brings more. With nothing else runnable the task is polled again at
//! once and the next flush finds nothing new, so a lone response waits for
//! no one.

use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// Bytes gathered before they are written on: a TLS record's largest
/// plaintext. Writes as large (a list's full-sized frames) go straight
/// through, uncopied.
const GATHERED: usize = 16 * 1024;

/// How many turns a flush may wait for more bytes: it waits only while
/// each turn brings some, and this bounds what a stream of tiny frames can
/// delay the first of them.
const MOST_TURNS: u8 = 8;

pub struct BatchedWrites<T> {
    io: T,
    /// Bytes not yet written on. Allocated for a batch and released once
    /// it is written, so an idle connection (a kubelet's watch between
    /// changes) holds no buffer: tokio's `BufWriter`, which would do the
    /// gathering, keeps its buffer for the connection's whole life.
    gathered: Vec<u8>,
    /// How much of `gathered` is written on already.
    written: usize,
    /// Turns the flush under way has yielded so far.
    turns: u8,
    /// Bytes gathered when it last yielded.
    gathered_at_yield: usize,
}

impl<T: AsyncRead + AsyncWrite + Unpin> BatchedWrites<T> {
    pub fn new(io: T) -> Self {
        Self {
            io,
            gathered: Vec::new(),
            written: 0,
            turns: 0,
            gathered_at_yield: 0,
        }
    }

    /// Writes on everything gathered, and releases the buffer.
    fn poll_write_gathered(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while self.written < self.gathered.len() {
            let n = ready!(Pin::new(&mut self.io).poll_write(cx, &self.gathered[self.written..]))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            self.written += n;
        }
        self.gathered = Vec::new();
        self.written = 0;
        Poll::Ready(Ok(()))
    }

    /// Makes room for `len` more bytes: whether they are to be gathered
    /// (false: they are as large as a batch, and go straight through).
    fn poll_room_for(&mut self, cx: &mut Context<'_>, len: usize) -> Poll<io::Result<bool>> {
        if self.gathered.len() + len > GATHERED {
            ready!(self.poll_write_gathered(cx))?;
        }
        if len >= GATHERED {
            return Poll::Ready(Ok(false));
        }
        if self.gathered.capacity() == 0 {
            self.gathered.reserve_exact(GATHERED);
        }
        Poll::Ready(Ok(true))
    }
}

impl<T: AsyncRead + AsyncWrite + Unpin> AsyncRead for BatchedWrites<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl<T: AsyncRead + AsyncWrite + Unpin> AsyncWrite for BatchedWrites<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        if !ready!(this.poll_room_for(cx, buf.len()))? {
            return Pin::new(&mut this.io).poll_write(cx, buf);
        }
        this.gathered.extend_from_slice(buf);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        let len = bufs.iter().map(|b| b.len()).sum();
        if !ready!(this.poll_room_for(cx, len))? {
            return Pin::new(&mut this.io).poll_write_vectored(cx, bufs);
        }
        for buf in bufs {
            this.gathered.extend_from_slice(buf);
        }
        Poll::Ready(Ok(len))
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        let gathered = this.gathered.len();
        if gathered > this.gathered_at_yield && this.turns < MOST_TURNS {
            // Woken from inside its own poll, a tokio task is scheduled as
            // one that yields: behind every task already runnable.
            this.turns += 1;
            this.gathered_at_yield = gathered;
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        ready!(this.poll_write_gathered(cx))?;
        ready!(Pin::new(&mut this.io).poll_flush(cx))?;
        this.turns = 0;
        this.gathered_at_yield = 0;
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        ready!(this.poll_write_gathered(cx))?;
        Pin::new(&mut this.io).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};
    use tokio::io::AsyncWriteExt;

    /// A sink that records each write it is given.
    #[derive(Clone, Default)]
    struct Recorded(Arc<Mutex<Vec<Vec<u8>>>>);

    impl AsyncRead for Recorded {
        fn poll_read(
            self: Pin<&mut Self>,
            _: &mut Context<'_>,
            _: &mut ReadBuf<'_>,
        ) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }
    }

    impl AsyncWrite for Recorded {
        fn poll_write(
            self: Pin<&mut Self>,
            _: &mut Context<'_>,
            buf: &[u8],
        ) -> Poll<io::Result<usize>> {
            self.0.lock().unwrap().push(buf.to_vec());
            Poll::Ready(Ok(buf.len()))
        }
        fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }
        fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }
    }

    impl Recorded {
        fn writes(&self) -> Vec<Vec<u8>> {
            self.0.lock().unwrap().clone()
        }
    }

    /// Records whether it was woken.
    #[derive(Default)]
    struct Woken(std::sync::atomic::AtomicBool);

    impl futures::task::ArcWake for Woken {
        fn wake_by_ref(arc: &Arc<Self>) {
            arc.0.store(true, std::sync::atomic::Ordering::SeqCst);
        }
    }

    /// Small writes reach the connection as one, in order, only after the
    /// flush yielded (asking to be polled again) for as long as each turn
    /// brought more; the buffer is released once written.
    #[tokio::test(flavor = "current_thread")]
    async fn small_writes_go_out_together_after_yielding() {
        let sink = Recorded::default();
        let mut io = BatchedWrites::new(sink.clone());
        let woken = Arc::new(Woken::default());
        let waker = futures::task::waker(woken.clone());
        let mut cx = Context::from_waker(&waker);
        let mut flush = |io: &mut BatchedWrites<Recorded>| Pin::new(io).poll_flush(&mut cx);
        io.write_all(b"first ").await.unwrap();
        assert!(flush(&mut io).is_pending(), "the first flush yields");
        assert!(
            woken.0.swap(false, std::sync::atomic::Ordering::SeqCst),
            "and asks to be polled again"
        );
        io.write_all(b"second").await.unwrap();
        assert!(flush(&mut io).is_pending(), "more came: it yields again");
        assert!(woken.0.load(std::sync::atomic::Ordering::SeqCst));
        assert!(sink.writes().is_empty(), "nothing written while yielding");
        assert!(flush(&mut io).is_ready(), "nothing more came");
        assert_eq!(sink.writes(), vec![b"first second".to_vec()]);
        assert_eq!(io.gathered.capacity(), 0, "the buffer is released");
        assert!(flush(&mut io).is_ready(), "nothing gathered: no yield");
    }

    /// A trickle of bytes delays a flush by at most `MOST_TURNS` turns.
    #[tokio::test(flavor = "current_thread")]
    async fn a_trickle_delays_a_flush_a_bounded_number_of_turns() {
        let sink = Recorded::default();
        let mut io = BatchedWrites::new(sink.clone());
        let waker = futures::task::noop_waker();
        let mut cx = Context::from_waker(&waker);
        let mut pending = 0;
        loop {
            io.write_all(b".").await.unwrap();
            if Pin::new(&mut io).poll_flush(&mut cx).is_ready() {
                break;
            }
            pending += 1;
        }
        assert_eq!(pending, MOST_TURNS);
        assert_eq!(sink.writes(), vec![vec![b'.'; MOST_TURNS as usize + 1]]);
    }

    /// Vectored writes are gathered into one buffer too.
    #[tokio::test(flavor = "current_thread")]
    async fn vectored_writes_are_gathered() {
        let sink = Recorded::default();
        let mut io = BatchedWrites::new(sink.clone());
        let slices = [
            io::IoSlice::new(b"frame head "),
            io::IoSlice::new(b"payload"),
        ];
        assert_eq!(io.write_vectored(&slices).await.unwrap(), 18);
        io.flush().await.unwrap();
        assert_eq!(sink.writes(), vec![b"frame head payload".to_vec()]);
    }

    /// A write as large as the gathering buffer goes through uncopied, after
    /// what was gathered before it.
    #[tokio::test(flavor = "current_thread")]
    async fn large_writes_pass_through_in_order() {
        let sink = Recorded::default();
        let mut io = BatchedWrites::new(sink.clone());
        let large = vec![7u8; GATHERED];
        io.write_all(b"head").await.unwrap();
        io.write_all(&large).await.unwrap();
        io.flush().await.unwrap();
        io.shutdown().await.unwrap();
        assert_eq!(sink.writes(), vec![b"head".to_vec(), large]);
    }

    /// Shutting down writes what was gathered first.
    #[tokio::test(flavor = "current_thread")]
    async fn shutdown_writes_what_is_gathered() {
        let sink = Recorded::default();
        let mut io = BatchedWrites::new(sink.clone());
        io.write_all(b"last words").await.unwrap();
        io.shutdown().await.unwrap();
        assert_eq!(sink.writes(), vec![b"last words".to_vec()]);
    }
}
