//! Upstream's max-in-flight filter (`--max-requests-inflight`,
//! `--max-mutating-requests-inflight`): past the limit, a request is told to
//! come back (429, Retry-After: 1) instead of queueing without bound.
//! Long-running requests (watches) are not counted, and `system:masters`
//! is never limited, as upstream exempts it.

use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::auth::{UserInfo, MASTERS_GROUP};
use crate::error::{ApiError, ApiResult};
use crate::verbs::ApiCore;

/// Upstream's defaults.
pub const DEFAULT_MAX_READONLY: usize = 400;
pub const DEFAULT_MAX_MUTATING: usize = 200;

/// The two limits; 0 leaves a kind unlimited, as upstream.
pub struct InflightLimits {
    readonly: Option<Arc<Semaphore>>,
    mutating: Option<Arc<Semaphore>>,
}

impl InflightLimits {
    pub fn new(readonly: usize, mutating: usize) -> Self {
        let limit = |n: usize| (n > 0).then(|| Arc::new(Semaphore::new(n)));
        Self {
            readonly: limit(readonly),
            mutating: limit(mutating),
        }
    }
}

impl Default for InflightLimits {
    fn default() -> Self {
        Self::new(DEFAULT_MAX_READONLY, DEFAULT_MAX_MUTATING)
    }
}

impl ApiCore {
    /// A place among the requests in flight for a non-long-running request
    /// of `user`, held until the permit drops; None when it is not counted.
    pub fn admit(
        &self,
        user: &UserInfo,
        mutating: bool,
    ) -> ApiResult<Option<OwnedSemaphorePermit>> {
        if user.in_group(MASTERS_GROUP) {
            return Ok(None);
        }
        let limit = if mutating {
            &self.inflight.mutating
        } else {
            &self.inflight.readonly
        };
        match limit {
            None => Ok(None),
            Some(slots) => slots
                .clone()
                .try_acquire_owned()
                .map(Some)
                .map_err(|_| ApiError::too_many_requests()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn requests_past_the_limit_are_told_to_retry() {
        let (_dir, core) = crate::testing::core_unshaped().await;
        let core = core.with_inflight_limits(InflightLimits::new(1, 0));
        let alice = UserInfo::authenticated("alice", vec![]);
        let held = core.admit(&alice, false).expect("a first place");
        assert!(held.is_some());
        let refused = core.admit(&alice, false).unwrap_err();
        assert_eq!(refused.code(), 429);
        assert_eq!(
            refused.message,
            "Too many requests, please try again later."
        );
        assert_eq!(refused.to_status()["details"]["retryAfterSeconds"], 1);
        // Mutating requests are unlimited here (0), masters always.
        assert!(core.admit(&alice, true).expect("unlimited").is_none());
        let admin = UserInfo::authenticated("admin", vec![MASTERS_GROUP.into()]);
        assert!(core.admit(&admin, false).expect("exempt").is_none());
        drop(held);
        assert!(core.admit(&alice, false).expect("a freed place").is_some());
    }
}
