//! A run in interleaved rounds (a profile with `rounds`): one registry for
//! all, every variant started on its own port and primed, then each
//! scenario level measured in rounds, every live variant once per round in
//! a fresh seeded order, the others idle beside it; and all of it again for
//! each JVM start. The plan of the rounds (ports, orders) is
//! [`crate::engine::rounds`]'s; this file carries it out.

use super::cell::{CellAt, PrimeAt};
use super::context::RunContext;
use super::record::Record;
use super::server::Running;
use crate::definitions::lab::{RoundsPolicy, Scenario};
use crate::definitions::manifest::{Manifest, Registry, Variant};
use crate::engine::containers::Containers;
use crate::engine::plan::{self, Planned};
use crate::engine::registry::RunningRegistry;
use crate::engine::rounds::SplitMix64;
use crate::store::snapshot::Snapshot;
use anyhow::{anyhow, Result};
use rpclab_model::result::{Cell, CellId, CellKey, Priming, RoundOrder, Rounds};
use std::collections::BTreeSet;

/// Where a cell of an interleaved run sits: its level, its run-wide round
/// number (its `repetition`) and the JVM start that round belongs to.
#[derive(Clone, Copy)]
struct Seat<'a> {
    scenario: &'a Scenario,
    level: u32,
    round: u32,
    start: u32,
}

/// A server variant of an interleaved run: its container, port, and
/// whether it still runs.
struct Live<'m> {
    m: &'m Manifest,
    v: &'m Variant,
    port: u16,
    id: String,
    /// Its priming, until the first cell takes it.
    primed: Option<Priming>,
    /// It has served a cell (the first after an unprimed start is cold).
    served: bool,
    alive: bool,
}

impl Live<'_> {
    /// `server/variant`, as a round's order records it.
    fn key(&self) -> String {
        format!("{}/{}", self.m.name, self.v.name)
    }
}

/// What every start of an interleaved run measures: the variants, each on
/// its port, the levels, the registry they share, the policy.
struct Rounded<'p, 'm> {
    runnable: &'p [Planned<'m>],
    levels: &'p [(&'m Scenario, u32)],
    ports: &'p [u16],
    registry: Option<&'p RunningRegistry>,
    policy: RoundsPolicy,
}

