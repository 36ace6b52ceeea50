//! list: pages of objects from the watch cache or storage, with continue tokens.

use super::api_core::*;

/// How long a consistent read waits for the watch cache to catch up before
/// reading storage instead.
pub(super) const CACHE_CATCH_UP: std::time::Duration = std::time::Duration::from_millis(250);

/// A continue token: the revision of the first page and the last key
/// returned, base64 JSON as upstream shapes it.
pub(super) fn encode_continue(revision: i64, last_key: &str) -> String {
    let token = json!({"v": "meta.k8s.io/v1", "rv": revision, "start": format!("{last_key}\u{0}")});
    base64::engine::general_purpose::URL_SAFE.encode(token.to_string())
}

pub(super) fn decode_continue(token: &str) -> ApiResult<(i64, String)> {
    let invalid = |why: &str| ApiError::bad_request(format!("continue key is not valid: {why}"));
    let raw = base64::engine::general_purpose::URL_SAFE
        .decode(token)
        .map_err(|_| invalid("incorrect encoded start resourceVersion (version meta.k8s.io/v1)"))?;
    let v: Value = serde_json::from_slice(&raw).map_err(|_| invalid("not JSON"))?;
    if v.get("v").and_then(Value::as_str) != Some("meta.k8s.io/v1") {
        return Err(invalid("server does not recognize this encoded key"));
    }
    let rv = v
        .get("rv")
        .and_then(Value::as_i64)
        .filter(|r| *r > 0)
        .ok_or_else(|| invalid("incorrect encoded start resourceVersion"))?;
    let start = v
        .get("start")
        .and_then(Value::as_str)
        .ok_or_else(|| invalid("missing start"))?;
    let start = start.strip_suffix('\u{0}').unwrap_or(start);
    if start.contains("..") || start.starts_with('/') {
        return Err(invalid("path traversal attempt"));
    }
    Ok((rv, start.to_string()))
}

/// The cached objects of `def` that `labels` and `fields` select, each
/// parsed only if a selector reads it (and not kept: see
/// `CachedObject::parsed`), as a watch selects them.
fn selected<'a>(
    def: &ResourceDef,
    objects: crate::watch::cache::Entries<CachedObject>,
    labels: &'a LabelSelector,
    fields: &'a FieldSelector,
) -> impl Iterator<Item = (Arc<str>, LazyObject)> + 'a {
    let namespaced = def.namespaced;
    objects
        .into_iter()
        .map(|(key, object)| (key, LazyObject::cached(object)))
        .filter(move |(key, o)| crate::watch::selects(labels, fields, namespaced, key, o))
}

/// Every cached object under `prefix`, for a whole list without
/// selectors: no key is read.
fn all_of(cache: &crate::watch::cache::WatchCache, prefix: &str) -> (Vec<LazyObject>, i64) {
    let (objects, revision) = cache.objects_under(prefix);
    (
        objects.into_iter().map(LazyObject::cached).collect(),
        revision,
    )
}

pub(super) const EXPIRED_CONTINUE: &str = "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.";

impl ApiCore {
    pub async fn list(
        &self,
        user: &UserInfo,
        def: &ResourceDef,
        namespace: Option<&str>,
        opts: &ListOptions,
    ) -> ApiResult<ObjectList> {
        let namespace = self.scope(def, namespace)?;
        self.authorize(user, "list", def, namespace, None, View::Main)
            .await?;
        crate::verbs::read_options::validate_list(opts)?;
        if def.is_component_status() {
            return self.list_component_statuses().await;
        }
        let mut list = self.list_stored(def, namespace, opts).await?;
        if def.transforms_on_read() {
            list.items = std::mem::take(&mut list.items)
                .into_iter()
                .map(|item| {
                    served(def, Arc::unwrap_or_clone(item.into_tree())).map(LazyObject::from)
                })
                .collect::<ApiResult<_>>()?;
        }
        Ok(list)
    }

