//! The HTTP/2 connection to one etcd member, under etcd-client's gRPC
//! clients (its `raw-channel` entry point).
//!
//! Why not tonic's own channel: for every unary call, hyper writes the
//! request's HEADERS, its DATA and an empty END_STREAM frame in three
//! separate socket writes. Its body pipe waits for send capacity, which
//! h2 assigns only once the connection task has opened the stream, and it
//! learns that the message was the last one only on the next poll. On top
//! of that, each call passed through a buffer task and a balancer, and
//! hyper spawned a task per response. Here the caller queues the headers
//! and the whole message, marked as the end of the stream, before the
//! connection task runs, and a Txn leaves in one write (strace at 1 client:
//! two writes per create on the etcd connection, the request and the ACK
//! of etcd's PING, against four; docs/benchmarks.md). The caller's task and
//! the connection task are the only ones a call passes through.
//!
//! Streaming calls (Watch) send what their body has ready at once and
//! pipe the rest from a task of their own.

use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use futures::FutureExt;
use http::uri::{Authority, PathAndQuery, Scheme};
use http::{Request, Response, Uri};
use http_body::{Body, Frame};
use http_body_util::BodyExt;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio_rustls::rustls;
use tokio_rustls::rustls::pki_types::ServerName;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// How long a TCP connect and TLS handshake may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How often the connection is pinged, and how long an answer may take
/// before the member counts as gone (kube-apiserver pings its etcd
/// connections too, so a member that hangs fails its requests instead of
/// holding them).
const KEEP_ALIVE: KeepAlive = KeepAlive {
    interval: Duration::from_secs(10),
    timeout: Duration::from_secs(10),
};
/// hyper's client defaults, which tonic's channel used: a list of
/// 10,000 objects arrives without waiting on window updates.
const STREAM_WINDOW: u32 = 2 * 1024 * 1024;
const CONNECTION_WINDOW: u32 = 5 * 1024 * 1024;

/// The request could not be sent: no connection to the member could be
/// made, or it closed before the request was queued. Only such a request
/// may be sent again elsewhere; one that was sent may have been applied.
#[derive(Debug, thiserror::Error)]
#[error("the request was not sent")]
pub(crate) struct NotSent;

#[derive(Debug, Clone, Copy)]
struct KeepAlive {
    interval: Duration,
    timeout: Duration,
}

/// Where one member is and how to reach it.
struct Member {
    scheme: Scheme,
    authority: Authority,
    host: String,
    port: u16,
    tls: Option<(Arc<rustls::ClientConfig>, ServerName<'static>)>,
    keep_alive: KeepAlive,
}

/// A gRPC channel to one etcd member: clones share one connection, made
/// on first use and again after it was lost.
#[derive(Clone)]
pub(crate) struct MemberChannel {
    member: Arc<Member>,
    live: Arc<Mutex<Option<Connection>>>,
    /// Serializes reconnects, so a lost connection is replaced once.
    connecting: Arc<tokio::sync::Mutex<()>>,
}

#[derive(Clone)]
struct Connection {
    send: h2::client::SendRequest<Bytes>,
    closed: Arc<AtomicBool>,
}

impl Connection {
    fn is_open(&self) -> bool {
        !self.closed.load(Ordering::Acquire)
    }
}

impl MemberChannel {
    /// `endpoint` is an etcd client URL (`http://host:port`,
    /// `https://host:port`, or `host:port`, which is https when `tls` is
    /// given).
    pub(crate) fn new(
        endpoint: &str,
        tls: Option<Arc<rustls::ClientConfig>>,
    ) -> Result<Self, String> {
        let with_scheme = if endpoint.contains("://") {
            endpoint.to_string()
        } else if tls.is_some() {
            format!("https://{endpoint}")
        } else {
            format!("http://{endpoint}")
        };
        let uri: Uri = with_scheme
            .parse()
            .map_err(|e| format!("etcd endpoint {endpoint:?}: {e}"))?;
        let scheme = uri.scheme().cloned().unwrap_or(Scheme::HTTP);
        let authority = uri
            .authority()
            .cloned()
            .ok_or_else(|| format!("etcd endpoint {endpoint:?} has no host"))?;
        let host = authority
            .host()
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_string();
        let port = authority
            .port_u16()
            .unwrap_or(if scheme == Scheme::HTTPS { 443 } else { 2379 });
        let tls = match (scheme.as_str(), tls) {
            ("https", Some(config)) => {
                let name = ServerName::try_from(host.clone())
                    .map_err(|e| format!("etcd endpoint {endpoint:?}: {e}"))?;
                Some((config, name))
            }
            ("https", None) => {
                return Err(format!(
                    "etcd endpoint {endpoint:?} is https: give --etcd-cafile"
                ))
            }
            ("http", Some(_)) => {
                return Err(format!(
                    "etcd endpoint {endpoint:?} is http, but TLS files were given: use https://"
                ))
            }
            ("http", None) => None,
            (other, _) => return Err(format!("etcd endpoint {endpoint:?}: scheme {other:?}")),
        };
        Ok(Self {
            member: Arc::new(Member {
                scheme,
                authority,
                host,
                port,
                tls,
                keep_alive: KEEP_ALIVE,
            }),
            live: Arc::new(Mutex::new(None)),
            connecting: Arc::new(tokio::sync::Mutex::new(())),
        })
    }