impl RunContext<'_> {
    /// The interleaved run of `runnable` at `levels`: their ports (moved
    /// off every other server's, recorded), the shared registry, then
    /// every start's rounds.
    pub async fn run_rounds(
        &self,
        runnable: &[Planned<'_>],
        levels: &[(&Scenario, u32)],
        policy: RoundsPolicy,
        record: &mut Record,
    ) -> Result<()> {
        // Every server the run read keeps its port, those of --servers-dir
        // among them.
        let reserved: BTreeSet<u16> = self.manifests.iter().map(|m| m.port).collect();
        let ports = crate::engine::rounds::ports(
            &runnable
                .iter()
                .map(|p| (p.manifest.name.as_str(), p.manifest.port))
                .collect::<Vec<_>>(),
            &reserved,
        );
        let moved = runnable
            .iter()
            .zip(&ports)
            .filter(|(p, port)| **port != p.manifest.port)
            .map(|(p, port)| (p.record, *port))
            .collect();
        record.moved_ports(moved)?;
        let needs_registry = runnable
            .iter()
            .any(|p| p.manifest.registry != Registry::None);
        if self.checks_ports() {
            let names: Vec<&str> = runnable.iter().map(|p| p.manifest.name.as_str()).collect();
            self.claim_ports(&ports, &names, needs_registry).await?;
        }
        let kind = if needs_registry {
            Registry::Zookeeper
        } else {
            Registry::None
        };
        let registry = self.start_registry(kind, "all").await?;
        let rounded = Rounded {
            runnable,
            levels,
            ports: &ports,
            registry: registry.as_ref(),
            policy,
        };
        let result = self.rounds_with(&rounded, record).await;
        self.remove_registry(registry).await?;
        result
    }

    /// Every start of an interleaved run: its variants started and primed,
    /// then each level's rounds; a start measured whole before a resumed
    /// run is not started again.
    async fn rounds_with(&self, rounded: &Rounded<'_, '_>, record: &mut Record) -> Result<()> {
        let policy = rounded.policy;
        let mut rng = SplitMix64::new(self.rounds_seed);
        // A resumed run keeps the orders of the rounds measured before.
        let orders = (record.snapshot.results.rounds.take())
            .map(|r| r.orders)
            .unwrap_or_default();
        record.snapshot.results.rounds = Some(Rounds {
            seed: self.rounds_seed,
            min: policy.per_start,
            max: policy.per_start,
            starts: policy.starts.max(1),
            orders,
        });
        let registry_id = rounded.registry.map(|r| r.id.as_str());
        for start in 1..=policy.starts.max(1) {
            let rounds: Vec<u32> = (1..=policy.total())
                .filter(|r| policy.start_of(*r) == start)
                .collect();
            if measured(rounded, &rounds, &record.snapshot) {
                continue;
            }
            if policy.starts > 1 {
                crate::say!("JVM start {start} of {}", policy.starts);
            }
            let mut live: Vec<Live> = Vec::new();
            for (p, port) in rounded.runnable.iter().zip(rounded.ports) {
                let (m, v) = (p.manifest, p.variant);
                let started = self
                    .start_primed(m, v, *port, rounded.registry, &record.snapshot)
                    .await;
                match started {
                    Ok(l) => live.push(l),
                    // Not the server's: the run waits for the engine.
                    Err(e) if !self.outage.answering().await => return Err(e),
                    Err(e) => record.server_failed(&m.name, &v.name, &e)?,
                }
            }
            for &(scenario, level) in rounded.levels {
                for &round in &rounds {
                    let seat = Seat {
                        scenario,
                        level,
                        round,
                        start,
                    };
                    self.round(&mut live, seat, registry_id, &mut rng, record)
                        .await?;
                }
            }
            for l in &live {
                self.remove_server(&l.id).await?;
            }
        }
        Ok(())
    }

    /// One round of a level: every live variant that carries the scenario,
    /// once, in a fresh seeded random order. The design is fixed: nothing
    /// measured decides whether another round follows.
    async fn round(
        &self,
        live: &mut [Live<'_>],
        seat: Seat<'_>,
        registry: Option<&str>,
        rng: &mut SplitMix64,
        record: &mut Record,
    ) -> Result<()> {
        let Seat {
            scenario,
            level,
            round,
            ..
        } = seat;
        let mut order: Vec<usize> = (0..live.len())
            .filter(|i| live[*i].alive && plan::carries(live[*i].m, live[*i].v, scenario))
            .collect();
        if order.is_empty() {
            return Ok(());
        }
        // Drawn even where the order is recorded, so that a resumed run's
        // later rounds replay the interrupted run's orders.
        rng.shuffle(&mut order);
        let rounds =
            (record.snapshot.results.rounds.as_mut()).expect("a run in rounds records its rounds");
        let seats = seats(live, order, seat, rounds);
        for (position, i) in seats {
            let l = &live[i];
            let id = CellId {
                key: CellKey {
                    server: &l.m.name,
                    variant: &l.v.name,
                    scenario: &scenario.name,
                    level,
                },
                repetition: round,
            };
            if id.is_in(&record.snapshot.results.cells) {
                continue;
            }
            self.cell_in_round(live, i, position, seat, registry, record)
                .await?;
        }
        Ok(())
    }

    /// One cell of a round: variant `i` under load, the others idle. A
    /// server that exits, or a cell that cannot run, costs that variant its
    /// later rounds, not the run.
    async fn cell_in_round(
        &self,
        live: &mut [Live<'_>],
        i: usize,
        position: usize,
        seat: Seat<'_>,
        registry: Option<&str>,
        record: &mut Record,
    ) -> Result<()> {
        let idle: Vec<String> = live
            .iter()
            .enumerate()
            .filter(|(j, l)| *j != i && l.alive)
            .map(|(_, l)| l.id.clone())
            .collect();
        let l = &live[i];
        let (m, v) = (l.m, l.v);
        let running = Running {
            server: Some(&l.id),
            registry,
            port: l.port,
            idle: &idle,
        };
        let at = CellAt {
            m,
            v,
            scenario: seat.scenario,
            level: seat.level,
            repetition: seat.round,
            cold: !l.served && l.primed.is_none(),
            settled: false,
        };
        let cell = self.run_cell(&at, &running, &record.snapshot).await;
        let l = &mut live[i];
        l.served = true;
        let exit = self.engine.exit_code(&l.id).await;
        if (cell.is_err() || !matches!(exit, Ok(None))) && !self.outage.answering().await {
            // Not the server's failure: the run waits for the engine,
            // then starts the rounds over from this cell, measured again
            // (whether its server lived through it cannot be told).
            return Err(match (cell, exit) {
                (Err(e), _) | (_, Err(e)) => e,
                _ => anyhow!("the server's engine stopped answering"),
            });
        }
        if let Some(code) = exit? {
            l.alive = false;
            let e = self.exited(&l.id, m, seat.scenario, seat.level, code).await;
            record.server_failed(&m.name, &v.name, &e)?;
        } else {
            match cell {
                Ok(cell) => record.snapshot.push(Cell {
                    primed: l.primed.take(),
                    round_position: Some(position as u32 + 1),
                    start: Some(seat.start),
                    ..cell
                })?,
                Err(e) => {
                    l.alive = false;
                    record.server_failed(&m.name, &v.name, &e)?;
                }
            }
        }
        self.cell_done();
        Ok(())
    }

    /// Starts a variant of an interleaved run on `port`, waits for a
    /// verified call and primes it.
    async fn start_primed<'m>(
        &self,
        m: &'m Manifest,
        v: &'m Variant,
        port: u16,
        registry: Option<&RunningRegistry>,
        snapshot: &Snapshot,
    ) -> Result<Live<'m>> {
        let id = self.start_server(m, v, port, registry).await?;
        let ready = async {
            self.wait_ready(m, v, Some(&id), port).await?;
            let at = PrimeAt {
                server: Some(&id),
                port,
                start: 1,
            };
            self.prime(m, v, at, snapshot).await
        };
        match ready.await {
            Ok(primed) => Ok(Live {
                m,
                v,
                port,
                id,
                primed,
                served: false,
                alive: true,
            }),
            Err(e) => {
                let _ = self.remove_server(&id).await;
                Err(e)
            }
        }
    }
}

