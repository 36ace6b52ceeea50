//! The self-reviews every authenticated user may create (upstream's
//! system:basic-user role): SelfSubjectAccessReview, "may I?" (`kubectl auth
//! can-i`), SelfSubjectRulesReview, "what may I?" (`kubectl auth can-i
//! --list`), and SelfSubjectReview, "who am I?" (`kubectl auth whoami`).
//! Each is answered from the request and its user, and stored nowhere.

use serde_json::{json, Map, Value};

use crate::auth::{AccessRequest, ResourceAttributes, UserInfo};
use crate::error::{ApiError, FieldError};
use crate::kinds::{Handling, Review};
use crate::registry::ResourceDef;
use crate::verbs::ApiCore;

/// The self-reviews by group; upstream's system:basic-user role grants
/// creating them, and the self-rules review lists them as that rule.
pub(crate) const SELF_REVIEWS: &[(&str, &[&str])] = &[
    (
        "authorization.k8s.io",
        &["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
    ),
    ("authentication.k8s.io", &["selfsubjectreviews"]),
];

/// The review with its status filled in, as upstream answers a create of it.
pub async fn answer(
    core: &ApiCore,
    user: &UserInfo,
    def: &ResourceDef,
    review: Value,
) -> Result<Value, ApiError> {
    let Value::Object(mut review) = review else {
        return Err(ApiError::bad_request("a review must be a JSON object"));
    };
    let spec = review.get("spec").unwrap_or(&Value::Null);
    let Handling::Review(kind) = def.handling() else {
        return Err(ApiError::internal(format!("{def:?} is not a review")));
    };
    let status = match kind {
        Review::WhoAmI => who_am_i(user),
        Review::Token => {
            if text(spec, "token").is_empty() {
                return Err(ApiError::bad_request(
                    "token is required for TokenReview in authentication",
                ));
            }
            core.review_token(spec).await
        }
        Review::MyRules => {
            let namespace = text(spec, "namespace");
            core.rules_review(user, (!namespace.is_empty()).then_some(namespace))
        }
        Review::MayThey => {
            let namespace = review
                .get("metadata")
                .and_then(|m| m.get("namespace"))
                .and_then(Value::as_str)
                .unwrap_or("");
            may_they(core, def, namespace, spec).await?
        }
        Review::MayI => may_i(core, user, def, spec).await?,
    };
    // Never stored, so never given a creation time: upstream's typed
    // encoding writes it as null.
    let metadata = review
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Some(metadata) = metadata.as_object_mut() {
        metadata.entry("creationTimestamp").or_insert(Value::Null);
    }
    review.insert("status".into(), status);
    Ok(Value::Object(review))
}

fn who_am_i(user: &UserInfo) -> Value {
    json!({ "userInfo": user.to_json() })
}

fn text<'a>(attributes: &'a Value, key: &str) -> &'a str {
    attributes.get(key).and_then(Value::as_str).unwrap_or("")
}

fn nonempty<'a>(attributes: &'a Value, key: &str) -> Option<&'a str> {
    Some(text(attributes, key)).filter(|value| !value.is_empty())
}

fn present<'a>(spec: &'a Value, key: &str) -> Option<&'a Value> {
    spec.get(key).filter(|v| !v.is_null())
}

