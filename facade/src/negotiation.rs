//! Content negotiation: which representation a client accepts (Accept) and
//! what a request body is (Content-Type), with upstream's 406/415 answers.

use capstan_core::error::{ApiError, StatusReason};
use capstan_core::verbs::PatchType;

/// Upstream's limit on request bodies (3 MiB).
pub const MAX_REQUEST_BODY_BYTES: usize = 3 * 1024 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IncludeObject {
    None,
    Metadata,
    Object,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    Json,
    Yaml,
    Table,
    /// `metav1.PartialObjectMetadata` (lists: `PartialObjectMetadataList`),
    /// what client-go's metadata client asks for.
    PartialMetadata,
    /// Aggregated discovery (apidiscovery.k8s.io/v2 APIGroupDiscoveryList).
    AggregatedDiscovery,
    /// The Kubernetes protobuf envelope (`application/vnd.kubernetes.protobuf`).
    Protobuf,
    /// PartialObjectMetadata(List) in the protobuf envelope.
    PartialMetadataProtobuf,
}

impl Output {
    /// Tables and partial metadata describe the kind's objects; for other
    /// documents (Status, Scale, discovery) the client gets plain JSON.
    pub fn without_object_views(self) -> Self {
        match self {
            Self::Table | Self::PartialMetadata => Self::Json,
            Self::PartialMetadataProtobuf => Self::Protobuf,
            other => other,
        }
    }

    /// Whether the response is protobuf.
    pub fn is_protobuf(self) -> bool {
        matches!(self, Self::Protobuf | Self::PartialMetadataProtobuf)
    }

    /// Whether objects are reduced to PartialObjectMetadata.
    pub fn is_partial_metadata(self) -> bool {
        matches!(self, Self::PartialMetadata | Self::PartialMetadataProtobuf)
    }
}

struct MediaRange<'a> {
    essence: String,
    params: Vec<(&'a str, &'a str)>,
}

fn parse_media_ranges(header: &str) -> Vec<MediaRange<'_>> {
    header
        .split(',')
        .map(|part| {
            let mut pieces = part.split(';');
            let essence = pieces.next().unwrap_or("").trim().to_ascii_lowercase();
            let params = pieces
                .filter_map(|p| p.split_once('='))
                .map(|(k, v)| (k.trim(), v.trim().trim_matches('"')))
                .collect();
            MediaRange { essence, params }
        })
        .filter(|m| !m.essence.is_empty())
        .collect()
}

/// What a resource's objects are encoded as and patched with. Custom
/// resources are unstructured: JSON and YAML only, and no strategic merge
/// patch (which needs Go struct tags), as upstream's CRD handler serves them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Codecs {
    pub protobuf: bool,
    pub strategic_merge: bool,
}

impl Codecs {
    pub const BUILT_IN: Codecs = Codecs {
        protobuf: true,
        strategic_merge: true,
    };

    pub fn of(def: &capstan_core::registry::ResourceDef) -> Self {
        match def.origin {
            capstan_core::registry::Origin::BuiltIn => Self::BUILT_IN,
            capstan_core::registry::Origin::Custom => Codecs {
                protobuf: false,
                strategic_merge: false,
            },
        }
    }

    fn accepted(self) -> &'static str {
        if self.protobuf {
            "application/json, application/yaml, application/vnd.kubernetes.protobuf"
        } else {
            "application/json, application/yaml"
        }
    }

    fn accepted_patches(self) -> &'static str {
        if self.strategic_merge {
            "application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json, application/apply-patch+yaml"
        } else {
            "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
        }
    }
}

/// The first representation in the Accept header that we serve.
/// `discovery` allows the aggregated discovery form.
pub fn negotiate_output(accept: Option<&str>, discovery: bool) -> Result<Output, ApiError> {
    negotiate(accept, discovery, Codecs::BUILT_IN)
}

/// [`negotiate_output`] for a resource's objects.
pub fn negotiate_output_for(accept: Option<&str>, codecs: Codecs) -> Result<Output, ApiError> {
    negotiate(accept, false, codecs)
}

