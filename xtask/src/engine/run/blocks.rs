//! A run in blocks: one server variant after the other, each started with
//! its registry, made ready, primed, and measured cell after cell in the
//! plan's order (every repetition of a level before the next level), then
//! removed. A failure while every engine answers costs that variant its
//! remaining cells, not the run.

use super::cell::{CellAt, PrimeAt};
use super::context::RunContext;
use super::record::Record;
use super::search::Start;
use super::server::Running;
use crate::definitions::manifest::Registry;
use crate::engine::plan::Planned;
use anyhow::Result;
use rpclab_model::result::Cell;

impl RunContext<'_> {
    /// [`RunContext::run_server`], started over with the cells it has left
    /// whenever an engine that stopped answering came back
    /// ([`RunContext::through_outage`]). A failure while every engine
    /// answers is the server's: recorded, and the run goes on with the
    /// next one. Err: the run stops (an engine did not come back).
    pub async fn run_server_through(
        &self,
        planned: &Planned<'_>,
        record: &mut Record,
    ) -> Result<()> {
        let attempt = self
            .through_outage(record, |record, _| {
                Box::pin(async move {
                    let left = planned.left(&record.snapshot.results.cells);
                    if left.cells.is_empty() {
                        return Ok(());
                    }
                    self.run_server(&left, record).await
                })
            })
            .await?;
        if let Err(e) = attempt {
            // One broken server must not cost the others their run.
            let (m, v) = (planned.manifest, planned.variant);
            record.server_failed(&m.name, &v.name, &e)?;
        }
        Ok(())
    }

    /// `planned`'s variant with its registry, every cell of it, then both
    /// removed; a target's cells alone (the lab did not start it).
    pub async fn run_server(&self, planned: &Planned<'_>, record: &mut Record) -> Result<()> {
        let m = planned.manifest;
        if m.target.is_some() {
            let running = Running {
                server: None,
                registry: None,
                port: m.port,
                idle: &[],
            };
            return self.measure_server(planned, &running, record).await;
        }
        if self.checks_ports() {
            let zookeeper = m.registry == Registry::Zookeeper;
            self.claim_ports(&[m.port], &[&m.name], zookeeper).await?;
        }
        let registry = self.start_registry(m.registry, &m.name).await?;
        let result = async {
            let server = self
                .start_server(m, planned.variant, m.port, registry.as_ref())
                .await?;
            let running = Running {
                server: Some(&server),
                registry: registry.as_ref().map(|r| r.id.as_str()),
                port: m.port,
                idle: &[],
            };
            let result = self.measure_server(planned, &running, record).await;
            self.remove_server(&server).await?;
            result
        }
        .await;
        self.remove_registry(registry).await?;
        result
    }

    /// Measures the cells of `planned` in order on its running server
    /// (or, in `lab capacity`, searches its capacity there).
    async fn measure_server(
        &self,
        planned: &Planned<'_>,
        running: &Running<'_>,
        record: &mut Record,
    ) -> Result<()> {
        let (m, v, server) = (planned.manifest, planned.variant, running.server);
        self.wait_ready(m, v, server, m.port).await?;
        let mut starts = 1;
        let prime_at = |start| PrimeAt {
            server,
            port: m.port,
            start,
        };
        let mut primed = self.prime(m, v, prime_at(starts), &record.snapshot).await?;
        // The next cell is the first this JVM serves (it warms up longest),
        // unless priming already served its first calls.
        let mut cold = primed.is_none();
        if let Some(asked) = &self.opts.capacity {
            let start = Start { cold, primed };
            return self
                .search_capacity(asked, planned, running, start, record)
                .await;
        }
        for (scenario, why) in &planned.skipped {
            crate::say!(
                "  {} {} · {}: not run, the variant cannot carry `{}`: {why}",
                m.name,
                v.name,
                scenario.name,
                scenario.operation
            );
        }
        // Whether this start of the server has served a cell (a resumed
        // run's first may be a later repetition, on a fresh server).
        let mut served = false;
        // The load this start of the server served last: its scenario and
        // level.
        let mut last: Option<(&str, u32)> = None;
        for cell in &planned.cells {
            let restart = served && cell.repetition > 1;
            if let Some(server) =
                server.filter(|_| restart && self.prepared.profile.restart_between_repetitions)
            {
                // A cold JVM for every repetition: the spread then
                // includes start-up and JIT effects (a target is never
                // restarted: prepare refuses it).
                self.restart_server(server).await?;
                self.wait_ready(m, v, Some(server), m.port).await?;
                starts += 1;
                primed = self.prime(m, v, prime_at(starts), &record.snapshot).await?;
                cold = primed.is_none();
                last = None;
            }
            let load = (cell.scenario.name.as_str(), cell.level);
            let at = CellAt {
                m,
                v,
                scenario: cell.scenario,
                level: cell.level,
                repetition: cell.repetition,
                cold,
                settled: last == Some(load),
            };
            last = Some(load);
            let measured = self
                .run_cell(&at, running, &record.snapshot)
                .await
                .map(|cell| Cell {
                    primed: primed.take(),
                    ..cell
                });
            cold = false;
            served = true;
            self.still_up(server, m, cell.scenario, cell.level).await?;
            record.snapshot.push(measured?)?;
            self.cell_done();
        }
        Ok(())
    }
}
