//! `/metrics`: the Prometheus metrics operators read from kube-apiserver,
//! under upstream's names and labels (apiserver_request_total,
//! apiserver_request_duration_seconds, apiserver_current_inflight_requests,
//! apiserver_storage_objects) plus the process metrics. The gRPC API,
//! which upstream does not have, is counted under the names gRPC servers
//! conventionally export (go-grpc-prometheus): grpc_server_started_total,
//! grpc_server_handled_total and grpc_server_handling_seconds.

use std::pin::Pin;
use std::sync::OnceLock;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body::{Body, Frame};

use prometheus::{
    Encoder, HistogramOpts, HistogramVec, IntCounterVec, IntGaugeVec, Opts, Registry, TextEncoder,
};

use crate::verbs::ApiCore;

/// Upstream's buckets for apiserver_request_duration_seconds.
const DURATION_BUCKETS: &[f64] = &[
    0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0,
    10.0, 15.0, 20.0, 30.0, 45.0, 60.0,
];

const REQUEST_LABELS: &[&str] = &[
    "verb",
    "dry_run",
    "group",
    "version",
    "resource",
    "subresource",
    "scope",
    "component",
];

const GRPC_LABELS: &[&str] = &["grpc_type", "grpc_service", "grpc_method"];

struct Metrics {
    registry: Registry,
    requests: IntCounterVec,
    durations: HistogramVec,
    inflight: IntGaugeVec,
    storage_objects: IntGaugeVec,
    grpc_started: IntCounterVec,
    grpc_handled: IntCounterVec,
    grpc_seconds: HistogramVec,
    admission_steps: HistogramVec,
    admission_controllers: HistogramVec,
    webhook_seconds: HistogramVec,
    webhook_requests: IntCounterVec,
    webhook_rejections: IntCounterVec,
    webhook_fail_open: IntCounterVec,
}