fn negotiate(accept: Option<&str>, discovery: bool, codecs: Codecs) -> Result<Output, ApiError> {
    let Some(accept) = accept.filter(|a| !a.trim().is_empty()) else {
        return Ok(Output::Json);
    };
    for range in parse_media_ranges(accept) {
        let param = |name: &str| {
            range
                .params
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| *v)
        };
        let json_like = matches!(
            range.essence.as_str(),
            "application/json" | "*/*" | "application/*"
        );
        if range.essence == capstan_core::protobuf::MEDIA_TYPE && codecs.protobuf {
            // Protobuf: plain objects and partial metadata; Tables and
            // discovery documents are JSON-only here, as upstream.
            match param("as") {
                None => return Ok(Output::Protobuf),
                Some("PartialObjectMetadata" | "PartialObjectMetadataList")
                    if param("g") == Some("meta.k8s.io")
                        && matches!(param("v"), Some("v1") | Some("v1beta1")) =>
                {
                    return Ok(Output::PartialMetadataProtobuf)
                }
                Some(_) => continue,
            }
        }
        match (range.essence.as_str(), param("as")) {
            (_, Some("Table"))
                if json_like
                    && param("g") == Some("meta.k8s.io")
                    && matches!(param("v"), Some("v1") | Some("v1beta1")) =>
            {
                return Ok(Output::Table)
            }
            (_, Some("PartialObjectMetadata" | "PartialObjectMetadataList"))
                if json_like
                    && param("g") == Some("meta.k8s.io")
                    && matches!(param("v"), Some("v1") | Some("v1beta1")) =>
            {
                return Ok(Output::PartialMetadata)
            }
            (_, Some("APIGroupDiscoveryList"))
                if json_like
                    && discovery
                    && param("g") == Some("apidiscovery.k8s.io")
                    && param("v") == Some("v2") =>
            {
                return Ok(Output::AggregatedDiscovery)
            }
            (_, Some(_)) => {}
            ("application/yaml", None) => return Ok(Output::Yaml),
            (_, None) if json_like => return Ok(Output::Json),
            _ => {}
        }
    }
    Err(ApiError::new(
        StatusReason::NotAcceptable,
        format!(
            "only the following media types are accepted: {}",
            codecs.accepted()
        ),
    ))
}

/// What a request body is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyFormat {
    Json,
    Yaml,
    /// The Kubernetes protobuf envelope (what typed client-go clients send).
    Protobuf,
    Patch(PatchType),
}

pub fn body_format(content_type: Option<&str>, for_patch: bool) -> Result<BodyFormat, ApiError> {
    body_format_for(content_type, for_patch, Codecs::BUILT_IN)
}

/// [`body_format`] for a body written to a resource.
pub fn body_format_for(
    content_type: Option<&str>,
    for_patch: bool,
    codecs: Codecs,
) -> Result<BodyFormat, ApiError> {
    let essence = content_type
        .and_then(|c| c.split(';').next())
        .map(|c| c.trim().to_ascii_lowercase())
        .unwrap_or_default();
    let format = match essence.as_str() {
        "application/json-patch+json" if for_patch => BodyFormat::Patch(PatchType::Json),
        "application/merge-patch+json" if for_patch => BodyFormat::Patch(PatchType::Merge),
        "application/strategic-merge-patch+json" if for_patch && codecs.strategic_merge => {
            BodyFormat::Patch(PatchType::StrategicMerge)
        }
        "application/apply-patch+yaml" if for_patch => BodyFormat::Patch(PatchType::Apply),
        "application/json" | "" if !for_patch => BodyFormat::Json,
        "application/yaml" if !for_patch => BodyFormat::Yaml,
        capstan_core::protobuf::MEDIA_TYPE if !for_patch && codecs.protobuf => BodyFormat::Protobuf,
        _ => {
            let accepted = if for_patch {
                codecs.accepted_patches()
            } else {
                codecs.accepted()
            };
            return Err(ApiError::new(
                StatusReason::UnsupportedMediaType,
                format!("the body of the request was in an unknown format - accepted media types include: {accepted}"),
            ));
        }
    };
    Ok(format)
}

/// Parses a body to JSON; `expected_kind` names the type in upstream's error form.
pub fn decode_body(
    format: BodyFormat,
    body: &[u8],
    expected_kind: &str,
) -> Result<serde_json::Value, ApiError> {
    decode(format, body, expected_kind, false).map(|(object, _)| object)
}

/// Parses an object to be written, with the keys a JSON body repeated
/// (upstream's strict decoding reports them; the parse keeps the last).
pub fn decode_object(
    format: BodyFormat,
    body: &[u8],
    expected_kind: &str,
) -> Result<(serde_json::Value, Vec<String>), ApiError> {
    decode(format, body, expected_kind, true)
}

