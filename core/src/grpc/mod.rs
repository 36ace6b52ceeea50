//! The gRPC side: thin adapters from capstan.v1 messages to the same
//! [`ApiCore`] methods the REST facade calls. Objects cross as
//! google.protobuf.Struct so any protobuf JSON printer shows them readably;
//! the generated messages hold them as JSON already (capstan_proto::json).

pub mod admission;
pub mod encode;
pub mod served;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use capstan_proto::json::JsonStruct;
use capstan_proto::v1 as pb;
use futures::StreamExt;
use serde_json::Value;
use tonic::{Request, Response, Status};

use crate::auth::UserInfo;
use crate::authentication::{Admission, Caller, IMPERSONATION_PREFIX};
use crate::discovery::Discovery;
use crate::error::ApiError;
use crate::object;
use crate::registry::ResourceDef;
use crate::verbs::{self, ApiCore, FieldValidation, PatchType, View};
use crate::watch::WatchOptions;

fn string_map(v: Option<&Value>) -> HashMap<String, String> {
    v.and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                .collect()
        })
        .unwrap_or_default()
}

/// The typed envelope of an object: metadata without parsing the body.
pub fn to_pb_object(obj: &Value) -> pb::Object {
    pb::Object {
        api_version: obj
            .get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        kind: obj
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        metadata: Some(object_meta(obj)),
        body: obj.as_object().cloned().map(JsonStruct),
    }
}

pub(crate) fn object_meta(obj: &Value) -> pb::ObjectMeta {
    let meta = object::meta(obj);
    let s = |f: &str| object::meta_str(obj, f).to_string();
    pb::ObjectMeta {
        name: s("name"),
        namespace: s("namespace"),
        uid: s("uid"),
        resource_version: s("resourceVersion"),
        generation: meta
            .and_then(|m| m.get("generation"))
            .and_then(Value::as_i64)
            .unwrap_or(0),
        creation_timestamp: s("creationTimestamp"),
        deletion_timestamp: s("deletionTimestamp"),
        labels: string_map(meta.and_then(|m| m.get("labels"))),
        annotations: string_map(meta.and_then(|m| m.get("annotations"))),
        generate_name: s("generateName"),
    }
}

/// Who a call acts as (caller.rs), read from its certificate's user and
/// its metadata; admitted as `admission` says.
async fn user_of<T>(
    core: &ApiCore,
    req: &Request<T>,
    admission: Admission,
) -> Result<Caller, Status> {
    let impersonation = req.metadata().iter().filter_map(|entry| match entry {
        tonic::metadata::KeyAndValueRef::Ascii(key, value)
            if key.as_str().starts_with(IMPERSONATION_PREFIX) =>
        {
            Some((key.as_str(), value.to_str().ok()?))
        }
        _ => None,
    });
    acting_as(core, req, impersonation, admission).await
}

/// The caller, or whom it impersonates (as `impersonation`'s headers name
/// them) when it may.
async fn acting_as<'h, T>(
    core: &ApiCore,
    req: &Request<T>,
    impersonation: impl IntoIterator<Item = (&'h str, &'h str)>,
    admission: Admission,
) -> Result<Caller, Status> {
    let certificate = core.connection_user(
        req.extensions().get::<UserInfo>(),
        req.extensions()
            .get::<crate::authentication::request_header::FrontProxy>(),
        req.metadata().iter().filter_map(|entry| match entry {
            tonic::metadata::KeyAndValueRef::Ascii(key, value) => {
                Some((key.as_str(), value.to_str().ok()?))
            }
            _ => None,
        }),
    );
    let authorization = req
        .metadata()
        .get("authorization")
        .and_then(|v| v.to_str().ok());
    Ok(core
        .caller(certificate, authorization, impersonation, admission)
        .await?)
}

fn view(subresource: &str) -> Result<View, Status> {
    View::parse((!subresource.is_empty()).then_some(subresource))
        .ok_or_else(|| Status::not_found(format!("subresource {subresource:?} is not served")))
}

fn ns(namespace: &str) -> Option<&str> {
    (!namespace.is_empty()).then_some(namespace)
}

pub struct ResourcesService {
    core: Arc<ApiCore>,
}