fn metrics() -> &'static Metrics {
    static METRICS: OnceLock<Metrics> = OnceLock::new();
    METRICS.get_or_init(|| {
        let registry = Registry::new();
        let mut counted: Vec<&str> = REQUEST_LABELS.to_vec();
        counted.push("code");
        let requests = IntCounterVec::new(
            Opts::new(
                "apiserver_request_total",
                "Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.",
            ),
            &counted,
        )
        .expect("valid metric");
        let durations = HistogramVec::new(
            HistogramOpts::new(
                "apiserver_request_duration_seconds",
                "Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.",
            )
            .buckets(DURATION_BUCKETS.to_vec()),
            REQUEST_LABELS,
        )
        .expect("valid metric");
        let inflight = IntGaugeVec::new(
            Opts::new(
                "apiserver_current_inflight_requests",
                "Maximal number of currently used inflight request limit of this apiserver per request kind in last second.",
            ),
            &["request_kind"],
        )
        .expect("valid metric");
        let storage_objects = IntGaugeVec::new(
            Opts::new(
                "apiserver_storage_objects",
                "Number of stored objects at the time of last check split by kind.",
            ),
            &["resource"],
        )
        .expect("valid metric");
        let grpc_started = IntCounterVec::new(
            Opts::new(
                "grpc_server_started_total",
                "Total number of RPCs started on the server.",
            ),
            GRPC_LABELS,
        )
        .expect("valid metric");
        let mut handled_labels = GRPC_LABELS.to_vec();
        handled_labels.push("grpc_code");
        let grpc_handled = IntCounterVec::new(
            Opts::new(
                "grpc_server_handled_total",
                "Total number of RPCs completed on the server, regardless of success or failure.",
            ),
            &handled_labels,
        )
        .expect("valid metric");
        let grpc_seconds = HistogramVec::new(
            HistogramOpts::new(
                "grpc_server_handling_seconds",
                "Histogram of response latency (seconds) of gRPC that had been application-level handled by the server.",
            ),
            GRPC_LABELS,
        )
        .expect("valid metric");
        let admission_steps = HistogramVec::new(
            HistogramOpts::new(
                "apiserver_admission_step_admission_duration_seconds",
                "Admission sub-step latency histogram in seconds, broken out for each operation and API resource and step type (validate or admit).",
            )
            .buckets(vec![0.005, 0.025, 0.1, 0.5, 1.0, 2.5]),
            &["type", "operation", "rejected"],
        )
        .expect("valid metric");
        let admission_controllers = HistogramVec::new(
            HistogramOpts::new(
                "apiserver_admission_controller_admission_duration_seconds",
                "Admission controller latency histogram in seconds, identified by name and broken out for each operation and API resource and type (validate or admit).",
            )
            .buckets(vec![0.005, 0.025, 0.1, 0.5, 1.0, 2.5]),
            &["name", "type", "operation", "rejected"],
        )
        .expect("valid metric");
        let webhook_seconds = HistogramVec::new(
            HistogramOpts::new(
                "apiserver_admission_webhook_admission_duration_seconds",
                "Admission webhook latency histogram in seconds, identified by name and broken out for each operation and API resource and type (validate or admit).",
            )
            .buckets(vec![0.005, 0.025, 0.1, 0.5, 1.0, 2.5, 10.0, 25.0]),
            &["name", "type", "operation", "rejected"],
        )
        .expect("valid metric");
        let webhook_requests = IntCounterVec::new(
            Opts::new(
                "apiserver_admission_webhook_request_total",
                "Admission webhook request total, identified by name and broken out for each admission type (validating or mutating) and operation. Additional labels specify whether the request was rejected or not and an HTTP status code. Codes greater than 600 are truncated to 600, to keep the metrics cardinality bounded.",
            ),
            &["name", "type", "operation", "code", "rejected"],
        )
        .expect("valid metric");
        let webhook_rejections = IntCounterVec::new(
            Opts::new(
                "apiserver_admission_webhook_rejection_count",
                "Admission webhook rejection count, identified by name and broken out for each admission type (validating or admit) and operation. Additional labels specify an error type (calling_webhook_error or apiserver_internal_error if an error occurred; no_error otherwise) and optionally a non-zero rejection code if the webhook rejects the request with an HTTP status code (honored by the apiserver when the code is greater or equal to 400). Codes greater than 600 are truncated to 600, to keep the metrics cardinality bounded.",
            ),
            &["name", "type", "operation", "error_type", "rejection_code"],
        )
        .expect("valid metric");
        let webhook_fail_open = IntCounterVec::new(
            Opts::new(
                "apiserver_admission_webhook_fail_open_count",
                "Admission webhook fail open count, identified by name and broken out for each admission type (validating or admit).",
            ),
            &["name", "type"],
        )
        .expect("valid metric");
        for collector in [
            Box::new(admission_steps.clone()) as Box<dyn prometheus::core::Collector>,
            Box::new(admission_controllers.clone()),
            Box::new(webhook_seconds.clone()),
            Box::new(webhook_requests.clone()),
            Box::new(webhook_rejections.clone()),
            Box::new(webhook_fail_open.clone()),
            Box::new(requests.clone()),
            Box::new(durations.clone()),
            Box::new(inflight.clone()),
            Box::new(storage_objects.clone()),
            Box::new(grpc_started.clone()),
            Box::new(grpc_handled.clone()),
            Box::new(grpc_seconds.clone()),
            Box::new(prometheus::process_collector::ProcessCollector::for_self()),
        ] {
            // Each name is registered once, here.
            let _ = registry.register(collector);
        }
        Metrics {
            registry,
            requests,
            durations,
            inflight,
            storage_objects,
            grpc_started,
            grpc_handled,
            grpc_seconds,
            admission_steps,
            admission_controllers,
            webhook_seconds,
            webhook_requests,
            webhook_rejections,
            webhook_fail_open,
        }
    })
}

/// How one admission webhook call ended, as upstream's metrics count it.
pub enum WebhookOutcome {
    Allowed,
    /// The webhook denied the request with this code.
    Denied(u16),
    /// The call failed; `failed_open` when its failure policy ignored that.
    Failed {
        failed_open: bool,
    },
}

