//! update: compare-and-swap writes of a changed object, and what each view may change.

use super::api_core::*;
use crate::admission::attributes::{namespace_of, Attributes, Operation};

/// The object an update starts from (see `current_for_update`).
pub(super) struct Current {
    /// As stored (at the storage version), with its resourceVersion.
    pub(super) object: Value,
    pub(super) revision: i64,
    /// Taken from the watch cache, which may lag behind storage.
    pub(super) from_cache: bool,
}

/// What an update did.
pub(super) enum Updated<T = Value> {
    Written(T),
    /// Nothing changed: nothing was written, the result is the stored object.
    Unchanged(T),
}

impl<T> Updated<T> {
    fn map<U>(self, f: impl FnOnce(T) -> U) -> Updated<U> {
        match self {
            Self::Written(t) => Updated::Written(f(t)),
            Self::Unchanged(t) => Updated::Unchanged(f(t)),
        }
    }
}

/// Whether `stored` (as read back, with its resourceVersion) holds exactly
/// `form` (an object's stored form); resourceVersion is not part of what is
/// stored, so it is left out on both sides.
pub(super) fn same_stored_form(stored: &Value, form: &Value) -> bool {
    fn without_version(
        meta: &serde_json::Map<String, Value>,
    ) -> impl Iterator<Item = (&String, &Value)> {
        meta.iter().filter(|(key, _)| *key != "resourceVersion")
    }
    match (stored, form) {
        (Value::Object(stored), Value::Object(form)) => {
            stored.len() == form.len()
                && stored
                    .iter()
                    .all(|(key, value)| match (value, form.get(key)) {
                        (Value::Object(meta), Some(Value::Object(form_meta)))
                            if key == "metadata" =>
                        {
                            without_version(meta).count() == without_version(form_meta).count()
                                && without_version(meta).all(|(k, v)| form_meta.get(k) == Some(v))
                        }
                        (value, Some(form_value)) => value == form_value,
                        (_, None) => false,
                    })
        }
        _ => stored == form,
    }
}

impl ApiCore {
    /// Brings a replacement for `old` in line with it: server-owned metadata
    /// carried over, the parts the view does not own restored, generation
    /// bumped on spec changes, strategy applied.
    pub(super) fn prepare_update(
        &self,
        def: &ResourceDef,
        object: &mut Value,
        old: &Value,
        view: View,
    ) {
        match view {
            // Upstream's approval strategy: the new conditions, nothing else.
            View::Approval => {
                *object = crate::object::only_at(old, object, &["status", "conditions"]);
                return;
            }
            // Only status changes through the status subresource.
            View::Status => {
                *object = crate::object::only_at(old, object, &["status"]);
                return;
            }
            // The kind's own subresources own their part of the object.
            View::EphemeralContainers | View::Resize | View::Finalize => {
                let sub = view.subresource().unwrap_or_default();
                if let Some(updated) = def.kind_impl.subresource_update(sub, object, old) {
                    *object = updated;
                }
                return;
            }
            // A binding writes spec.nodeName and status together; an
            // eviction writes nothing of the pod.
            View::Binding | View::Eviction => {}
            // Status belongs to the status subresource; main writes keep it.
            View::Main | View::Scale if def.has_subresource("status") => {
                crate::object::replace_at(object, old, &["status"]);
            }
            View::Main | View::Scale => {}
        }
        for carried in [
            "uid",
            "creationTimestamp",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "generation",
        ] {
            match object::meta(old).and_then(|m| m.get(carried)).cloned() {
                Some(v) => object::set_meta(object, carried, v),
                None => object::remove_meta(object, carried),
            }
        }
        object::remove_meta(object, "selfLink");
        def.kind_impl.prepare_for_update(object, old);
        if def.kind_impl.tracks_generation() && def.kind_impl.spec_changed(object, old) {
            let generation = object::meta(old)
                .and_then(|m| m.get("generation"))
                .and_then(Value::as_i64)
                .unwrap_or(0);
            object::set_meta(object, "generation", json!(generation + 1));
        }
    }

    /// Hands `object`, just stored under `key` at `revision` (its
    /// resourceVersion) as `stored` when the caller has those bytes, to
    /// the watch caches, which take it instead of decoding the change.
    /// With the bytes, the object as they will hold it, encoded once for
    /// them and for the write's answer. Only a kind stored as it is
    /// served is offered.
    pub(super) fn offer_stored(
        &self,
        def: &ResourceDef,
        key: &str,
        revision: i64,
        stored: Option<&[u8]>,
        object: &Arc<Value>,
    ) -> Option<Arc<CachedObject>> {
        if def.converts_for_storage() {
            return None;
        }
        // Without the stored bytes the cache encodes the tree itself, if
        // and when it takes it.
        let cached = stored.map(|stored| Arc::new(CachedObject::written(stored, revision, object)));
        self.caches
            .offer_written(key, revision, cached.clone(), object.clone());
        cached
    }

