//! patch: JSON, merge, strategic merge and server-side apply, each a read-modify-write.

use super::api_core::*;

impl ApiCore {
    #[allow(clippy::too_many_arguments)]
    pub async fn patch(
        &self,
        user: &UserInfo,
        def: &ResourceDef,
        namespace: Option<&str>,
        name: &str,
        patch_type: PatchType,
        patch_body: &Value,
        opts: &WriteOptions,
        view: View,
    ) -> ApiResult<WriteResult> {
        let namespace = self.require_namespace(def, namespace)?;
        self.authorize(user, "patch", def, namespace, Some(name), view)
            .await?;
        self.check_view(def, view)?;
        if patch_type == PatchType::Apply {
            return self
                .server_side_apply(user, def, namespace, name, patch_body, opts, view)
                .await;
        }
        if opts.force {
            return Err(ApiError::invalid(
                "meta.k8s.io",
                "PatchOptions",
                "",
                vec![crate::error::FieldError::forbidden(
                    "force",
                    "may not be specified for non-apply patch",
                )],
            ));
        }
        let source = match patch_type {
            PatchType::StrategicMerge => BodySource::StrategicPatch(patch_body),
            _ => BodySource::JsonPatch,
        };
        self.read_modify_write(
            user,
            def,
            namespace,
            name,
            view,
            opts,
            FieldOwnership::RecordUpdate,
            source,
            |old| {
                if view == View::Scale {
                    // A scale patch applies to the Scale, then lands in spec.replicas.
                    let scale = crate::verbs::scale::to_scale(def, old);
                    let mut patched =
                        crate::patch::apply(patch_type, &scale, patch_body, SCALE_DEFINITION)?;
                    decode_body_as(source, SCALE_DEFINITION, ("Scale", "v1"), &mut patched)?;
                    return crate::verbs::scale::apply_scale(def, name, old, &patched);
                }
                crate::patch::apply(patch_type, old, patch_body, &def.definition)
            },
        )
        .await
    }

    /// `PATCH` with `application/apply-patch+yaml`: merges the applied
    /// configuration into the object (creating it when there is none),
    /// with conflicts against other field managers unless forced.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn server_side_apply(
        &self,
        user: &UserInfo,
        def: &ResourceDef,
        namespace: Option<&str>,
        name: &str,
        config: &Value,
        opts: &WriteOptions,
        view: View,
    ) -> ApiResult<WriteResult> {
        if opts.field_manager.is_empty() {
            return Err(ApiError::invalid(
                "meta.k8s.io",
                "PatchOptions",
                "",
                vec![crate::error::FieldError::required(
                    "fieldManager",
                    "is required for apply patch",
                )],
            ));
        }
        if view == View::Scale {
            return Err(ApiError::new(
                crate::error::StatusReason::UnsupportedMediaType,
                "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json",
            ));
        }
        let api_version = def.api_version();
        let time = object::now_timestamp();
        let ctx = manager_context(opts, &api_version, view, &time);
        let merge = |old: &Value| -> ApiResult<Value> {
            Ok(crate::apply::apply(
                Some(old),
                config,
                def.apply_kind(),
                &ctx,
                opts.force,
            )?)
        };
        let update = || {
            self.read_modify_write(
                user,
                def,
                namespace,
                name,
                view,
                opts,
                FieldOwnership::Applied,
                BodySource::Applied,
                merge,
            )
        };
        // Most applies find the object (in the watch cache, without a read
        // of storage); only a missing one is created.
        match update().await {
            Err(e) if e.code() == 404 && view == View::Main => {}
            other => return other,
        }
        let created = crate::apply::apply(None, config, def.apply_kind(), &ctx, opts.force)?;
        let created_name = object::name(&created).to_string();
        if created_name != name {
            return Err(ApiError::bad_request(format!(
                "the name of the object ({created_name}) does not match the name on the URL ({name})"
            )));
        }
        let result = self
            .create_authorized(user, def, namespace, created, opts, FieldOwnership::Applied)
            .await;
        match result {
            // Someone created it meanwhile: apply over theirs instead.
            Err(e) if e.reason == crate::error::StatusReason::AlreadyExists => update().await,
            other => other,
        }
    }
}