    /// A list in the stored form; selectors match that form, so a field
    /// selector means the same at every version a kind is served at.
    pub(crate) async fn list_stored(
        &self,
        def: &ResourceDef,
        namespace: Option<&str>,
        opts: &ListOptions,
    ) -> ApiResult<ObjectList> {
        let labels = LabelSelector::parse(&opts.label_selector)?;
        let fields = FieldSelector::for_resource(&opts.field_selector, def)?;
        let prefix = def.key_prefix(&self.prefix, namespace);
        let mut params = ListParams::default();
        if !opts.continue_token.is_empty() {
            let (rv, start) = decode_continue(&opts.continue_token)?;
            params.revision = Some(rv);
            params.start_after = Some(format!("{prefix}{start}"));
        } else {
            // `read_options::validate_list` has refused what does not fit.
            match (
                opts.resource_version.as_str(),
                opts.resource_version_match.as_str(),
            ) {
                ("0", _) => {
                    // "Any" resourceVersion: served from the watch cache, whole
                    // (upstream's cache also ignores limit here).
                    let cache = self.watch_cache(def).await?;
                    let (items, revision) = if labels.is_empty() && fields.is_empty() {
                        all_of(&cache, &prefix)
                    } else {
                        let (objects, revision) = cache.list_candidates(&prefix, &fields);
                        let items = selected(def, objects, &labels, &fields)
                            .map(|(_, object)| object)
                            .collect();
                        (items, revision)
                    };
                    return Ok(ObjectList {
                        items,
                        resource_version: revision.to_string(),
                        continue_token: None,
                        remaining_item_count: None,
                    });
                }
                ("", _) => {
                    if let Some(page) = self
                        .consistent_list_from_cache(def, &prefix, &labels, &fields, opts.limit)
                        .await?
                    {
                        return Ok(page);
                    }
                }
                // A paginated list at a resourceVersion without a match is
                // exact too, as upstream keeps it for old clients.
                (rv, matched) if matched == "Exact" || (matched.is_empty() && opts.limit > 0) => {
                    params.revision = Some(parse_revision(rv)?)
                }
                // Not older than rv: the current state is, unless rv is in the future.
                (rv, _) => self.storage_reached(parse_revision(rv)?).await?,
            }
        }
        // Selectors filter after the read, so a page may come back short;
        // keep reading until the page is full or the range ends, as upstream does.
        let limit = usize::try_from(opts.limit.max(0)).unwrap_or(0);
        let mut items = Vec::new();
        let mut revision = None;
        let mut last_key: Option<String> = None;
        let mut remaining: u64;
        loop {
            let page = self
                .storage
                .list(
                    &prefix,
                    ListParams {
                        revision: revision.or(params.revision),
                        start_after: last_key.clone().or(params.start_after.clone()),
                        limit: if limit == 0 { 0 } else { limit - items.len() },
                    },
                )
                .await
                .map_err(|e| match e {
                    StorageError::Compacted { .. } if !opts.continue_token.is_empty() => {
                        ApiError::expired(EXPIRED_CONTINUE)
                    }
                    other => storage_error(def, "", other),
                })?;
            revision = Some(page.revision);
            remaining = page.remaining;
            let filtered = labels.is_empty() && fields.is_empty();
            for kv in &page.items {
                last_key = Some(kv.key.clone());
                let obj = decode(kv)?;
                if filtered || (labels.matches(&obj) && fields.matches(&obj)) {
                    items.push(obj.into());
                }
            }
            if limit == 0 || items.len() >= limit || remaining == 0 || page.items.is_empty() {
                break;
            }
        }
        let revision = revision.unwrap_or_default();
        let (continue_token, remaining_item_count) = match (&last_key, remaining) {
            (Some(last), r) if limit > 0 && r > 0 => {
                let relative = last.strip_prefix(&prefix).unwrap_or(last);
                let count = (labels.is_empty() && fields.is_empty()).then_some(r as i64);
                (Some(encode_continue(revision, relative)), count)
            }
            _ => (None, None),
        };
        Ok(ObjectList {
            items,
            resource_version: revision.to_string(),
            continue_token,
            remaining_item_count,
        })
    }

    /// A list on behalf of an already authorized caller (internal use).
    pub(crate) async fn list_authorized(
        &self,
        def: &ResourceDef,
        namespace: Option<&str>,
        opts: &ListOptions,
    ) -> ApiResult<ObjectList> {
        self.list(&UserInfo::system(), def, namespace, opts).await
    }

    /// Brings `cache` to the store's current revision, asking a quiet watch
    /// for progress, for at most `within`: the current revision, and whether
    /// the cache got there.
    pub(crate) async fn catch_up(
        &self,
        cache: &crate::watch::cache::WatchCache,
        within: std::time::Duration,
    ) -> ApiResult<(i64, bool)> {
        let current = self.current_revision().await?;
        if cache.revision() < current {
            self.storage.request_progress(current);
        }
        Ok((current, cache.wait_for_revision(current, within).await))
    }

    /// A consistent read served from the watch cache once it has caught up
    /// with the store's current revision (None: serve it from storage).
    /// Later pages of a paginated list come from storage at the same
    /// revision, which holds exactly the state the cache had.
    pub(super) async fn consistent_list_from_cache(
        &self,
        def: &ResourceDef,
        prefix: &str,
        labels: &LabelSelector,
        fields: &FieldSelector,
        limit: i64,
    ) -> ApiResult<Option<ObjectList>> {
        // A cache knows it is current only from progress reports; a store
        // whose reports can run ahead of its watch events (old etcd) serves
        // consistent reads itself, as kube-apiserver falls back to etcd.
        if !self.storage.progress_is_ordered() {
            return Ok(None);
        }
        let cache = self.watch_cache(def).await?;
        if !self.catch_up(&cache, CACHE_CATCH_UP).await?.1 {
            return Ok(None);
        }
        let selective = !(labels.is_empty() && fields.is_empty());
        if !selective && limit <= 0 {
            let (items, revision) = all_of(&cache, prefix);
            return Ok(Some(ObjectList {
                items,
                resource_version: revision.to_string(),
                continue_token: None,
                remaining_item_count: None,
            }));
        }
        let (objects, revision) = cache.list_candidates(prefix, fields);
        let mut matching = selected(def, objects, labels, fields);
        let limit = usize::try_from(limit).unwrap_or(0);
        let mut items = Vec::new();
        let mut last_key = None;
        for (key, object) in matching.by_ref() {
            if limit > 0 && items.len() == limit {
                // There is more: the page ends at the previous key.
                let remaining = 1 + matching.count();
                let relative = last_key
                    .as_deref()
                    .and_then(|k: &str| k.strip_prefix(prefix))
                    .unwrap_or_default()
                    .to_string();
                return Ok(Some(ObjectList {
                    items,
                    resource_version: revision.to_string(),
                    continue_token: Some(encode_continue(revision, &relative)),
                    remaining_item_count: (!selective).then_some(remaining as i64),
                }));
            }
            last_key = Some(key);
            items.push(object);
        }
        Ok(Some(ObjectList {
            items,
            resource_version: revision.to_string(),
            continue_token: None,
            remaining_item_count: None,
        }))
    }
}