impl ResourcesService {
    pub fn new(core: Arc<ApiCore>) -> Self {
        Self { core }
    }

    /// The object a Get names, as the store or the watch cache holds it,
    /// before it is encoded: a cached object carries the gRPC encoding any
    /// earlier reader made (served.rs).
    pub(crate) async fn get_object(
        &self,
        req: Request<pb::GetRequest>,
    ) -> Result<crate::watch::cached::LazyObject, Status> {
        let user = user_of(&self.core, &req, Admission::ReadOnly).await?;
        let r = req.into_inner();
        let def = self.resolve(r.resource.as_ref())?;
        Ok(self
            .core
            .get_view(
                &user,
                &def,
                ns(&r.namespace),
                &r.name,
                View::Main,
                &r.resource_version,
            )
            .await?)
    }

    /// A Create's result, before it is encoded (see grpc_served.rs).
    pub(crate) async fn create_result(
        &self,
        req: Request<pb::CreateRequest>,
    ) -> Result<verbs::WriteResult, Status> {
        let (user, agent, mut r) = write_request(&self.core, req).await?;
        let def = self.resolve(r.resource.as_ref())?;
        let body = required_object(r.object.take())?;
        let opts = write_options(r.options.as_ref(), &agent)?;
        Ok(self
            .core
            .create(&user, &def, ns(&r.namespace), body, &opts)
            .await?)
    }

    /// An Update's result, before it is encoded.
    pub(crate) async fn update_result(
        &self,
        req: Request<pb::UpdateRequest>,
    ) -> Result<verbs::WriteResult, Status> {
        let (user, agent, mut r) = write_request(&self.core, req).await?;
        let def = self.resolve(r.resource.as_ref())?;
        let body = required_object(r.object.take())?;
        let opts = write_options(r.options.as_ref(), &agent)?;
        Ok(self
            .core
            .update(
                &user,
                &def,
                ns(&r.namespace),
                &r.name,
                body,
                &opts,
                view(&r.subresource)?,
            )
            .await?)
    }

    /// A Patch's result, before it is encoded.
    pub(crate) async fn patch_result(
        &self,
        req: Request<pb::PatchRequest>,
    ) -> Result<verbs::WriteResult, Status> {
        let (user, agent, mut r) = write_request(&self.core, req).await?;
        let def = self.resolve(r.resource.as_ref())?;
        let patch_type = match pb::PatchType::try_from(r.r#type) {
            Ok(pb::PatchType::JsonPatch) => PatchType::Json,
            Ok(pb::PatchType::MergePatch) => PatchType::Merge,
            Ok(pb::PatchType::StrategicMergePatch) => PatchType::StrategicMerge,
            Ok(pb::PatchType::ApplyPatch) => PatchType::Apply,
            _ => return Err(Status::invalid_argument("patch type is required")),
        };
        let body = r
            .patch
            .take()
            .map(|patch| patch.0)
            .ok_or_else(|| Status::invalid_argument("patch is required"))?;
        let mut opts = write_options(r.options.as_ref(), &agent)?;
        opts.force = r.force;
        Ok(self
            .core
            .patch(
                &user,
                &def,
                ns(&r.namespace),
                &r.name,
                patch_type,
                &body,
                &opts,
                view(&r.subresource)?,
            )
            .await?)
    }

    /// A Delete's result, before it is encoded.
    pub(crate) async fn delete_result(
        &self,
        req: Request<pb::DeleteRequest>,
    ) -> Result<verbs::WriteResult, Status> {
        let user = user_of(&self.core, &req, Admission::Mutating).await?;
        let r = req.into_inner();
        let def = self.resolve(r.resource.as_ref())?;
        let opts = delete_options(r.options.as_ref())?;
        Ok(self
            .core
            .delete(&user, &def, ns(&r.namespace), &r.name, &opts)
            .await?)
    }