/// A (Local)SubjectAccessReview: ValidateSubjectAccessReviewSpec (and
/// ValidateLocalSubjectAccessReview), then the authorizer's decision for
/// the user and groups the spec names, exactly those (no group is added).
async fn may_they(
    core: &ApiCore,
    def: &ResourceDef,
    namespace: &str,
    spec: &Value,
) -> Result<Value, ApiError> {
    let mut errs = attribute_errors(spec);
    let user = text(spec, "user");
    let groups = crate::object::strings_at(spec, "groups");
    if user.is_empty() && groups.is_empty() {
        errs.push(FieldError::invalid(
            "spec.user",
            "",
            "at least one of user or group must be specified",
        ));
    }
    if def.namespaced {
        if let Some(attributes) = present(spec, "resourceAttributes") {
            let asked = text(attributes, "namespace");
            if asked != namespace {
                errs.push(FieldError::invalid(
                    "spec.resourceAttributes.namespace",
                    asked,
                    "must match metadata.namespace",
                ));
            }
        }
        if let Some(attributes) = present(spec, "nonResourceAttributes") {
            errs.push(FieldError::invalid_rendered(
                "spec.nonResourceAttributes",
                &non_resource_rendered(attributes),
                "disallowed on this kind of request",
            ));
        }
    }
    if !errs.is_empty() {
        return Err(ApiError::invalid(&def.group, &def.kind, "", errs));
    }
    let extra = spec
        .get("extra")
        .and_then(Value::as_object)
        .map(|extra| {
            extra
                .iter()
                .map(|(key, values)| (key.clone(), crate::object::strings(values)))
                .collect()
        })
        .unwrap_or_default();
    let subject = UserInfo {
        name: user.to_string(),
        uid: text(spec, "uid").to_string(),
        groups,
        extra,
    };
    Ok(decision_status(core, &subject, spec).await)
}

/// Go's %#v of the internal struct, as upstream's field errors print it.
fn non_resource_rendered(attributes: &Value) -> String {
    format!(
        "authorization.NonResourceAttributes{{Path:{:?}, Verb:{:?}}}",
        text(attributes, "path"),
        text(attributes, "verb")
    )
}

/// Exactly one of resourceAttributes and nonResourceAttributes.
fn attribute_errors(spec: &Value) -> Vec<FieldError> {
    let resource = present(spec, "resourceAttributes");
    let non_resource = present(spec, "nonResourceAttributes");
    let mut errs = Vec::new();
    if let (Some(_), Some(attributes)) = (resource, non_resource) {
        errs.push(FieldError::invalid_rendered(
            "spec.nonResourceAttributes",
            &non_resource_rendered(attributes),
            "cannot be specified in combination with resourceAttributes",
        ));
    }
    if resource.is_none() && non_resource.is_none() {
        errs.push(FieldError::invalid(
            "spec.resourceAttributes",
            "null",
            "exactly one of nonResourceAttributes or resourceAttributes must be specified",
        ));
    }
    errs
}

/// ValidateSelfSubjectAccessReviewSpec, then the authorizer's decision on
/// the attributes asked about.
async fn may_i(
    core: &ApiCore,
    user: &UserInfo,
    def: &ResourceDef,
    spec: &Value,
) -> Result<Value, ApiError> {
    let errs = attribute_errors(spec);
    if !errs.is_empty() {
        return Err(ApiError::invalid(&def.group, &def.kind, "", errs));
    }
    Ok(decision_status(core, user, spec).await)
}

/// The authorizer's decision on the attributes a validated spec asks
/// about, as a review's status (with upstream's reason when allowed).
async fn decision_status(core: &ApiCore, user: &UserInfo, spec: &Value) -> Value {
    let decision = match present(spec, "resourceAttributes") {
        Some(attributes) => {
            let attrs = ResourceAttributes {
                verb: text(attributes, "verb"),
                group: text(attributes, "group"),
                resource: text(attributes, "resource"),
                subresource: nonempty(attributes, "subresource"),
                namespace: nonempty(attributes, "namespace"),
                name: nonempty(attributes, "name"),
            };
            core.decide_current(user, &AccessRequest::Resource(&attrs))
                .await
        }
        None => {
            let attributes = present(spec, "nonResourceAttributes").unwrap_or(&Value::Null);
            let request = AccessRequest::Path {
                verb: text(attributes, "verb"),
                path: text(attributes, "path"),
            };
            core.decide_current(user, &request).await
        }
    };
    let mut status = json!({ "allowed": decision.allowed });
    if !decision.reason.is_empty() {
        status["reason"] = json!(decision.reason);
    }
    status
}

#[cfg(test)]
mod tests {
    use super::*;

    fn def(group: &str, resource: &str) -> std::sync::Arc<ResourceDef> {
        crate::registry::Registry::builtin()
            .lookup(group, "v1", resource)
            .expect("a served review")
    }

