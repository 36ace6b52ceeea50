//! What the helpers read from the server's answers: the objects' bodies.
//!
//! A `capstan.v1.Object` carries a typed copy of its metadata beside the
//! body (labels and annotations as maps, timestamps as strings) for
//! clients that want the envelope without the object. `Client` returns the
//! body only, so it decodes these messages instead: the same field numbers,
//! the envelope's fields skipped on the wire without being built.

use capstan_proto::json::JsonStruct;

/// `capstan.v1.Object`, body only.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct ObjectBody {
    #[prost(message, optional, tag = "4")]
    pub body: Option<JsonStruct>,
}

/// `capstan.v1.ListResponse`, without apiVersion and kind.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct ListBodies {
    #[prost(string, tag = "3")]
    pub resource_version: String,
    #[prost(string, tag = "4")]
    pub continue_token: String,
    #[prost(int64, optional, tag = "5")]
    pub remaining_item_count: Option<i64>,
    #[prost(message, repeated, tag = "6")]
    pub items: Vec<ObjectBody>,
}

/// `capstan.v1.WatchEvent`, its object body only.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct WatchEventBody {
    #[prost(string, tag = "1")]
    pub r#type: String,
    #[prost(message, optional, tag = "2")]
    pub object: Option<ObjectBody>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use capstan_proto::v1 as pb;
    use prost::Message;
    use serde_json::json;

    fn object() -> pb::Object {
        let body = json!({"apiVersion": "v1", "kind": "ConfigMap",
                          "metadata": {"name": "a", "labels": {"x": "y"}}, "data": {"k": "v"}});
        pb::Object {
            api_version: "v1".into(),
            kind: "ConfigMap".into(),
            metadata: Some(pb::ObjectMeta {
                name: "a".into(),
                labels: [("x".to_string(), "y".to_string())].into(),
                ..Default::default()
            }),
            body: body.as_object().cloned().map(JsonStruct),
        }
    }

    #[test]
    fn bodies_read_the_generated_messages() {
        let obj = object();
        let read = ObjectBody::decode(obj.encode_to_vec().as_slice()).expect("decodes");
        assert_eq!(read.body, obj.body);

        let list = pb::ListResponse {
            api_version: "v1".into(),
            kind: "ConfigMapList".into(),
            resource_version: "7".into(),
            continue_token: "more".into(),
            remaining_item_count: Some(3),
            items: vec![object(), object()],
        };
        let read = ListBodies::decode(list.encode_to_vec().as_slice()).expect("decodes");
        assert_eq!(
            (read.resource_version.as_str(), read.continue_token.as_str()),
            ("7", "more")
        );
        assert_eq!(read.remaining_item_count, Some(3));
        assert_eq!(read.items.len(), 2);
        assert!(read.items.iter().all(|item| item.body == obj.body));

        let event = pb::WatchEvent {
            r#type: "ADDED".into(),
            object: Some(object()),
        };
        let read = WatchEventBody::decode(event.encode_to_vec().as_slice()).expect("decodes");
        assert_eq!(read.r#type, "ADDED");
        assert_eq!(read.object.and_then(|o| o.body), obj.body);
    }
}
