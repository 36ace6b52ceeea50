//! Service account tokens, as kube-apiserver issues and checks them: the
//! TokenRequest subresource (`kubectl create token`) signs a JWT for a
//! service account; a request whose `Authorization: Bearer` carries one
//! acts as that account while the account (same uid) still exists; a
//! TokenReview answers whether a token is valid and whose it is.
//!
//! Every replica that is given the same signing key (and verification keys)
//! issues and accepts the same tokens; nothing about a token is stored.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use sha2::Digest;

use crate::auth::{AccessRequest, ResourceAttributes, UserInfo};
use crate::error::{ApiError, ApiResult, FieldError, StatusReason};
use crate::object;
use crate::verbs::ApiCore;

/// Upstream's default `--service-account-issuer` for kubeadm clusters.
pub const DEFAULT_ISSUER: &str = "https://kubernetes.default.svc.cluster.local";
const AUTHENTICATION_GROUP: &str = "authentication.k8s.io";
/// The service account issuer discovery paths, as upstream's
/// system:service-account-issuer-discovery role lists them.
pub const ISSUER_DISCOVERY_URLS: &[&str] = &[
    "/.well-known/openid-configuration",
    "/.well-known/openid-configuration/",
    "/openid/v1/jwks",
    "/openid/v1/jwks/",
];
/// A TokenRequest that names no expiry gets an hour, as upstream's default.
const DEFAULT_EXPIRATION: i64 = 3600;
const MIN_EXPIRATION: i64 = 600;
const MAX_EXPIRATION: i64 = 1 << 32;

/// The keys and names tokens are issued and checked with.
pub struct TokenAuthority {
    signing: EncodingKey,
    key_id: String,
    verifying: Vec<DecodingKey>,
    /// The accepted public keys as JWKs, for /openid/v1/jwks.
    jwks: Vec<Value>,
    jwks_uri: String,
    issuer: String,
    /// `--api-audiences`: a token is for this server when it names one.
    audiences: Vec<String>,
}

impl TokenAuthority {
    /// From PEM: the ECDSA P-256 signing key (PKCS#8), its public key
    /// (SPKI; its hash names the key in each token's header), and further
    /// public keys whose tokens are accepted too (a rotated-out key).
    pub fn from_pem(
        signing_key: &str,
        public_key: &str,
        also_accepted: &[String],
        issuer: &str,
        audiences: &[String],
    ) -> Result<Self, String> {
        let signing = EncodingKey::from_ec_pem(signing_key.as_bytes())
            .map_err(|e| format!("service account signing key: {e}"))?;
        let mut verifying = Vec::new();
        for pem in std::iter::once(public_key).chain(also_accepted.iter().map(String::as_str)) {
            verifying.push(
                DecodingKey::from_ec_pem(pem.as_bytes())
                    .map_err(|e| format!("service account public key: {e}"))?,
            );
        }
        let jwks = std::iter::once(public_key)
            .chain(also_accepted.iter().map(String::as_str))
            .filter_map(jwk)
            .collect();
        Ok(Self {
            signing,
            key_id: key_id(public_key),
            verifying,
            jwks,
            jwks_uri: format!("{}/openid/v1/jwks", issuer.trim_end_matches('/')),
            issuer: issuer.to_string(),
            audiences: if audiences.is_empty() {
                vec![issuer.to_string()]
            } else {
                audiences.to_vec()
            },
        })
    }
}

fn pem_der(pem: &str) -> Vec<u8> {
    use base64::Engine as _;
    let body: String = pem.lines().filter(|l| !l.starts_with("-----")).collect();
    base64::engine::general_purpose::STANDARD
        .decode(body)
        .unwrap_or_default()
}