    fn admin() -> UserInfo {
        UserInfo::authenticated("admin", vec![crate::auth::MASTERS_GROUP.into()])
    }

    fn viewer() -> UserInfo {
        UserInfo::authenticated("viewer", vec![])
    }

    #[tokio::test]
    async fn access_reviews_answer_with_the_authorizers_decision() {
        let (_dir, core) = crate::testing::core_unshaped().await;
        let sar = def("authorization.k8s.io", "selfsubjectaccessreviews");
        let ask = |user: UserInfo, spec: Value| {
            let review = json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview", "spec": spec});
            let (core, sar) = (&core, sar.clone());
            async move { answer(core, &user, &sar, review).await.expect("an answer") }
        };
        let pods = json!({"resourceAttributes": {"namespace": "default", "verb": "create", "resource": "pods"}});
        let answered = ask(admin(), pods.clone()).await;
        assert_eq!(answered["status"], json!({"allowed": true}));
        assert_eq!(answered["metadata"], json!({"creationTimestamp": null}));
        assert_eq!(answered["spec"], pods);
        assert_eq!(
            ask(viewer(), pods).await["status"],
            json!({"allowed": false})
        );
        // Users may ask about themselves, and read discovery: the bootstrap
        // policy's bindings, named as upstream names them.
        let review_itself = json!({"resourceAttributes": {"verb": "create", "group": "authorization.k8s.io", "resource": "selfsubjectaccessreviews"}});
        assert_eq!(
            ask(viewer(), review_itself).await["status"],
            json!({"allowed": true, "reason": "RBAC: allowed by ClusterRoleBinding \"system:basic-user\" of ClusterRole \"system:basic-user\" to Group \"system:authenticated\""})
        );
        let discovery = json!({"nonResourceAttributes": {"verb": "get", "path": "/api"}});
        assert_eq!(ask(viewer(), discovery).await["status"]["allowed"], true);
        let metrics = json!({"nonResourceAttributes": {"verb": "get", "path": "/metrics"}});
        assert_eq!(ask(viewer(), metrics).await["status"]["allowed"], false);
    }

    #[tokio::test]
    async fn access_reviews_need_exactly_one_kind_of_attributes() {
        let (_dir, core) = crate::testing::core_unshaped().await;
        let sar = def("authorization.k8s.io", "selfsubjectaccessreviews");
        let neither = answer(&core, &admin(), &sar, json!({"spec": {}}))
            .await
            .unwrap_err();
        assert_eq!(neither.code(), 422);
        assert_eq!(
            neither.message,
            "SelfSubjectAccessReview.authorization.k8s.io \"\" is invalid: spec.resourceAttributes: Invalid value: \"null\": exactly one of nonResourceAttributes or resourceAttributes must be specified"
        );
        let both = answer(
            &core,
            &admin(),
            &sar,
            json!({"spec": {"resourceAttributes": {"verb": "get"}, "nonResourceAttributes": {"path": "/api", "verb": "get"}}}),
        )
        .await
        .unwrap_err();
        assert_eq!(
            both.message,
            "SelfSubjectAccessReview.authorization.k8s.io \"\" is invalid: spec.nonResourceAttributes: Invalid value: authorization.NonResourceAttributes{Path:\"/api\", Verb:\"get\"}: cannot be specified in combination with resourceAttributes"
        );
    }

