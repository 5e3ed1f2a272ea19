//! `lab capacity`'s search, carried out on the running, primed server:
//! its hint (a closed loop, unless the command line gave the first rate),
//! then an open-loop step at each rate [`capacity::next`] asks for, each
//! judged and printed on its line, until the search ends. The search
//! itself (the next rate, a step's verdict) is [`crate::engine::capacity`]'s,
//! pure; this file only measures.

use super::cell::CellAt;
use super::context::RunContext;
use super::record::Record;
use super::server::Running;
use crate::engine::capacity::{self, Loads, Next};
use crate::engine::plan::Planned;
use anyhow::{Context, Result};
use rpclab_model::capacity::{Asked as CapacityAsked, CapacitySearch, Hint};
use rpclab_model::result::{Cell, Priming};

/// How a server starts serving a search: whether its JVM is still cold,
/// and its priming, which goes with the first cell.
pub struct Start {
    pub cold: bool,
    pub primed: Option<Priming>,
}

impl RunContext<'_> {
    /// A capacity search on the running, primed server of `planned`; the
    /// steps' cells and the search are written to the snapshot after every
    /// step.
    pub async fn search_capacity(
        &self,
        asked: &CapacityAsked,
        planned: &Planned<'_>,
        running: &Running<'_>,
        start: Start,
        record: &mut Record,
    ) -> Result<()> {
        let (m, v) = (planned.manifest, planned.variant);
        let Start {
            mut cold,
            mut primed,
        } = start;
        let base = (self.prepared.scenarios)
            .iter()
            .find(|s| s.name == asked.scenario)
            .with_context(|| format!("the lab has no scenario `{}`", asked.scenario))?;
        // A generic server's steps call its method, named after it.
        let base = match m.call_of(v) {
            Some(method) => base.calling(&method),
            None => base.clone(),
        };
        let loads = Loads::of(&base, &self.prepared.profile)?;
        let mut search = loads.search(asked, m, &v.name, &self.prepared.profile);
        let first = match asked.start_rate {
            Some(rate) => rate,
            None => {
                let hint = self.hint(planned, running, &loads, cold, record).await?;
                cold = false;
                let rate = hint.throughput_per_s.round() as u32;
                search.hint = Some(Hint {
                    scenario: loads.hint.name.clone(),
                    concurrency: loads.hint_level,
                    throughput_per_s: hint.throughput_per_s,
                });
                self.push_step(record, &search, hint, primed.take())?;
                rate
            }
        };
        loop {
            let rate = match capacity::next(&search, first) {
                Next::Measure(rate) => rate,
                Next::Done(outcome) => {
                    search.conclude(outcome);
                    record.snapshot.results.capacity = Some(search);
                    return record.snapshot.write_results();
                }
            };
            let repetition = 1 + search
                .steps
                .iter()
                .filter(|s| s.offered_per_s == rate)
                .count() as u32;
            let at = CellAt {
                m,
                v,
                scenario: &loads.steps,
                level: rate,
                repetition,
                cold,
                settled: false,
            };
            let cell = self.run_cell(&at, running, &record.snapshot).await?;
            cold = false;
            self.still_up(running.server, m, &loads.steps, rate).await?;
            let number = search.steps.len() as u32 + 1;
            let step = capacity::judge(asked, &cell, rate, repetition, number);
            crate::say!("{}", capacity::step_line(asked, &step));
            search.steps.push(step);
            self.push_step(record, &search, cell, primed.take())?;
        }
    }

    /// The search's hint: the closed loop of `loads`, whose throughput is
    /// the first rate.
    async fn hint(
        &self,
        planned: &Planned<'_>,
        running: &Running<'_>,
        loads: &Loads,
        cold: bool,
        record: &Record,
    ) -> Result<Cell> {
        let m = planned.manifest;
        let level = loads.hint_level;
        let at = CellAt {
            m,
            v: planned.variant,
            scenario: &loads.hint,
            level,
            repetition: 1,
            cold,
            settled: false,
        };
        let cell = self.run_cell(&at, running, &record.snapshot).await?;
        self.still_up(running.server, m, &loads.hint, level).await?;
        crate::say!(
            "  hint: {} at {level} (closed loop): {:.0} calls/s, {} failed: the first rate",
            loads.hint.name,
            cell.throughput_per_s,
            cell.calls_failed
        );
        Ok(cell)
    }

    /// Writes a capacity search's cell (the hint or a step) into the
    /// snapshot with the search as it stands, and counts it done.
    fn push_step(
        &self,
        record: &mut Record,
        search: &CapacitySearch,
        cell: Cell,
        primed: Option<Priming>,
    ) -> Result<()> {
        record.snapshot.results.capacity = Some(search.clone());
        record.snapshot.push(Cell { primed, ..cell })?;
        self.cell_done();
        Ok(())
    }
}