    /// A List's page and the type listed, before they are encoded.
    pub(crate) async fn list_page(
        &self,
        req: Request<pb::ListRequest>,
    ) -> Result<(Arc<ResourceDef>, verbs::ObjectList), Status> {
        let user = user_of(&self.core, &req, Admission::ReadOnly).await?;
        let r = req.into_inner();
        let def = self.resolve(r.resource.as_ref())?;
        let opts = verbs::ListOptions {
            label_selector: r.label_selector,
            field_selector: r.field_selector,
            limit: r.limit,
            continue_token: r.continue_token,
            resource_version: r.resource_version,
            resource_version_match: r.resource_version_match,
            send_initial_events: None,
        };
        let list = self.core.list(&user, &def, ns(&r.namespace), &opts).await?;
        Ok((def, list))
    }

    /// A watch's events, before they are encoded.
    pub(crate) async fn watch_events(
        &self,
        req: Request<pb::WatchRequest>,
    ) -> Result<crate::watch::WatchStream, Status> {
        let user = user_of(&self.core, &req, Admission::LongRunning).await?;
        let r = req.into_inner();
        let def = self.resolve(r.resource.as_ref())?;
        let opts = WatchOptions {
            label_selector: r.label_selector,
            field_selector: r.field_selector,
            resource_version: r.resource_version,
            allow_bookmarks: r.allow_watch_bookmarks,
            timeout: (r.timeout_seconds > 0).then(|| Duration::from_secs(r.timeout_seconds as u64)),
            send_initial_events: r.send_initial_events.then_some(true),
            // What REST clients must name beside sendInitialEvents is
            // implied here.
            resource_version_match: if r.send_initial_events {
                "NotOlderThan".into()
            } else {
                String::new()
            },
        };
        Ok(self
            .core
            .watch(&user, &def, ns(&r.namespace), None, &opts)
            .await?)
    }

    fn resolve(&self, gvr: Option<&pb::GroupVersionResource>) -> Result<Arc<ResourceDef>, Status> {
        let gvr = gvr.ok_or_else(|| {
            Status::invalid_argument("resource (group, version, resource) is required")
        })?;
        Ok(self.core.resolve(&gvr.group, &gvr.version, &gvr.resource)?)
    }
}

fn write_options(
    opts: Option<&pb::WriteOptions>,
    user_agent: &str,
) -> Result<verbs::WriteOptions, ApiError> {
    let default = pb::WriteOptions::default();
    let o = opts.unwrap_or(&default);
    Ok(verbs::WriteOptions {
        dry_run: dry_run(&o.dry_run)?,
        field_manager: {
            verbs::check_field_manager(&o.field_manager)?;
            o.field_manager.clone()
        },
        default_field_manager: verbs::field_manager_from_user_agent(user_agent),
        field_validation: FieldValidation::parse(&o.field_validation)?,
        force: false,
        // A protobuf Struct cannot repeat a key.
        duplicate_fields: Vec::new(),
    })
}

/// A write's object as the generated server encodes it, with the write's
/// warnings. (`ResourcesGrpc` serves the writes itself; the generated
/// methods remain for the trait.)
fn object_response(result: verbs::WriteResult) -> Response<pb::Object> {
    with_warnings(
        Response::new(to_pb_object(&result.object)),
        &result.warnings,
    )
}

/// Adds `warnings` to a response's metadata as `warning` entries, in the
/// form REST sends them as headers (`verbs::warning_values`), so gRPC
/// clients see what kubectl is warned of. A warning that is not ASCII is
/// left out, as the REST facade leaves out one that is no valid header
/// value.
pub(crate) fn with_warnings<T>(mut response: Response<T>, warnings: &[String]) -> Response<T> {
    for warning in verbs::warning_values(warnings) {
        if let Ok(value) = warning.parse() {
            response.metadata_mut().append("warning", value);
        }
    }
    response
}

/// The object a Create or Update must carry, as JSON.
fn required_object(object: Option<JsonStruct>) -> Result<Value, Status> {
    object
        .map(Value::from)
        .ok_or_else(|| Status::invalid_argument("object is required"))
}

/// Who writes, with which User-Agent (the default field manager), and
/// what the request carries.
async fn write_request<T>(core: &ApiCore, req: Request<T>) -> Result<(Caller, String, T), Status> {
    let user = user_of(core, &req, Admission::Mutating).await?;
    Ok((user, user_agent(&req), req.into_inner()))
}

/// The client's User-Agent, which names the field manager by default.
fn user_agent<T>(req: &Request<T>) -> String {
    req.metadata()
        .get("user-agent")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string()
}