    /// Stores `object` over `current` with compare-and-swap; a no-op update
    /// keeps the stored object (and its resourceVersion) untouched.
    pub(super) async fn write_update(
        &self,
        def: &ResourceDef,
        namespace: Option<&str>,
        name: &str,
        current: &Current,
        mut object: Value,
        dry_run: bool,
    ) -> Result<Updated<Arc<Value>>, StorageErrorOrApi> {
        // Upstream skips a write that changes nothing, keeping the
        // resourceVersion; compare as JSON, where key order does not matter.
        let stored_form = storage_form(def, &object)?;
        if same_stored_form(&current.object, &stored_form) {
            return Ok(Updated::Unchanged(Arc::new(served(
                def,
                current.object.clone(),
            )?)));
        }
        let bytes = encode(&stored_form)?;
        if dry_run {
            // Nothing was written: the object is still at the stored revision.
            object::set_meta(
                &mut object,
                "resourceVersion",
                Value::String(current.revision.to_string()),
            );
            return Ok(Updated::Written(Arc::new(object)));
        }
        let key = self.key(def, namespace, name);
        // Deleting the last finalizer of an object being deleted finishes the delete.
        let finished = object::meta(&object).is_some_and(|m| m.contains_key("deletionTimestamp"))
            && object::finalizers(&object).is_empty()
            && def.kind_impl.finalizers_done(&object);
        if finished {
            let kv = self
                .storage
                .delete(&key, Some(current.revision))
                .await
                .map_err(StorageErrorOrApi::Storage)?;
            object::set_meta(
                &mut object,
                "resourceVersion",
                Value::String(kv.mod_revision.to_string()),
            );
            return Ok(Updated::Written(Arc::new(object)));
        }
        let kv = self
            .storage
            .update(&key, bytes, current.revision)
            .await
            .map_err(StorageErrorOrApi::Storage)?;
        object::set_meta(
            &mut object,
            "resourceVersion",
            Value::String(kv.mod_revision.to_string()),
        );
        let object = Arc::new(object);
        self.offer_stored(def, &key, kv.mod_revision, None, &object);
        Ok(Updated::Written(object))
    }

    /// The object an update starts from. With `cached`, the watch cache's
    /// copy when it has one: no storage round trip, but it may lag behind
    /// storage, so the caller trusts only a compare-and-swap that succeeds
    /// against it (see `read_modify_write`).
    pub(super) async fn current_for_update(
        &self,
        def: &ResourceDef,
        namespace: Option<&str>,
        name: &str,
        cached: bool,
    ) -> ApiResult<Current> {
        if cached {
            if let Some(object) = self.cached_copy_once(def, namespace, name) {
                if let Ok(revision) = object::resource_version(&object).parse::<i64>() {
                    return Ok(Current {
                        object: Value::clone(&object),
                        revision,
                        from_cache: true,
                    });
                }
            }
        }
        let (kv, object) = self.get_stored(def, namespace, name).await?;
        Ok(Current {
            object,
            revision: kv.mod_revision,
            from_cache: false,
        })
    }

