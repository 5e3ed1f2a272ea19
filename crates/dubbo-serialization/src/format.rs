//! The format's constants and Builder's table of well-known class
//! descriptors, shared by the reader and the writer.

/// Dubbo's id of this serialization (`DubboSerialization.getContentTypeId`).
pub const CONTENT_TYPE_ID: u8 = 1;

/// How deep [`Reader::read_object`](crate::Reader::read_object) follows
/// nested values.
pub const MAX_DEPTH: usize = 64;

/// Builder's table of well-known class descriptors, in the order of its
/// `addDesc` calls: `OBJECT_DESC_ID n` names `DESCRIPTORS[n]`.
pub const DESCRIPTORS: [&str; 28] = [
    "[Z",
    "[B",
    "[C",
    "[S",
    "[I",
    "[J",
    "[F",
    "[D",
    "Ljava/lang/Boolean;",
    "Ljava/lang/Byte;",
    "Ljava/lang/Character;",
    "Ljava/lang/Short;",
    "Ljava/lang/Integer;",
    "Ljava/lang/Long;",
    "Ljava/lang/Float;",
    "Ljava/lang/Double;",
    "Ljava/lang/String;",
    "[Ljava/lang/String;",
    "Ljava/util/ArrayList;",
    "Ljava/util/HashMap;",
    "Ljava/util/HashSet;",
    "Ljava/util/Date;",
    "Ljava/sql/Date;",
    "Ljava/sql/Time;",
    "Ljava/sql/Timestamp;",
    "Ljava/util/LinkedList;",
    "Ljava/util/LinkedHashMap;",
    "Ljava/util/LinkedHashSet;",
];

/// The index of `java.lang.String` in [`DESCRIPTORS`].
pub const DESC_STRING: u32 = 16;
/// The index of `java.util.ArrayList`.
pub const DESC_ARRAY_LIST: u32 = 18;
/// The index of `java.util.HashMap`.
pub const DESC_HASH_MAP: u32 = 19;

/// The descriptor with table index `id`, if there is one.
pub fn descriptor(id: u32) -> Option<&'static str> {
    DESCRIPTORS.get(id as usize).copied()
}

/// The table index of `desc`, if it is a well-known class.
pub fn descriptor_id(desc: &str) -> Option<u32> {
    DESCRIPTORS
        .iter()
        .position(|d| *d == desc)
        .map(|i| i as u32)
}

/// The JVM descriptor of a class name as `ReflectUtils.getDesc` writes it:
/// `rpclab.contract.Order` is `Lrpclab/contract/Order;`.
pub fn class_descriptor(class_name: &str) -> String {
    format!("L{};", class_name.replace('.', "/"))
}
