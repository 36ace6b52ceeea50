//! Range allocators kept in storage, as upstream's RangeAllocation objects:
//! a bitmap per range under one key, changed only by compare-and-swap, so
//! several replicas allocating at once never hand out the same value.

use std::net::Ipv4Addr;
use std::sync::Arc;

use base64::Engine as _;
use rand::Rng;
use serde_json::{json, Value};

use crate::error::{ApiError, ApiResult};
use crate::storage::{Storage, StorageError};

/// Attempts before a persistently contended allocation gives up.
const MAX_ATTEMPTS: usize = 64;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AllocationError {
    #[error("provided {what} is already allocated")]
    Taken { what: &'static str },
    #[error("provided {what} is not in the valid range. The range of valid {what}s is {range}")]
    OutOfRange { what: &'static str, range: String },
    #[error("range is full")]
    Full,
}

/// A contiguous range of `size` values, offsets 0..size, persisted at `key`.
pub struct RangeAllocator {
    storage: Arc<dyn Storage>,
    key: String,
    range: String,
    size: u64,
    /// Offsets never handed out (a subnet's network and broadcast address).
    reserved: Vec<u64>,
}

fn decode_bitmap(value: &Value) -> Vec<u8> {
    value
        .get("data")
        .and_then(Value::as_str)
        .and_then(|d| base64::engine::general_purpose::STANDARD.decode(d).ok())
        .unwrap_or_default()
}

pub(crate) fn is_set(bitmap: &[u8], i: u64) -> bool {
    bitmap
        .get((i / 8) as usize)
        .is_some_and(|b| b & (1 << (i % 8)) != 0)
}

pub(crate) fn set(bitmap: &mut Vec<u8>, i: u64, on: bool) {
    let byte = (i / 8) as usize;
    if bitmap.len() <= byte {
        bitmap.resize(byte + 1, 0);
    }
    if on {
        bitmap[byte] |= 1 << (i % 8);
    } else {
        bitmap[byte] &= !(1 << (i % 8));
    }
}

impl RangeAllocator {
    pub fn new(
        storage: Arc<dyn Storage>,
        key: String,
        range: String,
        size: u64,
        reserved: Vec<u64>,
    ) -> Self {
        Self {
            storage,
            key,
            range,
            size,
            reserved,
        }
    }

    pub fn range(&self) -> &str {
        &self.range
    }

    /// Allocates `wanted`, or any free offset when None.
    pub async fn allocate(
        &self,
        wanted: Option<u64>,
        what: &'static str,
    ) -> ApiResult<Result<u64, AllocationError>> {
        if let Some(w) = wanted {
            if w >= self.size || self.reserved.contains(&w) {
                return Ok(Err(AllocationError::OutOfRange {
                    what,
                    range: self.range.clone(),
                }));
            }
        }
        for _ in 0..MAX_ATTEMPTS {
            let (revision, mut bitmap) = self.snapshot().await?;
            let chosen = match wanted {
                Some(w) if is_set(&bitmap, w) => return Ok(Err(AllocationError::Taken { what })),
                Some(w) => w,
                None => {
                    // Start at a random offset so replicas rarely contend.
                    let start = rand::rng().random_range(0..self.size);
                    let free = (0..self.size)
                        .map(|i| (start + i) % self.size)
                        .find(|i| !is_set(&bitmap, *i) && !self.reserved.contains(i));
                    match free {
                        Some(i) => i,
                        None => return Ok(Err(AllocationError::Full)),
                    }
                }
            };
            set(&mut bitmap, chosen, true);
            if self.replace(revision, &bitmap).await? {
                return Ok(Ok(chosen));
            }
        }
        Err(ApiError::internal(format!(
            "allocating from {} kept conflicting",
            self.range
        )))
    }

    pub async fn release(&self, offset: u64) -> ApiResult<()> {
        for _ in 0..MAX_ATTEMPTS {
            let (Some(revision), mut bitmap) = self.snapshot().await? else {
                return Ok(());
            };
            if !is_set(&bitmap, offset) {
                return Ok(());
            }
            set(&mut bitmap, offset, false);
            if self.replace(Some(revision), &bitmap).await? {
                return Ok(());
            }
        }
        Err(ApiError::internal(format!(
            "releasing into {} kept conflicting",
            self.range
        )))
    }

    /// The stored bitmap and the revision it was read at (None when it was
    /// never written).
    pub async fn snapshot(&self) -> ApiResult<(Option<i64>, Vec<u8>)> {
        let current = self
            .storage
            .get(&self.key)
            .await
            .map_err(ApiError::internal)?;
        Ok(match current {
            Some(kv) => (
                Some(kv.mod_revision),
                serde_json::from_slice::<Value>(&kv.value)
                    .map(|v| decode_bitmap(&v))
                    .unwrap_or_default(),
            ),
            None => (None, Vec::new()),
        })
    }

    /// Writes `bitmap` if the stored one is still at `expected` (None: not
    /// written yet), by compare-and-swap; false when another write came
    /// first.
    pub async fn replace(&self, expected: Option<i64>, bitmap: &[u8]) -> ApiResult<bool> {
        let doc = json!({
            "kind": "RangeAllocation",
            "apiVersion": "v1",
            "range": self.range,
            "data": base64::engine::general_purpose::STANDARD.encode(bitmap),
        });
        let bytes = serde_json::to_vec(&doc).map_err(ApiError::internal)?;
        let outcome = match expected {
            Some(rev) => self.storage.update(&self.key, bytes, rev).await.map(|_| ()),
            None => self.storage.create(&self.key, bytes).await.map(|_| ()),
        };
        match outcome {
            Ok(()) => Ok(true),
            Err(
                StorageError::Conflict { .. }
                | StorageError::AlreadyExists(_)
                | StorageError::NotFound(_),
            ) => Ok(false),
            Err(e) => Err(ApiError::internal(e)),
        }
    }
}

/// An IPv4 CIDR such as 10.0.0.0/24.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ipv4Cidr {
    pub base: u32,
    pub prefix: u8,
}

impl std::str::FromStr for Ipv4Cidr {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let (ip, prefix) = s
            .split_once('/')
            .ok_or_else(|| format!("{s:?} is not a CIDR"))?;
        let ip: Ipv4Addr = ip.parse().map_err(|e| format!("{s:?}: {e}"))?;
        let prefix: u8 = prefix.parse().map_err(|e| format!("{s:?}: {e}"))?;
        if !(8..=30).contains(&prefix) {
            return Err(format!("{s:?}: the prefix must be between /8 and /30"));
        }
        let mask = u32::MAX << (32 - prefix);
        Ok(Self {
            base: u32::from(ip) & mask,
            prefix,
        })
    }
}