    fn open_connection(&self) -> Option<Connection> {
        let live = self.live.lock().unwrap_or_else(|e| e.into_inner());
        live.as_ref().filter(|c| c.is_open()).cloned()
    }

    async fn connection(&self) -> Result<Connection, tonic::Status> {
        if let Some(connection) = self.open_connection() {
            return Ok(connection);
        }
        let _one_at_a_time = self.connecting.lock().await;
        if let Some(connection) = self.open_connection() {
            return Ok(connection);
        }
        let connection = tokio::time::timeout(CONNECT_TIMEOUT, connect(&self.member))
            .await
            .unwrap_or_else(|_| Err(format!("timed out after {CONNECT_TIMEOUT:?}")))
            .map_err(|e| {
                not_sent(format!(
                    "cannot connect to etcd member {}: {e}",
                    self.member.authority
                ))
            })?;
        *self.live.lock().unwrap_or_else(|e| e.into_inner()) = Some(connection.clone());
        Ok(connection)
    }

    async fn call(
        self,
        request: Request<tonic::body::Body>,
    ) -> Result<Response<tonic::body::Body>, BoxError> {
        let (mut head, mut body) = request.into_parts();
        let path = head
            .uri
            .path_and_query()
            .cloned()
            .unwrap_or_else(|| PathAndQuery::from_static("/"));
        head.uri = Uri::builder()
            .scheme(self.member.scheme.clone())
            .authority(self.member.authority.clone())
            .path_and_query(path)
            .build()?;

        // A unary call's body is ready at once: its one message, then its end.
        let mut ready = Vec::new();
        let mut ended = false;
        while let Some(next) = body.frame().now_or_never() {
            match next {
                Some(Ok(frame)) => {
                    if let Ok(data) = frame.into_data() {
                        ready.push(data);
                    }
                }
                Some(Err(e)) => return Err(e.into()),
                None => {
                    ended = true;
                    break;
                }
            }
        }

        let connection = self.connection().await?;
        let mut send = connection.send.clone().ready().await.map_err(|e| {
            connection.closed.store(true, Ordering::Release);
            not_sent(format!("etcd member {}: {e}", self.member.authority))
        })?;
        let (response, mut stream) = send
            .send_request(Request::from_parts(head, ()), false)
            .map_err(|e| {
                if !connection_lost(&e) {
                    // A request h2 refuses to send; the connection is fine.
                    return status_of(e);
                }
                connection.closed.store(true, Ordering::Release);
                not_sent(format!("etcd member {}: {e}", self.member.authority))
            })?;
        if ended {
            let message = match ready.len() {
                1 => ready.pop().unwrap_or_default(),
                _ => {
                    let mut joined = BytesMut::new();
                    for chunk in ready {
                        joined.extend_from_slice(&chunk);
                    }
                    joined.freeze()
                }
            };
            stream.send_data(message, true).map_err(status_of)?;
        } else {
            for chunk in ready {
                stream.send_data(chunk, false).map_err(status_of)?;
            }
            tokio::spawn(pipe(body, stream));
        }
        let response = response.await.map_err(status_of)?;
        Ok(response.map(|received| tonic::body::Body::new(Received::new(received))))
    }

