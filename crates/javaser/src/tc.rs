//! Constants of `java.io.ObjectStreamConstants`.
#![allow(missing_docs)]

pub const STREAM_MAGIC: u16 = 0xaced;
pub const STREAM_VERSION: u16 = 5;
pub const BASE_WIRE_HANDLE: u32 = 0x7e_0000;
/// Largest block-data chunk `ObjectOutputStream` writes.
pub const MAX_BLOCK_SIZE: usize = 1024;

pub const TC_NULL: u8 = 0x70;
pub const TC_REFERENCE: u8 = 0x71;
pub const TC_CLASSDESC: u8 = 0x72;
pub const TC_OBJECT: u8 = 0x73;
pub const TC_STRING: u8 = 0x74;
pub const TC_ARRAY: u8 = 0x75;
pub const TC_CLASS: u8 = 0x76;
pub const TC_BLOCKDATA: u8 = 0x77;
pub const TC_ENDBLOCKDATA: u8 = 0x78;
pub const TC_RESET: u8 = 0x79;
pub const TC_BLOCKDATALONG: u8 = 0x7a;
pub const TC_EXCEPTION: u8 = 0x7b;
pub const TC_LONGSTRING: u8 = 0x7c;
pub const TC_PROXYCLASSDESC: u8 = 0x7d;
pub const TC_ENUM: u8 = 0x7e;

pub const SC_WRITE_METHOD: u8 = 0x01;
pub const SC_BLOCK_DATA: u8 = 0x08;
pub const SC_SERIALIZABLE: u8 = 0x02;
pub const SC_EXTERNALIZABLE: u8 = 0x04;
pub const SC_ENUM: u8 = 0x10;
