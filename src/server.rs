//! The serving stack: one TLS listener, HTTP/1.1 and HTTP/2 by ALPN, gRPC
//! and REST told apart by content-type, the client certificate's identity
//! attached to every request, and a clean shutdown on SIGTERM/SIGINT.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Body;
use capstan_core::auth::UserInfo;
use capstan_core::authentication::request_header::{FrontProxy, RequestHeaderNames};
use capstan_core::controllers::authentication_trust::AuthenticationTrust;
use capstan_core::discovery::Discovery;
use capstan_core::grpc::admission::AdmissionService;
use capstan_core::grpc::served::ResourcesGrpc;
use capstan_core::grpc::DiscoveryService;
use capstan_core::registry::{Registry, RegistryHandle};
use capstan_core::storage::embedded::EmbeddedStore;
use capstan_core::storage::etcd::{EtcdConfig, EtcdStore};
use capstan_core::storage::Storage;
use capstan_core::ApiCore;
use capstan_facade::FacadeState;
use capstan_proto::v1 as pb;
use futures::future::BoxFuture;
use http::{Request, Response};
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use serde_json::json;
use tokio::net::TcpListener;
use tower::ServiceExt;

use crate::pki;
use crate::ServeArgs;

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("pki: {0}")]
    Pki(#[from] pki::PkiError),
    #[error("storage: {0}")]
    Storage(#[from] capstan_core::storage::StorageError),
    #[error("bootstrap: {0}")]
    Bootstrap(#[from] capstan_core::ApiError),
    #[error("listen on {addr}: {source}")]
    Listen {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error("{0}")]
    Other(String),
}

/// How long open connections (watches) get to finish after a shutdown signal.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);
const TLS_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// The most request header bytes a connection takes, as Go's http.Server.
const MAX_HEADER_BYTES: u32 = 1 << 20;

fn version_info() -> serde_json::Value {
    json!({
        "major": "1",
        "minor": "33",
        "gitVersion": concat!("v1.33.0+capstan.", env!("CARGO_PKG_VERSION")),
        "gitCommit": "",
        "gitTreeState": "clean",
        "buildDate": "",
        "goVersion": "rust",
        "compiler": "rustc",
        "platform": format!("{}/{}", std::env::consts::OS, match std::env::consts::ARCH { "x86_64" => "amd64", "aarch64" => "arm64", other => other }),
    })
}

/// Counts a gRPC call in /metrics (grpc_server_*), from its start to the
/// status its response ends with, and gives it (but a watch) its deadline:
/// its `grpc-timeout`, at most `--request-timeout`. One layer rather than
/// two: each `from_fn` layer boxes the call's future and clones the
/// service under it, per call.
async fn serve_grpc_call(
    axum::extract::State(maximum): axum::extract::State<Duration>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let path = request.uri().path();
    let call = capstan_core::metrics::GrpcCall::start(path);
    let deadline = (!path.ends_with("/Watch")).then(|| {
        let header = request
            .headers()
            .get("grpc-timeout")
            .and_then(|v| v.to_str().ok());
        tokio::time::Instant::now() + capstan_core::deadline::grpc_timeout(header, maximum)
    });
    let response = capstan_core::deadline::within(deadline, next.run(request)).await;
    call.measure(response).map(Body::new)
}

/// Routes a request to the gRPC services or the REST facade.
#[derive(Clone)]
struct Dispatch {
    grpc: axum::Router,
    rest: axum::Router,
}

impl Dispatch {
    fn call(&self, req: Request<Body>) -> BoxFuture<'static, Result<Response<Body>, Infallible>> {
        let is_grpc = req
            .headers()
            .get(http::header::CONTENT_TYPE)
            .is_some_and(|v| v.as_bytes().starts_with(b"application/grpc"));
        let router = if is_grpc {
            self.grpc.clone()
        } else {
            self.rest.clone()
        };
        Box::pin(router.oneshot(req))
    }
}

pub async fn serve(args: ServeArgs) -> Result<(), ServeError> {
    serve_with(args, |_| ()).await
}

/// [`serve`], handing `on_started` the core once start-up is done (storage
/// open, bootstrap written, watch caches started), before the port file
/// is written.
pub async fn serve_with(
    args: ServeArgs,
    on_started: impl FnOnce(Arc<ApiCore>),
) -> Result<(), ServeError> {
    let started = Instant::now();
    // Listened for from here on: a signal during start-up then stops the
    // server cleanly as soon as it is up, instead of its default action
    // killing it without closing its store.
    let shutdown = shutdown_signal();
    tokio::pin!(shutdown);
    std::fs::create_dir_all(&args.data_dir)
        .map_err(|e| ServeError::Other(format!("data dir {}: {e}", args.data_dir.display())))?;
    let addr = SocketAddr::new(args.bind_address, args.secure_port);
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|source| ServeError::Listen { addr, source })?;
    let local = listener
        .local_addr()
        .map_err(|source| ServeError::Listen { addr, source })?;
    let pki = pki::ensure_pki(
        &args.data_dir,
        &pki::PkiOptions {
            bind_address: args.bind_address,
            secure_port: local.port(),
            extra_sans: args.cert_extra_sans.clone(),
        },
    )?;
    let trust = Arc::new(pki::ClientTrust::new(
        &pki,
        args.requestheader_client_ca_file.as_deref(),
        &args.requestheader_allowed_names,
    )?);
    let tls = Arc::new(pki::server_tls_config(&pki, &trust)?);
    let acceptor = tokio_rustls::TlsAcceptor::from(tls);

    let storage: Arc<dyn Storage> = if args.etcd_servers.is_empty() {
        Arc::new(EmbeddedStore::open_with_cache(
            &args.data_dir.join("store"),
            args.embedded_cache_mb.saturating_mul(1 << 20),
        )?)
    } else {
        let config = EtcdConfig {
            endpoints: args.etcd_servers.clone(),
            ca_file: args.etcd_cafile.clone(),
            cert_file: args.etcd_certfile.clone(),
            key_file: args.etcd_keyfile.clone(),
        };
        Arc::new(EtcdStore::connect(&config).await?)
    };
    let registry = Arc::new(RegistryHandle::new(Registry::builtin()));
    let tokens = token_authority(&args, &pki)?;
    let admission_plugins = capstan_core::admission::plugins::Plugins::choose(
        &args.enable_admission_plugins,
        &args.disable_admission_plugins,
    )
    .and_then(|plugins| match &args.admission_control_config_file {
        Some(file) => plugins.configured(file),
        None => Ok(plugins),
    })
    .map_err(|errors| ServeError::Other(format!("[{}]", errors.join(", "))))?;
    let request_header_names = RequestHeaderNames {
        username_headers: args.requestheader_username_headers.clone(),
        group_headers: args.requestheader_group_headers.clone(),
        extra_headers_prefixes: args.requestheader_extra_headers_prefix.clone(),
    };
    let core = Arc::new(
        ApiCore::new(registry.clone(), storage.clone(), args.etcd_prefix.clone())
            .with_service_ranges(args.service_cluster_ip_range, args.service_node_port_range)
            .with_token_authority(tokens)
            .with_admission_plugins(admission_plugins)
            .with_request_header_names(request_header_names.clone())
            .with_aggregator(
                Some(proxy_identity(&args, &pki)?),
                args.enable_aggregator_routing,
            )
            .with_kubelet(kubelet_config(&args, &pki)?)
            .with_inflight_limits(capstan_core::inflight::InflightLimits::new(
                args.max_requests_inflight,
                args.max_mutating_requests_inflight,
            )),
    );
    let opened = started.elapsed();
    core.bootstrap().await?;
    match core
        .bootstrap_kubernetes_service(args.bind_address, local.port())
        .await
    {
        // Admission refused it (AlwaysDeny, a policy): upstream serves on
        // without the Service, as its bootstrap controller keeps failing.
        Err(e) if e.code() == 403 => {
            tracing::warn!(error = %e, "the kubernetes Service could not be written")
        }
        other => other?,
    }
    core.start_watch_caches();
    tokio::spawn(core.clone().follow_api_services());
    on_started(core.clone());
    let bootstrapped = started.elapsed();
    let discovery = Arc::new(Discovery::new(registry.clone()));
    let ready = Arc::new(AtomicBool::new(false));
    // Generating the documents takes longer than the rest of start-up:
    // build them off the start-up path; /openapi requests wait for them.
    let openapi = capstan_facade::LazyOpenApi::spawn(registry.clone());
    tracing::debug!(
        pki_and_store_ms = opened.as_millis() as u64,
        bootstrap_ms = (bootstrapped - opened).as_millis() as u64,
        "start-up phases"
    );

    let facade = capstan_facade::router(Arc::new(FacadeState {
        core: core.clone(),
        discovery: discovery.clone(),
        openapi: Some(openapi),
        version: version_info(),
        ready: ready.clone(),
        request_timeout: args.request_timeout,
        merged_v3_index: Default::default(),
        merged_v2: Default::default(),
    }));
    let (health_reporter, health_service) = tonic_health::server::health_reporter();
    health_reporter.set_serving::<ResourcesGrpc>().await;
    health_reporter
        .set_serving::<pb::discovery_server::DiscoveryServer<DiscoveryService>>()
        .await;
    health_reporter
        .set_serving::<pb::admission_server::AdmissionServer<AdmissionService>>()
        .await;
    let reflection_v1 = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(pb::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
        .build_v1()
        .map_err(|e| ServeError::Other(format!("reflection: {e}")))?;
    let reflection_v1alpha = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(pb::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
        .build_v1alpha()
        .map_err(|e| ServeError::Other(format!("reflection: {e}")))?;
    let grpc = tonic::service::Routes::new(ResourcesGrpc::new(core.clone()))
        .add_service(pb::discovery_server::DiscoveryServer::new(
            DiscoveryService::new(core.clone(), discovery),
        ))
        .add_service(pb::admission_server::AdmissionServer::new(
            AdmissionService::new(core.clone()),
        ))
        .add_service(health_service)
        .add_service(reflection_v1)
        .add_service(reflection_v1alpha)
        .into_axum_router()
        .layer(axum::middleware::from_fn_with_state(
            args.request_timeout,
            serve_grpc_call,
        ));
    let layers = tower::ServiceBuilder::new()
        .layer(tower_http::catch_panic::CatchPanicLayer::custom(
            panic_response,
        ))
        .layer(tower_http::trace::TraceLayer::new_for_http());
    let dispatch = Dispatch {
        grpc: grpc.layer(layers.clone()),
        rest: facade.layer(layers),
    };

    if args.etcd_compaction_interval > Duration::ZERO {
        tokio::spawn(compaction_loop(
            storage.clone(),
            args.etcd_compaction_interval,
        ));
    }
    if capstan_core::controllers::enabled(&args.controllers, "garbage-collector") {
        tokio::spawn(capstan_core::controllers::garbage_collector::run(
            core.clone(),
        ));
    }
    if capstan_core::controllers::enabled(&args.controllers, "clusterrole-aggregation") {
        tokio::spawn(capstan_core::controllers::clusterrole_aggregation::run(
            core.clone(),
        ));
    }
    if capstan_core::controllers::enabled(&args.controllers, "customresourcedefinitions") {
        tokio::spawn(capstan_core::controllers::custom_resource_definitions::run(
            core.clone(),
        ));
    }
    if capstan_core::controllers::enabled(&args.controllers, "serviceaccount") {
        tokio::spawn(capstan_core::controllers::serviceaccounts::run(
            core.clone(),
        ));
    }
    if capstan_core::controllers::enabled(&args.controllers, "validatingadmissionpolicy-status") {
        tokio::spawn(capstan_core::controllers::admission_policy_status::run(
            core.clone(),
        ));
    }
    if capstan_core::controllers::enabled(&args.controllers, "resourcequota") {
        tokio::spawn(capstan_core::controllers::resource_quota::run(core.clone()));
    }
    if capstan_core::controllers::enabled(&args.controllers, "root-ca-cert-publisher") {
        tokio::spawn(capstan_core::controllers::root_ca_publisher::run(
            core.clone(),
            pki.ca_cert_pem().to_string(),
        ));
    }
    if capstan_core::controllers::enabled(&args.controllers, "apiservice-registration") {
        tokio::spawn(capstan_core::controllers::api_services::run(core.clone()));
    }
    if capstan_core::controllers::enabled(&args.controllers, "apiservice-availability") {
        tokio::spawn(capstan_core::controllers::api_service_availability::run(
            core.clone(),
        ));
    }
    if capstan_core::controllers::enabled(&args.controllers, "cluster-authentication-trust") {
        tokio::spawn(capstan_core::controllers::authentication_trust::run(
            core.clone(),
            AuthenticationTrust {
                client_ca: pki.ca_cert_pem().to_string(),
                request_header_ca: trust.request_header_ca_pem().to_string(),
                allowed_names: trust.allowed_names().to_vec(),
                names: request_header_names.clone(),
            },
        ));
    }
    if capstan_core::controllers::enabled(&args.controllers, "pvc-protection") {
        tokio::spawn(capstan_core::controllers::storage_protection::run_claims(
            core.clone(),
        ));
    }
    if capstan_core::controllers::enabled(&args.controllers, "pv-protection") {
        tokio::spawn(capstan_core::controllers::storage_protection::run_volumes(
            core.clone(),
        ));
    }
    if capstan_core::controllers::enabled(&args.controllers, "priority-and-fairness-config") {
        tokio::spawn(capstan_core::controllers::priority_and_fairness::run(
            core.clone(),
        ));
    }
    // The default ServiceCIDR is the server's own; its finalizing part
    // is kube-controller-manager's service-cidr-controller.
    tokio::spawn(capstan_core::controllers::service_cidrs::run(
        core.clone(),
        capstan_core::controllers::enabled(&args.controllers, "service-cidr-controller"),
    ));
    if capstan_core::controllers::enabled(&args.controllers, "namespace") {
        tokio::spawn(capstan_core::controllers::namespace::run(core.clone()));
    }
    if capstan_core::controllers::enabled(&args.controllers, "service-address-repair") {
        tokio::spawn(capstan_core::controllers::service_addresses::run(
            core.clone(),
        ));
    }
    if let Some(path) = &args.port_file {
        std::fs::write(path, local.port().to_string())
            .map_err(|e| ServeError::Other(format!("port file: {e}")))?;
    }
    ready.store(true, Ordering::Relaxed);
    tracing::info!(
        address = %local,
        url = pki.server_url(),
        kubeconfig = %pki.paths().kubeconfig.display(),
        startup_ms = started.elapsed().as_millis() as u64,
        "capstan is serving"
    );

    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    loop {
        let (tcp, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(conn) => conn,
                Err(e) => {
                    tracing::warn!(error = %e, "accept failed");
                    continue;
                }
            },
            _ = &mut shutdown => break,
        };
        let _ = tcp.set_nodelay(true);
        let acceptor = acceptor.clone();
        let trust = trust.clone();
        let dispatch = dispatch.clone();
        let watcher = graceful.watcher();
        tokio::spawn(async move {
            let tls = match tokio::time::timeout(TLS_HANDSHAKE_TIMEOUT, acceptor.accept(tcp)).await
            {
                Ok(Ok(tls)) => tls,
                Ok(Err(e)) => {
                    tracing::debug!(%peer, error = %e, "TLS handshake failed");
                    return;
                }
                Err(_) => {
                    tracing::debug!(%peer, "TLS handshake timed out");
                    return;
                }
            };
            let peer_identity = tls
                .get_ref()
                .1
                .peer_certificates()
                .map(|chain| trust.classify(chain));
            let user = peer_identity
                .as_ref()
                .and_then(|peer| peer.user.clone())
                .map(|id| UserInfo::authenticated(id.user, id.groups))
                .unwrap_or_else(UserInfo::anonymous);
            let front_proxy = peer_identity.is_some_and(|peer| peer.front_proxy);
            let service = hyper::service::service_fn(move |mut req: Request<Incoming>| {
                req.extensions_mut().insert(user.clone());
                if front_proxy {
                    req.extensions_mut().insert(FrontProxy);
                }
                dispatch.call(req.map(Body::new))
            });
            let mut builder = auto::Builder::new(TokioExecutor::new());
            // Go's server takes up to 1 MiB of request headers (its
            // MaxHeaderBytes default), over HTTP/2 too; h2's default of
            // 16 KiB reset a 64 KiB request line instead of answering it.
            builder.http2().max_header_list_size(MAX_HEADER_BYTES);
            let conn = builder.serve_connection_with_upgrades(
                TokioIo::new(crate::batched_writes::BatchedWrites::new(tls)),
                service,
            );
            if let Err(e) = watcher.watch(conn.into_owned()).await {
                tracing::debug!(%peer, error = %e, "connection ended with an error");
            }
        });
    }
    ready.store(false, Ordering::Relaxed);
    tracing::info!("shutting down");
    drop(listener);
    if tokio::time::timeout(SHUTDOWN_GRACE, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::info!("closing connections still open after the grace period");
    }
    Ok(())
}

/// The client certificate Capstan proxies to extension API servers with:
/// the flags' files, or the PKI's front-proxy-client.
fn proxy_identity(
    args: &ServeArgs,
    pki: &pki::Pki,
) -> Result<capstan_core::aggregator::ProxyIdentity, ServeError> {
    let paths = pki.paths();
    let cert = args
        .proxy_client_cert_file
        .as_ref()
        .unwrap_or(&paths.front_proxy_client_cert);
    let key = args
        .proxy_client_key_file
        .as_ref()
        .unwrap_or(&paths.front_proxy_client_key);
    let read = |path: &std::path::PathBuf| {
        std::fs::read_to_string(path)
            .map_err(|e| ServeError::Other(format!("{}: {e}", path.display())))
    };
    Ok(capstan_core::aggregator::ProxyIdentity {
        cert_pem: read(cert)?,
        key_pem: read(key)?,
    })
}

/// How Capstan reaches kubelets: the flags' client certificate, or the
/// PKI's apiserver-kubelet-client; the flags' CA, or none (kubelets'
/// certificates are then not verified, as upstream).
fn kubelet_config(
    args: &ServeArgs,
    pki: &pki::Pki,
) -> Result<capstan_core::connect::KubeletConfig, ServeError> {
    let paths = pki.paths();
    let read = |path: &std::path::PathBuf| {
        std::fs::read_to_string(path)
            .map_err(|e| ServeError::Other(format!("{}: {e}", path.display())))
    };
    let cert = args
        .kubelet_client_certificate
        .as_ref()
        .unwrap_or(&paths.kubelet_client_cert);
    let key = args
        .kubelet_client_key
        .as_ref()
        .unwrap_or(&paths.kubelet_client_key);
    Ok(capstan_core::connect::KubeletConfig {
        client_identity: Some((read(cert)?, read(key)?)),
        certificate_authority: args
            .kubelet_certificate_authority
            .as_ref()
            .map(read)
            .transpose()?,
        preferred_address_types: args.kubelet_preferred_address_types.clone(),
    })
}

/// The service account token keys: the flags' files, or the PKI's sa.key.
fn token_authority(
    args: &ServeArgs,
    pki: &pki::Pki,
) -> Result<capstan_core::authentication::tokens::TokenAuthority, ServeError> {
    let signing_path = args
        .service_account_signing_key_file
        .clone()
        .unwrap_or_else(|| pki.paths().service_account_key.clone());
    let (signing, public) = pki::service_account_signing_key(&signing_path)?;
    let accepted = args
        .service_account_key_file
        .iter()
        .map(|path| pki::service_account_public_key(path))
        .collect::<Result<Vec<_>, _>>()?;
    capstan_core::authentication::tokens::TokenAuthority::from_pem(
        &signing,
        &public,
        &accepted,
        &args.service_account_issuer,
        &args.api_audiences,
    )
    .map_err(ServeError::Other)
}

fn panic_response(
    _: Box<dyn std::any::Any + Send + 'static>,
) -> Response<http_body_util::Full<bytes::Bytes>> {
    let status = capstan_core::ApiError::internal("the server panicked while handling the request")
        .to_status();
    let body = serde_json::to_vec(&status).unwrap_or_default();
    let mut resp = Response::new(http_body_util::Full::from(body));
    *resp.status_mut() = http::StatusCode::INTERNAL_SERVER_ERROR;
    resp.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    resp
}

/// Compacts history older than one interval, as kube-apiserver does for etcd:
/// each tick compacts to the revision seen at the previous tick.
async fn compaction_loop(storage: Arc<dyn Storage>, interval: Duration) {
    let mut previous = None;
    let mut ticker = tokio::time::interval(interval);
    loop {
        ticker.tick().await;
        if let Some(rev) = previous {
            if let Err(e) = storage.compact(rev).await {
                tracing::warn!(error = %e, "compaction failed");
            }
        }
        previous = storage.current_revision().await.ok();
    }
}

/// SIGINT or SIGTERM. Both are registered when this is called, not when
/// it is first awaited, so one that comes before is not missed.
fn shutdown_signal() -> impl std::future::Future<Output = ()> {
    use tokio::signal::unix::{signal, Signal, SignalKind};
    async fn received(registered: std::io::Result<Signal>) {
        match registered {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    }
    let interrupt = received(signal(SignalKind::interrupt()));
    let terminate = received(signal(SignalKind::terminate()));
    async move {
        tokio::select! {
            _ = interrupt => {},
            _ = terminate => {},
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tower::ServiceExt;

    /// What a call sees of its deadline, answered as its body.
    async fn remaining_time() -> String {
        format!("{:?}", capstan_core::deadline::remaining())
    }

    async fn call(path: &str, timeout: Option<&str>) -> String {
        let router = axum::Router::new()
            .route("/{service}/{method}", axum::routing::post(remaining_time))
            .layer(axum::middleware::from_fn_with_state(
                Duration::from_secs(60),
                serve_grpc_call,
            ));
        let mut request = http::Request::post(path);
        if let Some(timeout) = timeout {
            request = request.header("grpc-timeout", timeout);
        }
        let response = router
            .oneshot(request.body(Body::empty()).expect("a request"))
            .await
            .expect("an answer");
        let body = http_body_util::BodyExt::collect(response.into_body())
            .await
            .expect("a body")
            .to_bytes();
        String::from_utf8_lossy(&body).into_owned()
    }

    /// A call runs within its grpc-timeout, at most --request-timeout; a
    /// watch has no deadline.
    #[tokio::test]
    async fn a_grpc_call_runs_within_its_deadline_but_a_watch() {
        let within = call("/capstan.v1.Resources/Create", Some("2S")).await;
        assert!(
            within.starts_with("Some(1.") || within.starts_with("Some(2"),
            "{within}"
        );
        let capped = call("/capstan.v1.Resources/Create", Some("5M")).await;
        assert!(
            capped.starts_with("Some(59.") || capped.starts_with("Some(60"),
            "{capped}"
        );
        let watch = call("/capstan.v1.Resources/Watch", Some("2S")).await;
        assert_eq!(watch, "None");
    }
}