/// Counts one admission webhook call (`type` is "admit" or "validating").
pub fn observe_webhook(
    name: &str,
    type_: &str,
    operation: &str,
    outcome: &WebhookOutcome,
    elapsed: Duration,
) {
    let m = metrics();
    let rejected = matches!(
        outcome,
        WebhookOutcome::Denied(_) | WebhookOutcome::Failed { failed_open: false }
    );
    let rejected_label = if rejected { "true" } else { "false" };
    m.webhook_seconds
        .with_label_values(&[name, type_, operation, rejected_label])
        .observe(elapsed.as_secs_f64());
    let code = match outcome {
        WebhookOutcome::Allowed | WebhookOutcome::Denied(_) => 200,
        WebhookOutcome::Failed { .. } => 0,
    };
    m.webhook_requests
        .with_label_values(&[name, type_, operation, &code.to_string(), rejected_label])
        .inc();
    match outcome {
        WebhookOutcome::Denied(code) => {
            let code = (*code).min(600).to_string();
            m.webhook_rejections
                .with_label_values(&[name, type_, operation, "no_error", &code])
                .inc();
        }
        WebhookOutcome::Failed { failed_open: false } => {
            m.webhook_rejections
                .with_label_values(&[name, type_, operation, "calling_webhook_error", "0"])
                .inc();
        }
        WebhookOutcome::Failed { failed_open: true } => {
            m.webhook_fail_open.with_label_values(&[name, type_]).inc();
        }
        WebhookOutcome::Allowed => {}
    }
}

/// Counts one admission step (`type` "admit" or "validate").
pub fn observe_admission_step(type_: &str, operation: &str, rejected: bool, elapsed: Duration) {
    let rejected = if rejected { "true" } else { "false" };
    metrics()
        .admission_steps
        .with_label_values(&[type_, operation, rejected])
        .observe(elapsed.as_secs_f64());
}

/// Counts one admission plugin's step (`admit` or `validate`) under
/// upstream's per-controller metric.
///
/// The histogram is returned for the caller to keep: finding it hashes
/// the four label values under the family's lock, and a write passes every
/// enabled plugin's steps.
pub fn admission_controller_histogram(
    name: &str,
    type_: &str,
    operation: &str,
    rejected: bool,
) -> prometheus::Histogram {
    let rejected = if rejected { "true" } else { "false" };
    metrics()
        .admission_controllers
        .with_label_values(&[name, type_, operation, rejected])
}

/// What a finished request is counted under.
pub struct RequestLabels<'a> {
    /// Upstream's reported verb: GET, LIST, WATCH, POST, PUT, PATCH,
    /// APPLY, DELETE (or the HTTP method of a non-resource request).
    pub verb: &'a str,
    pub dry_run: bool,
    pub group: &'a str,
    pub version: &'a str,
    pub resource: &'a str,
    pub subresource: &'a str,
    /// "resource" (one object), "namespace", "cluster", or "" for
    /// non-resource requests.
    pub scope: &'a str,
}

/// Counts one finished request and its latency.
pub fn observe_request(labels: &RequestLabels<'_>, code: u16, elapsed: Duration) {
    let m = metrics();
    let dry_run = if labels.dry_run { "All" } else { "" };
    let values = [
        labels.verb,
        dry_run,
        labels.group,
        labels.version,
        labels.resource,
        labels.subresource,
        labels.scope,
        "apiserver",
    ];
    let mut counted = values.to_vec();
    let code = code.to_string();
    counted.push(&code);
    m.requests.with_label_values(&counted).inc();
    // Watches last as long as they are open: upstream leaves them out of
    // the latency histogram.
    if labels.verb != "WATCH" {
        m.durations
            .with_label_values(&values)
            .observe(elapsed.as_secs_f64());
    }
}

/// Holds one request in apiserver_current_inflight_requests while alive.
pub struct InflightGuard(prometheus::IntGauge);

impl InflightGuard {
    pub fn enter(mutating: bool) -> Self {
        let kind = if mutating { "mutating" } else { "readOnly" };
        let gauge = metrics().inflight.with_label_values(&[kind]);
        gauge.inc();
        Self(gauge)
    }
}

impl Drop for InflightGuard {
    fn drop(&mut self) {
        self.0.dec();
    }
}

/// One gRPC call being served, counted as started when made and as
/// handled, with its code and latency, when its status is known. A call
/// dropped before that (the client went away) is counted as Canceled.
pub struct GrpcCall {
    labels: [String; 3],
    started: Instant,
    finished: bool,
}

impl GrpcCall {
    /// `path` is the request's `/<package.Service>/<Method>`.
    pub fn start(path: &str) -> Self {
        let (service, method) = path
            .trim_start_matches('/')
            .split_once('/')
            .unwrap_or(("unknown", "unknown"));
        let labels = [
            grpc_type(service, method).to_string(),
            service.to_string(),
            method.to_string(),
        ];
        metrics().grpc_started.with_label_values(&labels).inc();
        Self {
            labels,
            started: Instant::now(),
            finished: false,
        }
    }

