//! The client side of gRPC server reflection (`grpc.reflection.v1`, and
//! `grpc.reflection.v1alpha` when a server has only the older one): the
//! file that defines a service, and the files it imports, as a
//! [`DescriptorPool`].
//!
//! Reflection is a bidirectional stream; each question here is a stream of
//! its own with one request and one response, which the channel's unary
//! calls carry as they are (the server answers the request, sees the end
//! of the stream and ends its own). Its messages are declared below with
//! prost's derive, from `grpc/reflection/v1/reflection.proto`: the two
//! versions have the same messages.

use crate::protocol::CallError;
use crate::protocols::grpc::conn::Channel;
use crate::protocols::grpc::frame;
use bytes::{BufMut, Bytes, BytesMut};
use prost::Message;
use prost_reflect::DescriptorPool;
use prost_types::FileDescriptorProto;
use std::collections::{BTreeMap, BTreeSet};

#[derive(Clone, PartialEq, Message)]
struct ServerReflectionRequest {
    #[prost(string, tag = "1")]
    host: String,
    #[prost(oneof = "Request", tags = "3, 4, 7")]
    message_request: Option<Request>,
}

#[derive(Clone, PartialEq, prost::Oneof)]
enum Request {
    #[prost(string, tag = "3")]
    FileByFilename(String),
    #[prost(string, tag = "4")]
    FileContainingSymbol(String),
    #[prost(string, tag = "7")]
    ListServices(String),
}

#[derive(Clone, PartialEq, Message)]
struct ServerReflectionResponse {
    #[prost(oneof = "Response", tags = "4, 6, 7")]
    message_response: Option<Response>,
}

#[derive(Clone, PartialEq, prost::Oneof)]
enum Response {
    #[prost(message, tag = "4")]
    FileDescriptor(FileDescriptorResponse),
    #[prost(message, tag = "6")]
    ListServices(ListServiceResponse),
    #[prost(message, tag = "7")]
    Error(ErrorResponse),
}

#[derive(Clone, PartialEq, Message)]
struct FileDescriptorResponse {
    #[prost(bytes = "vec", repeated, tag = "1")]
    file_descriptor_proto: Vec<Vec<u8>>,
}

#[derive(Clone, PartialEq, Message)]
struct ListServiceResponse {
    #[prost(message, repeated, tag = "1")]
    service: Vec<ServiceResponse>,
}

#[derive(Clone, PartialEq, Message)]
struct ServiceResponse {
    #[prost(string, tag = "1")]
    name: String,
}

#[derive(Clone, PartialEq, Message)]
struct ErrorResponse {
    #[prost(int32, tag = "1")]
    error_code: i32,
    #[prost(string, tag = "2")]
    error_message: String,
}

/// The reflection services, newest first.
const VERSIONS: [&str; 2] = ["grpc.reflection.v1", "grpc.reflection.v1alpha"];

/// The most files a service's closure may have (a loop guard).
const MAX_FILES: usize = 1_000;

/// A reflection client on one channel.
pub struct Reflection<'a> {
    pub channel: &'a Channel,
    pub authority: &'a str,
    pub tls: bool,
}

/// Why reflection gave no descriptors.
pub enum Failure {
    /// The server offers no reflection, or cannot be asked: say so, with
    /// the hint to pass `--protoset`.
    Unreachable(String),
    /// The server's reflection does not know the service.
    UnknownService(String),
    /// What reflection sent back cannot be used.
    Broken(String),
    /// The connection failed under the question (not reflection's fault).
    Transport(CallError),
}

