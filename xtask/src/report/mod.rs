//! The report layer: everything a snapshot shows, rendered from its
//! results alone (`results.json`: cells, aggregates, and a reproduction's
//! published figures), so any old snapshot can be re-rendered.
//!
//! * [`tables`]: the result tables, for the terminal and `summary.md`;
//! * [`charts`] and [`html`]: SVG charts and the self-contained
//!   `report.html`;
//! * [`reproduction`]: published vs measured and the claim verdicts;
//! * [`index`]: `results/README.md`, the index of snapshots;
//! * [`compare`]: two snapshots side by side, noise-aware;
//! * [`format`]: number formatting they share.
//!
//! Nothing here runs a container or decides what to measure; the report
//! reads the store ([`crate::snapshot`], [`crate::aggregate`]) and nothing
//! below it reads the report.

pub mod charts;
pub mod compare;
pub mod format;
pub mod html;
pub mod index;
pub mod reproduction;
pub mod tables;
