//! Who a request acts as, for both front ends: the user a front proxy
//! names in headers (request_header.rs), the user of its client
//! certificate, or else its bearer token's service account (tokens.rs);
//! then the user its `Impersonate-*` headers (gRPC: metadata) name, when
//! allowed (impersonation.rs); then its place among the requests in flight
//! (inflight.rs). REST and gRPC differ only in where they read these from.

pub mod request_header;
pub mod tokens;

use tokio::sync::OwnedSemaphorePermit;

use crate::auth::UserInfo;
use crate::error::ApiResult;
use crate::verbs::ApiCore;

/// How a request counts against the in-flight limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    ReadOnly,
    Mutating,
    /// Watches: not counted.
    LongRunning,
}

/// The user a request acts as, holding its place among the requests in
/// flight for as long as it lives.
pub struct Caller {
    pub user: UserInfo,
    _in_flight: Option<OwnedSemaphorePermit>,
}

impl std::ops::Deref for Caller {
    type Target = UserInfo;

    fn deref(&self) -> &UserInfo {
        &self.user
    }
}

/// The prefix of every impersonation header (their names are lowercase in
/// both front ends' header maps).
pub const IMPERSONATION_PREFIX: &str = "impersonate-";

impl ApiCore {
    /// Authenticates, impersonates and admits one request: `certificate`
    /// is the user of its client certificate (anonymous without one),
    /// `authorization` its Authorization header, `impersonation` its
    /// `impersonate-*` headers.
    pub async fn caller<'h>(
        &self,
        certificate: UserInfo,
        authorization: Option<&str>,
        impersonation: impl IntoIterator<Item = (&'h str, &'h str)>,
        admission: Admission,
    ) -> ApiResult<Caller> {
        let user = self
            .authenticate_request(certificate, authorization)
            .await?;
        let user = self.impersonate(user, impersonation).await?;
        let in_flight = match admission {
            Admission::LongRunning => None,
            Admission::ReadOnly => self.admit(&user, false)?,
            Admission::Mutating => self.admit(&user, true)?,
        };
        Ok(Caller {
            user,
            _in_flight: in_flight,
        })
    }
}
