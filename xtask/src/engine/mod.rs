//! The engine: a run on Docker, over its API only (`bollard`). It builds
//! the images a lab needs ([`images`], [`prebuild`]), starts every server,
//! its registry and the load client pinned to their CPU sets ([`plan`],
//! [`run`], [`rounds`], [`registry`], [`readiness`], [`client_container`])
//! on the engines of each role ([`engines`], [`docker`], and either
//! Docker's or a Kubernetes cluster's for the run's containers,
//! [`run_engine`]), within a run's
//! [`scope`] (its id, and the clean-up of its containers), waits for an
//! engine that stopped answering ([`outage`]), continues an
//! interrupted snapshot ([`resume`]), searches a server's capacity under
//! an SLO ([`capacity`]), and measures what a cell
//! cost and what the host did beside it ([`cost`], [`host_load`],
//! [`calibration`]). It returns results and knows nothing of how they are
//! rendered: the report layer is beside it, not below.

pub mod calibration;
pub mod capacity;
pub mod client_container;
pub mod containers;
pub mod cost;
pub mod docker;
pub mod engines;
pub mod host_load;
pub mod images;
#[cfg(feature = "kubernetes")]
pub mod kubernetes;
pub mod netns;
pub mod outage;
pub mod plan;
pub mod prebuild;
pub mod readiness;
pub mod registry;
pub mod resume;
pub mod rounds;
pub mod run;
pub mod run_engine;
pub mod scope;
