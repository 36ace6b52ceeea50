//! Bad requests over raw HTTPS (curl): each gets upstream's status code and a
//! `metav1.Status`, stores nothing, and leaves the server serving.

use crate::common;
use crate::common::{item_names, TestServer};
use serde_json::{json, Value};

const NS: &str = "bad";
const CMS: &str = "/api/v1/namespaces/bad/configmaps";

fn server() -> TestServer {
    let s = TestServer::start();
    s.create_namespace(NS);
    s
}

fn cm(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"k": "v"}})
}

fn post(s: &TestServer, path: &str, content_type: &str, body: &[u8]) -> common::HttpResponse {
    s.curl("POST", path, &[("Content-Type", content_type)], Some(body))
}

/// Creates a ConfigMap through REST; returns the stored object.
#[track_caller]
fn create_cm(s: &TestServer, name: &str) -> Value {
    let resp = s.post_json(CMS, &cm(name));
    assert_eq!(resp.status, 201, "{resp:#?}");
    resp.json()
}

/// The names of the ConfigMaps in the test namespace.
fn stored_names(s: &TestServer) -> Vec<String> {
    item_names(&s.get_json(CMS))
        .into_iter()
        .map(str::to_string)
        .collect()
}

/// Nothing named `name` was stored, the namespace holds exactly `expected`,
/// and the server still answers ordinary requests.
#[track_caller]
fn assert_nothing_stored(s: &TestServer, name: &str, expected: &[&str]) {
    let resp = s.get(&format!("{CMS}/{name}"));
    let status = resp.assert_status(404, "NotFound");
    assert_eq!(
        status["message"],
        format!("configmaps \"{name}\" not found")
    );
    assert_eq!(stored_names(s), expected);
    assert_still_serving(s);
}

#[track_caller]
fn assert_still_serving(s: &TestServer) {
    let resp = s.get("/readyz");
    assert_eq!((resp.status, resp.body.as_str()), (200, "ok"), "{resp:#?}");
    let ns = s.get_json(&format!("/api/v1/namespaces/{NS}"));
    assert_eq!(ns["metadata"]["name"], NS);
    let probe = format!("probe-{}", std::process::id());
    let resp = s.post_json(
        CMS,
        &json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": probe}}),
    );
    assert_eq!(
        resp.status, 201,
        "the server no longer accepts writes: {resp:#?}"
    );
    let resp = s.curl("DELETE", &format!("{CMS}/{probe}"), &[], None);
    assert_eq!(resp.status, 200, "{resp:#?}");
}

#[test]
fn malformed_json_is_bad_request() {
    let s = server();
    let resp = post(
        &s,
        CMS,
        "application/json",
        br#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"broken"}"#,
    );
    let status = resp.assert_status(400, "BadRequest");
    assert!(status["message"].as_str().unwrap().len() > 10, "{status:#}");
    let resp = post(&s, CMS, "application/json", b"{not json at all");
    resp.assert_status(400, "BadRequest");
    let resp = post(&s, CMS, "application/json", b"");
    resp.assert_status(400, "BadRequest");
    // Valid JSON that is not an object.
    let resp = post(&s, CMS, "application/json", b"[1,2,3]");
    resp.assert_status(400, "BadRequest");
    assert_nothing_stored(&s, "broken", &[]);
}