    /// etcd-client's channel: this one, boxed.
    pub(crate) fn into_etcd_channel(self) -> etcd_client::Channel {
        etcd_client::Channel::Custom(tower::util::BoxCloneSyncService::new(self))
    }
}

impl tower::Service<Request<tonic::body::Body>> for MemberChannel {
    type Response = Response<tonic::body::Body>;
    type Error = BoxError;
    type Future =
        Pin<Box<dyn std::future::Future<Output = Result<Self::Response, Self::Error>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        // Readiness is the connection's, awaited per call: a call never
        // waits here for a member that another call is reconnecting to.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<tonic::body::Body>) -> Self::Future {
        Box::pin(self.clone().call(request))
    }
}

async fn connect(member: &Member) -> Result<Connection, String> {
    let tcp = TcpStream::connect((member.host.as_str(), member.port))
        .await
        .map_err(|e| e.to_string())?;
    let _ = tcp.set_nodelay(true);
    match &member.tls {
        Some((config, name)) => {
            let tls = tokio_rustls::TlsConnector::from(config.clone())
                .connect(name.clone(), tcp)
                .await
                .map_err(|e| format!("TLS: {e}"))?;
            handshake(tls, member.keep_alive).await
        }
        None => handshake(tcp, member.keep_alive).await,
    }
}

async fn handshake<T>(io: T, keep_alive: KeepAlive) -> Result<Connection, String>
where
    T: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (send, mut connection) = h2::client::Builder::new()
        .initial_window_size(STREAM_WINDOW)
        .initial_connection_window_size(CONNECTION_WINDOW)
        .enable_push(false)
        .handshake::<T, Bytes>(io)
        .await
        .map_err(|e| format!("HTTP/2: {e}"))?;
    let closed = Arc::new(AtomicBool::new(false));
    let pings = connection.ping_pong();
    let closed_when_done = closed.clone();
    tokio::spawn(async move {
        tokio::select! {
            result = &mut connection => {
                if let Err(e) = result {
                    tracing::debug!(error = %e, "etcd connection ended");
                }
            }
            () = ping_until_unanswered(pings, keep_alive) => {
                tracing::warn!(
                    timeout = ?keep_alive.timeout,
                    "etcd member did not answer a ping; closing its connection"
                );
            }
        }
        // Dropping the connection fails the calls still waiting on it.
        closed_when_done.store(true, Ordering::Release);
    });
    Ok(Connection { send, closed })
}

/// Returns when a ping goes unanswered.
async fn ping_until_unanswered(pings: Option<h2::PingPong>, keep_alive: KeepAlive) {
    let Some(mut pings) = pings else {
        return std::future::pending().await;
    };
    loop {
        tokio::time::sleep(keep_alive.interval).await;
        match tokio::time::timeout(keep_alive.timeout, pings.ping(h2::Ping::opaque())).await {
            Ok(Ok(_)) => {}
            // The connection itself ended; its own branch reports that.
            Ok(Err(_)) => return std::future::pending().await,
            Err(_) => return,
        }
    }
}

/// Forwards the rest of a streaming call's body.
async fn pipe(mut body: tonic::body::Body, mut stream: h2::SendStream<Bytes>) {
    while let Some(next) = body.frame().await {
        match next {
            Ok(frame) => {
                if let Ok(data) = frame.into_data() {
                    if stream.send_data(data, false).is_err() {
                        return;
                    }
                }
            }
            Err(_) => {
                stream.send_reset(h2::Reason::CANCEL);
                return;
            }
        }
    }
    let _ = stream.send_data(Bytes::new(), true);
}

/// A response body read from h2, handing back flow-control capacity as
/// it is consumed.
struct Received {
    stream: h2::RecvStream,
    data_done: bool,
}

impl Received {
    fn new(response: h2::RecvStream) -> Self {
        Self {
            stream: response,
            data_done: false,
        }
    }
}

impl Body for Received {
    type Data = Bytes;
    type Error = tonic::Status;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, tonic::Status>>> {
        if !self.data_done {
            match self.stream.poll_data(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Some(Ok(data))) => {
                    let _ = self.stream.flow_control().release_capacity(data.len());
                    return Poll::Ready(Some(Ok(Frame::data(data))));
                }
                Poll::Ready(Some(Err(e))) => return Poll::Ready(Some(Err(status_of(e)))),
                Poll::Ready(None) => self.data_done = true,
            }
        }
        match self.stream.poll_trailers(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Ok(Some(trailers))) => Poll::Ready(Some(Ok(Frame::trailers(trailers)))),
            Poll::Ready(Ok(None)) => Poll::Ready(None),
            Poll::Ready(Err(e)) => Poll::Ready(Some(Err(status_of(e)))),
        }
    }

    fn is_end_stream(&self) -> bool {
        self.stream.is_end_stream()
    }
}

