//! The gRPC Watch as served: each change's object is encoded once, as a
//! `capstan.v1.Object`, and every watcher of the change sends those bytes.
//! tonic's generated server encodes a whole `WatchEvent` per watcher, which
//! was most of the server's CPU when one write went to 1,000 watchers
//! (docs/benchmarks.md, "Watch fan-out").
//!
//! `ResourcesGrpc` routes `capstan.v1.Resources/Watch` here and every other
//! method to the generated `ResourcesServer`. The bytes on the wire are the
//! same `WatchEvent` messages either way.

use std::convert::Infallible;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::{BufMut, Bytes, BytesMut};
use capstan_proto::v1 as pb;
use futures::future::BoxFuture;
use futures::stream::{BoxStream, StreamExt};
use prost::encoding::{encode_key, encode_varint, WireType};
use prost::Message;
use tonic::codec::{Codec, EncodeBuf, Encoder};
use tonic::codegen::{http, Body, Service, StdError};
use tonic::server::{NamedService, ServerStreamingService};
use tonic::Status;

use crate::grpc::{to_pb_object, ResourcesService};
use crate::service::ApiCore;
use crate::watch::WatchEvent;

const WATCH_PATH: &str = "/capstan.v1.Resources/Watch";

/// A `capstan.v1.WatchEvent`, encoded.
#[derive(Debug, Clone)]
pub struct EncodedWatchEvent(Bytes);

impl EncodedWatchEvent {
    /// The event's type and its object, whose encoding the first watcher of
    /// the change makes and the others reuse.
    pub fn of(event: &WatchEvent) -> Self {
        let object = event
            .encodings
            .grpc_object
            .get_or_init(|| Bytes::from(to_pb_object(&event.object).encode_to_vec()));
        let kind = event.event_type.as_str();
        let mut buf = BytesMut::with_capacity(object.len() + kind.len() + 12);
        // WatchEvent { string type = 1; Object object = 2; }
        encode_key(1, WireType::LengthDelimited, &mut buf);
        encode_varint(kind.len() as u64, &mut buf);
        buf.put_slice(kind.as_bytes());
        encode_key(2, WireType::LengthDelimited, &mut buf);
        encode_varint(object.len() as u64, &mut buf);
        buf.put_slice(object);
        Self(buf.freeze())
    }
}

/// Decodes requests with prost; writes encoded events as they are.
#[derive(Debug, Clone, Copy, Default)]
struct WatchCodec;

impl Codec for WatchCodec {
    type Encode = EncodedWatchEvent;
    type Decode = pb::WatchRequest;
    type Encoder = EncodedEventWriter;
    type Decoder = tonic_prost::ProstDecoder<pb::WatchRequest>;

    fn encoder(&mut self) -> Self::Encoder {
        EncodedEventWriter
    }

    fn decoder(&mut self) -> Self::Decoder {
        tonic_prost::ProstDecoder::default()
    }
}

#[derive(Debug, Clone, Copy, Default)]
struct EncodedEventWriter;

impl Encoder for EncodedEventWriter {
    type Item = EncodedWatchEvent;
    type Error = Status;

    fn encode(&mut self, item: Self::Item, dst: &mut EncodeBuf<'_>) -> Result<(), Status> {
        dst.put_slice(&item.0);
        Ok(())
    }
}

struct SharedEncodingWatch(Arc<ResourcesService>);

impl ServerStreamingService<pb::WatchRequest> for SharedEncodingWatch {
    type Response = EncodedWatchEvent;
    type ResponseStream = BoxStream<'static, Result<EncodedWatchEvent, Status>>;
    type Future = BoxFuture<'static, Result<tonic::Response<Self::ResponseStream>, Status>>;

    fn call(&mut self, request: tonic::Request<pb::WatchRequest>) -> Self::Future {
        let service = self.0.clone();
        Box::pin(async move {
            let events = service.watch_events(request).await?;
            let encoded = events.map(|event| Ok(EncodedWatchEvent::of(&event)));
            Ok(tonic::Response::new(encoded.boxed()))
        })
    }
}

/// `capstan.v1.Resources`: Watch with shared encodings, the rest generated.
#[derive(Clone)]
pub struct ResourcesGrpc {
    service: Arc<ResourcesService>,
    generated: pb::resources_server::ResourcesServer<ResourcesService>,
}

impl ResourcesGrpc {
    pub fn new(core: Arc<ApiCore>) -> Self {
        let service = Arc::new(ResourcesService::new(core));
        Self {
            generated: pb::resources_server::ResourcesServer::from_arc(service.clone()),
            service,
        }
    }
}

impl NamedService for ResourcesGrpc {
    const NAME: &'static str = pb::resources_server::SERVICE_NAME;
}

impl<B> Service<http::Request<B>> for ResourcesGrpc
where
    B: Body + Send + 'static,
    B::Error: Into<StdError> + Send + 'static,
{
    type Response = http::Response<tonic::body::Body>;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<Self::Response, Self::Error>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        if request.uri().path() != WATCH_PATH {
            return self.generated.call(request);
        }
        let service = self.service.clone();
        Box::pin(async move {
            let mut grpc = tonic::server::Grpc::new(WatchCodec);
            Ok(grpc
                .server_streaming(SharedEncodingWatch(service), request)
                .await)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::watch::EventType;
    use serde_json::json;

    #[test]
    fn encoded_events_are_the_generated_messages_and_share_the_object() {
        let object = Arc::new(json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "web", "namespace": "ns", "resourceVersion": "7"},
            "data": {"k": "v"}
        }));
        let added = WatchEvent::new(EventType::Added, object.clone());
        // A second watcher of the same change sees it as MODIFIED.
        let modified = WatchEvent {
            event_type: EventType::Modified,
            ..added.clone()
        };
        for event in [&added, &modified] {
            let encoded = EncodedWatchEvent::of(event);
            let decoded = pb::WatchEvent::decode(encoded.0.clone()).unwrap();
            let expected = pb::WatchEvent {
                r#type: event.event_type.as_str().to_string(),
                object: Some(to_pb_object(&object)),
            };
            assert_eq!(decoded, expected);
        }
        let first = added.encodings.grpc_object.get().unwrap();
        let second = modified.encodings.grpc_object.get().unwrap();
        assert_eq!(first.as_ptr(), second.as_ptr(), "encoded once, shared");
    }
}