#[test]
fn malformed_yaml_is_bad_request() {
    let s = server();
    let yaml = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: broken\ndata: [unclosed\n";
    let resp = post(&s, CMS, "application/yaml", yaml);
    resp.assert_status(400, "BadRequest");
    let yaml = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: broken\n   bad-indent: x\n";
    let resp = post(&s, CMS, "application/yaml", yaml);
    resp.assert_status(400, "BadRequest");
    assert_nothing_stored(&s, "broken", &[]);
    // Well-formed YAML is accepted.
    let resp = post(
        &s,
        CMS,
        "application/yaml",
        b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fine\ndata:\n  k: v\n",
    );
    assert_eq!(resp.status, 201, "{resp:#?}");
    assert_eq!(stored_names(&s), ["fine"]);
}

#[test]
fn kind_mismatching_the_path_is_bad_request() {
    let s = server();
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "intruder"},
                     "spec": {"containers": [{"name": "c", "image": "busybox"}]}});
    let resp = s.post_json(CMS, &pod);
    let status = resp.assert_status(400, "BadRequest");
    assert!(
        status["message"].as_str().unwrap().contains("Pod"),
        "{status:#}"
    );
    assert_nothing_stored(&s, "intruder", &[]);
    let resp = s.get("/api/v1/namespaces/bad/pods/intruder");
    resp.assert_status(404, "NotFound");
}

#[test]
fn api_version_mismatch_is_bad_request() {
    let s = server();
    let mut body = cm("wrong-version");
    body["apiVersion"] = json!("apps/v1");
    s.post_json(CMS, &body).assert_status(400, "BadRequest");
    body["apiVersion"] = json!("v2");
    s.post_json(CMS, &body).assert_status(400, "BadRequest");
    assert_nothing_stored(&s, "wrong-version", &[]);
}

#[test]
fn put_with_a_different_name_is_bad_request() {
    let s = server();
    let stored = create_cm(&s, "y");
    let mut body = stored.clone();
    body["metadata"]["name"] = json!("x");
    body["data"] = json!({"changed": "yes"});
    let resp = s.curl(
        "PUT",
        &format!("{CMS}/y"),
        &[("Content-Type", "application/json")],
        Some(body.to_string().as_bytes()),
    );
    let status = resp.assert_status(400, "BadRequest");
    assert_eq!(
        status["message"],
        "the name of the object (x) does not match the name on the URL (y)"
    );
    assert_nothing_stored(&s, "x", &["y"]);
    assert_eq!(s.get_json(&format!("{CMS}/y")), stored);
}

#[test]
fn invalid_name_is_unprocessable() {
    let s = server();
    let resp = s.post_json(CMS, &cm("Bad_Name"));
    let status = resp.assert_status(422, "Invalid");
    let message = status["message"].as_str().unwrap();
    assert!(
        message.starts_with("ConfigMap \"Bad_Name\" is invalid: metadata.name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters"),
        "{message}"
    );
    assert_eq!(status["details"]["name"], "Bad_Name");
    assert_eq!(status["details"]["kind"], "ConfigMap");
    assert_eq!(status["details"]["causes"][0]["field"], "metadata.name");
    assert_eq!(
        status["details"]["causes"][0]["reason"],
        "FieldValueInvalid"
    );
    let resp = s.get(&format!("{CMS}/Bad_Name"));
    assert_eq!(resp.status, 404, "{resp:#?}");
    assert_eq!(stored_names(&s), Vec::<String>::new());
    assert_still_serving(&s);
}

#[test]
fn unknown_resource_is_not_found() {
    let s = server();
    for path in [
        "/api/v1/foos",
        "/api/v1/namespaces/bad/foos",
        "/api/v1/namespaces/bad/foos/x",
        "/api/v2/configmaps",
    ] {
        s.get(path).assert_status(404, "NotFound");
    }
    let resp = s.post_json(
        "/api/v1/namespaces/bad/foos",
        &json!({"apiVersion": "v1", "kind": "Foo", "metadata": {"name": "x"}}),
    );
    resp.assert_status(404, "NotFound");
    assert_still_serving(&s);
}

#[test]
fn unknown_group_is_not_found() {
    let s = server();
    for path in [
        "/apis/nope.example.com",
        "/apis/nope.example.com/v1",
        "/apis/nope.example.com/v1/foos",
        "/apis/apps/v9/deployments",
        "/apis/apps/v1/foos",
    ] {
        s.get(path).assert_status(404, "NotFound");
    }
    let resp = s.post_json(
        "/apis/nope.example.com/v1/namespaces/bad/foos",
        &json!({"apiVersion": "nope.example.com/v1", "kind": "Foo", "metadata": {"name": "x"}}),
    );
    resp.assert_status(404, "NotFound");
    assert_still_serving(&s);
}