/// The connection is gone (its socket failed, or the peer sent GOAWAY),
/// as opposed to one stream being reset or a request refused.
fn connection_lost(e: &h2::Error) -> bool {
    e.is_io() || e.is_go_away()
}

fn not_sent(message: String) -> tonic::Status {
    let mut status = tonic::Status::unavailable(message);
    status.set_source(Arc::new(NotSent));
    status
}

/// gRPC's reading of an HTTP/2 failure after the request was sent: a lost
/// connection is Unavailable, and a reset stream's reason is read as in
/// gRPC's HTTP/2 error table (as tonic reads it), except that a reason
/// outside it, or none, reads Internal.
fn status_of(e: h2::Error) -> tonic::Status {
    let code = match e.reason() {
        _ if connection_lost(&e) => tonic::Code::Unavailable,
        Some(h2::Reason::REFUSED_STREAM) => tonic::Code::Unavailable,
        Some(h2::Reason::CANCEL) => tonic::Code::Cancelled,
        Some(h2::Reason::ENHANCE_YOUR_CALM) => tonic::Code::ResourceExhausted,
        Some(h2::Reason::INADEQUATE_SECURITY) => tonic::Code::PermissionDenied,
        Some(_) => tonic::Code::Internal,
        // Neither the peer nor the connection: a request h2 would not send.
        None => tonic::Code::Internal,
    };
    tonic::Status::new(code, format!("etcd connection: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    fn tls() -> Arc<rustls::ClientConfig> {
        Arc::new(
            rustls::ClientConfig::builder_with_provider(Arc::new(
                rustls::crypto::ring::default_provider(),
            ))
            .with_safe_default_protocol_versions()
            .expect("protocol versions")
            .with_root_certificates(rustls::RootCertStore::empty())
            .with_no_client_auth(),
        )
    }

    async fn loopback_listener() -> (tokio::net::TcpListener, u16) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let port = listener.local_addr().expect("address").port();
        (listener, port)
    }

    fn local_member(port: u16) -> MemberChannel {
        MemberChannel::new(&format!("http://127.0.0.1:{port}"), None).expect("channel")
    }

    async fn client_of(channel: MemberChannel) -> etcd_client::Client {
        etcd_client::Client::from_channel(channel.into_etcd_channel(), None)
            .await
            .expect("client")
    }

    #[test]
    fn endpoints_are_read_as_etcd_client_reads_them() {
        let plain = MemberChannel::new("http://127.0.0.1:2379", None).expect("http");
        assert_eq!(plain.member.authority.as_str(), "127.0.0.1:2379");
        assert!(plain.member.tls.is_none());
        let bare = MemberChannel::new("10.0.0.1:2379", Some(tls())).expect("bare with TLS");
        assert_eq!(bare.member.scheme, Scheme::HTTPS);
        assert_eq!(bare.member.port, 2379);
        let named = MemberChannel::new("https://etcd-0.example:12379", Some(tls())).expect("https");
        assert_eq!(named.member.host, "etcd-0.example");
        let v6 = MemberChannel::new("http://[::1]:2379", None).expect("IPv6");
        assert_eq!(v6.member.host, "::1");

        let err = |endpoint: &str, tls| MemberChannel::new(endpoint, tls).err().unwrap_or_default();
        assert!(err("https://127.0.0.1:2379", None).contains("give --etcd-cafile"));
        assert!(err("http://127.0.0.1:2379", Some(tls())).contains("use https://"));
        assert!(err("grpc://127.0.0.1:2379", None).contains("scheme"));
    }

    /// A member that cannot be reached fails the call as Unavailable and
    /// marks it as never sent, which is what lets a write move on to the
    /// next member.
    #[tokio::test]
    async fn an_unreachable_member_fails_calls_as_not_sent() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("address").port();
        drop(listener);
        let client = client_of(local_member(port)).await;
        let err = client
            .kv_client()
            .get("k", None)
            .await
            .expect_err("nothing listens");
        let etcd_client::Error::GRpcStatus(status) = &err else {
            panic!("not a gRPC status: {err}");
        };
        assert_eq!(status.code(), tonic::Code::Unavailable, "{status}");
        assert!(super::super::etcd::never_sent(&err), "{err}");
    }

    /// The point of this transport: a unary call is its HEADERS and one
    /// DATA frame that ends the stream. hyper under tonic sent a third,
    /// empty DATA frame to end it, and flushed each frame on its own.
    #[tokio::test]
    async fn a_unary_call_is_headers_and_one_final_data_frame() {
        let (listener, port) = loopback_listener().await;
        let member = tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.expect("accept");
            let mut preface = [0u8; 24];
            socket.read_exact(&mut preface).await.expect("preface");
            assert_eq!(&preface, b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
            // Our SETTINGS, then the ACK of the client's.
            socket
                .write_all(&[0, 0, 0, 4, 0, 0, 0, 0, 0])
                .await
                .expect("settings");
            socket
                .write_all(&[0, 0, 0, 4, 1, 0, 0, 0, 0])
                .await
                .expect("ack");
            let mut frames = Vec::new();
            loop {
                let mut header = [0u8; 9];
                socket.read_exact(&mut header).await.expect("frame header");
                let length = u32::from_be_bytes([0, header[0], header[1], header[2]]) as usize;
                let (kind, flags) = (header[3], header[4]);
                let stream =
                    u32::from_be_bytes([header[5], header[6], header[7], header[8]]) & 0x7fff_ffff;
                let mut payload = vec![0u8; length];
                socket
                    .read_exact(&mut payload)
                    .await
                    .expect("frame payload");
                if stream == 1 {
                    frames.push((kind, flags & 0x1 == 0x1, length));
                    if flags & 0x1 == 0x1 {
                        return frames;
                    }
                }
            }
        });
        let client = client_of(local_member(port)).await;
        let call = tokio::spawn(async move { client.kv_client().put("key", "value", None).await });
        let frames = member.await.expect("member");
        call.abort();
        const HEADERS: u8 = 1;
        const DATA: u8 = 0;
        assert_eq!(frames.len(), 2, "{frames:?}");
        assert_eq!((frames[0].0, frames[0].1), (HEADERS, false), "{frames:?}");
        // The gRPC message: 5 bytes of framing and a PutRequest.
        assert_eq!(frames[1].0, DATA, "{frames:?}");
        assert!(frames[1].1, "the message ends the stream: {frames:?}");
        assert!(frames[1].2 > 5, "{frames:?}");
    }

    /// A member that stops answering (a hung process, a dropped network)
    /// fails the calls waiting on it once a ping goes unanswered, instead of
    /// holding them, and the next call connects again.
    #[tokio::test]
    async fn a_member_that_stops_answering_fails_its_calls_and_is_reconnected() {
        let (listener, port) = loopback_listener().await;
        let (accepted, mut connections) = tokio::sync::mpsc::unbounded_channel();
        tokio::spawn(async move {
            // Completes the HTTP/2 handshake, then reads and never answers.
            while let Ok((mut socket, _)) = listener.accept().await {
                let _ = accepted.send(());
                tokio::spawn(async move {
                    let _ = socket.write_all(&[0, 0, 0, 4, 0, 0, 0, 0, 0]).await;
                    let mut sink = [0u8; 4096];
                    while socket.read(&mut sink).await.is_ok_and(|n| n > 0) {}
                });
            }
        });
        let mut channel = local_member(port);
        Arc::get_mut(&mut channel.member)
            .expect("one owner")
            .keep_alive = KeepAlive {
            interval: Duration::from_millis(100),
            timeout: Duration::from_millis(200),
        };
        let client = client_of(channel).await;
        let started = std::time::Instant::now();
        let err = tokio::time::timeout(Duration::from_secs(10), client.kv_client().get("k", None))
            .await
            .expect("the call fails instead of waiting")
            .expect_err("nothing answers");
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
        let etcd_client::Error::GRpcStatus(status) = &err else {
            panic!("not a gRPC status: {err}");
        };
        assert_eq!(status.code(), tonic::Code::Unavailable, "{status}");
        assert!(!super::super::etcd::never_sent(&err), "it was sent: {err}");
        connections.recv().await.expect("first connection");
        let _ =
            tokio::time::timeout(Duration::from_secs(10), client.kv_client().get("k", None)).await;
        tokio::time::timeout(Duration::from_secs(1), connections.recv())
            .await
            .expect("the next call connects again")
            .expect("second connection");
    }
}
