//! delete: immediate, graceful, and waiting for finalizers.

use super::api_core::*;
use crate::admission::attributes::{namespace_of, Attributes, Operation};

/// The garbage collector's finalizer a delete's propagationPolicy asks for;
/// an unknown policy is upstream's 422 on DeleteOptions.
pub(super) fn gc_finalizer_for(opts: &DeleteOptions) -> ApiResult<Option<&'static str>> {
    use crate::controllers::garbage_collector::{FOREGROUND_FINALIZER, ORPHAN_FINALIZER};
    match opts.propagation_policy.as_deref() {
        None | Some("Background") => Ok(None),
        Some("Orphan") => Ok(Some(ORPHAN_FINALIZER)),
        Some("Foreground") => Ok(Some(FOREGROUND_FINALIZER)),
        Some(other) => Err(ApiError::invalid(
            "meta.k8s.io",
            "DeleteOptions",
            "",
            vec![crate::error::FieldError::not_supported(
                "propagationPolicy",
                other,
                &["Foreground", "Background", "Orphan"],
            )],
        )),
    }
}

impl ApiCore {
    pub async fn delete(
        &self,
        user: &UserInfo,
        def: &ResourceDef,
        namespace: Option<&str>,
        name: &str,
        opts: &DeleteOptions,
    ) -> ApiResult<WriteResult> {
        let namespace = self.require_namespace(def, namespace)?;
        self.authorize(user, "delete", def, namespace, Some(name), View::Main)
            .await?;
        let mut warnings = Vec::new();
        if self.admission_reads_deletes() {
            let old = self
                .get(&UserInfo::system(), def, namespace, name, "")
                .await?;
            let admission = Attributes {
                operation: Operation::Delete,
                user,
                def,
                namespace: namespace_of(def, namespace, name),
                name,
                subresource: "",
                old: Some(&old),
                dry_run: opts.dry_run,
                field_manager: "",
            };
            warnings.extend(self.mutating_admission(&admission, None).await?);
            warnings.extend(self.validate_admission(&admission, None).await?);
        }
        let mut done = self.delete_authorized(def, namespace, name, opts).await?;
        done.object = served_shared(def, done.object)?;
        done.warnings.splice(0..0, warnings);
        Ok(done)
    }

    /// An eviction's delete of the pod: authorized as the eviction was.
    pub(crate) async fn delete_pod_for_eviction(
        &self,
        pods: &ResourceDef,
        namespace: &str,
        name: &str,
        opts: &DeleteOptions,
    ) -> ApiResult<()> {
        self.delete_authorized(pods, Some(namespace), name, opts)
            .await
            .map(|_| ())
    }