#[test]
fn body_over_3_mib_is_too_large() {
    let s = server();
    let mut body = cm("huge");
    body["data"] = json!({"blob": "x".repeat(3 * 1024 * 1024 + 1)});
    let bytes = body.to_string().into_bytes();
    assert!(bytes.len() > 3 * 1024 * 1024);
    let resp = post(&s, CMS, "application/json", &bytes);
    resp.assert_status(413, "RequestEntityTooLarge");
    assert_nothing_stored(&s, "huge", &[]);
    // An update with a huge body is refused the same way.
    let stored = create_cm(&s, "small");
    let mut huge = stored.clone();
    huge["data"] = json!({"blob": "y".repeat(3 * 1024 * 1024 + 1)});
    let resp = s.curl(
        "PUT",
        &format!("{CMS}/small"),
        &[("Content-Type", "application/json")],
        Some(huge.to_string().as_bytes()),
    );
    resp.assert_status(413, "RequestEntityTooLarge");
    assert_eq!(s.get_json(&format!("{CMS}/small")), stored);
    assert_still_serving(&s);
}

/// Over HTTP/2 the 413 reaches the client every time: the server reads the
/// rest of the oversized body before answering, as Go's server lets the
/// client finish, instead of answering mid-upload and resetting the stream
/// (which curl reported as an error instead of the answer).
#[test]
fn an_oversized_body_over_http2_gets_its_413_every_time() {
    let s = server();
    let mut body = cm("huge2");
    body["data"] = json!({"blob": "x".repeat(4 * 1024 * 1024)});
    let body_in = s.scratch("huge-h2");
    std::fs::write(&body_in, body.to_string()).expect("write the body");
    for attempt in 0..10 {
        let body_out = s.scratch("huge-h2-answer");
        let mut cmd = s.curl_command(true);
        cmd.args([
            "--http2",
            "-X",
            "POST",
            "-H",
            "Content-Type: application/json",
        ])
        .arg("--data-binary")
        .arg(format!("@{}", body_in.display()))
        .args(["-w", "%{http_code} %{http_version}", "-o"])
        .arg(&body_out)
        .arg(format!("{}{CMS}", s.base_url()));
        let out = common::run_command(&mut cmd, None, common::COMMAND_TIMEOUT);
        assert!(
            out.status.success(),
            "attempt {attempt}: {}",
            common::describe_output("curl --http2", &out)
        );
        assert_eq!(common::text(&out.stdout), "413 2", "attempt {attempt}");
        let status: Value = serde_json::from_slice(&std::fs::read(&body_out).expect("the answer"))
            .expect("a Status");
        assert_eq!(status["reason"], "RequestEntityTooLarge");
    }
    assert_nothing_stored(&s, "huge2", &[]);
}

