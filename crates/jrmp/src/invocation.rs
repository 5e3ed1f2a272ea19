//! Spring's RMI invoker (`RmiServiceExporter` for a service that is not a
//! `java.rmi.Remote`): the exporter binds an `RmiInvocationHandler` whose one
//! remote method, [`INVOKE`], takes a `RemoteInvocation` (method name,
//! parameter types, arguments, attributes) and returns the result as an
//! `Object`. Dubbo's `rmi` protocol exports through the same class and
//! sends its `RmiRemoteInvocation` subclass, whose only addition is the
//! attribute `dubbo.attachments` (a `HashMap<String, String>`).

use crate::error::Error;
use javaser::{ClassDesc, Encoder, FieldDesc, SC_SERIALIZABLE};
use std::sync::{Arc, OnceLock};

/// `RmiInvocationHandler.invoke`'s name and descriptor (for its hash).
pub const INVOKE: &str =
    "invoke(Lorg/springframework/remoting/support/RemoteInvocation;)Ljava/lang/Object;";

/// Spring's invocation class.
pub const REMOTE_INVOCATION: &str = "org.springframework.remoting.support.RemoteInvocation";
/// Its `serialVersionUID` (unchanged from Spring 1.x to 5.3).
pub const REMOTE_INVOCATION_SUID: i64 = 6_876_024_250_231_820_554;

/// The interface of the exporter's stub.
pub const RMI_INVOCATION_HANDLER: &str = "org.springframework.remoting.rmi.RmiInvocationHandler";

/// Dubbo 2.6's subclass (`com.alibaba.dubbo.rpc.protocol.rmi`), and its
/// `serialVersionUID`.
pub const DUBBO_RMI_REMOTE_INVOCATION: &str =
    "com.alibaba.dubbo.rpc.protocol.rmi.RmiRemoteInvocation";
/// Dubbo's `RmiRemoteInvocation.serialVersionUID`.
pub const DUBBO_RMI_REMOTE_INVOCATION_SUID: i64 = 1;
/// The attribute Dubbo's subclass carries the consumer's attachments in.
pub const DUBBO_ATTACHMENTS: &str = "dubbo.attachments";

/// `RemoteInvocation`'s descriptor (fields sorted as Java sorts them:
/// arguments, attributes, methodName, parameterTypes).
pub fn remote_invocation_desc() -> Arc<ClassDesc> {
    static D: OnceLock<Arc<ClassDesc>> = OnceLock::new();
    D.get_or_init(|| {
        Arc::new(ClassDesc::new(
            REMOTE_INVOCATION,
            REMOTE_INVOCATION_SUID,
            SC_SERIALIZABLE,
            vec![
                FieldDesc::object("methodName", "Ljava/lang/String;"),
                FieldDesc::object("parameterTypes", "[Ljava/lang/Class;"),
                FieldDesc::object("arguments", "[Ljava/lang/Object;"),
                FieldDesc::object("attributes", "Ljava/util/Map;"),
            ],
        ))
    })
    .clone()
}

/// A subclass of `RemoteInvocation` without fields of its own (Dubbo's).
pub fn subclass_desc(name: &str, suid: i64) -> ClassDesc {
    ClassDesc::new(name, suid, SC_SERIALIZABLE, vec![]).with_super(remote_invocation_desc())
}

/// `Object[]`'s descriptor.
pub fn object_array_desc() -> &'static ClassDesc {
    static D: OnceLock<ClassDesc> = OnceLock::new();
    D.get_or_init(|| {
        ClassDesc::new(
            "[Ljava.lang.Object;",
            -8_012_369_246_846_506_644,
            SC_SERIALIZABLE,
            vec![],
        )
    })
}

/// `Class[]`'s descriptor.
pub fn class_array_desc() -> &'static ClassDesc {
    static D: OnceLock<ClassDesc> = OnceLock::new();
    D.get_or_init(|| {
        ClassDesc::new(
            "[Ljava.lang.Class;",
            -6_118_465_897_992_725_863,
            SC_SERIALIZABLE,
            vec![],
        )
    })
}

/// The descriptor a `Class` object of a non-serializable type (an
/// interface such as `java.util.List`) is written with: no UID, no flags.
pub fn plain_class_desc(name: &str) -> ClassDesc {
    ClassDesc::new(name, 0, 0, vec![])
}

/// Writes `new RemoteInvocation(method, parameterTypes, arguments)` (or a
/// subclass's instance, by `desc`): `parameter_types` are the descriptors
/// written as `TC_CLASS` objects, `arguments` writes exactly
/// `parameter_types.len()` objects, `attributes` writes the attributes map
/// (or null).
pub fn write_remote_invocation(
    enc: &mut Encoder,
    desc: &ClassDesc,
    method: &str,
    parameter_types: &[&ClassDesc],
    arguments: impl FnOnce(&mut Encoder) -> Result<(), Error>,
    attributes: impl FnOnce(&mut Encoder) -> Result<(), Error>,
) -> Result<(), Error> {
    enc.begin_object(desc)?;
    // RemoteInvocation's fields in descriptor order; a subclass adds none.
    enc.begin_array(object_array_desc(), parameter_types.len())?;
    arguments(enc)?;
    enc.end_object()?;
    attributes(enc)?;
    enc.write_string(method);
    enc.begin_array(class_array_desc(), parameter_types.len())?;
    for t in parameter_types {
        enc.write_class(t)?;
    }
    enc.end_object()?;
    enc.end_object()?;
    Ok(())
}