    pub(super) async fn delete_authorized(
        &self,
        def: &ResourceDef,
        namespace: Option<&str>,
        name: &str,
        opts: &DeleteOptions,
    ) -> ApiResult<WriteResult> {
        let gc_finalizer = gc_finalizer_for(opts)?;
        // Starts from the watch cache's copy, as updates do (see
        // read_modify_write): only a compare-and-swap that succeeds proves it
        // current, so every other outcome is decided again from storage.
        let mut from_storage = opts.dry_run;
        for _ in 0..MAX_CONFLICT_RETRIES {
            let current = self
                .current_for_update(def, namespace, name, !from_storage)
                .await?;
            let cached = current.from_cache;
            from_storage = true;
            let mut obj = current.object;
            // Orphan and Foreground deletes wait for the garbage collector,
            // which holds the object through a finalizer of its own.
            if let Some(finalizer) = gc_finalizer {
                let deleting =
                    object::meta(&obj).is_some_and(|m| m.contains_key("deletionTimestamp"));
                if !deleting && !object::finalizers(&obj).iter().any(|f| f == finalizer) {
                    if let Some(meta) = object::meta_mut(&mut obj) {
                        let list = meta.entry("finalizers").or_insert_with(|| json!([]));
                        if let Some(list) = list.as_array_mut() {
                            list.push(Value::String(finalizer.to_string()));
                        }
                    }
                }
            }
            if let Some(uid) = &opts.precondition_uid {
                let actual = object::meta_str(&obj, "uid");
                if uid != actual {
                    if cached {
                        continue;
                    }
                    return Err(ApiError::conflict(&def.group, &def.resource, name, &format!(
                        "Precondition failed: UID in precondition: {uid}, UID in object meta: {actual}"
                    )));
                }
            }
            if let Some(rv) = &opts.precondition_resource_version {
                let actual = current.revision.to_string();
                if *rv != actual {
                    if cached {
                        continue;
                    }
                    return Err(ApiError::conflict(&def.group, &def.resource, name, &format!(
                        "Precondition failed: ResourceVersion in precondition: {rv}, ResourceVersion in object meta: {actual}"
                    )));
                }
            }
            // Objects with finalizers are only marked; whoever owns the last
            // finalizer finishes the delete by removing it.
            let pending =
                !object::finalizers(&obj).is_empty() || !def.kind_impl.finalizers_done(&obj);
            if pending {
                if object::meta(&obj).is_some_and(|m| m.contains_key("deletionTimestamp")) {
                    if cached {
                        continue;
                    }
                    return Ok(WriteResult::without_warnings(obj, false));
                }
                let mut marked = obj.clone();
                object::set_meta(
                    &mut marked,
                    "deletionTimestamp",
                    Value::String(object::now_timestamp()),
                );
                object::set_meta(&mut marked, "deletionGracePeriodSeconds", json!(0));
                def.kind_impl.prepare_for_delete(&mut marked);
                object::remove_meta(&mut marked, "resourceVersion");
                if opts.dry_run {
                    return Ok(WriteResult::without_warnings(marked, false));
                }
                let key = self.key(def, namespace, name);
                match self
                    .storage
                    .update(&key, encode(&marked)?, current.revision)
                    .await
                {
                    Ok(kv) => {
                        object::set_meta(
                            &mut marked,
                            "resourceVersion",
                            Value::String(kv.mod_revision.to_string()),
                        );
                        return Ok(WriteResult::without_warnings(marked, false));
                    }
                    Err(StorageError::Conflict { .. }) => continue,
                    Err(e) => return Err(storage_error(def, name, e)),
                }
            }
            if opts.dry_run {
                return Ok(WriteResult::without_warnings(obj, false));
            }
            let key = self.key(def, namespace, name);
            match self.storage.delete(&key, Some(current.revision)).await {
                Ok(kv) => {
                    if def.kind_impl.allocates_service_addresses() {
                        self.release_service_addresses(&obj).await;
                    }
                    object::set_meta(
                        &mut obj,
                        "resourceVersion",
                        Value::String(kv.mod_revision.to_string()),
                    );
                    return Ok(WriteResult::without_warnings(obj, false));
                }
                Err(StorageError::Conflict { .. }) => continue,
                Err(StorageError::NotFound(_)) if cached => continue,
                Err(StorageError::NotFound(_)) => {
                    return Err(ApiError::not_found(&def.group, &def.resource, name))
                }
                Err(e) => return Err(storage_error(def, name, e)),
            }
        }
        Err(ApiError::stale_object(&def.group, &def.resource, name))
    }

    /// Internal delete on behalf of a controller.
    pub(crate) async fn delete_as_system(
        &self,
        def: &ResourceDef,
        namespace: Option<&str>,
        name: &str,
        opts: &DeleteOptions,
    ) -> ApiResult<WriteResult> {
        self.delete_authorized(def, namespace, name, opts).await
    }

    pub(crate) async fn release_namespace_finalizer(&self, name: &str) -> ApiResult<bool> {
        let def = self.resolve("", "v1", "namespaces")?;
        for _ in 0..MAX_CONFLICT_RETRIES {
            let current = match self.current_for_update(&def, None, name, false).await {
                Ok(found) => found,
                Err(e) if e.code() == 404 => return Ok(false),
                Err(e) => return Err(e),
            };
            let mut released = current.object.clone();
            if let Some(finalizers) = released
                .pointer_mut("/spec/finalizers")
                .and_then(Value::as_array_mut)
            {
                finalizers.retain(|f| f.as_str() != Some("kubernetes"));
            }
            object::remove_meta(&mut released, "resourceVersion");
            match self
                .write_update(&def, None, name, &current, released, false)
                .await
            {
                Ok(_) => return Ok(true),
                Err(StorageErrorOrApi::Storage(StorageError::Conflict { .. })) => continue,
                Err(StorageErrorOrApi::Storage(StorageError::NotFound(_))) => return Ok(false),
                Err(StorageErrorOrApi::Storage(e)) => return Err(storage_error(&def, name, e)),
                Err(StorageErrorOrApi::Api(e)) => return Err(e),
            }
        }
        Err(ApiError::stale_object(&def.group, &def.resource, name))
    }
}
