//! RMI method hashes.
//!
//! A stub names the method it calls by a 64-bit hash rather than by name:
//! the first 8 bytes, little-endian, of the SHA-1 of the method's name and
//! JVM descriptor as `DataOutputStream.writeUTF` writes them (2-byte length,
//! then modified UTF-8), e.g. `hello(Ljava/lang/String;)Ljava/lang/String;`
//! (`sun.rmi.server.Util.computeMethodHash`). The server looks the method
//! up in a table built the same way, so a wrong descriptor is an
//! "unrecognized method hash" error on the server.

/// The hash of `name_and_descriptor`, e.g. `empty()V`.
pub fn method_hash(name_and_descriptor: &str) -> i64 {
    let encoded = javaser::mutf8::encode(name_and_descriptor);
    let len = u16::try_from(encoded.len()).unwrap_or(u16::MAX);
    let mut sha = sha1_smol::Sha1::new();
    sha.update(&len.to_be_bytes());
    sha.update(&encoded);
    let digest = sha.digest().bytes();
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    i64::from_le_bytes(first)
}
