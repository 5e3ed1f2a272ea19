//! The definitions a user writes and the lab reads: lab definitions and
//! their profiles ([`lab`], `compose/*.toml`), server manifests
//! ([`manifest`], `servers/*/server.toml`, whose `[build]` table is
//! [`java_build`]), the posts' seeds and published
//! figures ([`seeds`], `compose/seeds/`), and which engine runs each role
//! ([`hosts`]), with the command line's [`overrides`] of a profile. Parsed and checked here, once, into types the layers above
//! use.

pub mod hosts;
pub mod java_build;
pub mod lab;
pub mod manifest;
pub mod overrides;
pub mod seeds;
