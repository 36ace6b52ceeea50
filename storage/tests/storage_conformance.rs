//! One conformance suite for the storage contract, run against both backends:
//! the embedded store and a real etcd (Debian's etcd-server) on loopback.

use std::sync::Arc;
use std::time::Duration;

use capstan_storage::embedded::EmbeddedStore;
use capstan_storage::etcd::testing::EtcdServer;
use capstan_storage::{EventKind, ListParams, Storage, StorageError};
use futures::StreamExt;

type Store = Arc<dyn Storage>;

async fn next_event(w: &mut capstan_storage::EventStream) -> capstan_storage::StorageEvent {
    loop {
        let ev = tokio::time::timeout(Duration::from_secs(10), w.next())
            .await
            .expect("watch event within 10 s")
            .expect("watch stream open")
            .expect("watch event, not an error");
        if ev.kind != EventKind::Progress {
            return ev;
        }
    }
}

async fn create_get_and_already_exists(s: &Store, p: &str) {
    let key = format!("{p}a");
    let created = s.create(&key, b"1".to_vec()).await.unwrap();
    assert_eq!(created.create_revision, created.mod_revision);
    let got = s.get(&key).await.unwrap().unwrap();
    assert_eq!(
        (&*got.value, got.mod_revision),
        (&b"1"[..], created.mod_revision)
    );
    assert!(matches!(
        s.create(&key, b"2".to_vec()).await,
        Err(StorageError::AlreadyExists(_))
    ));
    assert!(s.get(&format!("{p}missing")).await.unwrap().is_none());
}

async fn compare_and_swap(s: &Store, p: &str) {
    let key = format!("{p}cas");
    let v1 = s.create(&key, b"1".to_vec()).await.unwrap();
    let v2 = s
        .update(&key, b"2".to_vec(), v1.mod_revision)
        .await
        .unwrap();
    assert!(v2.mod_revision > v1.mod_revision);
    assert_eq!(v2.create_revision, v1.create_revision);
    match s.update(&key, b"3".to_vec(), v1.mod_revision).await {
        Err(StorageError::Conflict {
            current: Some(current),
            ..
        }) => assert_eq!(current.mod_revision, v2.mod_revision),
        other => panic!("expected a conflict, got {other:?}"),
    }
    assert!(matches!(
        s.update(&format!("{p}none"), b"x".to_vec(), 1).await,
        Err(StorageError::NotFound(_))
    ));
    assert!(matches!(
        s.delete(&key, Some(v1.mod_revision)).await,
        Err(StorageError::Conflict { .. })
    ));
    let deleted = s.delete(&key, Some(v2.mod_revision)).await.unwrap();
    assert_eq!(&*deleted.value, b"2");
    assert!(deleted.mod_revision > v2.mod_revision);
    assert!(matches!(
        s.delete(&key, None).await,
        Err(StorageError::NotFound(_))
    ));
}

