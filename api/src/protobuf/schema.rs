//! The wire schema of every Kubernetes protobuf message, generated at build
//! time from the `k8s-pb` crate's sources (see core/build.rs).

/// How a field's value is encoded. `Message` holds an index into
/// [`MESSAGES`].
/// Every proto scalar is listed although Kubernetes uses only a few, so a
/// future k8s-pb using another one needs no change here.
#[allow(dead_code)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Double,
    Float,
    Int32,
    Int64,
    Uint32,
    Uint64,
    Sint32,
    Sint64,
    Fixed32,
    Fixed64,
    Sfixed32,
    Sfixed64,
    Bool,
    String,
    Bytes,
    Enum,
    Message(u32),
}

/// `Map` carries the key's kind; the field's own kind is the value's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Label {
    Single,
    Repeated,
    Map(Kind),
}

#[derive(Debug)]
pub(super) struct Field {
    /// prost's snake_case name, the key for recovering the JSON name.
    pub(super) name: &'static str,
    pub(super) tag: u32,
    pub(super) label: Label,
    pub(super) kind: Kind,
    /// Position in the message's declaration: Go struct order.
    pub(super) declared: u16,
}

#[derive(Debug)]
pub(super) struct Message {
    /// `k8s.io.<package>.<RustName>`: prost's spelling of the message name,
    /// which differs from the proto one only in case (`ApiService`).
    pub(super) name: &'static str,
    /// Sorted by tag.
    pub(super) fields: &'static [Field],
}

/// A kind k8s-pb marks as a served resource, with its apiVersion.
#[derive(Debug)]
pub(super) struct Resource {
    pub(super) api_version: &'static str,
    pub(super) kind: &'static str,
    pub(super) message: u32,
}

include!(concat!(env!("OUT_DIR"), "/k8s_pb_schema.rs"));

pub(super) fn message(index: u32) -> Option<&'static Message> {
    MESSAGES.get(usize::try_from(index).ok()?)
}

/// Case-insensitive, because callers may spell a name the proto way
/// (`k8s.io.kube_aggregator.pkg.apis.apiregistration.v1.APIService`).
pub(super) fn find(full_name: &str) -> Option<u32> {
    let full_name = full_name.strip_prefix('.').unwrap_or(full_name);
    let lowered = |name: &'static str| name.bytes().map(|b| b.to_ascii_lowercase());
    let wanted = full_name.bytes().map(|b| b.to_ascii_lowercase());
    MESSAGES
        .binary_search_by(|message| lowered(message.name).cmp(wanted.clone()))
        .ok()
        .and_then(|index| u32::try_from(index).ok())
}

impl Message {
    pub(super) fn field_index(&self, tag: u32) -> Option<usize> {
        self.fields
            .binary_search_by_key(&tag, |field| field.tag)
            .ok()
    }

    /// The proto package: everything before the last dot.
    pub(super) fn package(&self) -> &'static str {
        self.name
            .rsplit_once('.')
            .map_or("", |(package, _)| package)
    }
}