    /// Counts the call as handled with `code` (the grpc-status it ended with).
    pub fn finish(&mut self, code: tonic::Code) {
        if std::mem::replace(&mut self.finished, true) {
            return;
        }
        let m = metrics();
        let [kind, service, method] = &self.labels;
        m.grpc_handled
            .with_label_values(&[kind, service, method, code_name(code)])
            .inc();
        m.grpc_seconds
            .with_label_values(&self.labels)
            .observe(self.started.elapsed().as_secs_f64());
    }

    /// Finishes the call from a response's headers when they carry its
    /// status (a trailers-only answer); otherwise the status comes in
    /// the body's trailers, and the body is measured instead.
    pub fn measure<B>(
        mut self,
        response: http::Response<B>,
    ) -> http::Response<MeasuredGrpcBody<B>> {
        if let Some(code) = grpc_status(response.headers()) {
            self.finish(code);
        }
        response.map(|inner| MeasuredGrpcBody { inner, call: self })
    }
}

impl Drop for GrpcCall {
    fn drop(&mut self) {
        self.finish(tonic::Code::Cancelled);
    }
}

fn grpc_status(headers: &http::HeaderMap) -> Option<tonic::Code> {
    headers
        .get("grpc-status")
        .map(|v| tonic::Code::from_bytes(v.as_bytes()))
}

/// go-grpc-prometheus's grpc_type: how the method streams.
fn grpc_type(service: &str, method: &str) -> &'static str {
    match (service, method) {
        ("capstan.v1.Resources", "Watch") | ("grpc.health.v1.Health", "Watch") => "server_stream",
        (_, "ServerReflectionInfo") => "bidi_stream",
        _ => "unary",
    }
}

/// The code as gRPC's Go implementation names it, which is what
/// grpc_server_handled_total's grpc_code carries.
fn code_name(code: tonic::Code) -> &'static str {
    use tonic::Code;
    match code {
        Code::Ok => "OK",
        Code::Cancelled => "Canceled",
        Code::Unknown => "Unknown",
        Code::InvalidArgument => "InvalidArgument",
        Code::DeadlineExceeded => "DeadlineExceeded",
        Code::NotFound => "NotFound",
        Code::AlreadyExists => "AlreadyExists",
        Code::PermissionDenied => "PermissionDenied",
        Code::ResourceExhausted => "ResourceExhausted",
        Code::FailedPrecondition => "FailedPrecondition",
        Code::Aborted => "Aborted",
        Code::OutOfRange => "OutOfRange",
        Code::Unimplemented => "Unimplemented",
        Code::Internal => "Internal",
        Code::Unavailable => "Unavailable",
        Code::DataLoss => "DataLoss",
        Code::Unauthenticated => "Unauthenticated",
    }
}

/// A gRPC response body that finishes its call when the trailers with
/// the status go by (or, without them, when it ends).
pub struct MeasuredGrpcBody<B> {
    inner: B,
    call: GrpcCall,
}