async fn concurrent_writers_lose_nothing(s: &Store, p: &str) {
    let key = format!("{p}counter");
    s.create(&key, b"0".to_vec()).await.unwrap();
    let mut tasks = Vec::new();
    for _ in 0..8 {
        let s = s.clone();
        let key = key.clone();
        tasks.push(tokio::spawn(async move {
            for _ in 0..10 {
                loop {
                    let cur = s.get(&key).await.unwrap().unwrap();
                    let n: u64 = std::str::from_utf8(&cur.value).unwrap().parse().unwrap();
                    match s
                        .update(&key, (n + 1).to_string().into_bytes(), cur.mod_revision)
                        .await
                    {
                        Ok(_) => break,
                        Err(StorageError::Conflict { .. }) => continue,
                        Err(e) => panic!("{e}"),
                    }
                }
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let end = s.get(&key).await.unwrap().unwrap();
    assert_eq!(&*end.value, b"80");
}

async fn list_pages_come_from_one_snapshot(s: &Store, p: &str) {
    let prefix = format!("{p}list/");
    for i in 0..10 {
        s.create(&format!("{prefix}k{i:02}"), vec![b'0' + i])
            .await
            .unwrap();
    }
    s.create(&format!("{p}listing-outside"), b"x".to_vec())
        .await
        .unwrap();
    let first = s
        .list(
            &prefix,
            ListParams {
                limit: 4,
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(first.items.len(), 4);
    assert_eq!(first.remaining, 6);
    let snapshot = first.revision;
    // Changes after the first page must not show in later pages.
    s.delete(&format!("{prefix}k05"), None).await.unwrap();
    let k06 = s.get(&format!("{prefix}k06")).await.unwrap().unwrap();
    s.update(
        &format!("{prefix}k06"),
        b"changed".to_vec(),
        k06.mod_revision,
    )
    .await
    .unwrap();
    s.create(&format!("{prefix}k99"), b"new".to_vec())
        .await
        .unwrap();
    let mut keys: Vec<String> = first.items.iter().map(|kv| kv.key.clone()).collect();
    let mut after = first.items.last().map(|kv| kv.key.clone());
    loop {
        let page = s
            .list(
                &prefix,
                ListParams {
                    revision: Some(snapshot),
                    start_after: after.clone(),
                    limit: 4,
                },
            )
            .await
            .unwrap();
        assert_eq!(page.revision, snapshot);
        for kv in &page.items {
            if kv.key.ends_with("k06") {
                assert_eq!(&*kv.value, b"6", "a later change leaked into the snapshot");
                assert_eq!(kv.mod_revision, k06.mod_revision);
            }
        }
        keys.extend(page.items.iter().map(|kv| kv.key.clone()));
        after = page.items.last().map(|kv| kv.key.clone());
        if page.remaining == 0 {
            break;
        }
    }
    let expected: Vec<String> = (0..10).map(|i| format!("{prefix}k{i:02}")).collect();
    assert_eq!(keys, expected);
    let now = s.list(&prefix, ListParams::default()).await.unwrap();
    assert_eq!(now.items.len(), 10, "k05 deleted, k99 added");
    assert!(now.revision > snapshot);
}

async fn watch_replays_then_follows_in_order(s: &Store, p: &str) {
    let prefix = format!("{p}watch/");
    let a = s
        .create(&format!("{prefix}a"), b"1".to_vec())
        .await
        .unwrap();
    let mut w = s.watch(&prefix, a.mod_revision - 1).await.unwrap();
    let b = s
        .update(&format!("{prefix}a"), b"2".to_vec(), a.mod_revision)
        .await
        .unwrap();
    s.create(&format!("{p}elsewhere"), b"0".to_vec())
        .await
        .unwrap();
    let d = s.delete(&format!("{prefix}a"), None).await.unwrap();
    let e1 = next_event(&mut w).await;
    assert_eq!(
        (e1.kind, e1.revision, &*e1.value),
        (EventKind::Put, a.mod_revision, &b"1"[..])
    );
    assert!(e1.prev_value.is_none());
    let e2 = next_event(&mut w).await;
    assert_eq!((e2.kind, e2.revision), (EventKind::Put, b.mod_revision));
    assert_eq!(e2.prev_value.as_deref(), Some(&b"1"[..]));
    let e3 = next_event(&mut w).await;
    assert_eq!(
        (e3.kind, e3.revision, &*e3.value),
        (EventKind::Delete, d.mod_revision, &b"2"[..])
    );
    // A later watch from the middle resumes exactly there.
    let mut resumed = s.watch(&prefix, b.mod_revision).await.unwrap();
    assert_eq!(next_event(&mut resumed).await.revision, d.mod_revision);
}

/// The watch-cache form of a watch: the same changes in the same order;
/// values of puts always, a delete's value and previous values optionally.
async fn watch_latest_reports_every_change(s: &Store, p: &str) {
    let prefix = format!("{p}latest/");
    let key = format!("{prefix}a");
    let a = s.create(&key, b"1".to_vec()).await.unwrap();
    let mut w = s.watch_latest(&prefix, a.mod_revision - 1).await.unwrap();
    let b = s.update(&key, b"2".to_vec(), a.mod_revision).await.unwrap();
    let d = s.delete(&key, None).await.unwrap();
    let e1 = next_event(&mut w).await;
    assert_eq!(
        (e1.kind, e1.revision, &*e1.key, &*e1.value),
        (EventKind::Put, a.mod_revision, &*key, &b"1"[..])
    );
    let e2 = next_event(&mut w).await;
    assert_eq!(
        (e2.kind, e2.revision, &*e2.value),
        (EventKind::Put, b.mod_revision, &b"2"[..])
    );
    assert!(matches!(e2.prev_value.as_deref(), None | Some(b"1")));
    let e3 = next_event(&mut w).await;
    assert_eq!(
        (e3.kind, e3.revision, &*e3.key),
        (EventKind::Delete, d.mod_revision, &*key)
    );
    assert!(
        e3.value.is_empty() || &*e3.value == b"2",
        "a delete reports nothing or the deleted value, got {:?}",
        e3.value
    );
}

async fn compaction_expires_old_revisions(s: &Store, p: &str) {
    let key = format!("{p}compact");
    let old = s.create(&key, b"1".to_vec()).await.unwrap();
    s.update(&key, b"2".to_vec(), old.mod_revision)
        .await
        .unwrap();
    let current = s.current_revision().await.unwrap();
    s.compact(current).await.unwrap();
    let expired = s
        .list(
            p,
            ListParams {
                revision: Some(old.mod_revision),
                ..Default::default()
            },
        )
        .await;
    assert!(
        matches!(expired, Err(StorageError::Compacted { .. })),
        "{expired:?}"
    );
    let watch = s.watch(p, old.mod_revision - 1).await;
    let compacted = match watch {
        Err(StorageError::Compacted { .. }) => true,
        Ok(mut stream) => loop {
            match tokio::time::timeout(Duration::from_secs(10), stream.next()).await {
                Ok(Some(Ok(ev))) if ev.kind == EventKind::Progress => continue,
                Ok(Some(Err(StorageError::Compacted { .. }))) => break true,
                _ => break false,
            }
        },
        Err(_) => false,
    };
    assert!(
        compacted,
        "a watch from a compacted revision must fail with Compacted"
    );
    // Compacting again is harmless; the current state is intact.
    s.compact(current).await.unwrap();
    assert_eq!(&*s.get(&key).await.unwrap().unwrap().value, b"2");
}

/// A list answered in one piece, bigger than gRPC's default 4 MiB message.
async fn big_lists_are_answered_whole(s: &Store, p: &str) {
    let value = vec![b'x'; 100 * 1024];
    for i in 0..50 {
        s.create(&format!("{p}big/{i:02}"), value.clone())
            .await
            .unwrap();
    }
    let listed = s
        .list(&format!("{p}big/"), ListParams::default())
        .await
        .expect("a 5 MB list");
    assert_eq!(listed.items.len(), 50);
    assert!(listed.items.iter().all(|kv| kv.value.len() == value.len()));
}

/// A progress report says every change up to its revision was delivered,
/// so none may come before a change it covers, also while a watch started
/// from an older revision is still catching up (etcd before 3.4.31 / 3.5.13
/// answers progress requests ahead of such changes: its stores must not
/// pass those answers on).
async fn progress_never_runs_ahead_of_changes(s: &Store, p: &str) {
    for round in 0..3 {
        let prefix = format!("{p}progress{round}/");
        let mut written = Vec::new();
        for name in ["a", "b", "c"] {
            let kv = s
                .create(&format!("{prefix}{name}"), b"1".to_vec())
                .await
                .unwrap();
            written.push(kv.mod_revision);
        }
        // Writes elsewhere move the store's revision past the prefix's last.
        let elsewhere = s
            .create(&format!("{p}elsewhere{round}"), b"1".to_vec())
            .await
            .unwrap();
        let mut w = s.watch_latest(&prefix, written[0] - 1).await.unwrap();
        s.request_progress(elsewhere.mod_revision);
        let mut seen = Vec::new();
        while seen.len() < written.len() {
            let ev = tokio::time::timeout(Duration::from_secs(10), w.next())
                .await
                .expect("watch event within 10 s")
                .expect("watch stream open")
                .expect("watch event, not an error");
            if ev.kind == EventKind::Progress {
                let missing: Vec<_> = written
                    .iter()
                    .filter(|r| **r <= ev.revision && !seen.contains(*r))
                    .collect();
                assert!(
                    missing.is_empty(),
                    "progress at {} came before changes {missing:?}",
                    ev.revision
                );
            } else {
                seen.push(ev.revision);
            }
        }
        assert_eq!(seen, written);
    }
}

async fn suite(s: Store) {
    create_get_and_already_exists(&s, "/t1/").await;
    compare_and_swap(&s, "/t2/").await;
    concurrent_writers_lose_nothing(&s, "/t3/").await;
    list_pages_come_from_one_snapshot(&s, "/t4/").await;
    watch_replays_then_follows_in_order(&s, "/t5/").await;
    watch_latest_reports_every_change(&s, "/t7/").await;
    compaction_expires_old_revisions(&s, "/t6/").await;
    big_lists_are_answered_whole(&s, "/t8/").await;
    progress_never_runs_ahead_of_changes(&s, "/t9/").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn embedded_store_conforms() {
    let dir = tempfile::tempdir().unwrap();
    suite(Arc::new(EmbeddedStore::open(dir.path()).unwrap())).await;
}

/// The same with a page cache far smaller than what the suite writes, so
/// most reads and writes go to the file (as the server's small default
/// cache does for large stores).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn embedded_store_conforms_with_a_small_page_cache() {
    let dir = tempfile::tempdir().unwrap();
    suite(Arc::new(
        EmbeddedStore::open_with_cache(dir.path(), 64 * 1024).unwrap(),
    ))
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn etcd_store_conforms() {
    let etcd = EtcdServer::start()
        .await
        .expect("a real etcd (install Debian's etcd-server)");
    suite(Arc::new(etcd.connect().await.unwrap())).await;
}
