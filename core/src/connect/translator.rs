//! `pods/exec` and `pods/attach` over WebSocket (`v5.channel.k8s.io`, what
//! kubectl asks for first) translated to the SPDY remote command protocol
//! a kubelet speaks, as upstream's StreamTranslatorProxy does: Capstan
//! answers the WebSocket itself, opens the streams the request asks for
//! on the kubelet's SPDY connection, and carries each channel's bytes
//! across until the kubelet ends the session.

use futures::{SinkExt, StreamExt};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio_tungstenite::tungstenite::protocol::{frame::coding::CloseCode, CloseFrame, Role};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::WebSocketStream;

use super::spdy::{self, Frame, HeaderBlocks};

/// The WebSocket subprotocol translated.
pub const WEBSOCKET_PROTOCOL: &str = "v5.channel.k8s.io";
/// What Capstan offers the kubelet on the SPDY side.
pub const SPDY_PROTOCOL: &str = "v4.channel.k8s.io";

const STDIN: u8 = 0;
const STDOUT: u8 = 1;
const STDERR: u8 = 2;
const ERROR: u8 = 3;
const RESIZE: u8 = 4;
/// v5's signal that the client closed one of its streams.
const CLOSE: u8 = 255;

/// The streams a remote command request asks for (its query's `stdin`,
/// `stdout`, `stderr` and `tty`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RemoteCommandStreams {
    pub stdin: bool,
    pub stdout: bool,
    pub stderr: bool,
    pub tty: bool,
}

impl RemoteCommandStreams {
    pub fn from_query(query: &[(String, String)]) -> Self {
        let flag = |name: &str| {
            query
                .iter()
                .any(|(key, value)| key == name && matches!(value.as_str(), "1" | "true" | "True"))
        };
        let tty = flag("tty");
        Self {
            stdin: flag("stdin"),
            stdout: flag("stdout"),
            // A terminal merges stderr into stdout.
            stderr: flag("stderr") && !tty,
            tty,
        }
    }

    /// The channels to open, in the order upstream's client opens them,
    /// with the SPDY stream each gets (odd ids, from 1).
    fn opened(&self) -> Vec<(u8, &'static str, u32)> {
        let wanted = [
            (ERROR, "error", true),
            (STDIN, "stdin", self.stdin),
            (STDOUT, "stdout", self.stdout),
            (STDERR, "stderr", self.stderr),
            (RESIZE, "resize", self.tty),
        ];
        wanted
            .into_iter()
            .filter(|(_, _, on)| *on)
            .enumerate()
            .map(|(i, (channel, name, _))| (channel, name, 2 * i as u32 + 1))
            .collect()
    }
}

/// The WebSocket subprotocol of `pods/portforward` tunnelled through to
/// the kubelet's SPDY.
pub const TUNNELING_PROTOCOL: &str = "SPDY/3.1+portforward.k8s.io";
/// What the tunnel asks the kubelet to speak.
pub const PORT_FORWARD_PROTOCOL: &str = "portforward.k8s.io";

/// `pods/portforward` over WebSocket, as upstream's tunneling handler
/// carries it: the client speaks SPDY inside binary messages, which go to
/// the kubelet's SPDY connection as bytes, and its bytes come back as
/// messages, until either side ends.
pub async fn tunnel<C, K>(client: C, kubelet: K)
where
    C: AsyncRead + AsyncWrite + Unpin + Send,
    K: AsyncRead + AsyncWrite + Unpin + Send,
{
    use tokio::io::AsyncReadExt;
    let websocket = WebSocketStream::from_raw_socket(client, Role::Server, None).await;
    let (mut to_client, mut from_client) = websocket.split();
    let (mut from_kubelet, mut to_kubelet) = tokio::io::split(kubelet);
    let mut buffer = vec![0u8; 32 * 1024];
    loop {
        tokio::select! {
            message = from_client.next() => match message {
                Some(Ok(Message::Binary(bytes))) => {
                    if to_kubelet.write_all(&bytes).await.is_err() {
                        break;
                    }
                }
                Some(Ok(Message::Close(_))) | Some(Err(_)) | None => break,
                Some(Ok(_)) => {}
            },
            read = from_kubelet.read(&mut buffer) => match read {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if to_client.send(Message::binary(buffer[..n].to_vec())).await.is_err() {
                        return;
                    }
                }
            },
        }
    }
    finish(&mut to_kubelet, &mut to_client).await;
}

/// Ends both sides: the kubelet's write half, and the WebSocket with a
/// normal close.
async fn finish<K, S>(to_kubelet: &mut K, to_client: &mut S)
where
    K: AsyncWrite + Unpin,
    S: futures::Sink<Message> + Unpin,
{
    let _ = to_kubelet.shutdown().await;
    let _ = to_client
        .send(Message::Close(Some(CloseFrame {
            code: CloseCode::Normal,
            reason: "".into(),
        })))
        .await;
    let _ = to_client.close().await;
}

/// The `Sec-WebSocket-Accept` answering a client's `Sec-WebSocket-Key`.
pub fn websocket_accept(key: &[u8]) -> String {
    tokio_tungstenite::tungstenite::handshake::derive_accept_key(key)
}

