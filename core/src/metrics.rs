//! `/metrics`: the Prometheus metrics operators read from kube-apiserver,
//! under upstream's names and labels (apiserver_request_total,
//! apiserver_request_duration_seconds, apiserver_current_inflight_requests,
//! apiserver_storage_objects) plus the process metrics.

use std::sync::OnceLock;
use std::time::Duration;

use prometheus::{
    Encoder, HistogramOpts, HistogramVec, IntCounterVec, IntGaugeVec, Opts, Registry, TextEncoder,
};

use crate::service::ApiCore;

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

struct Metrics {
    registry: Registry,
    requests: IntCounterVec,
    durations: HistogramVec,
    inflight: IntGaugeVec,
    storage_objects: IntGaugeVec,
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
        for collector in [
            Box::new(requests.clone()) as Box<dyn prometheus::core::Collector>,
            Box::new(durations.clone()),
            Box::new(inflight.clone()),
            Box::new(storage_objects.clone()),
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
        }
    })
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

impl ApiCore {
    /// The metrics in Prometheus' text format; stored-object counts are
    /// taken from the watch caches at the time of the scrape.
    pub fn metrics_text(&self) -> String {
        let m = metrics();
        for def in self.registry.resources() {
            if !def.is_stored() || def.converts_for_storage() {
                continue;
            }
            let cache = self.caches.for_prefix(&def.key_prefix(&self.prefix, None));
            let count = i64::try_from(cache.len()).unwrap_or(i64::MAX);
            let name = crate::error::qualified(def.resource, def.group);
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
}
