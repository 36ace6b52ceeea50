//! What the gRPC server sends without tonic's generated encoding:
//!
//! - `Watch`: each change's object is encoded once, as a `capstan.v1.Object`,
//!   and every watcher of the change sends those bytes. The generated server
//!   encodes a whole `WatchEvent` per watcher, which was most of the
//!   server's CPU when one write went to 1,000 watchers (docs/benchmarks.md,
//!   "Watch fan-out").
//! - `List`, `Get` and the writes (`Create`, `Update`, `Patch`, `Delete`):
//!   written straight from the JSON objects (grpc_encode.rs), without first
//!   building a `google.protobuf.Struct`; an object in the watch cache
//!   keeps its encoding, which a later list or get sends as it is. A
//!   write's warnings go out as `warning` metadata.
//!
//! `ResourcesGrpc` routes those methods here and every other method to the
//! generated `ResourcesServer`. The messages on the wire are the same either
//! way.

use std::convert::Infallible;
use std::future::Future;
use std::marker::PhantomData;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::{BufMut, Bytes, BytesMut};
use capstan_proto::v1 as pb;
use futures::future::BoxFuture;
use futures::stream::{BoxStream, StreamExt};
use prost::encoding::{encode_key, encode_varint, WireType};
use tonic::codec::{BufferSettings, Codec, EncodeBuf, Encoder};
use tonic::codegen::{http, Body, Service, StdError};
use tonic::server::{NamedService, ServerStreamingService, UnaryService};
use tonic::Status;

use crate::grpc::encode;
use crate::grpc::{with_warnings, ResourcesService};
use crate::verbs::{ApiCore, WriteResult};
use crate::watch::WatchEvent;

const WATCH_PATH: &str = "/capstan.v1.Resources/Watch";
const LIST_PATH: &str = "/capstan.v1.Resources/List";
const GET_PATH: &str = "/capstan.v1.Resources/Get";
const CREATE_PATH: &str = "/capstan.v1.Resources/Create";
const UPDATE_PATH: &str = "/capstan.v1.Resources/Update";
const PATCH_PATH: &str = "/capstan.v1.Resources/Patch";
const DELETE_PATH: &str = "/capstan.v1.Resources/Delete";

/// A `capstan.v1.WatchEvent`, encoded.
#[derive(Debug, Clone)]
struct EncodedWatchEvent(Bytes);

