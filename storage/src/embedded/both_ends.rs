//! A whole range of records read from both of its ends at once.
//!
//! A watch cache starts with one list of every object of its resource; with
//! a million objects, reading them is about half of the start-up's CPU, and
//! one thread read them while the other core waited. redb's ranges run in
//! both directions, so a second thread reads from the end towards the first
//! until the two meet, without knowing beforehand where the middle is.

use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::Mutex;

use redb::ReadOnlyTable;

use super::{backend, decode_record};
use crate::{KeyValue, StorageResult};

/// Records read by one thread before a second one starts from the other
/// end: smaller ranges are not worth a thread.
const ALONE: usize = 20_000;

/// Records between two looks at where the other reader is.
const LOOK_EVERY: usize = 1024;

/// The records of `keys` in key order, leaving out those whose keys
/// `skip` holds.
pub(super) fn read(
    kv: &ReadOnlyTable<&str, &[u8]>,
    keys: Range<&str>,
    skip: &BTreeMap<String, Option<KeyValue>>,
) -> StorageResult<Vec<KeyValue>> {
    read_paced(kv, keys, skip, ALONE, LOOK_EVERY)
}

fn read_paced(
    kv: &ReadOnlyTable<&str, &[u8]>,
    keys: Range<&str>,
    skip: &BTreeMap<String, Option<KeyValue>>,
    alone: usize,
    look_every: usize,
) -> StorageResult<Vec<KeyValue>> {
    let mut forward = kv.range(keys.clone()).map_err(backend)?;
    let mut items = Vec::new();
    let mut read = 0;
    for entry in forward.by_ref().take(alone) {
        take(entry, skip, &mut items)?;
        read += 1;
    }
    if read < alone || std::thread::available_parallelism().map_or(1, |n| n.get()) < 2 {
        for entry in forward {
            take(entry, skip, &mut items)?;
        }
        return Ok(items);
    }
    let meeting = Mutex::new(Frontiers::default());
    let mut backward = Vec::new();
    std::thread::scope(|scope| {
        let backward_reader = scope.spawn(|| {
            let entries = kv.range(keys).map_err(backend)?.rev();
            read_until_met(
                entries,
                Direction::Backward,
                skip,
                &meeting,
                look_every,
                &mut backward,
            )
        });
        let forward_result = read_until_met(
            forward,
            Direction::Forward,
            skip,
            &meeting,
            look_every,
            &mut items,
        );
        let backward_result = backward_reader
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        forward_result.and(backward_result)
    })?;
    // Both readers may have read a stretch in the middle; the forward one's
    // copy of it is kept.
    let last = items.last().map(|item| item.key.clone());
    items.extend(
        backward
            .into_iter()
            .rev()
            .filter(|item| last.as_ref().is_none_or(|last| item.key > *last)),
    );
    Ok(items)
}

#[derive(Clone, Copy)]
enum Direction {
    Forward,
    Backward,
}

/// The last key each reader has looked out from (it has read every key
/// before it, forward, or after it, backward), and whether it has
/// stopped.
#[derive(Default)]
struct Frontiers {
    forward: Option<String>,
    backward: Option<String>,
    forward_done: bool,
    backward_done: bool,
}

impl Frontiers {
    /// Whether the other reader has read every key from `key` on, going
    /// `direction`.
    fn met(&self, direction: Direction, key: &str) -> bool {
        match direction {
            Direction::Forward => {
                self.backward_done || self.backward.as_deref().is_some_and(|b| key >= b)
            }
            Direction::Backward => {
                self.forward_done || self.forward.as_deref().is_some_and(|f| key <= f)
            }
        }
    }

    fn reached(&mut self, direction: Direction, key: &str) {
        let frontier = match direction {
            Direction::Forward => &mut self.forward,
            Direction::Backward => &mut self.backward,
        };
        *frontier = Some(key.to_owned());
    }

    fn stopped(&mut self, direction: Direction) {
        match direction {
            Direction::Forward => self.forward_done = true,
            Direction::Backward => self.backward_done = true,
        }
    }
}

