//! create: new objects, their metadata and the namespace they go into.

use super::api_core::*;
use crate::admission::attributes::{namespace_of, Attributes, Operation};

impl ApiCore {
    /// Checks apiVersion/kind of a request body against the endpoint and fills them in.
    pub(super) fn check_type(&self, def: &ResourceDef, object: &mut Value) -> ApiResult<()> {
        let Some(obj) = object.as_object_mut() else {
            return Err(ApiError::bad_request(format!(
                "the object provided is unrecognized (must be of type {}): expected a JSON object",
                def.kind
            )));
        };
        let api_version = def.api_version();
        let body_version = obj
            .get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let body_kind = obj
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        if !body_version.is_empty() && body_version != api_version {
            return Err(ApiError::bad_request(format!(
                "the API version in the data ({body_version}) does not match the expected API version ({api_version})"
            )));
        }
        if !body_kind.is_empty() && body_kind != def.kind {
            let version = body_version.rsplit('/').next().unwrap_or("").to_string();
            return Err(ApiError::bad_request(format!(
                "{body_kind} in version \"{version}\" cannot be handled as a {}: the kind in the request body does not match the resource",
                def.kind
            )));
        }
        // First, in TypeMeta's order, as upstream serializes them; in
        // place, without rebuilding the object's map.
        obj.shift_insert(0, "kind".into(), Value::String(def.kind.to_string()));
        obj.shift_insert(1, "apiVersion".into(), Value::String(api_version));
        Ok(())
    }

    /// The namespace in the body must agree with the URL; it defaults to it.
    pub(super) fn check_namespace(
        &self,
        def: &ResourceDef,
        namespace: Option<&str>,
        object: &mut Value,
    ) -> ApiResult<()> {
        if !def.namespaced {
            object::remove_meta(object, "namespace");
            return Ok(());
        }
        let url_ns = namespace.unwrap_or("");
        let body_ns = object::namespace(object).to_string();
        if !body_ns.is_empty() && body_ns != url_ns {
            return Err(ApiError::bad_request(
                "the namespace of the provided object does not match the namespace sent on the request",
            ));
        }
        object::set_meta(object, "namespace", Value::String(url_ns.to_string()));
        Ok(())
    }

    pub(crate) fn fill_new_metadata(&self, def: &ResourceDef, object: &mut Value) {
        object::set_meta(object, "uid", Value::String(object::new_uid()));
        object::set_meta(
            object,
            "creationTimestamp",
            Value::String(object::now_timestamp()),
        );
        for server_owned in [
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "selfLink",
        ] {
            object::remove_meta(object, server_owned);
        }
        if def.kind_impl.tracks_generation() {
            object::set_meta(object, "generation", json!(1));
        } else {
            object::remove_meta(object, "generation");
        }
    }

    pub(crate) async fn ensure_namespace_accepts(
        &self,
        def: &ResourceDef,
        namespace: Option<&str>,
        name: &str,
    ) -> ApiResult<()> {
        let Some(ns) = namespace.filter(|_| def.namespaced) else {
            return Ok(());
        };
        // As upstream's NamespaceLifecycle admission: answer from the cache
        // (no storage round trip per create), and ask storage only when the
        // cache has not seen the namespace yet, so a just-created one is
        // never refused. A namespace that starts terminating meanwhile is
        // cleaned up by the namespace controller, which retries until empty.
        let ns_def = self.resolve("", "v1", "namespaces")?;
        let cached = self
            .watch_cache(&ns_def)
            .await
            .ok()
            .and_then(|cache| cache.get(&ns_def.key(&self.prefix, None, ns)));
        let ns_obj = match cached {
            Some(obj) => obj,
            None => Arc::new(self.get_stored(&ns_def, None, ns).await?.1),
        };
        let phase = ns_obj.get("status").and_then(|status| status.get("phase"));
        if phase.and_then(Value::as_str) == Some("Terminating") {
            return Err(ApiError::forbidden_resource(
                &def.group,
                &def.resource,
                name,
                &format!(
                    "unable to create new content in namespace {ns} because it is being terminated"
                ),
            ));
        }
        Ok(())
    }

    /// `POST pods/<name>/binding`: a Binding for that pod, authorized as
    /// upstream authorizes the subresource (`create pods/binding`).
    pub async fn bind_pod_subresource(
        &self,
        user: &UserInfo,
        namespace: &str,
        binding: Value,
        opts: &WriteOptions,
    ) -> ApiResult<WriteResult> {
        let pods = self.resolve("", "v1", "pods")?;
        let name = object::name(&binding).to_string();
        self.authorize(
            user,
            "create",
            &pods,
            Some(namespace),
            Some(&name),
            View::Binding,
        )
        .await?;
        let status = self.bind_pod(user, namespace, &binding, opts).await?;
        Ok(WriteResult::computed(status))
    }