impl<B> Body for MeasuredGrpcBody<B>
where
    B: Body<Data = Bytes> + Unpin,
{
    type Data = Bytes;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, B::Error>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        match &polled {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(code) = frame.trailers_ref().and_then(grpc_status) {
                    self.call.finish(code);
                }
            }
            Poll::Ready(Some(Err(_))) => self.call.finish(tonic::Code::Unknown),
            Poll::Ready(None) => self.call.finish(tonic::Code::Unknown),
            Poll::Pending => {}
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

impl ApiCore {
    /// The metrics in Prometheus' text format; stored-object counts are
    /// taken from the watch caches at the time of the scrape.
    pub fn metrics_text(&self) -> String {
        let m = metrics();
        for def in self.registry.snapshot().resources() {
            if !def.is_stored() || def.converts_for_storage() {
                continue;
            }
            let cache = self.caches.for_prefix(&def.key_prefix(&self.prefix, None));
            let count = i64::try_from(cache.len()).unwrap_or(i64::MAX);
            let name = crate::error::qualified(&def.resource, &def.group);
            m.storage_objects.with_label_values(&[&name]).set(count);
        }
        let mut out = Vec::new();
        // Encoding into memory cannot fail for these metric types.
        let _ = TextEncoder::new().encode(&m.registry.gather(), &mut out);
        String::from_utf8(out).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_counted_under_upstreams_labels() {
        let labels = RequestLabels {
            verb: "POST",
            dry_run: false,
            group: "apps",
            version: "v1",
            resource: "deployments",
            subresource: "",
            scope: "namespace",
        };
        observe_request(&labels, 201, Duration::from_millis(3));
        {
            let _inflight = InflightGuard::enter(true);
            let text = TextEncoder::new()
                .encode_to_string(&metrics().registry.gather())
                .expect("text");
            assert!(
                text.contains(r#"apiserver_current_inflight_requests{request_kind="mutating"} 1"#),
                "{text}"
            );
        }
        let text = TextEncoder::new()
            .encode_to_string(&metrics().registry.gather())
            .expect("text");
        assert!(
            text.contains(r#"apiserver_request_total{code="201",component="apiserver",dry_run="",group="apps",resource="deployments",scope="namespace",subresource="",verb="POST",version="v1"} 1"#),
            "{text}"
        );
        assert!(text.contains(r#"apiserver_request_duration_seconds_bucket{component="apiserver",dry_run="",group="apps",resource="deployments",scope="namespace",subresource="",verb="POST",version="v1",le="0.005"} 1"#), "{text}");
        assert!(text.contains(r#"apiserver_current_inflight_requests{request_kind="mutating"} 0"#));
    }

    fn handled(service: &str, method: &str, kind: &str, code: &str) -> u64 {
        metrics()
            .grpc_handled
            .with_label_values(&[kind, service, method, code])
            .get()
    }

    /// Each call is counted once, under the status it ended with: in the
    /// headers of a trailers-only answer, in the trailers of a streamed
    /// one, or Canceled when the client left before either.
    #[tokio::test]
    async fn grpc_calls_are_counted_once_under_the_status_they_end_with() {
        use http_body_util::BodyExt;
        let service = "capstan.v1.Resources";
        let before = |method, kind, code| handled(service, method, kind, code);
        let (get_not_found, list_ok, watch_ok, watch_canceled) = (
            before("Get", "unary", "NotFound"),
            before("List", "unary", "OK"),
            before("Watch", "server_stream", "OK"),
            before("Watch", "server_stream", "Canceled"),
        );

        let trailers_only = http::Response::builder()
            .header("grpc-status", "5")
            .body(http_body_util::Empty::<Bytes>::new())
            .expect("response");
        let body = GrpcCall::start("/capstan.v1.Resources/Get").measure(trailers_only);
        assert_eq!(before("Get", "unary", "NotFound"), get_not_found + 1);
        drop(body);
        assert_eq!(before("Get", "unary", "NotFound"), get_not_found + 1);

        let mut trailers = http::HeaderMap::new();
        trailers.insert("grpc-status", http::HeaderValue::from_static("0"));
        let streamed = http::Response::new(
            http_body_util::Full::new(Bytes::from_static(b"message"))
                .with_trailers(async move { Some(Ok(trailers)) })
                .boxed(),
        );
        let measured = GrpcCall::start("/capstan.v1.Resources/List").measure(streamed);
        let collected = measured.into_body().collect().await.expect("body");
        assert_eq!(collected.to_bytes(), Bytes::from_static(b"message"));
        assert_eq!(before("List", "unary", "OK"), list_ok + 1);

        let open_watch = http::Response::new(http_body_util::Empty::<Bytes>::new());
        drop(GrpcCall::start("/capstan.v1.Resources/Watch").measure(open_watch));
        assert_eq!(
            before("Watch", "server_stream", "Canceled"),
            watch_canceled + 1
        );
        assert_eq!(before("Watch", "server_stream", "OK"), watch_ok);

        let text = TextEncoder::new()
            .encode_to_string(&metrics().registry.gather())
            .expect("text");
        assert!(
            text.contains(r#"grpc_server_started_total{grpc_method="Get",grpc_service="capstan.v1.Resources",grpc_type="unary"}"#),
            "{text}"
        );
        assert!(text.contains(r#"grpc_server_handling_seconds_bucket{grpc_method="List",grpc_service="capstan.v1.Resources",grpc_type="unary",le="0.005"}"#), "{text}");
    }
}