impl Reflection<'_> {
    /// The files that define `service` and everything they import, and
    /// which version of reflection answered.
    pub async fn service(&self, service: &str) -> Result<(DescriptorPool, &'static str), Failure> {
        let mut unimplemented = Vec::new();
        for version in VERSIONS {
            match self
                .ask(version, Request::FileContainingSymbol(service.to_owned()))
                .await
            {
                Ok(response) => {
                    return self
                        .closure(version, service, response)
                        .await
                        .map(|p| (p, version))
                }
                Err(CallError::Server(m)) if m.starts_with("UNIMPLEMENTED") => {
                    unimplemented.push(version);
                }
                // tonic's reflection says so with a status, grpc-java's
                // with an error response (below).
                Err(CallError::Server(m)) if m.starts_with("NOT_FOUND") => {
                    return Err(self.unknown_service(version, service, &m).await)
                }
                Err(CallError::Server(m)) => {
                    return Err(Failure::Unreachable(format!("{version}: {m}")))
                }
                Err(e) => return Err(Failure::Transport(e)),
            }
        }
        Err(Failure::Unreachable(format!(
            "the server has no reflection service ({}: UNIMPLEMENTED)",
            unimplemented.join(", ")
        )))
    }

    /// The first answer's files and, asked one by one, the files they
    /// import.
    async fn closure(
        &self,
        version: &'static str,
        service: &str,
        first: ServerReflectionResponse,
    ) -> Result<DescriptorPool, Failure> {
        let mut files: BTreeMap<String, FileDescriptorProto> = BTreeMap::new();
        let mut asked: BTreeSet<String> = BTreeSet::new();
        let mut pending = vec![first];
        let mut queue: Vec<String> = Vec::new();
        loop {
            for response in pending.drain(..) {
                match response.message_response {
                    Some(Response::FileDescriptor(found)) => {
                        for bytes in found.file_descriptor_proto {
                            let file = FileDescriptorProto::decode(bytes.as_slice()).map_err(|e| {
                                Failure::Broken(format!("{version} sent a file descriptor that does not decode: {e}"))
                            })?;
                            queue.extend(file.dependency.iter().cloned());
                            files.insert(file.name().to_owned(), file);
                        }
                    }
                    Some(Response::Error(e)) if files.is_empty() => {
                        // Only the first question is about the service.
                        return Err(self
                            .unknown_service(version, service, &e.error_message)
                            .await);
                    }
                    Some(Response::Error(e)) => {
                        return Err(Failure::Broken(format!(
                            "{version} could not send an imported file: {}",
                            e.error_message
                        )))
                    }
                    _ => {
                        return Err(Failure::Broken(format!(
                            "{version} answered a question for files with something else"
                        )))
                    }
                }
            }
            let next = queue
                .drain(..)
                .filter(|name| !files.contains_key(name) && asked.insert(name.clone()))
                .collect::<Vec<_>>();
            if next.is_empty() {
                break;
            }
            if files.len() + next.len() > MAX_FILES {
                return Err(Failure::Broken(format!(
                    "{version}: more than {MAX_FILES} files for service `{service}`"
                )));
            }
            for name in next {
                let response = self
                    .ask(version, Request::FileByFilename(name))
                    .await
                    .map_err(|e| match e {
                        CallError::Server(m) => Failure::Broken(format!("{version}: {m}")),
                        other => Failure::Transport(other),
                    })?;
                pending.push(response);
            }
        }
        let mut pool = DescriptorPool::new();
        pool.add_file_descriptor_protos(files.into_values())
            .map_err(|e| {
                Failure::Broken(format!(
                    "{version}'s files do not make a descriptor set: {e}"
                ))
            })?;
        Ok(pool)
    }

    /// A service the server's reflection does not know, with the ones it
    /// lists.
    async fn unknown_service(&self, version: &str, service: &str, why: &str) -> Failure {
        let listed = self.services(version).await.unwrap_or_default();
        Failure::UnknownService(format!(
            "the server's reflection does not know service `{service}` ({why}); it lists: {}",
            if listed.is_empty() {
                "nothing".to_owned()
            } else {
                listed.join(", ")
            }
        ))
    }

    /// The services the server lists.
    async fn services(&self, version: &str) -> Result<Vec<String>, CallError> {
        let response = self
            .ask(version, Request::ListServices(String::new()))
            .await?;
        Ok(match response.message_response {
            Some(Response::ListServices(list)) => {
                list.service.into_iter().map(|s| s.name).collect()
            }
            _ => Vec::new(),
        })
    }

    /// One question, on a stream of its own.
    async fn ask(
        &self,
        version: &str,
        request: Request,
    ) -> Result<ServerReflectionResponse, CallError> {
        let message = ServerReflectionRequest {
            host: String::new(),
            message_request: Some(request),
        }
        .encode_to_vec();
        let mut body = BytesMut::with_capacity(5 + message.len());
        body.put_u8(0);
        body.put_u32(message.len() as u32);
        body.put_slice(&message);
        let path = format!("/{version}.ServerReflection/ServerReflectionInfo");
        let headers = frame::request_headers_over(
            &path,
            self.authority,
            crate::protocols::grpc::USER_AGENT,
            self.tls,
        );
        let reply: Bytes = self
            .channel
            .call(Bytes::from(headers), body.freeze())
            .await?;
        ServerReflectionResponse::decode(reply).map_err(|e| {
            CallError::Protocol(format!(
                "{version}: a reflection reply that does not decode: {e}"
            ))
        })
    }
}
