//! The `serve` command's flags.

use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

/// Flag names follow kube-apiserver's where one exists.
#[derive(Args, Clone, Debug)]
pub struct ServeArgs {
    /// Directory for the embedded store, the PKI and admin.kubeconfig.
    #[arg(long, default_value = "./capstan-data", env = "CAPSTAN_DATA_DIR")]
    pub data_dir: PathBuf,
    /// MiB of the embedded store's file that it keeps in memory (its page
    /// cache); reads beyond it go to the file, through the OS's page cache.
    /// Reads are mostly served by the watch caches, so the store's own
    /// cache need hold little more than the pages writes walk; redb's
    /// default (1 GiB) kept every page written, about 2 KB per object.
    #[arg(long, default_value_t = 8, env = "CAPSTAN_EMBEDDED_CACHE_MB")]
    pub embedded_cache_mb: usize,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    pub bind_address: IpAddr,
    /// Port serving HTTPS (REST) and gRPC; 0 picks a free port.
    #[arg(long, default_value_t = 6443)]
    pub secure_port: u16,
    /// etcd endpoints (comma-separated); when set, state lives in etcd
    /// instead of the embedded store, and several replicas may share it.
    #[arg(long, value_delimiter = ',')]
    pub etcd_servers: Vec<String>,
    /// CA bundle that signed etcd's serving certificate.
    #[arg(long)]
    pub etcd_cafile: Option<PathBuf>,
    /// Client certificate for etcd.
    #[arg(long)]
    pub etcd_certfile: Option<PathBuf>,
    /// Client key for etcd.
    #[arg(long)]
    pub etcd_keyfile: Option<PathBuf>,
    /// Key prefix of every stored object.
    #[arg(long, default_value = "/registry")]
    pub etcd_prefix: String,
    /// How often history older than one interval is compacted; 0 disables it.
    #[arg(long, default_value = "5m", value_parser = parse_duration)]
    pub etcd_compaction_interval: Duration,
    /// How long a request other than a watch may take (its `timeout`
    /// parameter or `grpc-timeout` may shorten it); admission webhooks are
    /// never waited for past it.
    #[arg(long, default_value = "60s", value_parser = parse_duration)]
    pub request_timeout: Duration,
    /// Extra subject alternative names for the serving certificate.
    #[arg(long, value_delimiter = ',')]
    pub cert_extra_sans: Vec<String>,
    /// CIDR from which Services get their ClusterIPs.
    #[arg(long, default_value = capstan_core::addresses::DEFAULT_CLUSTER_IP_RANGE)]
    pub service_cluster_ip_range: capstan_core::addresses::allocator::Ipv4Cidr,
    /// Inclusive port range from which NodePort Services get node ports.
    #[arg(long, default_value = "30000-32767", value_parser = parse_port_range)]
    pub service_node_port_range: (u16, u16),
    /// Built-in controllers to run: "*" for all, "-name" to disable one
    /// (known: apiservice-availability, apiservice-registration,
    /// cluster-authentication-trust, clusterrole-aggregation,
    /// customresourcedefinitions, garbage-collector, namespace,
    /// priority-and-fairness-config, pv-protection, pvc-protection,
    /// resourcequota, root-ca-cert-publisher, service-address-repair,
    /// service-cidr-controller, serviceaccount,
    /// validatingadmissionpolicy-status).
    #[arg(long, value_delimiter = ',', default_value = "*")]
    pub controllers: Vec<String>,
    /// Signs service account tokens (PKCS#8 ECDSA P-256); defaults to
    /// `<data-dir>/pki/sa.key`, generated on first start. Replicas that
    /// share etcd should share this key.
    #[arg(long)]
    pub service_account_signing_key_file: Option<PathBuf>,
    /// More public keys (PEM) whose service account tokens are accepted,
    /// e.g. a key being rotated out.
    #[arg(long, value_delimiter = ',')]
    pub service_account_key_file: Vec<PathBuf>,
    /// The `iss` of the service account tokens this server issues and accepts.
    #[arg(long, default_value = capstan_core::authentication::tokens::DEFAULT_ISSUER)]
    pub service_account_issuer: String,
    /// Audiences a token must name to be accepted; defaults to the issuer.
    #[arg(long, value_delimiter = ',')]
    pub api_audiences: Vec<String>,
    /// Read-only requests in flight at once, per replica, before more are
    /// told to retry (429); 0 for no limit. system:masters is exempt.
    #[arg(long, default_value_t = capstan_core::inflight::DEFAULT_MAX_READONLY)]
    pub max_requests_inflight: usize,
    /// The same for mutating requests.
    #[arg(long, default_value_t = capstan_core::inflight::DEFAULT_MAX_MUTATING)]
    pub max_mutating_requests_inflight: usize,
    /// Admission plugins to enable besides the default ones (upstream's
    /// names, comma-separated; the order does not matter).
    #[arg(long, value_delimiter = ',')]
    pub enable_admission_plugins: Vec<String>,
    /// Default admission plugins to turn off.
    #[arg(long, value_delimiter = ',')]
    pub disable_admission_plugins: Vec<String>,
    /// An AdmissionConfiguration file (apiserver.config.k8s.io/v1): the
    /// plugins' configurations (PodSecurity's defaults and exemptions).
    #[arg(long)]
    pub admission_control_config_file: Option<PathBuf>,
    /// The client certificate Capstan presents to extension API servers it
    /// proxies to; defaults to the generated `pki/front-proxy-client.crt`.
    #[arg(long, requires = "proxy_client_key_file")]
    pub proxy_client_cert_file: Option<PathBuf>,
    /// Its key; defaults to the generated `pki/front-proxy-client.key`.
    #[arg(long, requires = "proxy_client_cert_file")]
    pub proxy_client_key_file: Option<PathBuf>,
    /// CA bundle whose client certificates may name the user in request
    /// headers (a front proxy's); defaults to the generated
    /// `pki/front-proxy-ca.crt`.
    #[arg(long)]
    pub requestheader_client_ca_file: Option<PathBuf>,
    /// Common names a front proxy's certificate may have; empty allows any
    /// certificate of the request-header CA.
    #[arg(long, value_delimiter = ',', default_value = crate::pki::FRONT_PROXY_CLIENT_COMMON_NAME)]
    pub requestheader_allowed_names: Vec<String>,
    /// Headers that carry the user name (the first one set wins).
    #[arg(long, value_delimiter = ',', default_value = "X-Remote-User")]
    pub requestheader_username_headers: Vec<String>,
    /// Headers that carry the groups.
    #[arg(long, value_delimiter = ',', default_value = "X-Remote-Group")]
    pub requestheader_group_headers: Vec<String>,
    /// Prefixes of the headers that carry extra attributes.
    #[arg(long, value_delimiter = ',', default_value = "X-Remote-Extra-")]
    pub requestheader_extra_headers_prefix: Vec<String>,
    /// Proxy to an APIService's backend through its Service's endpoints
    /// rather than its ClusterIP.
    #[arg(long)]
    pub enable_aggregator_routing: bool,
    /// The client certificate Capstan presents to kubelets (logs, exec,
    /// attach, port-forward, nodes/proxy); defaults to the generated
    /// `pki/apiserver-kubelet-client.crt`.
    #[arg(long, requires = "kubelet_client_key")]
    pub kubelet_client_certificate: Option<PathBuf>,
    /// Its key; defaults to the generated `pki/apiserver-kubelet-client.key`.
    #[arg(long, requires = "kubelet_client_certificate")]
    pub kubelet_client_key: Option<PathBuf>,
    /// CA bundle that verifies kubelets' serving certificates; without
    /// it they are not verified, as upstream.
    #[arg(long)]
    pub kubelet_certificate_authority: Option<PathBuf>,
    /// The order in which a node's addresses are tried for its kubelet.
    #[arg(
        long,
        value_delimiter = ',',
        default_values = capstan_core::connect::DEFAULT_PREFERRED_ADDRESS_TYPES
    )]
    pub kubelet_preferred_address_types: Vec<String>,
    /// Write the chosen port here once listening (for tests and scripts).
    #[arg(long)]
    pub port_file: Option<PathBuf>,
}

