//! The self-reviews every authenticated user may create (upstream's
//! system:basic-user role): SelfSubjectAccessReview, "may I?" (`kubectl auth
//! can-i`), SelfSubjectRulesReview, "what may I?" (`kubectl auth can-i
//! --list`), and SelfSubjectReview, "who am I?" (`kubectl auth whoami`).
//! Each is answered from the request and its user, and stored nowhere.

use serde_json::{json, Map, Value};

use crate::auth::{authorize_path, authorize_resource, ResourceAttributes, UserInfo};
use crate::error::{ApiError, FieldError};
use crate::registry::ResourceDef;

/// The self-reviews by group; upstream's system:basic-user role grants
/// creating them, and the self-rules review lists them as that rule.
const SELF_REVIEWS: &[(&str, &[&str])] = &[
    (
        "authorization.k8s.io",
        &["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
    ),
    ("authentication.k8s.io", &["selfsubjectreviews"]),
];

pub fn is_self_review(group: &str, resource: &str) -> bool {
    SELF_REVIEWS
        .iter()
        .any(|(g, resources)| *g == group && resources.contains(&resource))
}

/// The review with its status filled in, as upstream answers a create of it.
pub fn answer(user: &UserInfo, def: &ResourceDef, review: Value) -> Result<Value, ApiError> {
    let Value::Object(mut review) = review else {
        return Err(ApiError::bad_request("a review must be a JSON object"));
    };
    let status = match def.resource {
        "selfsubjectreviews" => who_am_i(user),
        "selfsubjectrulesreviews" => what_may_i(user),
        _ => may_i(user, def, review.get("spec").unwrap_or(&Value::Null))?,
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
    json!({"userInfo": {"username": user.name, "groups": user.groups}})
}

/// The rules the authorizer applies to `user` (auth.rs), as the roles
/// upstream's bootstrap policy binds would list them: cluster-admin for
/// system:masters, then system:basic-user, system:discovery and
/// system:public-info-viewer for every authenticated user, rendered from
/// the lists the authorizer itself checks.
fn what_may_i(user: &UserInfo) -> Value {
    let mut resource_rules = Vec::new();
    let mut non_resource_rules = Vec::new();
    if user.in_group(crate::auth::MASTERS_GROUP) {
        resource_rules.push(json!({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}));
        non_resource_rules.push(json!({"verbs": ["*"], "nonResourceURLs": ["*"]}));
    }
    for (group, resources) in SELF_REVIEWS {
        resource_rules
            .push(json!({"verbs": ["create"], "apiGroups": [group], "resources": resources}));
    }
    for urls in [crate::auth::DISCOVERY_URLS, crate::auth::PUBLIC_URLS] {
        non_resource_rules.push(json!({"verbs": ["get"], "nonResourceURLs": urls}));
    }
    json!({
        "resourceRules": resource_rules,
        "nonResourceRules": non_resource_rules,
        "incomplete": false,
    })
}

fn text<'a>(attributes: &'a Value, key: &str) -> &'a str {
    attributes.get(key).and_then(Value::as_str).unwrap_or("")
}

fn present<'a>(spec: &'a Value, key: &str) -> Option<&'a Value> {
    spec.get(key).filter(|v| !v.is_null())
}

