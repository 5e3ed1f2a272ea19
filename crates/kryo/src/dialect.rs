//! Which Kryo the other side runs, and what it registered.
//!
//! Kryo's bytes depend on two things besides the value: the Kryo major
//! version (4.x and 5.x differ in fixed-width byte order, the ASCII
//! short-string threshold, and the collection and map headers) and the
//! registration ids the `Kryo` instance was set up with (a registered class
//! is written as a small id, any other as its name). A [`Dialect`] names
//! both. Dubbo registers the same list of classes in both of its kryo lines,
//! but Kryo 5 no longer registers `void`, so every id Dubbo adds is one
//! lower there: [`Dialect::DUBBO_2_6`] and [`Dialect::DUBBO_3`] differ in
//! `HashMap` (33 vs 32) and `ArrayList` (34 vs 33).

/// The Kryo major version: what differs on the wire between them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Version {
    /// Kryo 4.x: big-endian fixed-width numbers; ASCII strings of 2..=63
    /// chars in the short form; collections and maps as a plain count, every
    /// element with its class.
    V4,
    /// Kryo 5.x: little-endian fixed-width numbers; ASCII strings of 2..=32
    /// chars in the short form; collections with a "same class" flag and
    /// the element class written once, maps with count + 1.
    V5,
}

/// Registration ids Kryo itself gives the primitives (and their wrappers,
/// which share the primitive's registration) and `String`, identical in 4.x
/// and 5.x.
pub mod ids {
    pub const INT: u32 = 0;
    pub const STRING: u32 = 1;
    pub const FLOAT: u32 = 2;
    pub const BOOLEAN: u32 = 3;
    pub const BYTE: u32 = 4;
    pub const CHAR: u32 = 5;
    pub const SHORT: u32 = 6;
    pub const LONG: u32 = 7;
    pub const DOUBLE: u32 = 8;
}

/// A Kryo version plus the registration ids of the collection classes this
/// crate reads and writes. Class ids on the wire are the registration id
/// + 2 (0 is null, 1 is "class by name").
///
/// Both Dubbo lines enable references (`kryo.setReferences(true)`, Kryo's
/// default in 4.x), so every non-wrapper object is preceded by a reference
/// marker; this crate always writes and reads them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Dialect {
    /// The Kryo major version.
    pub version: Version,
    /// Registration id of `java.util.HashMap`.
    pub hash_map: u32,
    /// Registration id of `java.util.ArrayList`.
    pub array_list: u32,
    /// A short name for messages.
    pub name: &'static str,
}

impl Dialect {
    /// Dubbo 2.6.x (`com.alibaba.dubbo.common.serialize.kryo`, checked
    /// against 2.6.12) on Kryo 4.0.1 with de.javakaffee kryo-serializers
    /// 0.42: `AbstractKryoFactory` registers its list after Kryo's ten
    /// built-ins (int ... void). Dubbox 2.8.4 (seed 001) used the same
    /// factory on Kryo 2.24; it is approximated by this dialect.
    pub const DUBBO_2_6: Dialect = Dialect {
        version: Version::V4,
        hash_map: 33,
        array_list: 34,
        name: "Dubbo 2.6 kryo (Kryo 4)",
    };

    /// Apache Dubbo 3.x with dubbo-serialization-kryo 3.2.0
    /// (`org.apache.dubbo.common.serialize.kryo`, Kryo 5.4): the same list,
    /// after Kryo 5's nine built-ins (no `void`).
    pub const DUBBO_3: Dialect = Dialect {
        version: Version::V5,
        hash_map: 32,
        array_list: 33,
        name: "Dubbo 3 kryo (Kryo 5)",
    };

    /// The dialect for a Kryo major version as Dubbo sets it up: 4 or 5.
    pub fn dubbo(kryo_major: u32) -> Option<Dialect> {
        match kryo_major {
            4 => Some(Dialect::DUBBO_2_6),
            5 => Some(Dialect::DUBBO_3),
            _ => None,
        }
    }

    /// Strings with more chars than this (and fewer than 2) that are all
    /// ASCII are written with a length prefix instead of the short ASCII
    /// form (`Output.writeString`).
    pub(crate) fn ascii_max(&self) -> usize {
        match self.version {
            Version::V4 => 63,
            Version::V5 => 32,
        }
    }
}