    #[tokio::test]
    async fn rules_reviews_list_what_the_authorizer_allows() {
        let (_dir, core) = crate::testing::core_unshaped().await;
        let ssrr = def("authorization.k8s.io", "selfsubjectrulesreviews");
        let review = json!({"spec": {"namespace": "default"}});
        let rules = answer(&core, &viewer(), &ssrr, review.clone())
            .await
            .expect("an answer")["status"]
            .clone();
        assert_eq!(rules["incomplete"], false);
        // Every rule listed for a user is one the authorizer grants them.
        for rule in rules["resourceRules"].as_array().expect("rules") {
            for resource in rule["resources"].as_array().expect("resources") {
                let attrs = ResourceAttributes {
                    verb: rule["verbs"][0].as_str().unwrap_or(""),
                    group: rule["apiGroups"][0].as_str().unwrap_or(""),
                    resource: resource.as_str().unwrap_or(""),
                    subresource: None,
                    namespace: None,
                    name: None,
                };
                let request = AccessRequest::Resource(&attrs);
                assert!(core.decide(&viewer(), &request).allowed, "{rule}");
            }
        }
        for rule in rules["nonResourceRules"].as_array().expect("rules") {
            for url in rule["nonResourceURLs"].as_array().expect("urls") {
                let path = url.as_str().unwrap_or("").replace('*', "x");
                let request = AccessRequest::Path {
                    verb: "get",
                    path: &path,
                };
                assert!(core.decide(&viewer(), &request).allowed, "{path}");
            }
        }
        assert_eq!(rules["resourceRules"].as_array().map(Vec::len), Some(2));
        // system:masters is bound to cluster-admin's wildcards.
        let admin_rules = answer(&core, &admin(), &ssrr, review)
            .await
            .expect("an answer")["status"]
            .clone();
        assert_eq!(
            admin_rules["resourceRules"][0],
            json!({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]})
        );
        assert_eq!(
            admin_rules["nonResourceRules"][0],
            json!({"verbs": ["*"], "nonResourceURLs": ["*"]})
        );
    }

    #[tokio::test]
    async fn subject_access_reviews_decide_for_the_user_they_name() {
        let (_dir, core) = crate::testing::core_unshaped().await;
        let sar = def("authorization.k8s.io", "subjectaccessreviews");
        let ask = |spec: Value| {
            let (core, sar) = (&core, sar.clone());
            async move { answer(core, &admin(), &sar, json!({"spec": spec})).await }
        };
        // Exactly the groups named: system:authenticated is not assumed.
        let discovery =
            json!({"nonResourceAttributes": {"verb": "get", "path": "/api"}, "user": "alice"});
        assert_eq!(
            ask(discovery).await.expect("an answer")["status"]["allowed"],
            false
        );
        let as_authenticated = json!({"nonResourceAttributes": {"verb": "get", "path": "/api"}, "user": "alice", "groups": ["system:authenticated"]});
        assert_eq!(
            ask(as_authenticated).await.expect("an answer")["status"],
            json!({"allowed": true, "reason": "RBAC: allowed by ClusterRoleBinding \"system:discovery\" of ClusterRole \"system:discovery\" to Group \"system:authenticated\""})
        );
        let masters = json!({"resourceAttributes": {"verb": "delete", "resource": "nodes"}, "groups": ["system:masters"]});
        assert_eq!(
            ask(masters).await.expect("an answer")["status"],
            json!({"allowed": true})
        );
        let nobody = ask(json!({"resourceAttributes": {"verb": "get", "resource": "pods"}}))
            .await
            .unwrap_err();
        assert_eq!(
            nobody.message,
            "SubjectAccessReview.authorization.k8s.io \"\" is invalid: spec.user: Invalid value: \"\": at least one of user or group must be specified"
        );

        // A local review asks about its own namespace only.
        let local = def("authorization.k8s.io", "localsubjectaccessreviews");
        let review = json!({"metadata": {"namespace": "team"}, "spec": {
            "user": "alice",
            "resourceAttributes": {"verb": "get", "resource": "pods", "namespace": "default"},
        }});
        let err = answer(&core, &admin(), &local, review).await.unwrap_err();
        assert_eq!(
            err.message,
            "LocalSubjectAccessReview.authorization.k8s.io \"\" is invalid: spec.resourceAttributes.namespace: Invalid value: \"default\": must match metadata.namespace"
        );
    }

    #[tokio::test]
    async fn subject_reviews_name_the_user() {
        let (_dir, core) = crate::testing::core_unshaped().await;
        let ssr = def("authentication.k8s.io", "selfsubjectreviews");
        let answered = answer(
            &core,
            &viewer(),
            &ssr,
            json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}),
        )
        .await
        .expect("an answer");
        assert_eq!(
            answered["status"],
            json!({"userInfo": {"username": "viewer", "groups": ["system:authenticated"]}})
        );
        assert!(!ssr.is_stored());
    }
}