    pub(super) fn check_view(&self, def: &ResourceDef, view: View) -> ApiResult<()> {
        match view.subresource() {
            Some(sub) if !def.has_subresource(sub) => Err(ApiError::new(
                crate::error::StatusReason::NotFound,
                "the server could not find the requested resource",
            )),
            _ => Ok(()),
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub async fn update(
        &self,
        user: &UserInfo,
        def: &ResourceDef,
        namespace: Option<&str>,
        name: &str,
        object: Value,
        opts: &WriteOptions,
        view: View,
    ) -> ApiResult<WriteResult> {
        let namespace = self.require_namespace(def, namespace)?;
        self.authorize(user, "update", def, namespace, Some(name), view)
            .await?;
        self.check_view(def, view)?;
        // As upstream's update handler: the body is decoded and its name
        // checked against the URL before anything is read.
        let mut object = object;
        let (source, decoded_warnings) = if view == View::Scale {
            decode_body_as(
                BodySource::Sent,
                SCALE_DEFINITION,
                ("Scale", "v1"),
                &mut object,
            )?;
            (BodySource::Sent, Vec::new())
        } else {
            self.check_type(def, &mut object)?;
            let warnings = self.check_fields(def, &mut object, opts, BodySource::Sent)?;
            (BodySource::Decoded, warnings)
        };
        check_name_matches_url(&object, name, namespace)?;
        let mut result = self
            .read_modify_write(
                user,
                def,
                namespace,
                name,
                view,
                opts,
                FieldOwnership::RecordUpdate,
                source,
                |old| match view {
                    View::Scale => crate::verbs::scale::apply_scale(def, name, old, &object),
                    _ => Ok(object.clone()),
                },
            )
            .await?;
        if !decoded_warnings.is_empty() {
            result.warnings.splice(0..0, decoded_warnings);
        }
        Ok(result)
    }

    /// An update on the server's own behalf through `view` (the caller has
    /// authorized it), with the usual checks and conflict retries.
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn update_internal(
        &self,
        user: &UserInfo,
        def: &ResourceDef,
        namespace: Option<&str>,
        name: &str,
        opts: &WriteOptions,
        view: View,
        mutate: impl Fn(&Value) -> ApiResult<Value>,
    ) -> ApiResult<WriteResult> {
        self.read_modify_write(
            user,
            def,
            namespace,
            name,
            view,
            opts,
            FieldOwnership::RecordUpdate,
            BodySource::Sent,
            mutate,
        )
        .await
    }

    /// The server side of every update: start from the current object (the
    /// watch cache's copy, or storage's), let `mutate` produce the client's
    /// version of it, check it, keep what the view does
    /// not own, and compare-and-swap it in, retrying when someone else wrote
    /// in between — unless the client named the resourceVersion it expects.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn read_modify_write(
        &self,
        user: &UserInfo,
        def: &ResourceDef,
        namespace: Option<&str>,
        name: &str,
        view: View,
        opts: &WriteOptions,
        ownership: FieldOwnership,
        source: BodySource<'_>,
        mutate: impl Fn(&Value) -> ApiResult<Value>,
    ) -> ApiResult<WriteResult> {
        // As upstream's GuaranteedUpdate: start from the watch cache's copy,
        // saving a storage read. Only a compare-and-swap that succeeds proves
        // that copy was current; any other outcome (an error, a stale
        // precondition, nothing to write) is decided again from storage. A
        // dry run writes nothing to prove it, so it reads storage.
        let mut from_storage = opts.dry_run;
        for _ in 0..MAX_CONFLICT_RETRIES {
            let current = self
                .current_for_update(def, namespace, name, !from_storage)
                .await?;
            let cached = current.from_cache;
            from_storage = true;
            match self
                .update_once(
                    user, def, namespace, name, view, opts, ownership, source, &mutate, &current,
                )
                .await
            {
                Ok(Updated::Written(result)) => return Ok(result),
                Ok(Updated::Unchanged(result)) if !cached => return Ok(result),
                Err(StorageErrorOrApi::Storage(StorageError::Conflict { .. })) => continue,
                _ if cached => continue,
                Ok(Updated::Unchanged(result)) => return Ok(result),
                Err(StorageErrorOrApi::Storage(e)) => return Err(storage_error(def, name, e)),
                Err(StorageErrorOrApi::Api(e)) => return Err(e),
            }
        }
        Err(ApiError::stale_object(&def.group, &def.resource, name))
    }

    /// One attempt of `read_modify_write` from `current`.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn update_once(
        &self,
        user: &UserInfo,
        def: &ResourceDef,
        namespace: Option<&str>,
        name: &str,
        view: View,
        opts: &WriteOptions,
        ownership: FieldOwnership,
        source: BodySource<'_>,
        mutate: &impl Fn(&Value) -> ApiResult<Value>,
        current: &Current,
    ) -> Result<Updated<WriteResult>, StorageErrorOrApi> {
        let old = served(def, current.object.clone())?;
        let mut candidate = mutate(&old)?;
        self.check_type(def, &mut candidate)?;
        let candidate_name = object::name(&candidate).to_string();
        if candidate_name != name {
            return Err(ApiError::bad_request(format!(
                "the name of the object ({candidate_name}) does not match the name on the URL ({name})"
            ))
            .into());
        }
        self.check_namespace(def, namespace, &mut candidate)?;
        let mut warnings = match source {
            BodySource::Decoded => Vec::new(),
            _ => self.check_fields(def, &mut candidate, opts, source)?,
        };
        let precondition = object::resource_version(&candidate).to_string();
        if !precondition.is_empty() && precondition != current.revision.to_string() {
            return Err(ApiError::stale_object(&def.group, &def.resource, name).into());
        }
        apply_defaults(def, &mut candidate);
        let admission = Attributes {
            operation: Operation::Update,
            user,
            def,
            namespace: namespace_of(def, namespace, name),
            name,
            subresource: view.subresource().unwrap_or(""),
            old: Some(&old),
            dry_run: opts.dry_run,
            field_manager: &opts.field_manager,
        };
        warnings.extend(
            self.mutating_admission(&admission, Some(&mut candidate))
                .await?,
        );
        self.prepare_update(def, &mut candidate, &old, view);
        apply_defaults(def, &mut candidate);
        if ownership == FieldOwnership::RecordUpdate {
            let time = object::now_timestamp();
            let api_version = def.api_version();
            let ctx = manager_context(opts, &api_version, view, &time);
            crate::apply::record_update(Some(&old), &mut candidate, def.apply_kind(), &ctx)
                .map_err(ApiError::from)?;
        }
        object::remove_meta(&mut candidate, "resourceVersion");
        // A binding writes the pod directly, as upstream's BindingREST
        // does, without the pod's update rules (which forbid nodeName).
        let previous = (view != View::Binding).then_some(&old);
        self.validate(def, &candidate, previous, name, view)?;
        self.confirm_no_escalation(user, def, namespace, &candidate, Some(&old))
            .await?;
        warnings.extend(
            self.validate_admission(&admission, Some(&candidate))
                .await?,
        );
        let allocated = if def.kind_impl.allocates_service_addresses() && view == View::Main {
            Some(
                self.service_addresses
                    .carry_over(&mut candidate, &old, name)
                    .await?,
            )
        } else {
            None
        };
        def.kind_impl.put_in_order(&def.definition, &mut candidate);
        let written = self
            .write_update(def, namespace, name, current, candidate, opts.dry_run)
            .await;
        if let Some(allocated) = &allocated {
            match (&written, opts.dry_run) {
                (Ok(Updated::Written(new)), false) => {
                    self.service_addresses.release_dropped(new, &old).await
                }
                _ => self.service_addresses.release_allocated(allocated).await,
            }
        }
        Ok(written?.map(|object| WriteResult {
            object: match view {
                View::Scale => Arc::new(crate::verbs::scale::to_scale(def, &object)),
                _ => object,
            },
            cached: None,
            warnings,
            created: false,
        }))
    }

