//! The JSONB type bytes (`com.alibaba.fastjson2.JSONB.Constants`), as `u8`.
//!
//! Every JSONB value starts with one of these; small integers and short
//! strings carry their value or length in the type byte itself.

#![allow(missing_docs)]

pub const CHAR: u8 = 0x90;
pub const BINARY: u8 = 0x91;
pub const TYPED_ANY: u8 = 0x92;
pub const REFERENCE: u8 = 0x93;
/// `0x94 + n`: an array of `n` (0..=15) items.
pub const ARRAY_FIX_0: u8 = 0x94;
pub const ARRAY_FIX_MAX: u8 = 0xa3;
/// Followed by an int32 length.
pub const ARRAY: u8 = 0xa4;
pub const OBJECT_END: u8 = 0xa5;
pub const OBJECT: u8 = 0xa6;
pub const LOCAL_TIME: u8 = 0xa7;
pub const LOCAL_DATETIME: u8 = 0xa8;
pub const LOCAL_DATE: u8 = 0xa9;
pub const TIMESTAMP_WITH_TIMEZONE: u8 = 0xaa;
pub const TIMESTAMP_MILLIS: u8 = 0xab;
pub const TIMESTAMP_SECONDS: u8 = 0xac;
pub const TIMESTAMP_MINUTES: u8 = 0xad;
pub const TIMESTAMP: u8 = 0xae;
pub const NULL: u8 = 0xaf;
pub const FALSE: u8 = 0xb0;
pub const TRUE: u8 = 0xb1;
pub const DOUBLE_NUM_0: u8 = 0xb2;
pub const DOUBLE_NUM_1: u8 = 0xb3;
/// Followed by an int64: a double with an integral value in int range.
pub const DOUBLE_LONG: u8 = 0xb4;
pub const DOUBLE: u8 = 0xb5;
pub const FLOAT_INT: u8 = 0xb6;
pub const FLOAT: u8 = 0xb7;
pub const DECIMAL_LONG: u8 = 0xb8;
pub const DECIMAL: u8 = 0xb9;
pub const BIGINT_LONG: u8 = 0xba;
pub const BIGINT: u8 = 0xbb;
pub const INT16: u8 = 0xbc;
pub const INT8: u8 = 0xbd;
pub const INT64: u8 = 0xbe;
pub const INT64_INT: u8 = 0xbf;
/// `0xc0..=0xc7`: int64 in -262144..=262143, `(b - 0xc4) << 16` plus 2 bytes.
pub const INT64_SHORT_MIN: u8 = 0xc0;
pub const INT64_SHORT_ZERO: u8 = 0xc4;
pub const INT64_SHORT_MAX: u8 = 0xc7;
/// `0xc8..=0xd7`: int64 in -2048..=2047, `(b - 0xd0) << 8` plus 1 byte.
pub const INT64_BYTE_MIN: u8 = 0xc8;
pub const INT64_BYTE_ZERO: u8 = 0xd0;
pub const INT64_BYTE_MAX: u8 = 0xd7;
/// `0xd8..=0xef`: int64 -8..=15 in the byte itself.
pub const INT64_NUM_MIN: u8 = 0xd8;
pub const INT64_NUM_MAX: u8 = 0xef;
/// `0xf0..=0xff, 0x00..=0x2f`: int32 -16..=47 in the byte itself.
pub const INT32_NUM_MIN: u8 = 0xf0;
pub const INT32_NUM_MAX: u8 = 0x2f;
/// `0x30..=0x3f`: int32 in -2048..=2047, `(b - 0x38) << 8` plus 1 byte.
pub const INT32_BYTE_MIN: u8 = 0x30;
pub const INT32_BYTE_ZERO: u8 = 0x38;
pub const INT32_BYTE_MAX: u8 = 0x3f;
/// `0x40..=0x47`: int32 in -262144..=262143, `(b - 0x44) << 16` plus 2 bytes.
pub const INT32_SHORT_MIN: u8 = 0x40;
pub const INT32_SHORT_ZERO: u8 = 0x44;
pub const INT32_SHORT_MAX: u8 = 0x47;
pub const INT32: u8 = 0x48;
/// `0x49 + n`: a Latin-1 string of `n` (0..=47) bytes.
pub const STR_ASCII_FIX_0: u8 = 0x49;
pub const STR_ASCII_FIX_MAX: u8 = 0x78;
/// Latin-1 (ISO-8859-1) bytes, int32 length first.
pub const STR_ASCII: u8 = 0x79;
pub const STR_UTF8: u8 = 0x7a;
/// UTF-16 with an optional byte-order mark (big-endian without one).
pub const STR_UTF16: u8 = 0x7b;
pub const STR_UTF16LE: u8 = 0x7c;
pub const STR_UTF16BE: u8 = 0x7d;
pub const STR_GB18030: u8 = 0x7e;
/// A field or type name: a new name (string + int32 index) or an index.
pub const SYMBOL: u8 = 0x7f;

/// Longest string whose length fits in the type byte.
pub const STR_ASCII_FIX_LEN: usize = 47;
/// Most items an array's type byte can count.
pub const ARRAY_FIX_LEN: usize = 15;

/// Whether `b` starts an int32 (compact or full).
pub fn is_int32(b: u8) -> bool {
    (b as i8) >= -16 && (b as i8) <= INT32 as i8
}

/// Whether `b` starts a string.
pub fn is_string(b: u8) -> bool {
    (STR_ASCII_FIX_0..=STR_GB18030).contains(&b)
}

/// A human name for a type byte, for error messages.
pub fn name(b: u8) -> &'static str {
    match b {
        CHAR => "char",
        BINARY => "binary",
        TYPED_ANY => "typed value",
        REFERENCE => "reference",
        ARRAY_FIX_0..=ARRAY => "array",
        OBJECT_END => "object end",
        OBJECT => "object",
        LOCAL_TIME => "LocalTime",
        LOCAL_DATETIME => "LocalDateTime",
        LOCAL_DATE => "LocalDate",
        TIMESTAMP_WITH_TIMEZONE => "ZonedDateTime",
        TIMESTAMP_MILLIS | TIMESTAMP_SECONDS | TIMESTAMP_MINUTES | TIMESTAMP => "timestamp",
        NULL => "null",
        FALSE | TRUE => "boolean",
        DOUBLE_NUM_0..=DOUBLE => "double",
        FLOAT_INT | FLOAT => "float",
        DECIMAL_LONG | DECIMAL => "BigDecimal",
        BIGINT_LONG | BIGINT => "BigInteger",
        INT16 => "short",
        INT8 => "byte",
        INT64..=INT64_NUM_MAX => "long",
        SYMBOL => "symbol",
        STR_GB18030 => "GB18030 string",
        b if is_string(b) => "string",
        _ => "int",
    }
}
