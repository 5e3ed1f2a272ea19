//! The plan of an interleaved run (a profile with `rounds`): which port
//! each server variant listens on while all of them run side by side, and
//! the seeded random order of each round.
//!
//! Blocks of repetitions put any drift of a shared host between two
//! systems into their ratio: the first system's minutes are not the
//! second's. Rounds measure every system once, in an order drawn afresh
//! each round (Mytkowicz et al.: a fixed order biases a comparison), so a
//! pair's ratio can be taken within one round. The generator is seeded and
//! the seed recorded, so a run's order can be replayed.

pub use rpclab_model::random::SplitMix64;
use std::collections::BTreeSet;

/// A seed for a run's order when none is given: the clock's nanoseconds.
pub fn fresh_seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0x5EED)
}

/// Distance between the ports of two variants of one server folder.
const PORT_STRIDE: u32 = 10_000;

/// The port of each variant of an interleaved run, in the order given:
/// the first variant of a server keeps its manifest's port; the next ones
/// of the same server (all of them read `RPCLAB_PORT`) move up by
/// [`PORT_STRIDE`] at a time, skipping any port another server's manifest
/// names or this plan already gave; past 65535 the first free port from
/// [`FALLBACK_PORTS`] on is taken.
///
/// `servers` are (server folder, manifest port); `reserved` every port any
/// manifest names.
pub fn ports(servers: &[(&str, u16)], reserved: &BTreeSet<u16>) -> Vec<u16> {
    let mut given: BTreeSet<u16> = BTreeSet::new();
    let mut seen: Vec<&str> = Vec::new();
    servers
        .iter()
        .map(|(name, port)| {
            let free =
                |p: u16, given: &BTreeSet<u16>| !reserved.contains(&p) && !given.contains(&p);
            let port = if seen.contains(name) {
                let strided = (1..)
                    .map(|k| u32::from(*port) + k * PORT_STRIDE)
                    .take_while(|p| *p <= 65_535)
                    .map(|p| p as u16)
                    .find(|p| free(*p, &given));
                strided.unwrap_or_else(|| {
                    (FALLBACK_PORTS..u16::MAX)
                        .find(|p| free(*p, &given))
                        .expect("a free port above 20000")
                })
            } else {
                *port
            };
            seen.push(name);
            given.insert(port);
            port
        })
        .collect()
}

/// Where ports are taken once a server's stride runs past 65535.
const FALLBACK_PORTS: u16 = 20_000;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variants_of_one_server_get_ports_apart_that_no_manifest_names() {
        let reserved: BTreeSet<u16> = [8090, 8091, 9090, 18090, 50051].into();
        let ports = ports(
            &[
                ("hessian", 8090),
                ("jaxws", 8091),
                ("hessian", 8090),
                ("grpc", 50051),
                ("grpc", 50051),
                ("grpc", 50051),
            ],
            &reserved,
        );
        // 18090 is taken by a manifest: the second hessian goes on to 28090.
        assert_eq!(ports, vec![8090, 8091, 28090, 50051, 60051, 20_000]);
    }
}