impl ServeArgs {
    /// The arguments `capstan serve <flags>` would run with.
    pub fn from_flags<T: Into<std::ffi::OsString> + Clone>(
        flags: impl IntoIterator<Item = T>,
    ) -> Result<Self, clap::Error> {
        use clap::Parser;
        #[derive(Parser)]
        struct Serve {
            #[command(flatten)]
            args: ServeArgs,
        }
        let argv = std::iter::once(std::ffi::OsString::from("serve"))
            .chain(flags.into_iter().map(Into::into));
        Serve::try_parse_from(argv).map(|serve| serve.args)
    }
}

fn parse_port_range(text: &str) -> Result<(u16, u16), String> {
    let (low, high) = text
        .split_once('-')
        .ok_or_else(|| format!("invalid port range {text:?} (want LOW-HIGH)"))?;
    let low: u16 = low
        .trim()
        .parse()
        .map_err(|_| format!("invalid port {low:?}"))?;
    let high: u16 = high
        .trim()
        .parse()
        .map_err(|_| format!("invalid port {high:?}"))?;
    if low == 0 || high < low {
        return Err(format!("invalid port range {text:?}"));
    }
    Ok((low, high))
}

fn parse_duration(text: &str) -> Result<Duration, String> {
    let (number, unit) = text.split_at(
        text.find(|c: char| !c.is_ascii_digit())
            .unwrap_or(text.len()),
    );
    let n: u64 = number
        .parse()
        .map_err(|_| format!("invalid duration {text:?}"))?;
    let secs = match unit {
        "" | "s" => n,
        "m" => n * 60,
        "h" => n * 3600,
        "ms" => return Ok(Duration::from_millis(n)),
        _ => {
            return Err(format!(
                "invalid duration unit in {text:?} (use ms, s, m or h)"
            ))
        }
    };
    Ok(Duration::from_secs(secs))
}