fn decode(
    format: BodyFormat,
    body: &[u8],
    expected_kind: &str,
    note_duplicates: bool,
) -> Result<(serde_json::Value, Vec<String>), ApiError> {
    if format == BodyFormat::Protobuf {
        return capstan_core::protobuf::decode_envelope(body)
            .map(|object| (object, Vec::new()))
            .map_err(|e| {
                ApiError::bad_request(format!(
                    "the object provided is unrecognized (must be of type {expected_kind}): {e}"
                ))
            });
    }
    let yaml = matches!(
        format,
        BodyFormat::Yaml | BodyFormat::Patch(PatchType::Apply)
    );
    let parsed: Result<(serde_json::Value, Vec<String>), String> = if yaml {
        serde_yaml::from_slice::<serde_json::Value>(body)
            .map(|object| (object, Vec::new()))
            .map_err(|e| e.to_string())
    } else if note_duplicates {
        capstan_core::duplicate_fields::decode_noting_duplicates(body).map_err(|e| e.to_string())
    } else {
        serde_json::from_slice(body)
            .map(|object| (object, Vec::new()))
            .map_err(|e| e.to_string())
    };
    parsed.map_err(|e| {
        let summary: String = String::from_utf8_lossy(&body[..body.len().min(30)]).into_owned();
        let ellipsis = if body.len() > 30 { "..." } else { "" };
        match format {
            BodyFormat::Patch(_) => ApiError::bad_request(format!("error decoding patch: {e}")),
            _ => ApiError::bad_request(format!(
                "the object provided is unrecognized (must be of type {expected_kind}): couldn't get version/kind; json parse error: {e} ({summary}{ellipsis})"
            )),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kubectl_get_asks_for_a_table() {
        let accept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";
        assert_eq!(
            negotiate_output(Some(accept), false).unwrap(),
            Output::Table
        );
    }

    #[test]
    fn aggregated_discovery_only_where_offered() {
        let accept = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json";
        assert_eq!(
            negotiate_output(Some(accept), true).unwrap(),
            Output::AggregatedDiscovery
        );
        assert_eq!(negotiate_output(Some(accept), false).unwrap(), Output::Json);
    }

    #[test]
    fn metadata_clients_get_partial_object_metadata() {
        let accept =
            "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";
        assert_eq!(
            negotiate_output(Some(accept), false).unwrap(),
            Output::PartialMetadata
        );
    }

    #[test]
    fn protobuf_clients_get_protobuf() {
        let accept = "application/vnd.kubernetes.protobuf, */*";
        assert_eq!(
            negotiate_output(Some(accept), false).unwrap(),
            Output::Protobuf
        );
        let accept = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";
        assert_eq!(
            negotiate_output(Some(accept), false).unwrap(),
            Output::PartialMetadataProtobuf
        );
        let accept =
            "application/vnd.kubernetes.protobuf;as=Table;g=meta.k8s.io;v=v1,application/json";
        assert_eq!(negotiate_output(Some(accept), false).unwrap(), Output::Json);
    }

    #[test]
    fn unknown_types_are_refused() {
        assert_eq!(
            negotiate_output(Some("text/html"), false)
                .unwrap_err()
                .code(),
            406
        );
        assert_eq!(
            negotiate_output(Some("application/yaml"), false).unwrap(),
            Output::Yaml
        );
        assert_eq!(negotiate_output(Some("*/*"), false).unwrap(), Output::Json);
        assert_eq!(
            body_format(Some("text/plain"), false).unwrap_err().code(),
            415
        );
        assert_eq!(
            body_format(Some("application/json"), true)
                .unwrap_err()
                .code(),
            415
        );
        assert_eq!(
            body_format(Some("application/strategic-merge-patch+json"), true).unwrap(),
            BodyFormat::Patch(PatchType::StrategicMerge)
        );
    }

    #[test]
    fn custom_resources_are_json_only() {
        let custom = Codecs {
            protobuf: false,
            strategic_merge: false,
        };
        let refused =
            negotiate_output_for(Some("application/vnd.kubernetes.protobuf"), custom).unwrap_err();
        assert_eq!(refused.code(), 406);
        assert_eq!(
            refused.to_status()["message"],
            "only the following media types are accepted: application/json, application/yaml"
        );
        assert_eq!(
            negotiate_output_for(
                Some("application/vnd.kubernetes.protobuf, application/json"),
                custom
            )
            .unwrap(),
            Output::Json
        );
        let refused = body_format_for(Some("application/strategic-merge-patch+json"), true, custom)
            .unwrap_err();
        assert_eq!(
            refused.to_status()["message"],
            "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
        );
    }

    #[test]
    fn protobuf_bodies_are_decoded() {
        assert_eq!(
            body_format(Some("application/vnd.kubernetes.protobuf"), false).unwrap(),
            BodyFormat::Protobuf
        );
        let err = decode_body(BodyFormat::Protobuf, b"k8s\0garbage", "Namespace").unwrap_err();
        assert_eq!(err.code(), 400);
    }

    #[test]
    fn malformed_bodies_are_bad_requests() {
        let err = decode_body(BodyFormat::Json, b"{not json", "ConfigMap").unwrap_err();
        assert_eq!(err.code(), 400);
        assert!(err
            .message
            .starts_with("the object provided is unrecognized (must be of type ConfigMap)"));
        assert_eq!(
            decode_body(BodyFormat::Yaml, b"a: [", "ConfigMap")
                .unwrap_err()
                .code(),
            400
        );
    }
}
