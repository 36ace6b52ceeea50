//! The client side of SPDY/3.1 as a kubelet's streaming server speaks it
//! (remote command and port forwarding run over it): just the frames a
//! translator needs. Header blocks are sent as stored (uncompressed)
//! deflate blocks of one zlib stream, which every SPDY reader inflates;
//! the streams a kubelet opens or answers are read for their ids only,
//! so nothing here needs the protocol's compression dictionary.

use tokio::io::{AsyncRead, AsyncReadExt};

pub const SYN_STREAM: u16 = 1;
pub const PING: u16 = 6;
pub const GOAWAY: u16 = 7;
pub const FLAG_FIN: u8 = 1;
/// A frame longer than this is a broken peer, not data to buffer.
const MAX_FRAME: usize = 16 << 20;

/// One frame read from the peer.
#[derive(Debug, PartialEq, Eq)]
pub enum Frame {
    Control {
        kind: u16,
        flags: u8,
        payload: Vec<u8>,
    },
    Data {
        stream: u32,
        flags: u8,
        payload: Vec<u8>,
    },
}

/// Reads the next frame; None at the end of the connection.
pub async fn read_frame<R: AsyncRead + Unpin>(reader: &mut R) -> std::io::Result<Option<Frame>> {
    let mut head = [0u8; 8];
    match reader.read_exact(&mut head).await {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    let flags = head[4];
    let length = u32::from_be_bytes([0, head[5], head[6], head[7]]) as usize;
    if length > MAX_FRAME {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("a SPDY frame of {length} bytes"),
        ));
    }
    let mut payload = vec![0u8; length];
    reader.read_exact(&mut payload).await?;
    Ok(Some(if head[0] & 0x80 != 0 {
        Frame::Control {
            kind: u16::from_be_bytes([head[2], head[3]]),
            flags,
            payload,
        }
    } else {
        Frame::Data {
            stream: u32::from_be_bytes([head[0] & 0x7f, head[1], head[2], head[3]]),
            flags,
            payload,
        }
    }))
}

fn control(kind: u16, flags: u8, payload: &[u8]) -> Vec<u8> {
    let mut frame = Vec::with_capacity(8 + payload.len());
    frame.extend_from_slice(&0x8003u16.to_be_bytes());
    frame.extend_from_slice(&kind.to_be_bytes());
    frame.push(flags);
    frame.extend_from_slice(&(payload.len() as u32).to_be_bytes()[1..]);
    frame.extend_from_slice(payload);
    frame
}

/// The writer's half of the header-compression stream.
#[derive(Default)]
pub struct HeaderBlocks {
    started: bool,
}

impl HeaderBlocks {
    /// `headers` as the next piece of the zlib stream: the stream's header
    /// first, then a non-final stored block.
    fn encode(&mut self, headers: &[(&str, &str)]) -> Vec<u8> {
        let mut raw = Vec::new();
        raw.extend_from_slice(&(headers.len() as u32).to_be_bytes());
        for (name, value) in headers {
            for text in [name, value] {
                raw.extend_from_slice(&(text.len() as u32).to_be_bytes());
                raw.extend_from_slice(text.as_bytes());
            }
        }
        let mut block = Vec::with_capacity(raw.len() + 7);
        if !self.started {
            // zlib: deflate, 32 KiB window, no preset dictionary.
            block.extend_from_slice(&[0x78, 0x01]);
            self.started = true;
        }
        let length = raw.len() as u16;
        block.push(0x00);
        block.extend_from_slice(&length.to_le_bytes());
        block.extend_from_slice(&(!length).to_le_bytes());
        block.extend_from_slice(&raw);
        block
    }

    /// A SYN_STREAM opening stream `id` with `headers`.
    pub fn syn_stream(&mut self, id: u32, headers: &[(&str, &str)]) -> Vec<u8> {
        let mut payload = Vec::new();
        payload.extend_from_slice(&id.to_be_bytes());
        payload.extend_from_slice(&0u32.to_be_bytes());
        // Priority 0, credential slot 0.
        payload.extend_from_slice(&[0, 0]);
        payload.extend_from_slice(&self.encode(headers));
        control(SYN_STREAM, 0, &payload)
    }
}

/// A DATA frame on `stream`; `fin` half-closes it.
pub fn data(stream: u32, payload: &[u8], fin: bool) -> Vec<u8> {
    let mut frame = Vec::with_capacity(8 + payload.len());
    frame.extend_from_slice(&(stream & 0x7fff_ffff).to_be_bytes());
    frame.push(if fin { FLAG_FIN } else { 0 });
    frame.extend_from_slice(&(payload.len() as u32).to_be_bytes()[1..]);
    frame.extend_from_slice(payload);
    frame
}

/// The answer to a PING: the same frame back.
pub fn ping(payload: &[u8]) -> Vec<u8> {
    control(PING, 0, payload)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The stream a control frame is about.
    fn stream_of(payload: &[u8]) -> Option<u32> {
        let id: [u8; 4] = payload.get(..4)?.try_into().ok()?;
        Some(u32::from_be_bytes(id) & 0x7fff_ffff)
    }

    #[tokio::test]
    async fn frames_read_back_as_written() {
        let mut blocks = HeaderBlocks::default();
        let mut wire = blocks.syn_stream(1, &[("streamtype", "error")]);
        wire.extend(data(1, b"hello", true));
        let mut reader = &wire[..];
        let Some(Frame::Control { kind, payload, .. }) = read_frame(&mut reader).await.unwrap()
        else {
            panic!("a control frame");
        };
        assert_eq!((kind, stream_of(&payload)), (SYN_STREAM, Some(1)));
        // The header block is the zlib stream's header and a stored block.
        assert_eq!(&payload[10..12], &[0x78, 0x01]);
        let block = &payload[12..];
        assert_eq!(block[0], 0);
        let length = u16::from_le_bytes([block[1], block[2]]) as usize;
        assert_eq!(&block[5..5 + length][..4], &1u32.to_be_bytes());
        assert_eq!(
            read_frame(&mut reader).await.unwrap(),
            Some(Frame::Data {
                stream: 1,
                flags: FLAG_FIN,
                payload: b"hello".to_vec()
            })
        );
        assert_eq!(read_frame(&mut reader).await.unwrap(), None);
        // Later blocks continue the same stream: no second zlib header.
        assert_eq!(blocks.syn_stream(3, &[])[18], 0x00);
    }
}