type Entry<'t> = Result<
    (
        redb::AccessGuard<'t, &'static str>,
        redb::AccessGuard<'t, &'static [u8]>,
    ),
    redb::StorageError,
>;

/// Appends the record `entry` holds to `items` unless `skip` has its key;
/// its key.
fn take<'t>(
    entry: Entry<'t>,
    skip: &BTreeMap<String, Option<KeyValue>>,
    items: &mut Vec<KeyValue>,
) -> StorageResult<redb::AccessGuard<'t, &'static str>> {
    let (key, value) = entry.map_err(backend)?;
    if !skip.contains_key(key.value()) {
        items.push(decode_record(key.value(), value.value())?);
    }
    Ok(key)
}

/// Appends to `items` the records `entries` yields, going `direction`,
/// until the other reader has read the rest.
fn read_until_met<'t>(
    entries: impl Iterator<Item = Entry<'t>>,
    direction: Direction,
    skip: &BTreeMap<String, Option<KeyValue>>,
    meeting: &Mutex<Frontiers>,
    look_every: usize,
    items: &mut Vec<KeyValue>,
) -> StorageResult<()> {
    let mut since_look = 0;
    let read = || {
        for entry in entries {
            let key = take(entry, skip, items)?;
            let key = key.value();
            since_look += 1;
            if since_look == look_every {
                since_look = 0;
                let mut frontiers = meeting.lock().unwrap_or_else(|p| p.into_inner());
                if frontiers.met(direction, key) {
                    break;
                }
                frontiers.reached(direction, key);
            }
        }
        Ok(())
    };
    let result = read();
    // Stopped either way, so the other reader never reads on for nothing.
    meeting
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .stopped(direction);
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use redb::{Database, ReadableDatabase};

    fn record(revision: u64, value: &str) -> Vec<u8> {
        let mut raw = revision.to_le_bytes().to_vec();
        raw.extend_from_slice(&revision.to_le_bytes());
        raw.extend_from_slice(value.as_bytes());
        raw
    }

    /// Whatever the range's size, the skipped keys and where the two
    /// readers meet (looking out every few records, so they meet at
    /// varying places), the records are the range's, each once, in order.
    #[test]
    fn both_ends_read_every_record_once_in_order() {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = Database::create(dir.path().join("kv.redb")).expect("db");
        let keys: Vec<String> = (0..3000).map(|i| format!("/r/k{i:05}")).collect();
        let write = db.begin_write().expect("write");
        {
            let mut kv = write.open_table(super::super::KV).expect("table");
            for (i, key) in keys.iter().enumerate() {
                kv.insert(key.as_str(), record(i as u64 + 1, key).as_slice())
                    .expect("insert");
            }
            // Outside the range: never listed.
            kv.insert("/r/j", record(1, "j").as_slice())
                .expect("insert");
            kv.insert("/r/l", record(1, "l").as_slice())
                .expect("insert");
        }
        write.commit().expect("commit");
        let read = db.begin_read().expect("read");
        let kv = read.open_table(super::super::KV).expect("table");
        let skip: BTreeMap<String, Option<KeyValue>> = keys
            .iter()
            .step_by(7)
            .map(|key| (key.clone(), None))
            .collect();
        for (alone, look_every) in [(1, 1), (10, 3), (100, 7), (2999, 1), (3000, 5), (5000, 5)] {
            for skipping in [&BTreeMap::new(), &skip] {
                let expected: Vec<&String> = keys
                    .iter()
                    .filter(|key| !skipping.contains_key(*key))
                    .collect();
                for _ in 0..20 {
                    let items =
                        read_paced(&kv, "/r/k".."/r/l", skipping, alone, look_every).expect("read");
                    let got: Vec<&String> = items.iter().map(|item| &item.key).collect();
                    assert_eq!(got, expected, "alone {alone}, every {look_every}");
                    let first = &items[0];
                    assert_eq!(&*first.value, first.key.as_bytes());
                }
            }
        }
    }
}
