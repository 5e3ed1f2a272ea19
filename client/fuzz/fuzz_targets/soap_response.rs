//! A SOAP 1.1 response envelope from a hostile server, parsed as each
//! contract operation's reply (JAX-WS names), and a hostile WSDL scanned.
//! Any outcome is fine but a panic, an abort or an allocation beyond the
//! input's size.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rpclab_protocols::protocols::soap::{envelope, wsdl};

fuzz_target!(|data: &[u8]| {
    envelope::exercise(data);
    let mut scan = wsdl::Scan::default();
    if scan.add(data).is_ok() {
        let _ = wsdl::operations(&scan, "fuzz");
    }
});
