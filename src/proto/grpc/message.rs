//! The request message of `wirebench grpc`: raw protobuf bytes from a file, or JSON
//! encoded through the method's input type, read from a `.proto` file compiled at
//! run time. The compiler is protox (a protobuf compiler in Rust: parsing, imports,
//! name resolution, no protoc to install) and the JSON mapping prost-reflect's
//! (proto3's canonical JSON, the one ghz and grpcurl take), both by one author and
//! made to work together; the alternative, protobuf's own `protobuf-parse` with
//! `protobuf-json-mapping`, reaches the same end with two crates less used.

use crate::error::{Error, Result};
use prost::Message as _;
use prost_reflect::{DescriptorPool, DynamicMessage, MethodDescriptor};
use std::path::Path;

/// `package.Service/Method`, checked for its shape.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallName {
    pub service: String,
    pub method: String,
}

impl CallName {
    pub fn parse(text: &str) -> Result<CallName> {
        let bad = || {
            Error::usage(format!(
                "--call '{text}' is not a method: write it as package.Service/Method"
            ))
        };
        let t = text.strip_prefix('/').unwrap_or(text);
        let (service, method) = t.split_once('/').ok_or_else(bad)?;
        let word = |s: &str| {
            !s.is_empty()
                && s.split('.').all(|p| {
                    !p.is_empty() && p.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
                })
        };
        if !word(service) || !word(method) || method.contains('.') {
            return Err(bad());
        }
        Ok(CallName {
            service: service.to_string(),
            method: method.to_string(),
        })
    }

    /// The request's `:path`.
    pub fn path(&self) -> String {
        format!("/{}/{}", self.service, self.method)
    }
}

/// The `.proto` file compiled, with the directory it is in as the import path.
fn compile(proto: &Path) -> Result<DescriptorPool> {
    let shown = proto.display();
    let file = std::fs::canonicalize(proto)
        .map_err(|e| Error::usage(format!("cannot read --proto {shown}: {e}")))?;
    let dir = file.parent().unwrap_or(Path::new("/"));
    let mut compiler =
        protox::Compiler::new([dir]).map_err(|e| Error::usage(format!("--proto {shown}: {e}")))?;
    compiler
        .include_imports(true)
        .open_file(&file)
        .map_err(|e| Error::usage(format!("--proto {shown} does not compile: {e}")))?;
    Ok(compiler.descriptor_pool())
}

/// The method `call` names in the `.proto` file: a unary one.
pub fn method(proto: &Path, call: &CallName) -> Result<MethodDescriptor> {
    let pool = compile(proto)?;
    let shown = proto.display();
    let service = pool.get_service_by_name(&call.service).ok_or_else(|| {
        Error::usage(format!(
            "--proto {shown} defines no service {} (--call names it)",
            call.service
        ))
    })?;
    let m = service
        .methods()
        .find(|m| m.name() == call.method)
        .ok_or_else(|| {
            Error::usage(format!(
                "service {} in {shown} has no method {}",
                call.service, call.method
            ))
        })?;
    if m.is_client_streaming() || m.is_server_streaming() {
        return Err(Error::usage(format!(
            "{} is a streaming method: wirebench grpc makes unary calls only",
            call.path()
        )));
    }
    Ok(m)
}

/// `json` as the method's input message, encoded.
pub fn encode_json(m: &MethodDescriptor, json: &str) -> Result<Vec<u8>> {
    let input = m.input();
    let mut de = serde_json::Deserializer::from_str(json);
    let msg = DynamicMessage::deserialize(input.clone(), &mut de)
        .and_then(|msg| de.end().map(|()| msg))
        .map_err(|e| {
            Error::usage(format!(
                "--data is not a {} message in JSON: {e}",
                input.full_name()
            ))
        })?;
    Ok(msg.encode_to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROTO: &str = r#"syntax = "proto3";
package bench;
message Req { string name = 1; int32 n = 2; }
service Echo {
  rpc Say(Req) returns (Req);
  rpc Many(Req) returns (stream Req);
}
"#;

    fn proto_file(text: &str) -> tempfile_path::TempProto {
        tempfile_path::TempProto::new(text)
    }

    /// A .proto written under the system's temporary directory, removed on drop.
    mod tempfile_path {
        pub struct TempProto(pub std::path::PathBuf);
        impl TempProto {
            pub fn new(text: &str) -> TempProto {
                static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
                let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let dir = std::env::temp_dir()
                    .join(format!("wirebench-proto-{}-{n}", std::process::id()));
                std::fs::create_dir_all(&dir).unwrap();
                let p = dir.join("bench.proto");
                std::fs::write(&p, text).unwrap();
                TempProto(p)
            }
        }
        impl Drop for TempProto {
            fn drop(&mut self) {
                let _ = std::fs::remove_dir_all(self.0.parent().unwrap());
            }
        }
    }

    #[test]
    fn json_is_encoded_through_the_methods_input_type() {
        let f = proto_file(PROTO);
        let m = method(&f.0, &CallName::parse("bench.Echo/Say").unwrap()).unwrap();
        let bytes = encode_json(&m, r#"{"name": "ab", "n": 3}"#).unwrap();
        // field 1, length-delimited, "ab"; field 2, varint 3.
        assert_eq!(bytes, b"\x0a\x02ab\x10\x03");
    }

    #[test]
    fn each_bad_input_is_one_sentence() {
        let f = proto_file(PROTO);
        let call = |t: &str| CallName::parse(t).unwrap();
        let words = |e: Error| e.to_string();
        assert!(CallName::parse("bench.Echo").is_err());
        assert!(CallName::parse("bench.Echo/Say/x").is_err());
        let e = words(method(&f.0, &call("bench.Nope/Say")).unwrap_err());
        assert!(e.contains("defines no service bench.Nope"), "{e}");
        let e = words(method(&f.0, &call("bench.Echo/Nope")).unwrap_err());
        assert!(e.contains("has no method Nope"), "{e}");
        let e = words(method(&f.0, &call("bench.Echo/Many")).unwrap_err());
        assert!(e.contains("streaming"), "{e}");
        let m = method(&f.0, &call("bench.Echo/Say")).unwrap();
        let e = words(encode_json(&m, r#"{"n": "x"}"#).unwrap_err());
        assert!(
            e.starts_with("--data is not a bench.Req message in JSON"),
            "{e}"
        );
        let e = words(encode_json(&m, r#"{"nope": 1}"#).unwrap_err());
        assert!(e.contains("nope"), "{e}");
        let broken = proto_file("syntax = \"proto3\";\nmessage {");
        let e = words(method(&broken.0, &call("a.B/C")).unwrap_err());
        assert!(e.contains("does not compile"), "{e}");
        assert!(!e.contains('\n'), "{e}");
    }
}