    pub async fn create(
        &self,
        user: &UserInfo,
        def: &ResourceDef,
        namespace: Option<&str>,
        object: Value,
        opts: &WriteOptions,
    ) -> ApiResult<WriteResult> {
        let namespace = self.require_namespace(def, namespace)?;
        self.authorize(user, "create", def, namespace, None, View::Main)
            .await?;
        if def.is_review() {
            let mut review = object;
            self.check_type(def, &mut review)?;
            self.check_namespace(def, namespace, &mut review)?;
            let answered = crate::authorization::review::answer(self, user, def, review).await?;
            return Ok(WriteResult::computed(answered));
        }
        if def.is_binding() {
            let status = self
                .bind_pod(user, namespace.unwrap_or_default(), &object, opts)
                .await?;
            return Ok(WriteResult::computed(status));
        }
        self.create_authorized(
            user,
            def,
            namespace,
            object,
            opts,
            FieldOwnership::RecordUpdate,
        )
        .await
    }

    pub(super) async fn create_authorized(
        &self,
        user: &UserInfo,
        def: &ResourceDef,
        namespace: Option<&str>,
        mut object: Value,
        opts: &WriteOptions,
        ownership: FieldOwnership,
    ) -> ApiResult<WriteResult> {
        self.check_type(def, &mut object)?;
        self.check_namespace(def, namespace, &mut object)?;
        let mut warnings = self.check_fields(def, &mut object, opts, BodySource::Sent)?;
        if !object::resource_version(&object).is_empty() {
            return Err(ApiError::bad_request(
                "resourceVersion should not be set on objects to be created",
            ));
        }
        let generate_name = object::meta_str(&object, "generateName").to_string();
        apply_defaults(def, &mut object);
        let sent_name = object::name(&object).to_string();
        fn admission<'a>(
            user: &'a UserInfo,
            def: &'a ResourceDef,
            namespace: Option<&'a str>,
            name: &'a str,
            opts: &'a WriteOptions,
        ) -> Attributes<'a> {
            Attributes {
                operation: Operation::Create,
                user,
                def,
                namespace: namespace_of(def, namespace, name),
                name,
                subresource: "",
                old: None,
                dry_run: opts.dry_run,
                field_manager: &opts.field_manager,
            }
        }
        warnings.extend(
            self.mutating_admission(
                &admission(user, def, namespace, &sent_name, opts),
                Some(&mut object),
            )
            .await?,
        );
        self.fill_new_metadata(def, &mut object);
        if def.has_subresource("status") && !def.kind_impl.keeps_status_on_create() {
            // Status is the controllers' to write, through /status; a new
            // object starts with the empty status Go would encode.
            if let Some(obj) = object.as_object_mut() {
                obj.insert("status".into(), def.kind_impl.empty_status());
            }
        }
        def.kind_impl.prepare_for_create(&mut object);
        def.kind_impl.prepare_for_create_by(&mut object, user);
        // Upstream defaults again when it reads the stored object back, so
        // defaults show through whatever the strategy cleared or added.
        apply_defaults(def, &mut object);
        if ownership == FieldOwnership::RecordUpdate {
            let time = object::now_timestamp();
            let api_version = def.api_version();
            let ctx = manager_context(opts, &api_version, View::Main, &time);
            crate::apply::record_update(None, &mut object, def.apply_kind(), &ctx)?;
        }
        let generated = object::name(&object).is_empty() && !generate_name.is_empty();
        // A generated name that collides is retried with a fresh suffix.
        for attempt in 0.. {
            if generated {
                object::set_meta(
                    &mut object,
                    "name",
                    Value::String(def.kind_impl.generated_name(&generate_name)),
                );
            }
            let name = object::name(&object).to_string();
            self.validate(def, &object, None, &name, View::Main)?;
            self.confirm_no_escalation(user, def, namespace, &object, None)
                .await?;
            warnings.extend(
                self.validate_admission(
                    &admission(user, def, namespace, &name, opts),
                    Some(&object),
                )
                .await?,
            );
            if opts.dry_run {
                def.kind_impl.put_in_order(&def.definition, &mut object);
                return Ok(WriteResult {
                    object: Arc::new(object),
                    cached: None,
                    warnings,
                    created: true,
                });
            }
            let key = self.key(def, namespace, &name);
            let allocated = if def.kind_impl.allocates_service_addresses() {
                Some(
                    self.allocate_service_addresses(namespace.unwrap_or(""), &mut object, &name)
                        .await?,
                )
            } else {
                None
            };
            def.kind_impl.put_in_order(&def.definition, &mut object);
            let bytes = encode(&*storage_form(def, &object)?)?;
            // Kept for the cache and the answer, which serve these bytes.
            let stored = self.storage.create(&key, bytes.clone()).await;
            if let (Err(_), Some(allocated)) = (&stored, &allocated) {
                self.release_allocated_service_addresses(allocated).await;
            }
            match stored {
                Ok(kv) => {
                    object::set_meta(
                        &mut object,
                        "resourceVersion",
                        Value::String(kv.mod_revision.to_string()),
                    );
                    let object = Arc::new(object);
                    let cached =
                        self.offer_stored(def, &key, kv.mod_revision, Some(&bytes), &object);
                    return Ok(WriteResult {
                        object,
                        cached,
                        warnings,
                        created: true,
                    });
                }
                Err(StorageError::AlreadyExists(_))
                    if generated && attempt < MAX_CONFLICT_RETRIES =>
                {
                    continue
                }
                Err(e) => return Err(storage_error(def, &name, e)),
            }
        }
        unreachable!("the retry loop returns")
    }
}
