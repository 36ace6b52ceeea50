use super::api_core::*;
use super::list::{decode_continue, encode_continue};

/// What a write hands the watch cache in place of its change is what
/// the stored bytes decode to, for creates, updates and patches alike.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn written_objects_are_their_stored_values_decoded() {
    let (_dir, core) = crate::testing::core_unshaped().await;
    let def = core.resolve("", "v1", "configmaps").expect("configmaps");
    let user = UserInfo::system();
    let opts = WriteOptions::default();
    let key = core.key(&def, Some("default"), "w");
    let stored_decoded = |core: &ApiCore| {
        let storage = core.storage.clone();
        let key = key.clone();
        async move {
            let kv = storage.get(&key).await.expect("read").expect("stored");
            object::decode_at(&kv.value, kv.mod_revision).expect("decodes")
        }
    };
    let created = core
        .create(
            &user,
            &def,
            Some("default"),
            json!({"apiVersion": "v1", "kind": "ConfigMap",
                   "metadata": {"name": "w", "labels": {"a": "1"}}, "data": {"n": "1.0"}}),
            &opts,
        )
        .await
        .expect("created");
    assert_eq!(*created.object, stored_decoded(&core).await);
    let mut replacement = Value::clone(&created.object);
    replacement["data"]["n"] = json!("2");
    replacement["metadata"]["annotations"] = json!({"b": "2"});
    let updated = core
        .update(
            &user,
            &def,
            Some("default"),
            "w",
            replacement,
            &opts,
            View::Main,
        )
        .await
        .expect("updated");
    assert_eq!(*updated.object, stored_decoded(&core).await);
    let patched = core
        .patch(
            &user,
            &def,
            Some("default"),
            "w",
            PatchType::Merge,
            &json!({"data": {"m": "3"}}),
            &opts,
            View::Main,
        )
        .await
        .expect("patched");
    assert_eq!(*patched.object, stored_decoded(&core).await);
    // And the cache, once current, holds that same object.
    let cache = core.caches.for_prefix(&def.key_prefix(&core.prefix, None));
    let revision: i64 = object::resource_version(&patched.object)
        .parse()
        .expect("a revision");
    assert!(
        cache
            .wait_for_revision(revision, std::time::Duration::from_secs(5))
            .await
    );
    assert_eq!(cache.get(&key).as_deref(), Some(&*patched.object));
}

/// The object's keys come out in Go's struct order (kind and apiVersion
/// first, then ConfigMap's fields as declared) whatever order the body
/// gave, as upstream writes what it decoded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_are_stored_in_go_struct_order() {
    let (_dir, core) = crate::testing::core_unshaped().await;
    let def = core.resolve("", "v1", "configmaps").expect("configmaps");
    let body: Value = serde_json::from_str(
        r#"{"data": {"a": "1"}, "kind": "ConfigMap", "metadata": {"name": "c"},
            "immutable": false, "apiVersion": "v1", "binaryData": {}}"#,
    )
    .expect("json");
    let created = core
        .create(
            &UserInfo::system(),
            &def,
            Some("default"),
            body,
            &WriteOptions::default(),
        )
        .await
        .expect("created");
    let keys: Vec<&str> = created
        .object
        .as_object()
        .expect("an object")
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "kind",
            "apiVersion",
            "metadata",
            "immutable",
            "data",
            "binaryData"
        ]
    );
}