impl EncodedWatchEvent {
    /// The event's type and its object, whose encoding the first watcher of
    /// the change makes and the others reuse.
    fn of(event: &WatchEvent) -> Self {
        let object = event
            .encodings()
            .grpc_object
            .get_or_init(|| encode::object(&event.object));
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

/// Decodes requests of type `Request` with prost; writes responses that are
/// already encoded as they are.
struct PreEncodedCodec<Request> {
    writer: BytesWriter,
    request: PhantomData<Request>,
}

impl<Request> Default for PreEncodedCodec<Request> {
    fn default() -> Self {
        Self::with_first_buffer(BufferSettings::default())
    }
}

impl<Request> PreEncodedCodec<Request> {
    fn with_first_buffer(first_buffer: BufferSettings) -> Self {
        Self {
            writer: BytesWriter { first_buffer },
            request: PhantomData,
        }
    }

    /// For a watch: a call's first encoding buffer is kept for as long as
    /// the call lasts, and tonic's default (8 KiB) was most of what an idle
    /// gRPC watcher held. A watch event is one object, so a buffer of
    /// 1 KiB holds a small one and a larger one grows it.
    fn for_watch() -> Self {
        Self::with_first_buffer(BufferSettings::new(WATCH_BUFFER, DEFAULT_YIELD_THRESHOLD))
    }
}

const WATCH_BUFFER: usize = 1024;
/// tonic's own (private to it, so repeated here): a stream's encoded
/// events are sent once they reach it.
const DEFAULT_YIELD_THRESHOLD: usize = 32 * 1024;

impl<Request> Codec for PreEncodedCodec<Request>
where
    Request: prost::Message + Default + Send + 'static,
{
    type Encode = Bytes;
    type Decode = Request;
    type Encoder = BytesWriter;
    type Decoder = tonic_prost::ProstDecoder<Request>;

    fn encoder(&mut self) -> Self::Encoder {
        self.writer
    }

    fn decoder(&mut self) -> Self::Decoder {
        tonic_prost::ProstDecoder::default()
    }
}

#[derive(Debug, Clone, Copy)]
struct BytesWriter {
    first_buffer: BufferSettings,
}

impl Encoder for BytesWriter {
    type Item = Bytes;
    type Error = Status;

    fn encode(&mut self, item: Bytes, dst: &mut EncodeBuf<'_>) -> Result<(), Status> {
        dst.put_slice(&item);
        Ok(())
    }

    fn buffer_settings(&self) -> BufferSettings {
        self.first_buffer
    }
}

struct SharedEncodingWatch(Arc<ResourcesService>);

impl ServerStreamingService<pb::WatchRequest> for SharedEncodingWatch {
    type Response = Bytes;
    type ResponseStream = BoxStream<'static, Result<Bytes, Status>>;
    type Future = BoxFuture<'static, Result<tonic::Response<Self::ResponseStream>, Status>>;

    fn call(&mut self, request: tonic::Request<pb::WatchRequest>) -> Self::Future {
        let service = self.0.clone();
        Box::pin(async move {
            let events = service.watch_events(request).await?;
            let encoded = events.map(|event| Ok(EncodedWatchEvent::of(&event).0));
            Ok(tonic::Response::new(encoded.boxed()))
        })
    }
}

struct DirectList(Arc<ResourcesService>);

impl UnaryService<pb::ListRequest> for DirectList {
    type Response = Bytes;
    type Future = BoxFuture<'static, Result<tonic::Response<Bytes>, Status>>;

    fn call(&mut self, request: tonic::Request<pb::ListRequest>) -> Self::Future {
        let service = self.0.clone();
        Box::pin(async move {
            let (def, list) = service.list_page(request).await?;
            let encoded = encode::list_response(&def.api_version(), &def.list_kind(), &list);
            Ok(tonic::Response::new(encoded))
        })
    }
}

/// One object, encoded as a `capstan.v1.Object`, and the warnings the
/// call drew.
type ObjectReply = Result<(Bytes, Vec<String>), Status>;

fn written(result: Result<WriteResult, Status>) -> ObjectReply {
    result.map(|written| (encode::object(&written.object), written.warnings))
}

/// A unary method whose reply is a `capstan.v1.Object`.
struct DirectObject<Call>(Arc<ResourcesService>, Call);

impl<Request, Call, Reply> UnaryService<Request> for DirectObject<Call>
where
    Call: Fn(Arc<ResourcesService>, tonic::Request<Request>) -> Reply,
    Reply: Future<Output = ObjectReply> + Send + 'static,
{
    type Response = Bytes;
    type Future = BoxFuture<'static, Result<tonic::Response<Bytes>, Status>>;

    fn call(&mut self, request: tonic::Request<Request>) -> Self::Future {
        let reply = (self.1)(self.0.clone(), request);
        Box::pin(async move {
            let (object, warnings) = reply.await?;
            let response = tonic::Response::new(object);
            Ok(with_warnings(response, &warnings))
        })
    }
}

/// Serves `request` with `call`, whose object is encoded here.
fn direct_object<B, Request, Call, Reply>(
    service: Arc<ResourcesService>,
    request: http::Request<B>,
    call: Call,
) -> BoxFuture<'static, Result<http::Response<tonic::body::Body>, Infallible>>
where
    B: Body + Send + 'static,
    B::Error: Into<StdError> + Send + 'static,
    Request: prost::Message + Default + Send + 'static,
    Call: Fn(Arc<ResourcesService>, tonic::Request<Request>) -> Reply + Send + 'static,
    Reply: Future<Output = ObjectReply> + Send + 'static,
{
    Box::pin(async move {
        let mut grpc = tonic::server::Grpc::new(PreEncodedCodec::default());
        Ok(grpc.unary(DirectObject(service, call), request).await)
    })
}

/// `capstan.v1.Resources`: Watch, List, Get and the writes encoded here,
/// the rest generated.
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
        let service = self.service.clone();
        match request.uri().path() {
            WATCH_PATH => Box::pin(async move {
                let mut grpc = tonic::server::Grpc::new(PreEncodedCodec::for_watch());
                Ok(grpc
                    .server_streaming(SharedEncodingWatch(service), request)
                    .await)
            }),
            LIST_PATH => Box::pin(async move {
                let mut grpc = tonic::server::Grpc::new(PreEncodedCodec::default());
                Ok(grpc.unary(DirectList(service), request).await)
            }),
            GET_PATH => direct_object(
                service,
                request,
                |s, r: tonic::Request<pb::GetRequest>| async move {
                    Ok((encode::lazy_object(&s.get_object(r).await?), Vec::new()))
                },
            ),
            CREATE_PATH => direct_object(
                service,
                request,
                |s, r: tonic::Request<pb::CreateRequest>| async move {
                    written(s.create_result(r).await)
                },
            ),
            UPDATE_PATH => direct_object(
                service,
                request,
                |s, r: tonic::Request<pb::UpdateRequest>| async move {
                    written(s.update_result(r).await)
                },
            ),
            PATCH_PATH => direct_object(
                service,
                request,
                |s, r: tonic::Request<pb::PatchRequest>| async move { written(s.patch_result(r).await) },
            ),
            DELETE_PATH => direct_object(
                service,
                request,
                |s, r: tonic::Request<pb::DeleteRequest>| async move {
                    written(s.delete_result(r).await)
                },
            ),
            _ => self.generated.call(request),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grpc::to_pb_object;
    use crate::watch::EventType;
    use prost::Message;
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
        let mut modified = added.clone();
        modified.event_type = EventType::Modified;
        for event in [&added, &modified] {
            let encoded = EncodedWatchEvent::of(event);
            let decoded = pb::WatchEvent::decode(encoded.0.clone()).unwrap();
            let expected = pb::WatchEvent {
                r#type: event.event_type.as_str().to_string(),
                object: Some(to_pb_object(&object)),
            };
            assert_eq!(decoded, expected);
        }
        let first = added.encodings().grpc_object.get().unwrap();
        let second = modified.encodings().grpc_object.get().unwrap();
        assert_eq!(first.as_ptr(), second.as_ptr(), "encoded once, shared");
    }
}