#[test]
fn unsupported_content_type_is_415() {
    let s = server();
    let resp = post(&s, CMS, "text/plain", cm("plain").to_string().as_bytes());
    let status = resp.assert_status(415, "UnsupportedMediaType");
    assert!(
        status["message"].as_str().unwrap().starts_with("the body of the request was in an unknown format - accepted media types include: application/json, application/yaml"),
        "{status:#}"
    );
    // A patch with a content type that is not a patch type.
    create_cm(&s, "target");
    let resp = s.curl(
        "PATCH",
        &format!("{CMS}/target"),
        &[("Content-Type", "application/json")],
        Some(br#"{"data":{"k":"patched"}}"#),
    );
    resp.assert_status(415, "UnsupportedMediaType");
    assert_eq!(
        s.get_json(&format!("{CMS}/target"))["data"],
        json!({"k": "v"})
    );
    assert_nothing_stored(&s, "plain", &["target"]);
}

#[test]
fn unacceptable_accept_is_406() {
    let s = server();
    create_cm(&s, "shown");
    let resp = s.curl(
        "GET",
        &format!("{CMS}/shown"),
        &[("Accept", "text/html")],
        None,
    );
    let status = resp.assert_status(406, "NotAcceptable");
    assert!(
        status["message"].as_str().unwrap().starts_with(
            "only the following media types are accepted: application/json, application/yaml"
        ),
        "{status:#}"
    );
    let resp = s.curl(
        "POST",
        CMS,
        &[
            ("Accept", "text/html"),
            ("Content-Type", "application/json"),
        ],
        Some(cm("unseen").to_string().as_bytes()),
    );
    resp.assert_status(406, "NotAcceptable");
    assert_nothing_stored(&s, "unseen", &["shown"]);
    // What a browser sends is fine: */* is in the list.
    let resp = s.curl(
        "GET",
        &format!("{CMS}/shown"),
        &[("Accept", "text/html,application/xhtml+xml,*/*;q=0.8")],
        None,
    );
    assert_eq!(resp.status, 200, "{resp:#?}");
}

#[test]
fn stale_resource_version_on_put_is_conflict() {
    let s = server();
    let first = create_cm(&s, "contested");
    let mut newer = first.clone();
    newer["data"] = json!({"k": "newer"});
    let resp = s.curl(
        "PUT",
        &format!("{CMS}/contested"),
        &[("Content-Type", "application/json")],
        Some(newer.to_string().as_bytes()),
    );
    assert_eq!(resp.status, 200, "{resp:#?}");
    let current = resp.json();

    let mut stale = first.clone();
    stale["data"] = json!({"k": "stale"});
    let resp = s.curl(
        "PUT",
        &format!("{CMS}/contested"),
        &[("Content-Type", "application/json")],
        Some(stale.to_string().as_bytes()),
    );
    let status = resp.assert_status(409, "Conflict");
    assert_eq!(
        status["message"],
        "Operation cannot be fulfilled on configmaps \"contested\": the object has been modified; please apply your changes to the latest version and try again"
    );
    assert_eq!(status["details"]["name"], "contested");
    assert_eq!(status["details"]["kind"], "configmaps");
    assert_eq!(s.get_json(&format!("{CMS}/contested")), current);
    assert_still_serving(&s);
}

#[test]
fn delete_with_a_wrong_uid_precondition_is_conflict() {
    let s = server();
    let stored = create_cm(&s, "kept");
    let uid = stored["metadata"]["uid"].as_str().unwrap();
    let wrong = "00000000-0000-0000-0000-000000000000";
    let options =
        json!({"kind": "DeleteOptions", "apiVersion": "v1", "preconditions": {"uid": wrong}});
    let resp = s.curl(
        "DELETE",
        &format!("{CMS}/kept"),
        &[("Content-Type", "application/json")],
        Some(options.to_string().as_bytes()),
    );
    let status = resp.assert_status(409, "Conflict");
    assert_eq!(
        status["message"],
        format!("Operation cannot be fulfilled on configmaps \"kept\": Precondition failed: UID in precondition: {wrong}, UID in object meta: {uid}")
    );
    assert_eq!(s.get_json(&format!("{CMS}/kept")), stored);
    // The right uid deletes.
    let options =
        json!({"kind": "DeleteOptions", "apiVersion": "v1", "preconditions": {"uid": uid}});
    let resp = s.curl(
        "DELETE",
        &format!("{CMS}/kept"),
        &[("Content-Type", "application/json")],
        Some(options.to_string().as_bytes()),
    );
    assert_eq!(resp.status, 200, "{resp:#?}");
    assert_nothing_stored(&s, "kept", &[]);
}

#[test]
fn no_client_certificate_is_forbidden_except_health_and_version() {
    let s = server();
    let resp = s.curl_anonymous("GET", "/api/v1/namespaces", &[], None);
    let status = resp.assert_status(403, "Forbidden");
    assert_eq!(
        status["message"],
        "namespaces is forbidden: User \"system:anonymous\" cannot list resource \"namespaces\" in API group \"\" at the cluster scope"
    );
    let resp = s.curl_anonymous(
        "POST",
        CMS,
        &[("Content-Type", "application/json")],
        Some(cm("anon").to_string().as_bytes()),
    );
    resp.assert_status(403, "Forbidden");
    let resp = s.curl_anonymous("GET", &format!("{CMS}/anon"), &[], None);
    resp.assert_status(403, "Forbidden");

    for path in ["/healthz", "/livez", "/readyz"] {
        let resp = s.curl_anonymous("GET", path, &[], None);
        assert_eq!(
            (resp.status, resp.body.as_str()),
            (200, "ok"),
            "{path}: {resp:#?}"
        );
    }
    let resp = s.curl_anonymous("GET", "/version", &[], None);
    assert_eq!(resp.status, 200, "{resp:#?}");
    let version = resp.json();
    assert_eq!(version["major"], "1");
    assert!(
        version["gitVersion"].as_str().unwrap().starts_with("v1."),
        "{version:#}"
    );
    assert_nothing_stored(&s, "anon", &[]);
}

#[test]
fn invalid_label_selector_is_bad_request() {
    let s = server();
    create_cm(&s, "a");
    for selector in ["a%20in%20(", "%3D%3Dx", "key%3D%3Dv%3Dx", "!"] {
        let resp = s.get(&format!("{CMS}?labelSelector={selector}"));
        resp.assert_status(400, "BadRequest");
    }
    // Watches validate the same way.
    let resp = s.get(&format!("{CMS}?watch=1&labelSelector=a%20in%20("));
    resp.assert_status(400, "BadRequest");
    assert_nothing_stored(&s, "b", &["a"]);
}

/// List and watch options that do not fit together: 422 on
/// ListOptions.meta.k8s.io with upstream's wording, or 400 for a
/// resourceVersion beside a continue token; nothing is read.
#[test]
fn list_options_that_do_not_fit_are_refused_as_upstream_does() {
    let s = server();
    let created = create_cm(&s, "a");
    let rv = created["metadata"]["resourceVersion"].as_str().unwrap();
    let cases = [
        (
            "resourceVersion=0&resourceVersionMatch=Exact".to_string(),
            "resourceVersionMatch: Forbidden: resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
        ),
        (
            "resourceVersionMatch=NotOlderThan".to_string(),
            "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided",
        ),
        (
            format!("resourceVersion={rv}&resourceVersionMatch=Newest"),
            "resourceVersionMatch: Unsupported value: \"Newest\": supported values: \"Exact\", \"NotOlderThan\", \"\"",
        ),
        (
            "sendInitialEvents=true".to_string(),
            "sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list",
        ),
        (
            "watch=1&sendInitialEvents=true".to_string(),
            "resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
        ),
        (
            format!("watch=1&resourceVersion={rv}&resourceVersionMatch=NotOlderThan"),
            "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
        ),
    ];
    for (query, cause) in cases {
        let resp = s.get(&format!("{CMS}?{query}"));
        let status = resp.assert_status(422, "Invalid");
        assert_eq!(
            status["message"],
            format!("ListOptions.meta.k8s.io \"\" is invalid: {cause}"),
            "{query}"
        );
        assert_eq!(status["details"]["kind"], "ListOptions", "{query}");
        assert_eq!(status["details"]["group"], "meta.k8s.io", "{query}");
    }
    // A continue token carries its own revision.
    let page = s.get_json(&format!("{CMS}?limit=1"));
    assert!(
        page["metadata"].get("continue").is_none(),
        "one object, one page"
    );
    create_cm(&s, "b");
    let page = s.get_json(&format!("{CMS}?limit=1"));
    let token = page["metadata"]["continue"]
        .as_str()
        .expect("a continue token");
    let resp = s.get(&format!(
        "{CMS}?limit=1&continue={token}&resourceVersion={rv}"
    ));
    let status = resp.assert_status(400, "BadRequest");
    assert_eq!(
        status["message"],
        "specifying resource version is not allowed when using continue"
    );
    // A paginated list at a resourceVersion without a match is exact: at
    // the first object's revision, "b" did not exist yet.
    let exact = s.get_json(&format!("{CMS}?limit=10&resourceVersion={rv}"));
    assert_eq!(item_names(&exact), ["a"]);
    assert_eq!(exact["metadata"]["resourceVersion"], rv);
    assert_nothing_stored(&s, "c", &["a", "b"]);
}

/// A get or list at a resourceVersion the store has not reached: upstream's
/// 504, with the cause client-go recognizes and a retry hint. A get at an
/// older or the current one answers; one that is not a number is refused.
#[test]
fn reads_at_a_future_resource_version_time_out_as_upstream_does() {
    let s = server();
    let created = create_cm(&s, "a");
    let rv: i64 = created["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    for at in [rv - 1, rv] {
        let got = s.get_json(&format!("{CMS}/a?resourceVersion={at}"));
        assert_eq!(got["metadata"]["name"], "a");
    }
    let cached = s.get_json(&format!("{CMS}/a?resourceVersion=0"));
    assert_eq!(cached["metadata"]["uid"], created["metadata"]["uid"]);
    let future = rv + 1000;
    for path in [
        format!("{CMS}/a?resourceVersion={future}"),
        format!("{CMS}?resourceVersion={future}"),
    ] {
        let status = s.get(&path).assert_status(504, "Timeout");
        let message = status["message"].as_str().unwrap();
        assert!(
            message.starts_with(&format!(
                "Timeout: Too large resource version: {future}, current: "
            )),
            "{path}: {status:#}"
        );
        assert_eq!(
            status["details"],
            json!({
                "causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
                "retryAfterSeconds": 1,
            }),
            "{path}"
        );
    }
    s.get(&format!("{CMS}/a?resourceVersion=abc"))
        .assert_status(400, "BadRequest");
    assert_nothing_stored(&s, "b", &["a"]);
}

#[test]
fn unsupported_field_selector_is_bad_request() {
    let s = server();
    create_cm(&s, "a");
    let resp = s.get(&format!("{CMS}?fieldSelector=data.k%3Dv"));
    let status = resp.assert_status(400, "BadRequest");
    assert!(
        status["message"].as_str().unwrap().contains("data.k"),
        "{status:#}"
    );
    let resp = s.get("/api/v1/namespaces?fieldSelector=spec.nope%3Dx");
    resp.assert_status(400, "BadRequest");
    // Supported ones work.
    let list = s.get_json(&format!("{CMS}?fieldSelector=metadata.name%3Da"));
    assert_eq!(list["items"].as_array().unwrap().len(), 1);
    let list = s.get_json(&format!("{CMS}?fieldSelector=metadata.name%3Dzzz"));
    assert_eq!(list["items"].as_array().unwrap().len(), 0);
    assert_nothing_stored(&s, "b", &["a"]);
}

#[test]
fn unknown_and_duplicate_fields_follow_field_validation() {
    let s = server();
    let body = |name: &str| {
        format!(
            r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"{name}"}},"data":{{"a":"1","a":"2"}},"colour":"blue"}}"#
        )
    };
    // Strict: refused, naming both problems, nothing stored.
    let strict = post(
        &s,
        &format!("{CMS}?fieldValidation=Strict"),
        "application/json",
        body("strict").as_bytes(),
    );
    let status = strict.assert_status(400, "BadRequest");
    assert_eq!(
        status["message"],
        r#"ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "colour", duplicate field "data.a""#
    );
    assert_nothing_stored(&s, "strict", &[]);

    // Warn: stored (last value wins, unknown field dropped) with a Warning per problem.
    let warned = post(
        &s,
        &format!("{CMS}?fieldValidation=Warn"),
        "application/json",
        body("warned").as_bytes(),
    );
    assert_eq!(warned.status, 201, "{}", warned.body);
    let warnings: Vec<&str> = warned
        .headers
        .lines()
        .filter(|l| l.to_ascii_lowercase().starts_with("warning:"))
        .collect();
    assert_eq!(warnings.len(), 2, "{}", warned.headers);
    assert!(
        warnings
            .iter()
            .any(|w| w.contains(r#"duplicate field \"data.a\""#)),
        "{warnings:?}"
    );
    let stored = warned.json();
    assert_eq!(stored["data"]["a"], "2");
    assert!(stored.get("colour").is_none());

    // Ignore: stored, no warnings.
    let ignored = post(
        &s,
        &format!("{CMS}?fieldValidation=Ignore"),
        "application/json",
        body("ignored").as_bytes(),
    );
    assert_eq!(ignored.status, 201);
    assert!(!ignored.headers.to_ascii_lowercase().contains("warning:"));

    // A subresource's body is decoded as strictly as the main resource's.
    let status = s
        .curl(
            "PUT",
            "/api/v1/namespaces/default/status?fieldValidation=Strict",
            &[("Content-Type", "application/json")],
            Some(br#"{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"default","labels":{"x":"1","x":"2"}}}"#),
        )
        .assert_status(400, "BadRequest");
    assert_eq!(
        status["message"],
        r#"Namespace in version "v1" cannot be handled as a Namespace: strict decoding error: duplicate field "metadata.labels.x""#
    );
    let default = s.get_json("/api/v1/namespaces/default");
    assert!(
        default["metadata"]["labels"].get("x").is_none(),
        "{default}"
    );
}

/// An unknown propagationPolicy is upstream's 422 on DeleteOptions, for one
/// object and for a collection (even an empty one), and deletes nothing.
#[test]
fn unknown_propagation_policy_is_invalid_and_deletes_nothing() {
    let s = server();
    create_cm(&s, "kept");
    let expected = r#"DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Sideways": supported values: "Foreground", "Background", "Orphan""#;
    let check = |resp: common::HttpResponse| {
        let status = resp.assert_status(422, "Invalid");
        assert_eq!(status["message"], expected, "{status}");
        assert_eq!(status["details"]["kind"], "DeleteOptions", "{status}");
        assert_eq!(
            status["details"]["causes"][0]["field"], "propagationPolicy",
            "{status}"
        );
    };
    check(s.curl(
        "DELETE",
        &format!("{CMS}/kept?propagationPolicy=Sideways"),
        &[],
        None,
    ));
    check(s.curl(
        "DELETE",
        &format!("{CMS}/kept"),
        &[("Content-Type", "application/json")],
        Some(br#"{"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Sideways"}"#),
    ));
    check(s.curl(
        "DELETE",
        "/api/v1/namespaces/bad/configmaps?propagationPolicy=Sideways",
        &[],
        None,
    ));
    check(s.curl(
        "DELETE",
        "/api/v1/namespaces/bad/configmaps?propagationPolicy=Sideways&labelSelector=none%3Dhere",
        &[],
        None,
    ));
    assert_eq!(stored_names(&s), ["kept"]);
    assert_still_serving(&s);
}

/// Hostile bodies: each gets a 4xx Status, nothing is stored, and the
/// server keeps serving.
#[test]
fn hostile_bodies_are_refused_and_the_server_keeps_serving() {
    let s = server();
    let deep = |inner: &str| format!("{}{inner}{}", "[".repeat(100_000), "]".repeat(100_000));
    let cases: Vec<(&str, &str, Vec<u8>, u16)> = vec![
        (
            "JSON nested 100,000 deep in a typed field",
            "application/json",
            format!(r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"hostile"}},"data":{}}}"#, deep("1")).into_bytes(),
            400,
        ),
        (
            "JSON nested 100,000 deep in a free-form field",
            "application/json",
            format!(
                r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"hostile","managedFields":[{{"manager":"m","operation":"Update","fieldsType":"FieldsV1","fieldsV1":{}}}]}}}}"#,
                deep("{}")
            )
            .into_bytes(),
            400,
        ),
        (
            "a number with 10,000 digits",
            "application/json",
            format!(
                r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"hostile","generation":{}}}}}"#,
                "9".repeat(10_000)
            )
            .into_bytes(),
            400,
        ),
        (
            "a key of 1 MiB",
            "application/json",
            format!(
                r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"hostile"}},"data":{{"{}":"v"}}}}"#,
                "k".repeat(1024 * 1024)
            )
            .into_bytes(),
            422,
        ),
        (
            "annotations of 100,000 keys",
            "application/json",
            {
                let keys: Vec<String> = (0..100_000).map(|i| format!(r#""k{i}":"v""#)).collect();
                format!(
                    r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"hostile","annotations":{{{}}}}}}}"#,
                    keys.join(",")
                )
                .into_bytes()
            },
            422,
        ),
        (
            "a label value of 64 characters",
            "application/json",
            format!(
                r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"hostile","labels":{{"a":"{}"}}}}}}"#,
                "v".repeat(64)
            )
            .into_bytes(),
            422,
        ),
        (
            "invalid UTF-8",
            "application/json",
            [
                &br#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"hostile"},"data":{"a":""#[..],
                &[0xff, 0xfe, 0xfd],
                &br#""}}"#[..],
            ]
            .concat(),
            400,
        ),
        (
            "a YAML alias bomb",
            "application/yaml",
            {
                let mut yaml = String::from("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: hostile\na0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
                for i in 1..10 {
                    let prev = format!("*a{}", i - 1);
                    yaml.push_str(&format!("a{i}: &a{i} [{}]\n", vec![prev; 9].join(", ")));
                }
                yaml.into_bytes()
            },
            400,
        ),
        (
            "a protobuf body with a wrong length prefix",
            "application/vnd.kubernetes.protobuf",
            [&b"k8s\x00"[..], &[0x0a, 0xff, 0xff, 0xff, 0x0f, 0x0a, 0x02]].concat(),
            400,
        ),
    ];
    for (what, content_type, body, code) in cases {
        let resp = post(&s, CMS, content_type, &body);
        assert_eq!(resp.status, code, "{what}: {resp:#?}");
        let status = resp.json();
        assert_eq!(status["kind"], "Status", "{what}");
        assert_eq!(status["code"], code, "{what}");
        assert_nothing_stored(&s, "hostile", &[]);
    }
    // Long request lines are answered, and the server goes on serving.
    // Over HTTP/2 one of 60,000 bytes is an ordinary request (Go takes up
    // to 1 MiB of headers; h2's default of 16 KiB reset the stream).
    let long = format!("/api/v1/namespaces/{NS}/configmaps/{}", "x".repeat(60_000));
    let status = s.get(&long).assert_status(404, "NotFound");
    assert!(status["message"]
        .as_str()
        .is_some_and(|m| m.ends_with("not found")));
    // 64 KiB is past what the http crate holds as a URI (65,534 bytes):
    // over HTTP/1.1 it is 414 URI Too Long.
    let mut cmd = s.curl_command(true);
    cmd.args(["--http1.1", "-o", "/dev/null", "-w", "%{http_code}"])
        .arg(format!(
            "{}/api/v1/namespaces/{NS}/configmaps/{}",
            s.base_url(),
            "x".repeat(64 * 1024)
        ));
    let out = common::run_command(&mut cmd, None, common::COMMAND_TIMEOUT);
    assert_eq!(common::text(&out.stdout), "414");
    assert_still_serving(&s);
}
