//! The developer's commands, beside the lab: a new server folder from an
//! existing one (`new server`), the fuzz targets in turn (`fuzz`), and the
//! READMEs' generated blocks (`readme`). They read definitions and
//! snapshots and render with the report layer; none of them runs a
//! container, so none imports the engine.

pub mod fuzz;
pub mod readme;
pub mod scaffold;
