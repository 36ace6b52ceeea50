//! The deadline of the request being served, as upstream's
//! WithRequestDeadline puts one on every request's context but watches':
//! `--request-timeout` (60 s), shortened by the request's `timeout` query
//! parameter (REST) or `grpc-timeout` (gRPC). Admission webhooks never wait
//! past it. It travels with the request's task, so the core reads it
//! without every verb passing it along.

use std::future::Future;
use std::time::Duration;

use tokio::time::Instant;

tokio::task_local! {
    static DEADLINE: Option<Instant>;
}

/// Upstream's `--request-timeout` default.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// Runs `work` as a request that must finish by `deadline`; None for a
/// request without one (watches and other long-running requests).
///
/// Every request's future is this one's size, so it stays small: one
/// function for both cases keeps a single `work` in the caller's state
/// (an async block awaiting it in two places holds two), and it is not an
/// `async fn`, which would hold `work` twice, as its argument and inside
/// the scope.
pub fn within<F: Future>(deadline: Option<Instant>, work: F) -> impl Future<Output = F::Output> {
    DEADLINE.scope(deadline, work)
}

/// What is left of the current request's time: None outside a request
/// with a deadline, zero once it passed.
pub fn remaining() -> Option<Duration> {
    DEADLINE
        .try_with(|deadline| deadline.map(|d| d.saturating_duration_since(Instant::now())))
        .ok()
        .flatten()
}

/// A REST request's timeout, as upstream's timeoutParser reads the
/// `timeout` query parameter: a Go duration; zero, negative or longer than
/// `maximum` means `maximum`. The error is upstream's 400 message.
pub fn rest_timeout(parameter: Option<&str>, maximum: Duration) -> Result<Duration, String> {
    let Some(text) = parameter.filter(|t| !t.is_empty()) else {
        return Ok(maximum);
    };
    let nanos = capstan_api::protobuf::parse_go_duration(text).ok_or_else(|| {
        format!("invalid timeout specified in the request URL - time: invalid duration {text:?}")
    })?;
    Ok(match u64::try_from(nanos) {
        Ok(nanos) if nanos > 0 => Duration::from_nanos(nanos).min(maximum),
        _ => maximum,
    })
}

/// A gRPC call's timeout from its `grpc-timeout` header (an integer of at
/// most eight digits and a unit: H, M, S, m, u or n), at most `maximum`.
pub fn grpc_timeout(header: Option<&str>, maximum: Duration) -> Duration {
    let parsed = header.and_then(|text| {
        let (digits, unit) = text.split_at(text.len().checked_sub(1)?);
        if digits.is_empty() || digits.len() > 8 {
            return None;
        }
        let amount: u64 = digits.parse().ok()?;
        Some(match unit {
            "H" => Duration::from_secs(amount * 3600),
            "M" => Duration::from_secs(amount * 60),
            "S" => Duration::from_secs(amount),
            "m" => Duration::from_millis(amount),
            "u" => Duration::from_micros(amount),
            "n" => Duration::from_nanos(amount),
            _ => return None,
        })
    });
    parsed.map_or(maximum, |timeout| timeout.min(maximum))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAXIMUM: Duration = DEFAULT_REQUEST_TIMEOUT;

    #[test]
    fn rest_timeouts_follow_upstreams_parser() {
        assert_eq!(rest_timeout(None, MAXIMUM), Ok(MAXIMUM));
        assert_eq!(rest_timeout(Some(""), MAXIMUM), Ok(MAXIMUM));
        assert_eq!(
            rest_timeout(Some("10s"), MAXIMUM),
            Ok(Duration::from_secs(10))
        );
        assert_eq!(
            rest_timeout(Some("1m30s"), Duration::from_secs(120)),
            Ok(Duration::from_secs(90))
        );
        assert_eq!(rest_timeout(Some("0s"), MAXIMUM), Ok(MAXIMUM));
        assert_eq!(rest_timeout(Some("-5s"), MAXIMUM), Ok(MAXIMUM));
        assert_eq!(rest_timeout(Some("5m"), MAXIMUM), Ok(MAXIMUM));
        assert_eq!(
            rest_timeout(Some("foo"), MAXIMUM),
            Err(
                r#"invalid timeout specified in the request URL - time: invalid duration "foo""#
                    .into()
            )
        );
    }

    #[test]
    fn grpc_timeouts_read_every_unit() {
        assert_eq!(grpc_timeout(Some("3S"), MAXIMUM), Duration::from_secs(3));
        assert_eq!(
            grpc_timeout(Some("1500m"), MAXIMUM),
            Duration::from_millis(1500)
        );
        assert_eq!(grpc_timeout(Some("2H"), MAXIMUM), MAXIMUM);
        assert_eq!(grpc_timeout(Some("7x"), MAXIMUM), MAXIMUM);
        assert_eq!(grpc_timeout(Some("123456789S"), MAXIMUM), MAXIMUM);
        assert_eq!(grpc_timeout(None, MAXIMUM), MAXIMUM);
    }

    #[tokio::test]
    async fn the_deadline_travels_with_the_request() {
        assert_eq!(remaining(), None);
        let deadline = Instant::now() + Duration::from_secs(5);
        let left = within(Some(deadline), async { remaining() }).await;
        assert!(left.is_some_and(|d| d > Duration::from_secs(4)), "{left:?}");
        let past = within(Some(Instant::now()), async { remaining() }).await;
        assert_eq!(past, Some(Duration::ZERO));
        let long_running = within(None, async { remaining() }).await;
        assert_eq!(long_running, None);
    }
}