/// A write through /status answers for metadata and status only: a
/// stored spec that the rules refuse (written before a rule existed)
/// does not block it, while a write of the main resource still is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_writes_answer_only_for_status_and_metadata() {
    let (_dir, core) = crate::testing::core_unshaped().await;
    let user = UserInfo::system();
    let def = core
        .resolve("apps", "v1", "deployments")
        .expect("deployments");
    let write = WriteOptions::default();
    let ns = Some("default");
    core.create(
        &user,
        &def,
        ns,
        json!({
            "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
            "spec": {
                "selector": {"matchLabels": {"app": "web"}},
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "c", "image": "pause"}]},
                },
            },
        }),
        &write,
    )
    .await
    .expect("created");
    // A spec today's rules refuse, as if stored before they existed.
    let key = "/registry/deployments/default/web";
    let kv = core.storage.get(key).await.expect("read").expect("stored");
    let mut stored: Value = serde_json::from_slice(&kv.value).expect("json");
    stored["spec"]["replicas"] = json!(-1);
    core.storage
        .update(
            key,
            serde_json::to_vec(&stored).expect("json"),
            kv.mod_revision,
        )
        .await
        .expect("rewritten");
    let patch = |view: View, body: Value| {
        let (core, user, def, write) = (&core, &user, &def, &write);
        async move {
            core.patch(user, def, ns, "web", PatchType::Merge, &body, write, view)
                .await
        }
    };
    let status = patch(View::Status, json!({"status": {"observedGeneration": 7}}))
        .await
        .expect("a status write is not held up by the spec");
    assert_eq!(status.object["status"]["observedGeneration"], 7);
    let main = patch(View::Main, json!({"metadata": {"labels": {"tier": "web"}}}))
        .await
        .expect_err("a write of the main resource is");
    assert_eq!(main.code(), 422, "{main:?}");
    assert!(main.message.contains("spec.replicas"), "{}", main.message);
}

/// A consistent get (no resourceVersion) is served from the watch cache
/// once the cache has reached the embedded store's current revision, not
/// found included, and from the store while the cache lags: a writer
/// reads its own write either way.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn consistent_gets_come_from_a_current_cache_and_from_storage_otherwise() {
    use std::time::Duration;
    let (_dir, core, store) = crate::testing::core_and_store_lagging_behind(
        "/registry/configmaps/",
        Duration::from_millis(400),
    )
    .await;
    let user = UserInfo::system();
    let def = core.resolve("", "v1", "configmaps").expect("configmaps");
    let get = |name: &'static str| {
        let (core, user, def, store) = (&core, &user, &def, &store);
        async move {
            let before = store.gets();
            let got = core.get(user, def, Some("default"), name, "").await;
            (got, store.gets() - before)
        }
    };
    let created = crate::testing::create_in_default(
        &core,
        "configmaps",
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "web"}, "data": {"k": "a"}}),
    )
    .await;
    let (got, reads) = get("web").await;
    assert_eq!(
        got.expect("found"),
        created,
        "the lagging cache's writer reads its write"
    );
    assert_eq!(reads, 1, "from the store");

    let cache = core.watch_cache(&def).await.expect("a cache");
    assert!(
        core.catch_up(&cache, Duration::from_secs(5))
            .await
            .expect("caught up")
            .1
    );
    let (got, reads) = get("web").await;
    assert_eq!(got.expect("found"), created);
    assert_eq!(reads, 0, "from the current cache");
    let (missing, reads) = get("absent").await;
    let missing = missing.expect_err("not found");
    assert_eq!(
        (missing.code(), missing.message.as_str()),
        (404, r#"configmaps "absent" not found"#)
    );
    assert_eq!(reads, 0, "not found in the current cache");

    let patched = core
        .patch(
            &user,
            &def,
            Some("default"),
            "web",
            PatchType::Merge,
            &json!({"data": {"k": "b"}}),
            &WriteOptions::default(),
            View::Main,
        )
        .await
        .expect("patched");
    let (got, reads) = get("web").await;
    assert_eq!(
        got.expect("found"),
        *patched.object,
        "the write, not the cache's copy"
    );
    assert_eq!(reads, 1, "from the store again");
}

