//! `capstan.v1.Admission/Review`: what the admission chain would do with a
//! write — the object as it would be stored, the warnings, or the refusal
//! and what refused it — found by making the write as a dry run, as the
//! named user (whom the caller must be allowed to impersonate).

use std::sync::Arc;

use capstan_proto::json::JsonStruct;
use capstan_proto::v1 as pb;
use serde_json::Value;
use tonic::{Request, Response, Status};

use super::{acting_as, ns, to_pb_object, view};
use crate::auth::UserInfo;
use crate::authentication::{Admission, Caller};
use crate::error::{ApiError, ApiResult};
use crate::verbs::{self, ApiCore, DeleteOptions, FieldValidation, PatchType};

pub struct AdmissionService {
    core: Arc<ApiCore>,
}

impl AdmissionService {
    pub fn new(core: Arc<ApiCore>) -> Self {
        Self { core }
    }

    /// The caller, or the user it reviews for when it may impersonate them.
    async fn reviewer(&self, req: &Request<pb::ReviewRequest>) -> Result<Caller, Status> {
        let mut impersonation: Vec<(&str, &str)> = Vec::new();
        if let Some(user) = req.get_ref().user.as_ref() {
            if !user.username.is_empty() {
                impersonation.push(("impersonate-user", user.username.as_str()));
            }
            for group in &user.groups {
                impersonation.push(("impersonate-group", group.as_str()));
            }
            if !user.uid.is_empty() {
                impersonation.push(("impersonate-uid", user.uid.as_str()));
            }
        }
        acting_as(&self.core, req, impersonation, Admission::Mutating).await
    }

    /// The write as a dry run.
    async fn dry_run(
        &self,
        user: &UserInfo,
        r: pb::ReviewRequest,
    ) -> ApiResult<verbs::WriteResult> {
        let gvr = r.resource.as_ref().ok_or_else(|| {
            ApiError::bad_request("resource (group, version, resource) is required")
        })?;
        let def = self.core.resolve(&gvr.group, &gvr.version, &gvr.resource)?;
        let opts = verbs::WriteOptions {
            dry_run: true,
            field_manager: r.field_manager.clone(),
            default_field_manager: "capstan-review".to_string(),
            field_validation: FieldValidation::Strict,
            ..Default::default()
        };
        let namespace = ns(&r.namespace);
        let object = r.object.map(|o| Value::Object(o.0));
        let subresource_view =
            view(&r.subresource).map_err(|s| ApiError::bad_request(s.message()))?;
        match r.operation.as_str() {
            "CREATE" => {
                let object = object
                    .ok_or_else(|| ApiError::bad_request("a CREATE review needs the object"))?;
                self.core.create(user, &def, namespace, object, &opts).await
            }
            "UPDATE" => {
                let name = match (&object, r.name.as_str()) {
                    (_, name) if !name.is_empty() => name.to_string(),
                    (Some(object), _) => crate::object::name(object).to_string(),
                    (None, _) => String::new(),
                };
                match (object, r.patch) {
                    (Some(object), _) => {
                        self.core
                            .update(
                                user,
                                &def,
                                namespace,
                                &name,
                                object,
                                &opts,
                                subresource_view,
                            )
                            .await
                    }
                    (None, Some(patch)) => {
                        let patch_type = match pb::PatchType::try_from(r.patch_type) {
                            Ok(pb::PatchType::JsonPatch) => PatchType::Json,
                            Ok(pb::PatchType::MergePatch) => PatchType::Merge,
                            Ok(pb::PatchType::StrategicMergePatch) => PatchType::StrategicMerge,
                            Ok(pb::PatchType::ApplyPatch) => PatchType::Apply,
                            _ => return Err(ApiError::bad_request("patch type is required")),
                        };
                        self.core
                            .patch(
                                user,
                                &def,
                                namespace,
                                &name,
                                patch_type,
                                &patch.0,
                                &opts,
                                subresource_view,
                            )
                            .await
                    }
                    (None, None) => Err(ApiError::bad_request(
                        "an UPDATE review needs the object or a patch",
                    )),
                }
            }
            "DELETE" => {
                let delete = DeleteOptions {
                    dry_run: true,
                    ..Default::default()
                };
                self.core
                    .delete(user, &def, namespace, &r.name, &delete)
                    .await
            }
            other => Err(ApiError::bad_request(format!(
                "operation {other:?} is not one of CREATE, UPDATE, DELETE"
            ))),
        }
    }
}

#[tonic::async_trait]
impl pb::admission_server::Admission for AdmissionService {
    async fn review(
        &self,
        req: Request<pb::ReviewRequest>,
    ) -> Result<Response<pb::ReviewResponse>, Status> {
        let user = self.reviewer(&req).await?;
        let answer = match self.dry_run(&user, req.into_inner()).await {
            Ok(result) => pb::ReviewResponse {
                allowed: true,
                object: Some(to_pb_object(&result.object)),
                warnings: result.warnings,
                status: None,
                denied_by: String::new(),
            },
            Err(refused) => pb::ReviewResponse {
                allowed: false,
                object: None,
                warnings: Vec::new(),
                status: refused.to_status().as_object().cloned().map(JsonStruct),
                denied_by: refused.denied_by.as_deref().unwrap_or("").to_string(),
            },
        };
        Ok(Response::new(answer))
    }
}