/// Whether the snapshot holds every cell of `rounds` (one JVM start's) of
/// every variant at every level it carries.
fn measured(rounded: &Rounded<'_, '_>, rounds: &[u32], snapshot: &Snapshot) -> bool {
    rounded.runnable.iter().all(|p| {
        (rounded.levels.iter())
            .filter(|(sc, _)| plan::carries(p.manifest, p.variant, sc))
            .all(|(sc, level)| {
                rounds.iter().all(|round| {
                    CellId {
                        key: CellKey {
                            server: &p.manifest.name,
                            variant: &p.variant.name,
                            scenario: &sc.name,
                            level: *level,
                        },
                        repetition: *round,
                    }
                    .is_in(&snapshot.results.cells)
                })
            })
    })
}

/// Each variant's position in a round, by its index in `live`: the
/// order recorded for that round, when an interrupted run measured
/// some of it, else `drawn` (which is recorded).
fn seats(
    live: &[Live<'_>],
    drawn: Vec<usize>,
    seat: Seat<'_>,
    rounds: &mut Rounds,
) -> Vec<(usize, usize)> {
    let Seat {
        scenario,
        level,
        round,
        ..
    } = seat;
    let recorded = rounds
        .orders
        .iter()
        .find(|o| o.scenario == scenario.name && o.concurrency == level && o.round == round);
    match recorded {
        Some(o) => o
            .order
            .iter()
            .enumerate()
            .filter_map(|(position, key)| {
                let i = drawn.iter().copied().find(|i| live[*i].key() == *key)?;
                Some((position, i))
            })
            .collect(),
        None => {
            rounds.orders.push(RoundOrder {
                scenario: scenario.name.clone(),
                concurrency: level,
                round,
                order: drawn.iter().map(|i| live[*i].key()).collect(),
            });
            drawn.into_iter().enumerate().collect()
        }
    }
}
