//! get: one object, from the watch cache or storage.

use super::api_core::*;

impl ApiCore {
    /// The watch cache's copy of one object, as stored, without waiting for
    /// a cache that is still loading (None: ask storage). It may lag behind
    /// storage.
    pub(crate) fn cached_copy(
        &self,
        def: &ResourceDef,
        namespace: Option<&str>,
        name: &str,
    ) -> Option<Arc<Value>> {
        self.cache_of(def).get(&self.key(def, namespace, name))
    }

    /// The same for a reader that will not come back to it soon (a get, an
    /// update's starting point): the cache does not keep its tree.
    pub(crate) fn cached_copy_once(
        &self,
        def: &ResourceDef,
        namespace: Option<&str>,
        name: &str,
    ) -> Option<Arc<Value>> {
        self.cache_of(def).peek(&self.key(def, namespace, name))
    }

    pub(crate) async fn get_stored(
        &self,
        def: &ResourceDef,
        namespace: Option<&str>,
        name: &str,
    ) -> ApiResult<(KeyValue, Value)> {
        let kv = self.read_stored(def, namespace, name).await?;
        let obj = decode(&kv)?;
        Ok((kv, obj))
    }

    /// The stored value of `def` named `name`; NotFound if there is none.
    async fn read_stored(
        &self,
        def: &ResourceDef,
        namespace: Option<&str>,
        name: &str,
    ) -> ApiResult<KeyValue> {
        self.storage
            .get(&self.key(def, namespace, name))
            .await
            .map_err(|e| storage_error(def, name, e))?
            .ok_or_else(|| ApiError::not_found(&def.group, &def.resource, name))
    }

    /// One object. `resource_version` as upstream reads it: "" is a
    /// consistent read (storage), "0" any version (the watch cache's copy
    /// when it has one), and a revision means not older than it: storage's
    /// copy, once storage has reached it (504 otherwise).
    pub async fn get(
        &self,
        user: &UserInfo,
        def: &ResourceDef,
        namespace: Option<&str>,
        name: &str,
        resource_version: &str,
    ) -> ApiResult<Value> {
        self.get_as(user, def, namespace, name, resource_version, View::Main)
            .await
    }

    /// A get authorized as `view`'s (a subresource's get reads the object).
    pub(super) async fn get_as(
        &self,
        user: &UserInfo,
        def: &ResourceDef,
        namespace: Option<&str>,
        name: &str,
        resource_version: &str,
        view: View,
    ) -> ApiResult<Value> {
        let object = self
            .get_object_as(user, def, namespace, name, resource_version, view)
            .await?;
        Ok(Arc::unwrap_or_clone(object.into_tree()))
    }

    /// The same as the object the store or the cache holds: its served
    /// bytes, parsed only if the reader wants a tree.
    async fn get_object_as(
        &self,
        user: &UserInfo,
        def: &ResourceDef,
        namespace: Option<&str>,
        name: &str,
        resource_version: &str,
        view: View,
    ) -> ApiResult<LazyObject> {
        let namespace = self.require_namespace(def, namespace)?;
        self.authorize(user, "get", def, namespace, Some(name), view)
            .await?;
        if def.is_component_status() {
            return self.get_component_status(name).await.map(LazyObject::from);
        }
        let stored = match resource_version {
            "" => match self.consistent_cached(def, namespace, name) {
                Some(Some(object)) => LazyObject::cached(object),
                Some(None) => return Err(ApiError::not_found(&def.group, &def.resource, name)),
                None => self.get_stored_object(def, namespace, name).await?.1,
            },
            "0" => match self.cache_of(def).cached(&self.key(def, namespace, name)) {
                Some(object) => LazyObject::cached(object),
                // Not seen yet (or a cache still loading): storage knows.
                None => self.get_stored_object(def, namespace, name).await?.1,
            },
            rv => {
                let wanted = parse_revision(rv)?;
                let found = self.get_stored_object(def, namespace, name).await;
                let at = match &found {
                    Ok((at, _)) => *at,
                    Err(_) => 0,
                };
                if wanted > at {
                    self.storage_reached(wanted).await?;
                }
                found?.1
            }
        };
        if !def.transforms_on_read() {
            return Ok(stored);
        }
        served_shared(def, stored.into_tree()).map(LazyObject::from)
    }

    /// A stored object and its revision, served as stored (the revision
    /// spliced in) without a tree.
    async fn get_stored_object(
        &self,
        def: &ResourceDef,
        namespace: Option<&str>,
        name: &str,
    ) -> ApiResult<(i64, LazyObject)> {
        let kv = self.read_stored(def, namespace, name).await?;
        let object = match crate::watch::cached::CachedObject::stored(&kv.value, kv.mod_revision) {
            Some(object) => LazyObject::cached(Arc::new(object)),
            // Not JSON: decoding says why.
            None => LazyObject::from(decode(&kv)?),
        };
        Ok((kv.mod_revision, object))
    }

    /// The main resource, or one of its subresources.
    pub async fn get_view(
        &self,
        user: &UserInfo,
        def: &ResourceDef,
        namespace: Option<&str>,
        name: &str,
        view: View,
        resource_version: &str,
    ) -> ApiResult<LazyObject> {
        self.check_view(def, view)?;
        let object = self
            .get_object_as(user, def, namespace, name, resource_version, view)
            .await?;
        Ok(match view {
            View::Scale => crate::verbs::scale::read_scale(def, &object)?.into(),
            _ => object,
        })
    }

    /// A consistent read of one object from the watch cache, when the store
    /// knows its current revision without being read (the embedded store)
    /// and the cache has reached it: the same answer as reading the store.
    /// None: read the store, whose other resources' changes this cache
    /// hears of only in progress reports (at most a second apart when idle).
    /// Asking for one here would wake every cache's watch on every get
    /// while writes go on, so a get does not.
    fn consistent_cached(
        &self,
        def: &ResourceDef,
        namespace: Option<&str>,
        name: &str,
    ) -> Option<Option<Arc<crate::watch::cached::CachedObject>>> {
        // A cache's revision says it has every change up to it only when
        // progress reports come in order with its changes, as for
        // consistent lists.
        if !self.storage.progress_is_ordered() {
            return None;
        }
        let current = self.storage.known_revision()?;
        self.cache_of(def)
            .cached_at(&self.key(def, namespace, name), current)
    }

    /// The stored object of `def` named `name`, if it exists.
    pub(crate) async fn get_if_exists(
        &self,
        def: &ResourceDef,
        namespace: Option<&str>,
        name: &str,
    ) -> ApiResult<Option<Value>> {
        match self.get_stored(def, namespace, name).await {
            Ok((_, stored)) => Ok(Some(stored)),
            Err(e) if e.code() == 404 => Ok(None),
            Err(e) => Err(e),
        }
    }
}
