//! Impersonation (`kubectl --as`, `--as-group`, `--as-uid`), as upstream's
//! impersonation filter does it: a caller allowed to `impersonate` the user,
//! each group, each extra and the uid it names acts as that user from then
//! on, for authorization and everything after it.

use crate::auth::{AccessRequest, ResourceAttributes, UserInfo, ANONYMOUS_USER};
use crate::authentication::IMPERSONATION_PREFIX;
use crate::error::{ApiError, ApiResult};
use crate::verbs::ApiCore;

const USER_HEADER: &str = "impersonate-user";
const GROUP_HEADER: &str = "impersonate-group";
const UID_HEADER: &str = "impersonate-uid";
const EXTRA_HEADER_PREFIX: &str = "impersonate-extra-";
const SERVICE_ACCOUNT_PREFIX: &str = "system:serviceaccount:";
const AUTHENTICATION_GROUP: &str = "authentication.k8s.io";

/// What a request's `Impersonate-*` headers ask for.
#[derive(Debug, Default)]
struct Wanted<'h> {
    user: Option<&'h str>,
    groups: Vec<&'h str>,
    uid: Option<&'h str>,
    extras: Vec<(String, &'h str)>,
}

impl<'h> Wanted<'h> {
    /// Reads the headers; names are compared case-insensitively, as HTTP's.
    fn from_headers(headers: impl IntoIterator<Item = (&'h str, &'h str)>) -> Self {
        let mut wanted = Self::default();
        for (name, value) in headers {
            let start = name.as_bytes().get(..IMPERSONATION_PREFIX.len());
            if !start
                .is_some_and(|start| start.eq_ignore_ascii_case(IMPERSONATION_PREFIX.as_bytes()))
            {
                continue;
            }
            let name = name.to_ascii_lowercase();
            match name.as_str() {
                USER_HEADER => wanted.user = Some(value),
                GROUP_HEADER => wanted.groups.push(value),
                UID_HEADER => wanted.uid = Some(value),
                _ => {
                    if let Some(key) = name.strip_prefix(EXTRA_HEADER_PREFIX) {
                        let key = percent_encoding::percent_decode_str(key)
                            .decode_utf8_lossy()
                            .into_owned();
                        wanted.extras.push((key, value));
                    }
                }
            }
        }
        wanted
    }

    fn is_empty(&self) -> bool {
        self.user.is_none()
            && self.groups.is_empty()
            && self.uid.is_none()
            && self.extras.is_empty()
    }

    /// Go's `%v` of the ObjectReferences upstream's error lists.
    fn describe_without_user(&self) -> String {
        let reference = |kind: &str, name: &str| format!("{{{kind}  {name}    }}");
        let mut refs: Vec<String> = self.groups.iter().map(|g| reference("Group", g)).collect();
        refs.extend(
            self.extras
                .iter()
                .map(|(key, value)| reference(&format!("{EXTRA_HEADER_PREFIX}{key}"), value)),
        );
        refs.extend(self.uid.map(|uid| reference("UID", uid)));
        format!("[{}]", refs.join(" "))
    }
}

/// The namespace and name of a service account's user name.
fn service_account(user: &str) -> Option<(&str, &str)> {
    user.strip_prefix(SERVICE_ACCOUNT_PREFIX)?
        .split_once(':')
        .filter(|(ns, name)| !ns.is_empty() && !name.is_empty())
}

impl ApiCore {
    /// The user a request acts as: `user` itself, or the one its
    /// `Impersonate-*` headers name when `user` may impersonate all of it.
    pub async fn impersonate<'h>(
        &self,
        user: UserInfo,
        headers: impl IntoIterator<Item = (&'h str, &'h str)>,
    ) -> ApiResult<UserInfo> {
        let wanted = Wanted::from_headers(headers);
        if wanted.is_empty() {
            return Ok(user);
        }
        let Some(target) = wanted.user else {
            return Err(ApiError::bad_request(format!(
                "requested {} without impersonating a user",
                wanted.describe_without_user()
            )));
        };
        let account = service_account(target);
        let user_attrs = match account {
            Some((namespace, name)) => impersonating("", "serviceaccounts", Some(namespace), name),
            None => impersonating("", "users", None, target),
        };
        let mut checks = vec![user_attrs];
        checks.extend(
            wanted
                .groups
                .iter()
                .map(|group| impersonating("", "groups", None, group)),
        );
        for (key, value) in &wanted.extras {
            let mut attrs = impersonating(AUTHENTICATION_GROUP, "userextras", None, value);
            attrs.subresource = Some(key.as_str());
            checks.push(attrs);
        }
        checks.extend(
            wanted
                .uid
                .map(|uid| impersonating(AUTHENTICATION_GROUP, "uids", None, uid)),
        );
        for attrs in &checks {
            self.authorize_request(&user, &AccessRequest::Resource(attrs))
                .await?;
        }
        let mut groups: Vec<String> = wanted.groups.iter().map(|g| g.to_string()).collect();
        if let (Some((namespace, _)), true) = (account, groups.is_empty()) {
            groups = vec![
                "system:serviceaccounts".to_string(),
                format!("system:serviceaccounts:{namespace}"),
            ];
        }
        let mut acting = if target == ANONYMOUS_USER {
            if !groups
                .iter()
                .any(|g| g == crate::auth::UNAUTHENTICATED_GROUP)
            {
                groups.push(crate::auth::UNAUTHENTICATED_GROUP.to_string());
            }
            UserInfo {
                name: target.to_string(),
                groups,
                ..UserInfo::default()
            }
        } else {
            UserInfo::authenticated(target, groups)
        };
        acting.uid = wanted.uid.unwrap_or("").to_string();
        for (key, value) in wanted.extras {
            acting.extra.entry(key).or_default().push(value.to_string());
        }
        Ok(acting)
    }
}

