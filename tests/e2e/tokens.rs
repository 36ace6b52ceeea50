//! End-to-end service account tokens: `kubectl create token`, kubectl
//! authenticating with `--token`, TokenReview, and a token issued by one
//! replica accepted by another that shares its signing key.

use crate::common;
use std::process::Output;
use std::time::Duration;

use crate::common::{text, TestServer};
use capstan_core::storage::etcd::testing::EtcdServer;

/// kubectl with no client certificate, authenticating with `token`.
fn kubectl_with_token(server: &TestServer, token: &str, args: &[&str]) -> Output {
    let mut cmd = server.kubectl_command();
    cmd.arg("--kubeconfig=/dev/null")
        .arg(format!("--server={}", server.base_url()))
        .arg("--certificate-authority")
        .arg(server.ca_cert())
        .arg(format!("--token={token}"))
        .args(args);
    common::run_command(&mut cmd, None, Duration::from_secs(60))
}

fn create_token(server: &TestServer, account: &str) -> String {
    server
        .kubectl_ok(&["create", "token", account])
        .trim()
        .to_string()
}

#[test]
fn kubectl_authenticates_with_a_service_account_token() {
    let server = TestServer::start();
    server.kubectl_line("create serviceaccount robot");
    let token = create_token(&server, "robot");

    let me = kubectl_with_token(&server, &token, &["auth", "whoami", "-o", "json"]);
    assert!(me.status.success(), "{}", text(&me.stderr));
    let me: serde_json::Value = serde_json::from_slice(&me.stdout).expect("JSON");
    let user = &me["status"]["userInfo"];
    assert_eq!(user["username"], "system:serviceaccount:default:robot");
    assert_eq!(
        user["groups"],
        serde_json::json!([
            "system:serviceaccounts",
            "system:serviceaccounts:default",
            "system:authenticated"
        ])
    );
    // As upstream: the account's uid, and the token's id as its credential.
    let account = server.kubectl_json(&["get", "serviceaccount", "robot", "-o", "json"]);
    assert_eq!(user["uid"], account["metadata"]["uid"]);
    let credential = user["extra"]["authentication.kubernetes.io/credential-id"][0]
        .as_str()
        .unwrap_or("");
    assert!(credential.starts_with("JTI="), "{user}");
    // Authenticated is not authorized: the account gets what RBAC binds.
    let denied = kubectl_with_token(&server, &token, &["get", "configmaps"]);
    assert!(
        text(&denied.stderr).contains(
            r#"User "system:serviceaccount:default:robot" cannot list resource "configmaps""#
        ),
        "{}",
        text(&denied.stderr)
    );
    server.kubectl_line(
        "create rolebinding robot-views --clusterrole=view --serviceaccount=default:robot",
    );
    let listed = kubectl_with_token(&server, &token, &["get", "configmaps"]);
    assert!(listed.status.success(), "{}", text(&listed.stderr));
    // gRPC reads the same token from its metadata.
    let grpc = |resource: &str| {
        let request = format!(
            r#"{{"resource":{{"version":"v1","resource":"{resource}"}},"namespace":"default"}}"#
        );
        let mut cmd = std::process::Command::new(common::grpcurl_bin());
        cmd.arg("-cacert")
            .arg(server.ca_cert())
            .args(["-H", &format!("authorization: Bearer {token}")])
            .args(["-d", &request])
            .arg(format!("localhost:{}", server.port()))
            .arg("capstan.v1.Resources/List");
        common::run_command(&mut cmd, None, Duration::from_secs(60))
    };
    let configmaps = grpc("configmaps");
    assert!(configmaps.status.success(), "{}", text(&configmaps.stderr));
    let secrets = grpc("secrets");
    assert!(
        text(&secrets.stderr).contains("PermissionDenied")
            && text(&secrets.stderr).contains("system:serviceaccount:default:robot"),
        "{}",
        text(&secrets.stderr)
    );

    // A token that is not one of ours, or whose account is gone, is 401.
    let forged = kubectl_with_token(&server, &format!("{token}x"), &["get", "configmaps"]);
    assert!(
        text(&forged.stderr).contains("Unauthorized"),
        "{}",
        text(&forged.stderr)
    );
    let resp = server.curl_anonymous(
        "GET",
        "/api/v1/namespaces/default/configmaps",
        &[("Authorization", "Bearer not-a-token")],
        None,
    );
    let status = resp.assert_status(401, "Unauthorized");
    assert_eq!(status["message"], "Unauthorized");
    server.kubectl_line("delete serviceaccount robot");
    server.kubectl_line("create serviceaccount robot");
    let stale = kubectl_with_token(&server, &token, &["get", "configmaps"]);
    assert!(
        text(&stale.stderr).contains("Unauthorized"),
        "a token of the deleted account still worked: {}",
        text(&stale.stdout)
    );
    // The server never logs a token.
    assert!(!server.server_log().contains(&token));

    // TokenRequest's own rules, in upstream's words.
    let short = server.kubectl_err(&["create", "token", "robot", "--duration=1m"]);
    assert!(
        short.contains(r#"TokenRequest.authentication.k8s.io "robot" is invalid: spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes"#),
        "{short}"
    );
    let missing = server.kubectl_err(&["create", "token", "nobody"]);
    assert!(
        missing.contains(r#"serviceaccounts "nobody" not found"#),
        "{missing}"
    );
}

#[test]
fn every_namespace_has_a_default_service_account() {
    let server = TestServer::start();
    server.kubectl_line("create namespace team");
    let exists = |ns: &str| {
        server
            .kubectl(&["get", "serviceaccount", "default", "-n", ns])
            .status
            .success()
            .then_some(())
    };
    for ns in ["default", "kube-system", "team"] {
        common::wait_until(
            Duration::from_secs(10),
            &format!("default account in {ns}"),
            || exists(ns),
        );
    }
    let token = create_token(&server, "default");
    assert!(token.starts_with("ey"), "{token}");
    // Deleted, it comes back (with a new uid, so old tokens stop working).
    server.kubectl_line("delete serviceaccount default -n team");
    common::wait_until(Duration::from_secs(10), "the account to come back", || {
        exists("team")
    });
    // A namespace being deleted gets none back.
    server.kubectl_line("delete namespace team --wait=true --timeout=30s");
    assert!(exists("team").is_none());
}

#[test]
fn service_accounts_discover_the_issuer_and_its_keys() {
    let server = TestServer::start();
    server.kubectl_line("create serviceaccount robot");
    let token = create_token(&server, "robot");
    let raw = |path: &str| {
        let out = kubectl_with_token(&server, &token, &["get", "--raw", path]);
        assert!(out.status.success(), "{path}: {}", text(&out.stderr));
        serde_json::from_slice::<serde_json::Value>(&out.stdout).expect("JSON")
    };
    let discovery = raw("/.well-known/openid-configuration");
    assert_eq!(
        discovery,
        serde_json::json!({
            "issuer": "https://kubernetes.default.svc.cluster.local",
            "jwks_uri": "https://kubernetes.default.svc.cluster.local/openid/v1/jwks",
            "response_types_supported": ["id_token"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["ES256"],
        })
    );
    // The token names the key it was signed with, and the JWKS lists it.
    use base64::Engine as _;
    let header = token.split('.').next().unwrap_or("");
    let header: serde_json::Value = serde_json::from_slice(
        &base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(header)
            .expect("base64url header"),
    )
    .expect("a JSON header");
    let keys = raw("/openid/v1/jwks");
    let key = &keys["keys"][0];
    assert_eq!(key["kid"], header["kid"], "{keys}");
    assert_eq!(key["alg"], "ES256");
    // Upstream grants discovery to service accounts, not to everyone.
    server
        .curl_anonymous("GET", "/openid/v1/jwks", &[], None)
        .assert_status(403, "Forbidden");
}

#[test]
fn token_reviews_say_whose_a_token_is() {
    let server = TestServer::start();
    server.kubectl_line("create serviceaccount robot");
    let token = create_token(&server, "robot");
    let review = |token: &str| {
        let body = serde_json::json!({
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenReview",
            "spec": {"token": token},
        });
        let resp = server.post_json("/apis/authentication.k8s.io/v1/tokenreviews", &body);
        assert_eq!(resp.status, 201, "{resp:#?}");
        resp.json()["status"].clone()
    };
    let valid = review(&token);
    assert_eq!(valid["authenticated"], true, "{valid}");
    assert_eq!(
        valid["user"]["username"],
        "system:serviceaccount:default:robot"
    );
    assert_eq!(
        valid["audiences"],
        serde_json::json!(["https://kubernetes.default.svc.cluster.local"])
    );
    let invalid = review("x.y.z");
    assert_eq!(invalid["authenticated"], serde_json::Value::Null);
    assert!(invalid["error"].is_string(), "{invalid}");
    // Reviews are for those granted them (system:auth-delegator upstream).
    server.kubectl_line(
        "create rolebinding robot-views --clusterrole=view --serviceaccount=default:robot",
    );
    let denied = server.curl_anonymous(
        "POST",
        "/apis/authentication.k8s.io/v1/tokenreviews",
        &[
            ("Content-Type", "application/json"),
            ("Authorization", &format!("Bearer {token}")),
        ],
        Some(br#"{"spec":{"token":"x"}}"#),
    );
    let status = denied.assert_status(403, "Forbidden");
    assert_eq!(
        status["message"],
        r#"tokenreviews.authentication.k8s.io is forbidden: User "system:serviceaccount:default:robot" cannot create resource "tokenreviews" in API group "authentication.k8s.io" at the cluster scope"#
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn replicas_sharing_a_signing_key_accept_each_others_tokens() {
    let etcd = EtcdServer::start()
        .await
        .expect("a real etcd (Debian's etcd-server)");
    let a = TestServer::start_with(&["--etcd-servers", etcd.endpoint.as_str()]);
    let key = a.dir().join("pki/sa.key");
    let key = key.to_str().expect("a UTF-8 path");
    let b = TestServer::start_with(&[
        "--etcd-servers",
        etcd.endpoint.as_str(),
        "--service-account-signing-key-file",
        key,
    ]);
    let c = TestServer::start_with(&["--etcd-servers", etcd.endpoint.as_str()]);
    a.kubectl_line("create serviceaccount robot");
    let token = create_token(&a, "robot");
    let on_b = kubectl_with_token(&b, &token, &["auth", "whoami"]);
    assert!(on_b.status.success(), "{}", text(&on_b.stderr));
    assert!(text(&on_b.stdout).contains("system:serviceaccount:default:robot"));
    // A replica with its own key does not accept them.
    let on_c = kubectl_with_token(&c, &token, &["auth", "whoami"]);
    assert!(
        text(&on_c.stderr).contains("Unauthorized"),
        "{}",
        text(&on_c.stderr)
    );
}