/// ValidateSelfSubjectAccessReviewSpec, then the authorizer's decision on
/// the attributes asked about.
fn may_i(user: &UserInfo, def: &ResourceDef, spec: &Value) -> Result<Value, ApiError> {
    let resource = present(spec, "resourceAttributes");
    let non_resource = present(spec, "nonResourceAttributes");
    let mut errs = Vec::new();
    if let (Some(_), Some(attributes)) = (resource, non_resource) {
        // Go's %#v of the internal struct, as upstream's field error prints it.
        let rendered = format!(
            "authorization.NonResourceAttributes{{Path:{:?}, Verb:{:?}}}",
            text(attributes, "path"),
            text(attributes, "verb")
        );
        errs.push(FieldError::invalid_rendered(
            "spec.nonResourceAttributes",
            &rendered,
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
    if !errs.is_empty() {
        return Err(ApiError::invalid(def.group, def.kind, "", errs));
    }
    let allowed = match (resource, non_resource) {
        (Some(attributes), _) => {
            let namespace = text(attributes, "namespace");
            let name = text(attributes, "name");
            authorize_resource(
                user,
                &ResourceAttributes {
                    verb: text(attributes, "verb"),
                    group: text(attributes, "group"),
                    resource: text(attributes, "resource"),
                    namespace: (!namespace.is_empty()).then_some(namespace),
                    name: (!name.is_empty()).then_some(name),
                },
            )
            .is_ok()
        }
        (None, Some(attributes)) => {
            authorize_path(user, text(attributes, "verb"), text(attributes, "path")).is_ok()
        }
        (None, None) => false,
    };
    // Without role objects there is no binding to name as the reason, and
    // a denial, as RBAC's, gives none.
    Ok(json!({ "allowed": allowed }))
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

    #[test]
    fn access_reviews_answer_with_the_authorizers_decision() {
        let sar = def("authorization.k8s.io", "selfsubjectaccessreviews");
        let ask = |user: &UserInfo, spec: Value| {
            let review = json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview", "spec": spec});
            answer(user, &sar, review).expect("an answer")
        };
        let pods = json!({"resourceAttributes": {"namespace": "default", "verb": "create", "resource": "pods"}});
        let answered = ask(&admin(), pods.clone());
        assert_eq!(answered["status"], json!({"allowed": true}));
        assert_eq!(answered["metadata"], json!({"creationTimestamp": null}));
        assert_eq!(answered["spec"], pods);
        assert_eq!(ask(&viewer(), pods)["status"], json!({"allowed": false}));
        // Users may ask about themselves, and read discovery.
        let review_itself = json!({"resourceAttributes": {"verb": "create", "group": "authorization.k8s.io", "resource": "selfsubjectaccessreviews"}});
        assert_eq!(ask(&viewer(), review_itself)["status"]["allowed"], true);
        let discovery = json!({"nonResourceAttributes": {"verb": "get", "path": "/api"}});
        assert_eq!(ask(&viewer(), discovery)["status"]["allowed"], true);
        let metrics = json!({"nonResourceAttributes": {"verb": "get", "path": "/metrics"}});
        assert_eq!(ask(&viewer(), metrics)["status"]["allowed"], false);
    }

    #[test]
    fn access_reviews_need_exactly_one_kind_of_attributes() {
        let sar = def("authorization.k8s.io", "selfsubjectaccessreviews");
        let neither = answer(&admin(), &sar, json!({"spec": {}})).unwrap_err();
        assert_eq!(neither.code(), 422);
        assert_eq!(
            neither.message,
            "SelfSubjectAccessReview.authorization.k8s.io \"\" is invalid: spec.resourceAttributes: Invalid value: \"null\": exactly one of nonResourceAttributes or resourceAttributes must be specified"
        );
        let both = answer(
            &admin(),
            &sar,
            json!({"spec": {"resourceAttributes": {"verb": "get"}, "nonResourceAttributes": {"path": "/api", "verb": "get"}}}),
        )
        .unwrap_err();
        assert_eq!(
            both.message,
            "SelfSubjectAccessReview.authorization.k8s.io \"\" is invalid: spec.nonResourceAttributes: Invalid value: authorization.NonResourceAttributes{Path:\"/api\", Verb:\"get\"}: cannot be specified in combination with resourceAttributes"
        );
    }

    #[test]
    fn rules_reviews_list_what_the_authorizer_allows() {
        let ssrr = def("authorization.k8s.io", "selfsubjectrulesreviews");
        let review = json!({"spec": {"namespace": "default"}});
        let rules = answer(&viewer(), &ssrr, review.clone()).expect("an answer")["status"].clone();
        assert_eq!(rules["incomplete"], false);
        // Every rule listed for a user is one the authorizer grants them.
        for rule in rules["resourceRules"].as_array().expect("rules") {
            for resource in rule["resources"].as_array().expect("resources") {
                let attrs = ResourceAttributes {
                    verb: rule["verbs"][0].as_str().unwrap_or(""),
                    group: rule["apiGroups"][0].as_str().unwrap_or(""),
                    resource: resource.as_str().unwrap_or(""),
                    namespace: None,
                    name: None,
                };
                assert!(authorize_resource(&viewer(), &attrs).is_ok(), "{rule}");
            }
        }
        for rule in rules["nonResourceRules"].as_array().expect("rules") {
            for url in rule["nonResourceURLs"].as_array().expect("urls") {
                let path = url.as_str().unwrap_or("").replace('*', "x");
                assert!(authorize_path(&viewer(), "get", &path).is_ok(), "{path}");
            }
        }
        assert_eq!(rules["resourceRules"].as_array().map(Vec::len), Some(2));
        // system:masters gets cluster-admin's wildcards first.
        let admin_rules = answer(&admin(), &ssrr, review).expect("an answer")["status"].clone();
        assert_eq!(
            admin_rules["resourceRules"][0],
            json!({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]})
        );
        assert_eq!(
            admin_rules["nonResourceRules"][0],
            json!({"verbs": ["*"], "nonResourceURLs": ["*"]})
        );
    }

    #[test]
    fn subject_reviews_name_the_user() {
        let ssr = def("authentication.k8s.io", "selfsubjectreviews");
        let answered = answer(
            &viewer(),
            &ssr,
            json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}),
        )
        .expect("an answer");
        assert_eq!(
            answered["status"],
            json!({"userInfo": {"username": "viewer", "groups": ["system:authenticated"]}})
        );
        assert!(!ssr.is_stored());
    }
}