fn dry_run(values: &[String]) -> Result<bool, ApiError> {
    match values {
        [] => Ok(false),
        [all] if all == "All" => Ok(true),
        other => Err(ApiError::bad_request(format!(
            "dryRun: Unsupported value: {other:?}: supported values: \"All\""
        ))),
    }
}

fn delete_options(opts: Option<&pb::DeleteOptions>) -> Result<verbs::DeleteOptions, ApiError> {
    let Some(o) = opts else {
        return Ok(verbs::DeleteOptions::default());
    };
    let pre = o.preconditions.as_ref();
    let non_empty = |s: &str| (!s.is_empty()).then(|| s.to_string());
    Ok(verbs::DeleteOptions {
        grace_period_seconds: o.grace_period_seconds,
        precondition_uid: pre.and_then(|p| non_empty(&p.uid)),
        precondition_resource_version: pre.and_then(|p| non_empty(&p.resource_version)),
        propagation_policy: non_empty(&o.propagation_policy),
        dry_run: dry_run(&o.dry_run)?,
    })
}

fn list_response(def: &ResourceDef, list: verbs::ObjectList) -> pb::ListResponse {
    pb::ListResponse {
        api_version: def.api_version(),
        kind: def.list_kind(),
        resource_version: list.resource_version,
        continue_token: list.continue_token.unwrap_or_default(),
        remaining_item_count: list.remaining_item_count,
        items: list.items.iter().map(|o| to_pb_object(o)).collect(),
    }
}

type WatchResponseStream = futures::stream::BoxStream<'static, Result<pb::WatchEvent, Status>>;

#[tonic::async_trait]
impl pb::resources_server::Resources for ResourcesService {
    async fn get(&self, req: Request<pb::GetRequest>) -> Result<Response<pb::Object>, Status> {
        let object = self.get_object(req).await?;
        Ok(Response::new(to_pb_object(&object)))
    }

    async fn list(
        &self,
        req: Request<pb::ListRequest>,
    ) -> Result<Response<pb::ListResponse>, Status> {
        let (def, list) = self.list_page(req).await?;
        Ok(Response::new(list_response(&def, list)))
    }

    async fn create(
        &self,
        req: Request<pb::CreateRequest>,
    ) -> Result<Response<pb::Object>, Status> {
        Ok(object_response(self.create_result(req).await?))
    }

    async fn update(
        &self,
        req: Request<pb::UpdateRequest>,
    ) -> Result<Response<pb::Object>, Status> {
        Ok(object_response(self.update_result(req).await?))
    }

    async fn patch(&self, req: Request<pb::PatchRequest>) -> Result<Response<pb::Object>, Status> {
        Ok(object_response(self.patch_result(req).await?))
    }

    async fn delete(
        &self,
        req: Request<pb::DeleteRequest>,
    ) -> Result<Response<pb::Object>, Status> {
        Ok(object_response(self.delete_result(req).await?))
    }

    async fn delete_collection(
        &self,
        req: Request<pb::DeleteCollectionRequest>,
    ) -> Result<Response<pb::ListResponse>, Status> {
        let user = user_of(&self.core, &req, Admission::Mutating).await?;
        let r = req.into_inner();
        let def = self.resolve(r.resource.as_ref())?;
        let opts = delete_options(r.options.as_ref())?;
        let list_opts = verbs::ListOptions {
            label_selector: r.label_selector,
            field_selector: r.field_selector,
            ..Default::default()
        };
        let list = self
            .core
            .delete_collection(&user, &def, ns(&r.namespace), &list_opts, &opts)
            .await?;
        Ok(Response::new(list_response(&def, list)))
    }

    type WatchStream = WatchResponseStream;

    /// Served by `grpc_served::ResourcesGrpc`, which encodes each change
    /// once; this per-watcher encoding is the generated server's fallback.
    async fn watch(
        &self,
        req: Request<pb::WatchRequest>,
    ) -> Result<Response<Self::WatchStream>, Status> {
        let events = self.watch_events(req).await?;
        let out = events.map(|ev| {
            Ok(pb::WatchEvent {
                r#type: ev.event_type.as_str().to_string(),
                object: Some(to_pb_object(&ev.object)),
            })
        });
        Ok(Response::new(out.boxed()))
    }
}