/// Carries a remote command between the client's upgraded connection
/// (its WebSocket handshake already answered) and the kubelet's
/// (switched to SPDY), until either ends.
pub async fn translate<C, K>(client: C, kubelet: K, streams: RemoteCommandStreams)
where
    C: AsyncRead + AsyncWrite + Unpin + Send,
    K: AsyncRead + AsyncWrite + Unpin + Send,
{
    let websocket = WebSocketStream::from_raw_socket(client, Role::Server, None).await;
    let (mut to_client, mut from_client) = websocket.split();
    let (mut from_kubelet, mut to_kubelet) = tokio::io::split(kubelet);
    let opened = streams.opened();
    let mut blocks = HeaderBlocks::default();
    let mut opening = Vec::new();
    for (_, name, id) in &opened {
        opening.extend(blocks.syn_stream(*id, &[("streamtype", name)]));
    }
    if to_kubelet.write_all(&opening).await.is_err() {
        return;
    }
    let stream_of = |channel: u8| opened.iter().find(|(c, _, _)| *c == channel).map(|o| o.2);
    let channel_of = |stream: u32| opened.iter().find(|(_, _, s)| *s == stream).map(|o| o.0);
    loop {
        tokio::select! {
            message = from_client.next() => {
                let frame = match message {
                    Some(Ok(Message::Binary(bytes))) => match bytes.split_first() {
                        Some((&CLOSE, rest)) => rest
                            .first()
                            .and_then(|channel| stream_of(*channel))
                            .map(|stream| spdy::data(stream, &[], true)),
                        Some((channel, payload)) if *channel == STDIN || *channel == RESIZE => {
                            stream_of(*channel).map(|stream| spdy::data(stream, payload, false))
                        }
                        _ => None,
                    },
                    Some(Ok(_)) => None,
                    Some(Err(_)) | None => break,
                };
                if let Some(frame) = frame {
                    if to_kubelet.write_all(&frame).await.is_err() {
                        break;
                    }
                }
            }
            frame = spdy::read_frame(&mut from_kubelet) => {
                match frame {
                    Ok(Some(Frame::Data { stream, payload, .. })) => {
                        let Some(channel) = channel_of(stream) else { continue };
                        if payload.is_empty() || !matches!(channel, STDOUT | STDERR | ERROR) {
                            continue;
                        }
                        let mut message = Vec::with_capacity(payload.len() + 1);
                        message.push(channel);
                        message.extend_from_slice(&payload);
                        if to_client.send(Message::binary(message)).await.is_err() {
                            return;
                        }
                    }
                    Ok(Some(Frame::Control { kind: spdy::PING, payload, .. })) => {
                        if to_kubelet.write_all(&spdy::ping(&payload)).await.is_err() {
                            break;
                        }
                    }
                    Ok(Some(Frame::Control { kind: spdy::GOAWAY, .. })) | Ok(None) | Err(_) => break,
                    Ok(Some(Frame::Control { .. })) => {}
                }
            }
        }
    }
    finish(&mut to_kubelet, &mut to_client).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn streams_open_in_upstreams_order_with_odd_ids() {
        let streams = RemoteCommandStreams::from_query(&query(&[
            ("stdin", "true"),
            ("stdout", "true"),
            ("stderr", "true"),
        ]));
        assert_eq!(
            streams.opened(),
            [
                (ERROR, "error", 1),
                (STDIN, "stdin", 3),
                (STDOUT, "stdout", 5),
                (STDERR, "stderr", 7)
            ]
        );
        let terminal = RemoteCommandStreams::from_query(&query(&[
            ("stdin", "1"),
            ("stdout", "1"),
            ("stderr", "1"),
            ("tty", "1"),
        ]));
        assert_eq!(
            terminal.opened(),
            [
                (ERROR, "error", 1),
                (STDIN, "stdin", 3),
                (STDOUT, "stdout", 5),
                (RESIZE, "resize", 7)
            ]
        );
    }

    #[tokio::test]
    async fn channels_cross_between_the_websocket_and_spdy() {
        let (client_side, server_side) = tokio::io::duplex(1 << 16);
        let (kubelet_side, capstan_side) = tokio::io::duplex(1 << 16);
        let streams = RemoteCommandStreams::from_query(&query(&[("stdin", "1"), ("stdout", "1")]));
        let translating = tokio::spawn(translate(server_side, capstan_side, streams));
        let mut client = WebSocketStream::from_raw_socket(client_side, Role::Client, None).await;
        let (mut kubelet_read, mut kubelet_write) = tokio::io::split(kubelet_side);
        // Three SYN_STREAMs: error, stdin, stdout.
        for _ in 0..3 {
            assert!(matches!(
                spdy::read_frame(&mut kubelet_read).await.unwrap(),
                Some(Frame::Control {
                    kind: spdy::SYN_STREAM,
                    ..
                })
            ));
        }
        client
            .send(Message::binary(vec![STDIN, b'h', b'i']))
            .await
            .unwrap();
        client
            .send(Message::binary(vec![CLOSE, STDIN]))
            .await
            .unwrap();
        assert_eq!(
            spdy::read_frame(&mut kubelet_read).await.unwrap(),
            Some(Frame::Data {
                stream: 3,
                flags: 0,
                payload: b"hi".to_vec()
            })
        );
        assert_eq!(
            spdy::read_frame(&mut kubelet_read).await.unwrap(),
            Some(Frame::Data {
                stream: 3,
                flags: spdy::FLAG_FIN,
                payload: vec![]
            })
        );
        kubelet_write
            .write_all(&spdy::data(5, b"hi", true))
            .await
            .unwrap();
        kubelet_write
            .write_all(&spdy::data(1, br#"{"status":"Success"}"#, true))
            .await
            .unwrap();
        kubelet_write.shutdown().await.unwrap();
        drop(kubelet_write);
        assert_eq!(
            client.next().await.unwrap().unwrap(),
            Message::binary(vec![STDOUT, b'h', b'i'])
        );
        let status = client.next().await.unwrap().unwrap().into_data();
        assert_eq!(status[0], ERROR);
        assert!(matches!(
            client.next().await.unwrap().unwrap(),
            Message::Close(_)
        ));
        drop(kubelet_read);
        translating.await.unwrap();
    }
}
