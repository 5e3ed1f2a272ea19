//! The JDK's own JRMP conversations (golden/vectors, recorded by
//! golden/java's `Generate` on the JDK client's sockets; see the README):
//! Rust writes the client's messages byte for byte, and parses every
//! server message, whole and from every prefix.

use javaser::{ClassDesc, Decoder, Value, SC_SERIALIZABLE};
use jrmp::message::{self, CallHeader, Progress, ReturnStatus, Vmid};
use jrmp::wire::{self, ObjId, Uid};
use jrmp::{invocation, method_hash, RemoteException, RemoteRef};
use rpclab_model::contract::ascii_text;
use std::path::PathBuf;

const NAME: &str = "rpclab.contract.BenchService";
const LIMIT: usize = 1 << 26;

fn vector(name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("golden/vectors")
        .join(name);
    std::fs::read(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (run golden/regenerate.sh)", path.display()))
}

/// A case's client bytes and server bytes on its first connection, with a
/// leading ping / ping acknowledgement removed (the JDK pings a cached
/// connection when it was idle long enough; the test checks they pair up).
fn case(name: &str) -> (Vec<u8>, Vec<u8>, bool) {
    let mut c2s = vector(&format!("{name}-c0-c2s.bin"));
    let mut s2c = vector(&format!("{name}-c0-s2c.bin"));
    let pinged = c2s.first() == Some(&wire::PING);
    if pinged {
        assert_eq!(
            s2c.first(),
            Some(&wire::PING_ACK),
            "{name}: a ping without its acknowledgement"
        );
        c2s.remove(0);
        s2c.remove(0);
    }
    (c2s, s2c, pinged)
}

fn done<T>(p: Progress<T>) -> (T, usize) {
    match p {
        Progress::Done { value, len } => (value, len),
        Progress::NeedMore { total } => panic!("incomplete message (total {total:?})"),
    }
}

/// The stub the registry returned in the recorded lookup.
fn recorded_stub() -> RemoteRef {
    let s2c = vector("jdk-lookup-c0-s2c.bin");
    let (_, n) = done(wire::parse_protocol_ack(&s2c).unwrap());
    let (ret, _) = done(message::parse_return(&s2c[n..], true, LIMIT).unwrap());
    RemoteRef::from_stub(ret.value.as_ref().unwrap()).unwrap()
}

fn call_header(c2s: &[u8]) -> CallHeader {
    let (dec_header, _) = done(message::parse_call(c2s, 0).unwrap());
    dec_header.0
}

/// Steps over a ping at `at_c` of the client's bytes and its ack at `at_s`
/// of the server's, if the JDK sent one (it may, before it reuses a
/// cached connection).
fn skip_ping(c2s: &[u8], s2c: &[u8], at_c: &mut usize, at_s: &mut usize) {
    if c2s[*at_c] == wire::PING {
        assert_eq!(s2c[*at_s], wire::PING_ACK);
        *at_c += 1;
        *at_s += 1;
    }
}

fn string_class() -> ClassDesc {
    ClassDesc::new(
        "java.lang.String",
        -6_849_794_470_754_667_710,
        SC_SERIALIZABLE,
        vec![],
    )
}

#[test]
fn handshake_lookup_dirty_call_and_ack_are_the_jdks_bytes() {
    let c2s = vector("jdk-lookup-c0-c2s.bin");
    let s2c = vector("jdk-lookup-c0-s2c.bin");

    // Handshake: header, the server's ack (our address), our endpoint.
    let (ack, mut at_s) = done(wire::parse_protocol_ack(&s2c).unwrap());
    assert_eq!(ack.host, "127.0.0.1");
    let mut expected = wire::client_header().to_vec();
    wire::client_endpoint(&ack.host, 0, &mut expected).unwrap();
    assert_eq!(&c2s[..expected.len()], &expected[..]);
    let mut at_c = expected.len();

    // lookup(name), the registry's 1.1 stub protocol.
    let lookup = message::lookup_call(NAME, Vec::new());
    assert_eq!(&c2s[at_c..at_c + lookup.len()], &lookup[..]);
    let (parsed, n) = done(message::parse_call(&c2s[at_c..], 1).unwrap());
    assert_eq!(n, lookup.len());
    assert_eq!(parsed.0.target, ObjId::REGISTRY);
    assert_eq!(parsed.0.op, message::REGISTRY_LOOKUP);
    assert_eq!(parsed.0.hash, message::REGISTRY_INTERFACE_HASH);
    assert_eq!(parsed.1, vec![Value::String(NAME.into())]);
    at_c += lookup.len();

    // The return: the stub.
    let (ret, n) = done(message::parse_return(&s2c[at_s..], true, LIMIT).unwrap());
    assert_eq!(ret.status, ReturnStatus::Normal);
    let lookup_ack = ret.ack;
    let stub = RemoteRef::from_stub(ret.value.as_ref().unwrap()).unwrap();
    assert_eq!(stub.ref_class, "UnicastRef");
    assert_eq!(stub.host, "127.0.0.1");
    assert_ne!(stub.port, 0);
    assert_eq!(
        stub.interfaces,
        vec!["rpclab.rmi.RemoteBenchService".to_string()]
    );
    assert_ne!(stub.obj_id.num, 0);
    // javaser re-encodes the proxy stub (TC_PROXYCLASSDESC) byte for byte.
    let mut enc = javaser::Encoder::new();
    enc.write_value(ret.value.as_ref().unwrap()).unwrap();
    let value_at = 1 + 4 + 2 + 1 + wire::UID_LEN;
    assert_eq!(
        &enc.finish()[4..],
        &s2c[at_s + value_at..at_s + n],
        "stub re-encoding"
    );
    at_s += n;

    // The JDK may ping before reusing the connection for the DGC call.
    skip_ping(&c2s, &s2c, &mut at_c, &mut at_s);

    // DGC dirty([stub's ObjID], seq, Lease(vmid, 10 min)): parse the JDK's,
    // write ours with the same values, compare.
    let body = &c2s[at_c + 1..];
    let mut dec = Decoder::new(body).unwrap();
    let target = ObjId::read(&mut dec).unwrap();
    assert_eq!(target, ObjId::DGC);
    assert_eq!(dec.read_int().unwrap(), message::DGC_DIRTY);
    assert_eq!(dec.read_long().unwrap(), message::DGC_INTERFACE_HASH);
    let ids = dec.read_object().unwrap();
    let seq = dec.read_long().unwrap();
    let lease = dec.read_object().unwrap();
    let dirty_len = 1 + dec.position();
    let lease = lease.as_object().unwrap();
    let Some(Value::Long(lease_ms)) = lease.get("value") else {
        panic!("lease value")
    };
    let vmid = lease.get("vmid").and_then(Value::as_object).unwrap();
    let Some(Value::Array(addr)) = vmid.get("addr") else {
        panic!("vmid addr")
    };
    let addr: Vec<u8> = addr
        .elements
        .iter()
        .map(|b| match b {
            Value::Byte(b) => *b as u8,
            _ => panic!(),
        })
        .collect();
    let uid = vmid.get("uid").and_then(Value::as_object).unwrap();
    let field = |name: &str| uid.get(name).unwrap().clone();
    let (Value::Int(unique), Value::Long(time), Value::Short(count)) =
        (field("unique"), field("time"), field("count"))
    else {
        panic!("uid")
    };
    let Value::Array(ids) = ids else {
        panic!("ids")
    };
    assert_eq!(ids.elements.len(), 1);
    let vmid = Vmid {
        addr,
        uid: Uid {
            unique,
            time,
            count,
        },
    };
    let ours = message::dirty_call(&[stub.obj_id], seq, &vmid, *lease_ms, Vec::new()).unwrap();
    assert_eq!(&c2s[at_c..at_c + dirty_len], &ours[..], "DGC dirty call");
    assert_eq!(*lease_ms, 600_000, "the JDK's default lease");
    at_c += dirty_len;

    // Its return (a Lease), then our acknowledgement of the lookup's return.
    let (ret, n) = done(message::parse_return(&s2c[at_s..], true, LIMIT).unwrap());
    assert_eq!(ret.status, ReturnStatus::Normal);
    assert_eq!(
        ret.value
            .as_ref()
            .and_then(Value::as_object)
            .unwrap()
            .desc
            .name,
        "java.rmi.dgc.Lease"
    );
    at_s += n;
    // The acknowledgement reuses the cached connection too: maybe a ping.
    skip_ping(&c2s, &s2c, &mut at_c, &mut at_s);
    assert_eq!(at_s, s2c.len());
    assert_eq!(&c2s[at_c..], &message::dgc_ack(&lookup_ack)[..]);
}

#[test]
fn plain_calls_carry_the_stubs_objid_and_the_method_hash() {
    let stub = recorded_stub();
    for (case_name, signature) in [
        ("jdk-hello", "hello(Ljava/lang/String;)Ljava/lang/String;"),
        (
            "jdk-order",
            "echoOrder(Lrpclab/contract/Order;)Lrpclab/contract/Order;",
        ),
        ("jdk-orders", "echoOrders(Ljava/util/List;)Ljava/util/List;"),
        (
            "jdk-string-1k",
            "echoString(Ljava/lang/String;)Ljava/lang/String;",
        ),
        (
            "jdk-string-100k",
            "echoString(Ljava/lang/String;)Ljava/lang/String;",
        ),
        ("jdk-empty", "empty()V"),
        (
            "jdk-ping-hello",
            "hello(Ljava/lang/String;)Ljava/lang/String;",
        ),
    ] {
        let (c2s, _, _) = case(case_name);
        let h = call_header(&c2s);
        assert_eq!(h.target, stub.obj_id, "{case_name}");
        assert_eq!(h.op, message::HASH_OP, "{case_name}");
        assert_eq!(h.hash, method_hash(signature), "{case_name}: {signature}");
    }
}

#[test]
fn string_calls_are_the_jdks_bytes() {
    let stub = recorded_stub();
    let hash = method_hash("hello(Ljava/lang/String;)Ljava/lang/String;");
    let mut enc = message::begin_call(Vec::new(), &stub.obj_id, message::HASH_OP, hash);
    enc.write_string("aa");
    assert_eq!(case("jdk-hello").0, enc.finish());

    for (name, len) in [("jdk-string-1k", 1024), ("jdk-string-100k", 102_400)] {
        let hash = method_hash("echoString(Ljava/lang/String;)Ljava/lang/String;");
        let mut enc = message::begin_call(Vec::new(), &stub.obj_id, message::HASH_OP, hash);
        enc.write_string(&ascii_text(len));
        assert_eq!(case(name).0, enc.finish(), "{name}");
    }
    let enc = message::begin_call(
        Vec::new(),
        &stub.obj_id,
        message::HASH_OP,
        method_hash("empty()V"),
    );
    assert_eq!(case("jdk-empty").0, enc.finish());
}

#[test]
fn the_jdk_pings_an_idle_cached_connection() {
    let c2s = vector("jdk-ping-hello-c0-c2s.bin");
    let s2c = vector("jdk-ping-hello-c0-s2c.bin");
    assert_eq!(c2s[0], wire::PING);
    assert_eq!(s2c[0], wire::PING_ACK);
    let (_, _, pinged) = case("jdk-ping-hello");
    assert!(pinged);
}

#[test]
fn returns_decode_to_the_replies() {
    let (_, s2c, _) = case("jdk-hello");
    let (ret, n) = done(message::parse_return(&s2c, true, LIMIT).unwrap());
    assert_eq!(n, s2c.len());
    assert_eq!(ret.status, ReturnStatus::Normal);
    assert_eq!(ret.value, Some(Value::String("hello aa".into())));

    for (name, len) in [
        ("jdk-string-1k", 1024),
        ("jdk-string-100k", 102_400),
        ("spring-string-1k", 1024),
    ] {
        let (_, s2c, _) = case(name);
        let (ret, n) = done(message::parse_return(&s2c, true, LIMIT).unwrap());
        assert_eq!(n, s2c.len());
        assert_eq!(ret.value, Some(Value::String(ascii_text(len))), "{name}");
    }

    // void: the return ends after its header.
    let (_, s2c, _) = case("jdk-empty");
    let (ret, n) = done(message::parse_return(&s2c, false, LIMIT).unwrap());
    assert_eq!((n, ret.value), (s2c.len(), None));
    // Spring's invoke returns an Object: null for a void method.
    let (_, s2c, _) = case("spring-empty");
    let (ret, n) = done(message::parse_return(&s2c, true, LIMIT).unwrap());
    assert_eq!((n, ret.value), (s2c.len(), Some(Value::Null)));

    for name in ["jdk-order", "spring-order"] {
        let (_, s2c, _) = case(name);
        let (ret, n) = done(message::parse_return(&s2c, true, LIMIT).unwrap());
        assert_eq!(n, s2c.len());
        let o = ret.value.as_ref().and_then(Value::as_object).unwrap();
        assert_eq!(o.desc.name, "rpclab.contract.Order");
        assert_eq!(o.get("orderId"), Some(&Value::Long(10_000_000_001)));
    }
    for name in ["jdk-orders", "spring-orders"] {
        let (_, s2c, _) = case(name);
        let (ret, n) = done(message::parse_return(&s2c, true, LIMIT).unwrap());
        assert_eq!(n, s2c.len());
        let list = javaser::java::array_list_elements(ret.value.as_ref().unwrap()).unwrap();
        assert_eq!(list.len(), 100, "{name}");
    }
}

#[test]
fn every_prefix_of_a_return_asks_for_more() {
    for name in [
        "jdk-hello",
        "jdk-order",
        "jdk-orders",
        "jdk-string-1k",
        "jdk-string-100k",
        "jdk-not-bound",
        "spring-hello",
        "spring-orders",
        "spring-no-such-method",
    ] {
        let (_, s2c, _) = case(name);
        let step = if s2c.len() > 4096 { 61 } else { 1 };
        for cut in (0..s2c.len()).step_by(step) {
            match message::parse_return(&s2c[..cut], true, LIMIT) {
                Ok(Progress::NeedMore { total }) => {
                    if let Some(t) = total {
                        assert_eq!(t, s2c.len(), "{name}: announced length at {cut}");
                    }
                }
                other => panic!("{name}: prefix of {cut} bytes: {other:?}"),
            }
        }
    }
    // A string return announces its length once its header is in.
    let (_, s2c, _) = case("jdk-string-100k");
    assert!(matches!(
        message::parse_return(&s2c[..40], true, LIMIT),
        Ok(Progress::NeedMore { total: Some(t) }) if t == s2c.len()
    ));
    assert!(matches!(
        message::parse_return(&s2c, true, 1000),
        Err(jrmp::Error::TooLong { .. })
    ));
}

#[test]
fn remote_exceptions_name_what_was_thrown() {
    let (_, s2c, _) = case("jdk-not-bound");
    let (ret, _) = done(message::parse_return(&s2c, true, LIMIT).unwrap());
    assert_eq!(ret.status, ReturnStatus::Exceptional);
    let e = RemoteException::from_value(ret.value.as_ref().unwrap(), &ret.decoder);
    assert_eq!(e.root_class(), "java.rmi.NotBoundException");
    assert_eq!(e.chain[0].1.as_deref(), Some("missing"));

    let (_, s2c, _) = case("spring-no-such-method");
    let (ret, _) = done(message::parse_return(&s2c, true, LIMIT).unwrap());
    assert_eq!(ret.status, ReturnStatus::Exceptional);
    let e = RemoteException::from_value(ret.value.as_ref().unwrap(), &ret.decoder);
    assert_eq!(e.root_class(), "java.lang.NoSuchMethodException", "{e}");
    assert!(e.to_string().contains("noSuchMethod"), "{e}");
}

#[test]
fn spring_invocations_are_springs_bytes() {
    let (c2s, s2c, _) = case("spring-lookup");
    // RmiProxyFactoryBean's lookup: a fresh connection, handshake first.
    let (ack, n) = done(wire::parse_protocol_ack(&s2c).unwrap());
    let mut hs = wire::client_header().to_vec();
    wire::client_endpoint(&ack.host, 0, &mut hs).unwrap();
    assert_eq!(&c2s[..hs.len()], &hs[..]);
    assert_eq!(
        &c2s[hs.len()..hs.len() + message::lookup_call(NAME, vec![]).len()],
        &message::lookup_call(NAME, vec![])[..]
    );
    let (ret, _) = done(message::parse_return(&s2c[n..], true, LIMIT).unwrap());
    let stub = RemoteRef::from_stub(ret.value.as_ref().unwrap()).unwrap();
    assert_eq!(
        stub.interfaces,
        vec![invocation::RMI_INVOCATION_HANDLER.to_string()]
    );

    // Each call is invoke(RemoteInvocation): the method, its one string
    // argument when it has one, and no attributes.
    let string = [&string_class()];
    let invoke = method_hash(invocation::INVOKE);
    for (name, method, argument) in [
        ("spring-hello", "hello", Some("aa".to_owned())),
        ("spring-empty", "empty", None),
        ("spring-string-1k", "echoString", Some(ascii_text(1024))),
    ] {
        let parameter_types: &[&ClassDesc] = match argument {
            Some(_) => &string,
            None => &[],
        };
        let mut enc = message::begin_call(Vec::new(), &stub.obj_id, message::HASH_OP, invoke);
        invocation::write_remote_invocation(
            &mut enc,
            &invocation::remote_invocation_desc(),
            method,
            parameter_types,
            |enc| {
                if let Some(argument) = &argument {
                    enc.write_string(argument);
                }
                Ok(())
            },
            |enc| {
                enc.write_null();
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(case(name).0, enc.finish(), "{name}");
    }
}
