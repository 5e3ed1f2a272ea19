//! A call prepared once and reused: the one cache of every protocol that
//! builds a whole request up front (HTTP's SOAP and Hessian requests, gRPC's
//! header block and message, Thrift's args struct).
//!
//! A cell makes one call over and over, so the request (and the reference
//! reply, [`crate::reference`]) is built on the first call and kept; each
//! later call costs one comparison of its operation and argument with the
//! kept one ([`CallKey`]). A call that is not the kept one is built for
//! itself alone and never served another's bytes. Two shapes, one rule:
//!
//! * [`PreparedCall`], shared by the tasks of a connection: the first call
//!   prepared is kept for the connection's life (a `OnceLock`, no lock on
//!   the path of the calls that follow);
//! * [`keep_or_replace`], a slot one caller owns at a time (a Thrift link,
//!   behind its lock): a new call replaces the kept one.

use crate::call_error::CallError;
use rpclab_model::contract::{Call, Operation, Value};
use std::ops::Deref;
use std::sync::OnceLock;

/// What makes two calls the same call: their operation and argument (the
/// expected value follows from both).
#[derive(Debug, Clone, PartialEq)]
pub struct CallKey {
    operation: Operation,
    argument: Value,
}

impl CallKey {
    pub fn of(call: &Call) -> CallKey {
        CallKey {
            operation: call.operation,
            argument: call.argument.clone(),
        }
    }

    pub fn is_for(&self, call: &Call) -> bool {
        self.operation == call.operation && self.argument == call.argument
    }
}

/// A prepared call knows which call it is (most keep a [`CallKey`]; one
/// that keeps the whole call compares that).
pub trait ForCall {
    fn is_for(&self, call: &Call) -> bool;
}

/// The first call's preparation, kept for the calls that are the same.
#[derive(Debug)]
pub struct PreparedCall<T> {
    first: OnceLock<T>,
}

impl<T> Default for PreparedCall<T> {
    fn default() -> Self {
        PreparedCall {
            first: OnceLock::new(),
        }
    }
}

/// A preparation: the kept one, or one built for this call alone.
#[derive(Debug)]
pub enum Prepared<'a, T> {
    Kept(&'a T),
    Once(T),
}

impl<T> Deref for Prepared<'_, T> {
    type Target = T;

    fn deref(&self) -> &T {
        match self {
            Prepared::Kept(t) => t,
            Prepared::Once(t) => t,
        }
    }
}

impl<T: ForCall> PreparedCall<T> {
    /// `call`'s preparation: the kept one when it is for `call`, else
    /// `build`'s (kept when nothing is yet).
    pub fn get_or_build(
        &self,
        call: &Call,
        build: impl FnOnce() -> Result<T, CallError>,
    ) -> Result<Prepared<'_, T>, CallError> {
        if let Some(kept) = self.first.get() {
            return Ok(if kept.is_for(call) {
                Prepared::Kept(kept)
            } else {
                Prepared::Once(build()?)
            });
        }
        let built = build()?;
        Ok(match self.first.set(built) {
            Ok(()) => Prepared::Kept(self.first.get().expect("set just now")),
            // Another task kept its own first: it may be another call.
            Err(built) => match self.first.get() {
                Some(kept) if kept.is_for(call) => Prepared::Kept(kept),
                _ => Prepared::Once(built),
            },
        })
    }
}

/// The prepared call in `slot` for `call`: the one kept when it is for
/// `call`, else `build`'s in its place.
pub fn keep_or_replace<'a, T: ForCall>(
    slot: &'a mut Option<T>,
    call: &Call,
    build: impl FnOnce() -> Result<T, CallError>,
) -> Result<&'a mut T, CallError> {
    if !slot.as_ref().is_some_and(|kept| kept.is_for(call)) {
        *slot = Some(build()?);
    }
    Ok(slot.as_mut().expect("kept or built just now"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    struct Built {
        key: CallKey,
        tag: &'static str,
    }

    impl ForCall for Built {
        fn is_for(&self, call: &Call) -> bool {
            self.key.is_for(call)
        }
    }

    fn another_hello() -> Call {
        let mut other = Operation::Hello.call();
        other.argument = Value::Str("bb".into());
        other
    }

    #[test]
    fn the_first_call_is_built_once_and_another_is_never_served_its_bytes() {
        let cache = PreparedCall::default();
        let builds = Cell::new(0);
        let build = |call: &Call, tag| {
            builds.set(builds.get() + 1);
            Ok(Built {
                key: CallKey::of(call),
                tag,
            })
        };
        let hello = Operation::Hello.call();
        for _ in 0..3 {
            let p = cache.get_or_build(&hello, || build(&hello, "h")).unwrap();
            assert!(matches!(p, Prepared::Kept(_)));
            assert_eq!(p.tag, "h");
        }
        assert_eq!(builds.get(), 1);
        let other = another_hello();
        for _ in 0..2 {
            let p = cache.get_or_build(&other, || build(&other, "o")).unwrap();
            assert!(matches!(p, Prepared::Once(_)));
            assert_eq!(p.tag, "o");
        }
        assert_eq!(builds.get(), 3);
        let p = cache.get_or_build(&hello, || build(&hello, "x")).unwrap();
        assert_eq!(p.tag, "h");
    }

    #[test]
    fn a_failed_build_keeps_nothing() {
        let cache: PreparedCall<Built> = PreparedCall::default();
        let hello = Operation::Hello.call();
        assert!(cache
            .get_or_build(&hello, || Err(CallError::Config("no".into())))
            .is_err());
        let p = cache
            .get_or_build(&hello, || {
                Ok(Built {
                    key: CallKey::of(&hello),
                    tag: "h",
                })
            })
            .unwrap();
        assert!(matches!(p, Prepared::Kept(_)));
    }

    #[test]
    fn a_slot_keeps_its_call_and_replaces_it_for_another() {
        let mut slot = None;
        let hello = Operation::Hello.call();
        let other = another_hello();
        let built = |call: &Call, tag| {
            Ok(Built {
                key: CallKey::of(call),
                tag,
            })
        };
        assert_eq!(
            keep_or_replace(&mut slot, &hello, || built(&hello, "h"))
                .unwrap()
                .tag,
            "h"
        );
        assert_eq!(
            keep_or_replace(&mut slot, &hello, || built(&hello, "x"))
                .unwrap()
                .tag,
            "h"
        );
        assert_eq!(
            keep_or_replace(&mut slot, &other, || built(&other, "o"))
                .unwrap()
                .tag,
            "o"
        );
    }
}
