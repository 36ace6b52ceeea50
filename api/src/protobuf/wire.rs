//! Protobuf wire format: varints, fixed-width numbers, length-delimited
//! chunks. Every read is bounds-checked; request bodies are untrusted.

/// Why bytes could not be read; the caller adds which message it was.
pub(super) type WireResult<T> = Result<T, &'static str>;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum WireType {
    Varint,
    Fixed64,
    Len,
    StartGroup,
    EndGroup,
    Fixed32,
}

impl WireType {
    fn from_bits(bits: u64) -> WireResult<Self> {
        Ok(match bits {
            0 => WireType::Varint,
            1 => WireType::Fixed64,
            2 => WireType::Len,
            3 => WireType::StartGroup,
            4 => WireType::EndGroup,
            5 => WireType::Fixed32,
            _ => return Err("invalid wire type"),
        })
    }
}

/// Groups are long deprecated, but an unknown field may still be one; this
/// bounds how deep skipping them may recurse.
const MAX_GROUP_DEPTH: usize = 32;
const MAX_TAG: u64 = (1 << 29) - 1;

pub(super) struct Reader<'a> {
    buf: &'a [u8],
}

impl<'a> Reader<'a> {
    pub(super) fn new(buf: &'a [u8]) -> Self {
        Reader { buf }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    pub(super) fn varint(&mut self) -> WireResult<u64> {
        let mut value: u64 = 0;
        for (i, byte) in self.buf.iter().enumerate().take(10) {
            let bits = u64::from(byte & 0x7f);
            // The tenth byte may only contribute the top bit of a u64.
            if i == 9 && *byte > 1 {
                return Err("varint overflows 64 bits");
            }
            value |= bits << (7 * i);
            if byte & 0x80 == 0 {
                self.buf = &self.buf[i + 1..];
                return Ok(value);
            }
        }
        if self.buf.len() >= 10 {
            Err("varint longer than 10 bytes")
        } else {
            Err("truncated varint")
        }
    }

    pub(super) fn key(&mut self) -> WireResult<(u32, WireType)> {
        let key = self.varint()?;
        let tag = key >> 3;
        if tag == 0 || tag > MAX_TAG {
            return Err("invalid field number");
        }
        let tag = u32::try_from(tag).map_err(|_| "invalid field number")?;
        Ok((tag, WireType::from_bits(key & 7)?))
    }

    pub(super) fn fixed32(&mut self) -> WireResult<u32> {
        let (head, rest) = self
            .buf
            .split_first_chunk::<4>()
            .ok_or("truncated fixed32")?;
        self.buf = rest;
        Ok(u32::from_le_bytes(*head))
    }

    pub(super) fn fixed64(&mut self) -> WireResult<u64> {
        let (head, rest) = self
            .buf
            .split_first_chunk::<8>()
            .ok_or("truncated fixed64")?;
        self.buf = rest;
        Ok(u64::from_le_bytes(*head))
    }

    pub(super) fn bytes(&mut self) -> WireResult<&'a [u8]> {
        let len = usize::try_from(self.varint()?).map_err(|_| "length overflows")?;
        if len > self.buf.len() {
            return Err("length exceeds the remaining bytes");
        }
        let (chunk, rest) = self.buf.split_at(len);
        self.buf = rest;
        Ok(chunk)
    }

    /// Skips the value of a field the schema does not know.
    pub(super) fn skip(&mut self, wire_type: WireType, tag: u32) -> WireResult<()> {
        self.skip_at(wire_type, tag, 0)
    }

    fn skip_at(&mut self, wire_type: WireType, tag: u32, depth: usize) -> WireResult<()> {
        match wire_type {
            WireType::Varint => self.varint().map(drop),
            WireType::Fixed64 => self.fixed64().map(drop),
            WireType::Fixed32 => self.fixed32().map(drop),
            WireType::Len => self.bytes().map(drop),
            WireType::StartGroup => {
                if depth >= MAX_GROUP_DEPTH {
                    return Err("groups nested too deeply");
                }
                loop {
                    if self.is_empty() {
                        return Err("unterminated group");
                    }
                    let (inner_tag, inner_type) = self.key()?;
                    if inner_type == WireType::EndGroup {
                        return if inner_tag == tag {
                            Ok(())
                        } else {
                            Err("mismatched end of group")
                        };
                    }
                    self.skip_at(inner_type, inner_tag, depth + 1)?;
                }
            }
            WireType::EndGroup => Err("unexpected end of group"),
        }
    }
}

/// Appends `value` as a base-128 varint.
pub(super) fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        // Truncation keeps the low seven bits, which is the point.
        out.push((value as u8 & 0x7f) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// Appends a field key: the field number and the wire type's bits.
pub(super) fn put_key(out: &mut Vec<u8>, tag: u32, wire_type: WireType) {
    let bits: u64 = match wire_type {
        WireType::Varint => 0,
        WireType::Fixed64 => 1,
        WireType::Len => 2,
        WireType::StartGroup => 3,
        WireType::EndGroup => 4,
        WireType::Fixed32 => 5,
    };
    put_varint(out, (u64::from(tag) << 3) | bits);
}

/// Appends a length-delimited chunk: its length, then the bytes.
pub(super) fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    put_varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}