fn impersonating<'a>(
    group: &'a str,
    resource: &'a str,
    namespace: Option<&'a str>,
    name: &'a str,
) -> ResourceAttributes<'a> {
    ResourceAttributes {
        verb: "impersonate",
        group,
        resource,
        subresource: None,
        namespace,
        name: Some(name),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn admin() -> UserInfo {
        UserInfo::authenticated("admin", vec![crate::auth::MASTERS_GROUP.into()])
    }

    #[tokio::test]
    async fn impersonation_takes_the_named_identity_when_allowed() {
        let (_dir, core) = crate::testing::core_unshaped().await;
        let alice = core
            .impersonate(
                admin(),
                [("Impersonate-User", "alice"), ("Impersonate-Group", "devs")],
            )
            .await
            .expect("masters may impersonate");
        assert_eq!(alice, UserInfo::authenticated("alice", vec!["devs".into()]));
        let robot = core
            .impersonate(
                admin(),
                [("impersonate-user", "system:serviceaccount:team:robot")],
            )
            .await
            .expect("an account");
        assert_eq!(
            robot.groups,
            [
                "system:serviceaccounts",
                "system:serviceaccounts:team",
                "system:authenticated"
            ]
        );
        let anonymous = core
            .impersonate(admin(), [("impersonate-user", ANONYMOUS_USER)])
            .await
            .expect("anonymous");
        assert_eq!(anonymous, UserInfo::anonymous());
        let with_extras = core
            .impersonate(
                admin(),
                [
                    ("impersonate-user", "alice"),
                    ("impersonate-uid", "u-1"),
                    ("impersonate-extra-scopes", "view"),
                    ("impersonate-extra-scopes", "edit"),
                    ("impersonate-extra-acme.com%2Fteam", "a"),
                ],
            )
            .await
            .expect("extras");
        assert_eq!(with_extras.uid, "u-1");
        assert_eq!(with_extras.extra["scopes"], ["view", "edit"]);
        assert_eq!(with_extras.extra["acme.com/team"], ["a"]);
        let unchanged = core.impersonate(admin(), []).await.expect("no headers");
        assert_eq!(unchanged, admin());
    }

    #[tokio::test]
    async fn impersonation_needs_the_impersonate_verb_and_a_user() {
        let (_dir, core) = crate::testing::core_unshaped().await;
        let bob = UserInfo::authenticated("bob", vec![]);
        let denied = core
            .impersonate(bob.clone(), [("impersonate-user", "alice")])
            .await
            .unwrap_err();
        assert_eq!(denied.code(), 403);
        assert_eq!(
            denied.message,
            "users \"alice\" is forbidden: User \"bob\" cannot impersonate resource \"users\" in API group \"\" at the cluster scope"
        );
        let account = core
            .impersonate(
                bob,
                [("impersonate-user", "system:serviceaccount:team:robot")],
            )
            .await
            .unwrap_err();
        assert_eq!(
            account.message,
            "serviceaccounts \"robot\" is forbidden: User \"bob\" cannot impersonate resource \"serviceaccounts\" in API group \"\" in the namespace \"team\""
        );
        let no_user = core
            .impersonate(admin(), [("impersonate-group", "devs")])
            .await
            .unwrap_err();
        assert_eq!(no_user.code(), 400);
        assert_eq!(
            no_user.message,
            "requested [{Group  devs    }] without impersonating a user"
        );
    }
}
