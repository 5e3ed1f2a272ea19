//! The harness of the codec crates' tests against Java.
//!
//! Every codec crate (hessian2, javaser, jsonb, kryo, dubbo-serialization)
//! keeps a `golden/` folder: vectors that the real Java implementation
//! wrote, and the Maven project (`golden/java`) that wrote them and that
//! verifies what Rust writes. Their tests need the same few things, kept
//! here once and used as a dev-dependency:
//!
//! - [`Golden`]: the crate's golden folder, its vectors and its pom;
//! - [`assert_same_bytes`]: Rust's bytes against Java's, the first
//!   difference shown;
//! - [`Order`]: the contract's Order as the golden cases write it
//!   (nullable strings, as a Java object), and with the feature `proptest`
//!   `arbitrary_order`, a property test's strategy of them;
//! - [`java_tests_enabled`], [`write_cases`] and [`JavaVerify`]: the
//!   "Rust writes, Java reads" test ([`check_java_reads`] when it reads one
//!   folder), which writes every case to a folder
//!   and runs the golden project's Verify over it with Maven (also used
//!   by the client's protocol tests, whose golden projects live under
//!   `client/`).
//!
//! The crate has no dependencies but proptest behind its feature, so that
//! the codec crates stay usable without the rest of the lab.

mod compare;
mod golden;
mod maven;
mod order;

pub use compare::assert_same_bytes;
pub use golden::Golden;
pub use maven::{
    all_passed, check_java_reads, java_reads, java_tests_enabled, write_cases, JavaVerify,
};
#[cfg(feature = "proptest")]
pub use order::arbitrary_order;
pub use order::{Order, OrderFields, ORDER_CLASS};