fn base64url(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// Upstream's key id: the unpadded base64url SHA-256 of the public key's DER.
fn key_id(public_key_pem: &str) -> String {
    base64url(&sha2::Sha256::digest(pem_der(public_key_pem)))
}

/// An ECDSA P-256 public key (SPKI PEM) as upstream's JWKS lists it; None
/// for another kind of key. A P-256 SPKI is 91 bytes and ends with the
/// uncompressed point: 0x04, then X and Y, 32 bytes each.
fn jwk(public_key_pem: &str) -> Option<Value> {
    let der = pem_der(public_key_pem);
    let point = der.get(26..).filter(|p| der.len() == 91 && p[0] == 4)?;
    Some(json!({
        "use": "sig",
        "kty": "EC",
        "kid": key_id(public_key_pem),
        "crv": "P-256",
        "alg": "ES256",
        "x": base64url(&point[1..33]),
        "y": base64url(&point[33..65]),
    }))
}

/// The claims of a service account token (upstream's private claims under
/// `kubernetes.io`).
#[derive(Debug, Serialize, Deserialize)]
struct Claims {
    aud: Vec<String>,
    exp: i64,
    iat: i64,
    nbf: i64,
    iss: String,
    jti: String,
    sub: String,
    #[serde(rename = "kubernetes.io")]
    kubernetes: KubernetesClaims,
}

#[derive(Debug, Serialize, Deserialize)]
struct KubernetesClaims {
    namespace: String,
    serviceaccount: Reference,
}

#[derive(Debug, Serialize, Deserialize)]
struct Reference {
    name: String,
    uid: String,
}

/// The token of an `Authorization: Bearer <token>` header (the scheme is
/// case-insensitive, as upstream's bearer-token authenticator reads it).
fn bearer_token(header: &str) -> Option<&str> {
    let (scheme, token) = header.trim().split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

fn now_seconds() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or(Duration::ZERO)
        .as_secs() as i64
}

fn service_account_name(namespace: &str, name: &str) -> String {
    format!("system:serviceaccount:{namespace}:{name}")
}

/// The user a valid token is: its account, with the account's uid and
/// upstream's credential id (the token's jti) in extra.
fn service_account_user(claims: &Claims) -> UserInfo {
    let namespace = &claims.kubernetes.namespace;
    let account = &claims.kubernetes.serviceaccount;
    let mut user = UserInfo::authenticated(
        service_account_name(namespace, &account.name),
        vec![
            "system:serviceaccounts".to_string(),
            format!("system:serviceaccounts:{namespace}"),
        ],
    );
    user.uid = account.uid.clone();
    user.extra.insert(
        "authentication.kubernetes.io/credential-id".to_string(),
        vec![format!("JTI={}", claims.jti)],
    );
    user
}

impl ApiCore {
    fn token_authority(&self) -> ApiResult<&TokenAuthority> {
        self.tokens.as_ref().ok_or_else(|| {
            ApiError::new(
                StatusReason::NotFound,
                "the server could not find the requested resource",
            )
        })
    }

    /// `POST .../serviceaccounts/<name>/token`: a signed token for the
    /// account, answered as upstream's TokenRequest (never stored).
    pub async fn request_token(
        &self,
        user: &UserInfo,
        namespace: &str,
        name: &str,
        request: Value,
    ) -> ApiResult<Value> {
        let attrs = ResourceAttributes {
            verb: "create",
            group: "",
            resource: "serviceaccounts",
            subresource: Some("token"),
            namespace: Some(namespace),
            name: Some(name),
        };
        self.authorize_request(user, &AccessRequest::Resource(&attrs))
            .await?;
        let authority = self.token_authority()?;
        let kind = request.get("kind").and_then(Value::as_str).unwrap_or("");
        if !kind.is_empty() && kind != "TokenRequest" {
            return Err(ApiError::bad_request(format!(
                "the body of the request was in an unknown format - expected a TokenRequest, got {kind}"
            )));
        }
        let spec = request.get("spec").cloned().unwrap_or_else(|| json!({}));
        let expiration = match spec.get("expirationSeconds") {
            None | Some(Value::Null) => DEFAULT_EXPIRATION,
            Some(value) => value.as_i64().ok_or_else(|| {
                ApiError::bad_request("spec.expirationSeconds must be an integer")
            })?,
        };
        let mut errs = Vec::new();
        if expiration < MIN_EXPIRATION {
            errs.push(FieldError::invalid_rendered(
                "spec.expirationSeconds",
                &expiration.to_string(),
                "may not specify a duration less than 10 minutes",
            ));
        } else if expiration > MAX_EXPIRATION {
            errs.push(FieldError::invalid_rendered(
                "spec.expirationSeconds",
                &expiration.to_string(),
                "may not specify a duration larger than 2^32 seconds",
            ));
        }
        if spec.get("boundObjectRef").is_some_and(|r| !r.is_null()) {
            errs.push(FieldError::forbidden(
                "spec.boundObjectRef",
                "capstan does not bind tokens to objects",
            ));
        }
        if !errs.is_empty() {
            return Err(ApiError::invalid(
                AUTHENTICATION_GROUP,
                "TokenRequest",
                name,
                errs,
            ));
        }
        let mut audiences = object::strings_at(&spec, "audiences");
        if audiences.is_empty() {
            audiences = authority.audiences.clone();
        }
        let def = self.resolve("", "v1", "serviceaccounts")?;
        let account = self
            .get(&UserInfo::system(), &def, Some(namespace), name, "")
            .await?;
        let issued = now_seconds();
        let claims = Claims {
            aud: audiences.clone(),
            exp: issued + expiration,
            iat: issued,
            nbf: issued,
            iss: authority.issuer.clone(),
            jti: object::new_uid(),
            sub: service_account_name(namespace, name),
            kubernetes: KubernetesClaims {
                namespace: namespace.to_string(),
                serviceaccount: Reference {
                    name: name.to_string(),
                    uid: object::meta_str(&account, "uid").to_string(),
                },
            },
        };
        let mut header = Header::new(Algorithm::ES256);
        header.kid = Some(authority.key_id.clone());
        let token = jsonwebtoken::encode(&header, &claims, &authority.signing)
            .map_err(|e| ApiError::internal(format!("signing a token: {e}")))?;
        let expires = chrono::DateTime::from_timestamp(claims.exp, 0)
            .unwrap_or_default()
            .format("%Y-%m-%dT%H:%M:%SZ")
            .to_string();
        Ok(json!({
            "kind": "TokenRequest",
            "apiVersion": "authentication.k8s.io/v1",
            "metadata": {"name": name, "namespace": namespace, "creationTimestamp": null},
            "spec": {
                "audiences": audiences,
                "expirationSeconds": expiration,
                "boundObjectRef": null,
            },
            "status": {"token": token, "expirationTimestamp": expires},
        }))
    }

    /// The service account a bearer token names, if it is one this server
    /// signed (or accepts), for one of `audiences` (the server's own when
    /// empty), unexpired, and its account still exists with the same uid.
    /// Err says why not, in upstream's words where it has them.
    pub async fn authenticate_token(
        &self,
        token: &str,
        audiences: &[String],
    ) -> Result<(UserInfo, Vec<String>), String> {
        let Some(authority) = self.tokens.as_ref() else {
            return Err("service account tokens are not enabled".to_string());
        };
        let wanted = if audiences.is_empty() {
            &authority.audiences
        } else {
            audiences
        };
        let mut validation = Validation::new(Algorithm::ES256);
        validation.set_issuer(&[&authority.issuer]);
        validation.set_audience(wanted);
        validation.validate_nbf = true;
        validation.leeway = 0;
        let mut last = String::from("invalid bearer token");
        let mut claims = None;
        for key in &authority.verifying {
            match jsonwebtoken::decode::<Claims>(token, key, &validation) {
                Ok(data) => {
                    claims = Some(data.claims);
                    break;
                }
                Err(e) => {
                    last = match e.kind() {
                        jsonwebtoken::errors::ErrorKind::ExpiredSignature => {
                            "service account token has expired".to_string()
                        }
                        jsonwebtoken::errors::ErrorKind::InvalidAudience => {
                            "token audiences did not match the server's".to_string()
                        }
                        _ => "invalid bearer token".to_string(),
                    }
                }
            }
        }
        let claims = claims.ok_or(last)?;
        let namespace = &claims.kubernetes.namespace;
        let account = &claims.kubernetes.serviceaccount;
        let def = self
            .resolve("", "v1", "serviceaccounts")
            .map_err(|e| e.message)?;
        // The watch cache's copy first, as upstream's informer-backed
        // getter; storage decides when the cache has none or another uid.
        let system = UserInfo::system();
        let cached = self
            .get(&system, &def, Some(namespace), &account.name, "0")
            .await
            .ok()
            .filter(|current| object::meta_str(current, "uid") == account.uid);
        let current = match cached {
            Some(current) => current,
            None => self
                .get(&system, &def, Some(namespace), &account.name, "")
                .await
                .map_err(|_| {
                    format!(
                        "service account {namespace}/{} has been deleted",
                        account.name
                    )
                })?,
        };
        if object::meta_str(&current, "uid") != account.uid {
            return Err(format!(
                "service account UID ({}) does not match claim ({})",
                object::meta_str(&current, "uid"),
                account.uid
            ));
        }
        let matched: Vec<String> = claims
            .aud
            .iter()
            .filter(|a| wanted.contains(a))
            .cloned()
            .collect();
        Ok((service_account_user(&claims), matched))
    }

    /// `/.well-known/openid-configuration`: upstream's service account
    /// issuer discovery document (None: tokens are not served).
    pub fn openid_configuration(&self) -> Option<Value> {
        let authority = self.tokens.as_ref()?;
        Some(json!({
            "issuer": authority.issuer,
            "jwks_uri": authority.jwks_uri,
            "response_types_supported": ["id_token"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["ES256"],
        }))
    }

    /// `/openid/v1/jwks`: the public keys tokens are checked with.
    pub fn jwks(&self) -> Option<Value> {
        let authority = self.tokens.as_ref()?;
        Some(json!({ "keys": authority.jwks }))
    }

    /// Who a request is: the user of its client certificate, or else the
    /// service account its `Authorization: Bearer` token names (401 when the
    /// token is not valid), or else anonymous. Certificates are tried first,
    /// as in upstream's chain of authenticators.
    pub async fn authenticate_request(
        &self,
        user: UserInfo,
        authorization: Option<&str>,
    ) -> ApiResult<UserInfo> {
        if !user.is_anonymous() {
            return Ok(user);
        }
        let Some(token) = authorization.and_then(bearer_token) else {
            return Ok(user);
        };
        match self.authenticate_token(token, &[]).await {
            Ok((account, _)) => Ok(account),
            Err(why) => {
                // The reason, never the token.
                tracing::debug!(reason = why, "bearer token rejected");
                Err(ApiError::unauthorized())
            }
        }
    }

    /// A TokenReview's status (authentication.k8s.io/v1 tokenreviews).
    pub(crate) async fn review_token(&self, spec: &Value) -> Value {
        let token = spec.get("token").and_then(Value::as_str).unwrap_or("");
        let audiences = object::strings_at(spec, "audiences");
        match self.authenticate_token(token, &audiences).await {
            Ok((user, matched)) => json!({
                "authenticated": true,
                "user": user.to_json(),
                "audiences": matched,
            }),
            Err(why) => json!({"user": {}, "error": why}),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Test keys only (generated for these tests; they sign nothing real).
    const KEY: &str = "-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgsMoYRgOudS1iPxs/
NsWO4J2Z7SmtIEMIVVEzuWz1ftuhRANCAAQu3iH+o4irqmy8DQz7pvYPCF4D5rD3
3KFI3WiRQ5pemU7iHPFrcQqzUUcUDS7LNwab++Deeui1KIlSi5FmeEUJ
-----END PRIVATE KEY-----
";
    const PUBLIC: &str = "-----BEGIN PUBLIC KEY-----
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAELt4h/qOIq6psvA0M+6b2DwheA+aw
99yhSN1okUOaXplO4hzxa3EKs1FHFA0uyzcGm/vg3nrotSiJUouRZnhFCQ==
-----END PUBLIC KEY-----
";
    const OTHER_KEY: &str = "-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg7BbT0Y1zzPwh3kzu
aZKXEOvv5oA1diW4bn/AzC2s2lShRANCAASXrMbv9Zyeno4/JOwDj4Ftgxo9g+2r
5rWlvSNMc604wZwZ1iiv9d4UYxIHSMG6BUIwm8bzP1nRlAHb9K0uGkQe
-----END PRIVATE KEY-----
";
    const OTHER_PUBLIC: &str = "-----BEGIN PUBLIC KEY-----
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEl6zG7/Wcnp6OPyTsA4+BbYMaPYPt
q+a1pb0jTHOtOMGcGdYor/XeFGMSB0jBugVCMJvG8z9Z0ZQB2/StLhpEHg==
-----END PUBLIC KEY-----
";

    fn authority(key: &str, public: &str, accepted: &[String]) -> TokenAuthority {
        TokenAuthority::from_pem(key, public, accepted, DEFAULT_ISSUER, &[]).expect("keys")
    }

    async fn core_with(authority: TokenAuthority) -> (tempfile::TempDir, ApiCore) {
        let (dir, core) = crate::testing::core_unshaped().await;
        let core = core.with_token_authority(authority);
        crate::testing::create_in_default(
            &core,
            "serviceaccounts",
            json!({"metadata": {"name": "robot"}}),
        )
        .await;
        (dir, core)
    }

    async fn token(core: &ApiCore, spec: Value) -> ApiResult<String> {
        let answered = core
            .request_token(
                &UserInfo::system(),
                "default",
                "robot",
                json!({"kind": "TokenRequest", "spec": spec}),
            )
            .await?;
        Ok(answered["status"]["token"]
            .as_str()
            .unwrap_or("")
            .to_string())
    }

    #[test]
    fn the_jwks_lists_the_keys_tokens_are_checked_with() {
        let authority = authority(KEY, PUBLIC, &[OTHER_PUBLIC.to_string()]);
        assert_eq!(authority.jwks.len(), 2);
        let first = &authority.jwks[0];
        assert_eq!(first["kid"], key_id(PUBLIC));
        assert_eq!(
            (first["kty"].as_str(), first["crv"].as_str()),
            (Some("EC"), Some("P-256"))
        );
        // X and Y are the key's own: a token it signed verifies with them.
        use base64::Engine as _;
        let coordinate = |c: &str| {
            base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(first[c].as_str().unwrap_or(""))
                .expect("base64url")
        };
        let key = DecodingKey::from_ec_components(
            first["x"].as_str().unwrap_or(""),
            first["y"].as_str().unwrap_or(""),
        )
        .expect("a key from the JWK");
        assert_eq!((coordinate("x").len(), coordinate("y").len()), (32, 32));
        let claims = json!({"sub": "s", "exp": now_seconds() + 60});
        let signed =
            jsonwebtoken::encode(&Header::new(Algorithm::ES256), &claims, &authority.signing)
                .expect("signed");
        let mut validation = Validation::new(Algorithm::ES256);
        validation.required_spec_claims.clear();
        assert!(jsonwebtoken::decode::<Value>(&signed, &key, &validation).is_ok());
        assert_eq!(
            authority.jwks_uri,
            format!("{DEFAULT_ISSUER}/openid/v1/jwks")
        );
    }

    #[test]
    fn bearer_headers_as_upstream_reads_them() {
        assert_eq!(bearer_token("Bearer abc"), Some("abc"));
        assert_eq!(bearer_token("bearer  abc "), Some("abc"));
        assert_eq!(bearer_token("Basic abc"), None);
        assert_eq!(bearer_token("Bearer "), None);
    }

    #[tokio::test]
    async fn issued_tokens_name_their_account_for_the_servers_audience() {
        let (_dir, core) = core_with(authority(KEY, PUBLIC, &[])).await;
        let issued = token(&core, json!({})).await.expect("a token");
        let (user, audiences) = core.authenticate_token(&issued, &[]).await.expect("valid");
        assert_eq!(user.name, "system:serviceaccount:default:robot");
        assert!(!user.uid.is_empty());
        assert!(user.extra["authentication.kubernetes.io/credential-id"][0].starts_with("JTI="));
        assert_eq!(audiences, [DEFAULT_ISSUER]);
        // A token for another audience is not one for this server.
        let elsewhere = token(&core, json!({"audiences": ["vault"]}))
            .await
            .expect("a token");
        assert_eq!(
            core.authenticate_token(&elsewhere, &[]).await.unwrap_err(),
            "token audiences did not match the server's"
        );
        assert!(core
            .authenticate_token(&elsewhere, &["vault".to_string()])
            .await
            .is_ok());
        // Expiry bounds, in upstream's words.
        let short = token(&core, json!({"expirationSeconds": 599}))
            .await
            .unwrap_err();
        assert_eq!(
            short.message,
            "TokenRequest.authentication.k8s.io \"robot\" is invalid: spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 10 minutes"
        );
        let bound = token(
            &core,
            json!({"boundObjectRef": {"kind": "Pod", "name": "p"}}),
        )
        .await
        .unwrap_err();
        assert_eq!(bound.code(), 422);
    }

    #[tokio::test]
    async fn expired_foreign_and_orphaned_tokens_are_refused() {
        let (_dir, core) = core_with(authority(KEY, PUBLIC, &[])).await;
        let now = now_seconds();
        let claims = |exp: i64| Claims {
            aud: vec![DEFAULT_ISSUER.to_string()],
            exp,
            iat: now - 7200,
            nbf: now - 7200,
            iss: DEFAULT_ISSUER.to_string(),
            jti: "j".to_string(),
            sub: "system:serviceaccount:default:robot".to_string(),
            kubernetes: KubernetesClaims {
                namespace: "default".to_string(),
                serviceaccount: Reference {
                    name: "robot".to_string(),
                    uid: "not-its-uid".to_string(),
                },
            },
        };
        let sign = |key: &str, claims: &Claims| {
            let key = EncodingKey::from_ec_pem(key.as_bytes()).expect("key");
            jsonwebtoken::encode(&Header::new(Algorithm::ES256), claims, &key).expect("signed")
        };
        let expired = sign(KEY, &claims(now - 60));
        assert_eq!(
            core.authenticate_token(&expired, &[]).await.unwrap_err(),
            "service account token has expired"
        );
        let orphaned = sign(KEY, &claims(now + 600));
        assert!(core
            .authenticate_token(&orphaned, &[])
            .await
            .unwrap_err()
            .starts_with("service account UID"));
        let foreign = sign(OTHER_KEY, &claims(now + 600));
        assert_eq!(
            core.authenticate_token(&foreign, &[]).await.unwrap_err(),
            "invalid bearer token"
        );
        // A key named as also accepted (one being rotated out) is accepted.
        let rotated = authority(OTHER_KEY, OTHER_PUBLIC, &[PUBLIC.to_string()]);
        let (_dir2, second) = core_with(rotated).await;
        let issued = token(&core, json!({})).await.expect("a token");
        // Valid signature; the second store has its own account (another uid).
        assert!(second
            .authenticate_token(&issued, &[])
            .await
            .unwrap_err()
            .starts_with("service account UID"));
        // An anonymous request with a bad token is 401; one with a
        // certificate is its certificate's user.
        let err = core
            .authenticate_request(UserInfo::anonymous(), Some("Bearer x"))
            .await
            .unwrap_err();
        assert_eq!(err.code(), 401);
        let admin = UserInfo::authenticated("admin", vec![]);
        assert_eq!(
            core.authenticate_request(admin.clone(), Some("Bearer x"))
                .await
                .expect("the certificate wins"),
            admin
        );
    }
}