/// Updates and deletes start from the watch cache's copy. With that
/// cache lagging behind storage, a patch is neither lost (its
/// compare-and-swap fails and it is redone from storage), nor skipped as
/// a no-op because the stale copy already looked like the result, and a
/// precondition newer than the cache is checked against storage.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn updates_from_a_lagging_cache_are_neither_lost_nor_skipped() {
    use std::time::Duration;
    let (_dir, core) =
        crate::testing::core_lagging_behind("/registry/configmaps/", Duration::from_millis(500))
            .await;
    let user = UserInfo::system();
    let def = core.resolve("", "v1", "configmaps").expect("configmaps");
    let write = WriteOptions::default();
    let ns = Some("default");
    crate::testing::create_in_default(
        &core,
        "configmaps",
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "web"}, "data": {"k": "a"}}),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(800)).await;
    let patch = |body: Value| {
        let (core, user, def, write) = (&core, &user, &def, &write);
        async move {
            core.patch(
                user,
                def,
                ns,
                "web",
                PatchType::Merge,
                &body,
                write,
                View::Main,
            )
            .await
            .expect("patched")
            .object
        }
    };
    let stored = || async {
        let kv = core
            .storage
            .get("/registry/configmaps/default/web")
            .await
            .expect("read")
            .expect("stored");
        decode(&kv).expect("decodes")
    };
    // The cache is current: this one needs no read.
    patch(json!({"data": {"k": "b"}})).await;
    // The cache still says k=a: not a no-op.
    let back = patch(json!({"data": {"k": "a"}})).await;
    assert_eq!(stored().await["data"]["k"], "a");
    assert_eq!(
        back["metadata"]["resourceVersion"],
        stored().await["metadata"]["resourceVersion"]
    );
    // The cache is two writes behind: the patch is redone from storage.
    patch(json!({"data": {"k2": "x"}})).await;
    assert_eq!(stored().await["data"], json!({"k": "a", "k2": "x"}));
    // A precondition newer than the cache holds against storage.
    let mut replacement = stored().await;
    replacement["data"]["k3"] = json!("y");
    core.update(&user, &def, ns, "web", replacement, &write, View::Main)
        .await
        .expect("an update at the stored resourceVersion");
    assert_eq!(stored().await["data"]["k3"], "y");
    // So does a delete's, and it deletes.
    let rv = stored().await["metadata"]["resourceVersion"]
        .as_str()
        .map(String::from);
    let options = DeleteOptions {
        precondition_resource_version: rv,
        ..DeleteOptions::default()
    };
    core.delete(&user, &def, ns, "web", &options)
        .await
        .expect("a delete at the stored resourceVersion");
    let gone = core
        .storage
        .get("/registry/configmaps/default/web")
        .await
        .expect("read");
    assert!(gone.is_none(), "deleted");
}

#[test]
fn continue_tokens_round_trip_and_reject_garbage() {
    let token = encode_continue(42, "default/web");
    assert_eq!(
        decode_continue(&token).unwrap(),
        (42, "default/web".to_string())
    );
    assert_eq!(decode_continue("!!!").unwrap_err().code(), 400);
    let traversal = base64::engine::general_purpose::URL_SAFE
        .encode(json!({"v": "meta.k8s.io/v1", "rv": 1, "start": "../x"}).to_string());
    assert_eq!(decode_continue(&traversal).unwrap_err().code(), 400);
}

#[test]
fn field_validation_values() {
    assert_eq!(
        FieldValidation::parse("Strict").unwrap(),
        FieldValidation::Strict
    );
    assert!(FieldValidation::parse("strict").is_err());
}

#[test]
fn warnings_are_recorded_as_upstreams_recorder_sends_them() {
    let texts = |values: Vec<String>| values;
    assert_eq!(
        texts(warning_values(&[
            "first".into(),
            String::new(),
            "first".into(),
            "line\nbreak".into(),
            "quoted \"x\"".into(),
        ])),
        [r#"299 - "first""#, r#"299 - "quoted \"x\"""#]
    );
    // Past 4096 characters in all, each is cut to 256 and the rest dropped.
    let long: Vec<String> = (0..20).map(|i| format!("{i}{}", "w".repeat(300))).collect();
    let values = warning_values(&long);
    assert_eq!(values.len(), 16);
    assert!(values
        .iter()
        .all(|v| v.chars().count() == 256 + r#"299 - """#.len()));
}