pub struct DiscoveryService {
    core: Arc<ApiCore>,
    discovery: Arc<Discovery>,
}

impl DiscoveryService {
    pub fn new(core: Arc<ApiCore>, discovery: Arc<Discovery>) -> Self {
        Self { core, discovery }
    }
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

#[tonic::async_trait]
impl pb::discovery_server::Discovery for DiscoveryService {
    async fn server_groups(
        &self,
        req: Request<pb::ServerGroupsRequest>,
    ) -> Result<Response<pb::ServerGroupsResponse>, Status> {
        let caller = user_of(&self.core, &req, Admission::ReadOnly).await?;
        self.core.authorize_path(&caller, "get", "/apis").await?;
        let groups = self
            .core
            .registry
            .snapshot()
            .groups()
            .into_iter()
            .map(|g| {
                let versions: Vec<pb::GroupVersion> = g
                    .versions
                    .iter()
                    .map(|v| pb::GroupVersion {
                        group_version: if g.name.is_empty() {
                            v.clone()
                        } else {
                            format!("{}/{v}", g.name)
                        },
                        version: v.clone(),
                    })
                    .collect();
                pb::ApiGroup {
                    name: g.name,
                    preferred_version: versions.first().cloned(),
                    versions,
                }
            })
            .collect();
        Ok(Response::new(pb::ServerGroupsResponse { groups }))
    }

    async fn server_resources(
        &self,
        req: Request<pb::ServerResourcesRequest>,
    ) -> Result<Response<pb::ServerResourcesResponse>, Status> {
        let caller = user_of(&self.core, &req, Admission::ReadOnly).await?;
        self.core.authorize_path(&caller, "get", "/apis").await?;
        let r = req.into_inner();
        let documents = self.discovery.current();
        let doc = documents
            .resource_list(&r.group, &r.version)
            .ok_or_else(|| {
                Status::not_found(format!(
                    "group version {:?}/{:?} is not served",
                    r.group, r.version
                ))
            })?;
        let resources = doc["resources"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|res| pb::ApiResource {
                        name: res["name"].as_str().unwrap_or_default().to_string(),
                        singular_name: res["singularName"].as_str().unwrap_or_default().to_string(),
                        namespaced: res["namespaced"].as_bool().unwrap_or_default(),
                        group: r.group.clone(),
                        version: r.version.clone(),
                        kind: res["kind"].as_str().unwrap_or_default().to_string(),
                        verbs: strings(&res["verbs"]),
                        short_names: strings(&res["shortNames"]),
                        categories: strings(&res["categories"]),
                        storage_version_hash: res["storageVersionHash"]
                            .as_str()
                            .unwrap_or_default()
                            .to_string(),
                    })
                    .collect()
            })
            .unwrap_or_default();
        Ok(Response::new(pb::ServerResourcesResponse {
            group_version: doc["groupVersion"].as_str().unwrap_or_default().to_string(),
            resources,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn calls_take_a_place_among_those_in_flight() {
        let (_dir, core) = crate::testing::core_unshaped().await;
        let core = Arc::new(core.with_inflight_limits(crate::inflight::InflightLimits::new(1, 1)));
        let service = ResourcesService::new(core.clone());
        let alice = UserInfo::authenticated("alice", vec![]);
        let get = || {
            let mut req = Request::new(pb::GetRequest {
                resource: Some(pb::GroupVersionResource {
                    group: String::new(),
                    version: "v1".into(),
                    resource: "configmaps".into(),
                }),
                namespace: "default".into(),
                name: "x".into(),
                ..Default::default()
            });
            req.extensions_mut().insert(alice.clone());
            req
        };
        let held = core.admit(&alice, false).expect("the only place");
        let refused = service.get_object(get()).await.unwrap_err();
        assert_eq!(refused.code(), tonic::Code::ResourceExhausted);
        assert_eq!(
            refused.message(),
            "Too many requests, please try again later."
        );
        drop(held);
        // Admitted now, and then refused by RBAC: alice may not read.
        let denied = service.get_object(get()).await.unwrap_err();
        assert_eq!(denied.code(), tonic::Code::PermissionDenied);
    }
}