impl Ipv4Cidr {
    pub fn size(&self) -> u64 {
        1u64 << (32 - self.prefix)
    }

    pub fn address(&self, offset: u64) -> Ipv4Addr {
        Ipv4Addr::from(self.base.wrapping_add(offset as u32))
    }

    pub fn offset_of(&self, ip: Ipv4Addr) -> Option<u64> {
        let v = u32::from(ip);
        let offset = u64::from(v.wrapping_sub(self.base));
        (v >= self.base && offset < self.size()).then_some(offset)
    }
}

impl std::fmt::Display for Ipv4Cidr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", Ipv4Addr::from(self.base), self.prefix)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::embedded::EmbeddedStore;

    #[test]
    fn cidr_math() {
        let c: Ipv4Cidr = "10.0.0.7/24".parse().unwrap();
        assert_eq!(c.to_string(), "10.0.0.0/24");
        assert_eq!(c.size(), 256);
        assert_eq!(c.address(1), Ipv4Addr::new(10, 0, 0, 1));
        assert_eq!(c.offset_of(Ipv4Addr::new(10, 0, 0, 9)), Some(9));
        assert_eq!(c.offset_of(Ipv4Addr::new(10, 0, 1, 0)), None);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn concurrent_allocations_never_collide() {
        let dir = tempfile::tempdir().unwrap();
        let store: Arc<dyn Storage> = Arc::new(EmbeddedStore::open(dir.path()).unwrap());
        let alloc = Arc::new(RangeAllocator::new(
            store,
            "/r/ranges/x".into(),
            "0-63".into(),
            64,
            vec![0, 63],
        ));
        let mut tasks = Vec::new();
        for _ in 0..62 {
            let a = alloc.clone();
            tasks.push(tokio::spawn(async move {
                a.allocate(None, "value").await.unwrap().unwrap()
            }));
        }
        let mut got = Vec::new();
        for t in tasks {
            got.push(t.await.unwrap());
        }
        got.sort();
        got.dedup();
        assert_eq!(got.len(), 62, "every allocation distinct");
        assert!(!got.contains(&0) && !got.contains(&63));
        assert_eq!(
            alloc.allocate(None, "value").await.unwrap(),
            Err(AllocationError::Full)
        );
        alloc.release(5).await.unwrap();
        assert_eq!(alloc.allocate(Some(5), "value").await.unwrap(), Ok(5));
        assert_eq!(
            alloc.allocate(Some(5), "value").await.unwrap(),
            Err(AllocationError::Taken { what: "value" })
        );
    }
}