    /// Rewrites an object the server keeps on its own behalf (a quota's
    /// charged usage) by compare-and-swap on storage's copy, without
    /// passing admission again: `change` decides from the current object,
    /// again after each conflict; None leaves it as it is, an error stops.
    pub(crate) async fn compare_and_swap(
        &self,
        def: &ResourceDef,
        namespace: Option<&str>,
        name: &str,
        change: impl Fn(&Value) -> ApiResult<Option<Value>>,
    ) -> ApiResult<()> {
        for _ in 0..MAX_CONFLICT_RETRIES {
            let current = self.current_for_update(def, namespace, name, false).await?;
            let Some(mut stored) = change(&current.object)? else {
                return Ok(());
            };
            object::remove_meta(&mut stored, "resourceVersion");
            let stored = served(def, stored)?;
            match self
                .write_update(def, namespace, name, &current, stored, false)
                .await
            {
                Ok(_) => return Ok(()),
                Err(StorageErrorOrApi::Storage(StorageError::Conflict { .. })) => continue,
                Err(StorageErrorOrApi::Storage(e)) => return Err(storage_error(def, name, e)),
                Err(StorageErrorOrApi::Api(e)) => return Err(e),
            }
        }
        Err(ApiError::stale_object(&def.group, &def.resource, name))
    }

    /// Removes the "kubernetes" finalizer of a terminating namespace (the
    /// finalize subresource's job), which completes its delete. False when
    /// someone else (another replica) already did.
    /// Changes the metadata of a stored object with compare-and-swap,
    /// retrying on conflicts; `change` returns false when there is nothing
    /// to do. Returns false when the object is gone or is another
    /// incarnation (its uid differs from `uid`). Used by controllers, which
    /// act for the system, not a user.
    pub(crate) async fn update_stored_metadata(
        &self,
        def: &ResourceDef,
        namespace: Option<&str>,
        name: &str,
        uid: &str,
        change: impl Fn(&mut serde_json::Map<String, Value>) -> bool,
    ) -> ApiResult<bool> {
        for _ in 0..MAX_CONFLICT_RETRIES {
            let current = match self.current_for_update(def, namespace, name, false).await {
                Ok(found) => found,
                Err(e) if e.code() == 404 => return Ok(false),
                Err(e) => return Err(e),
            };
            let mut stored = current.object.clone();
            if object::meta_str(&stored, "uid") != uid {
                return Ok(false);
            }
            let changed = object::meta_mut(&mut stored).is_some_and(&change);
            if !changed {
                return Ok(true);
            }
            object::remove_meta(&mut stored, "resourceVersion");
            let stored = served(def, stored)?;
            match self
                .write_update(def, namespace, name, &current, stored, false)
                .await
            {
                Ok(_) => return Ok(true),
                Err(StorageErrorOrApi::Storage(StorageError::Conflict { .. })) => continue,
                Err(StorageErrorOrApi::Storage(StorageError::NotFound(_))) => return Ok(false),
                Err(StorageErrorOrApi::Storage(e)) => return Err(storage_error(def, name, e)),
                Err(StorageErrorOrApi::Api(e)) => return Err(e),
            }
        }
        Err(ApiError::stale_object(&def.group, &def.resource, name))
    }
}
