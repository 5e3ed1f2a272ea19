//! The developer's commands, beside the lab: a new server folder from an
//! existing one (`new server`), the fuzz targets in turn (`fuzz`), the
//! READMEs' generated blocks (`readme`), and the tests in two lanes
//! (`test`). They read definitions and
//! snapshots and render with the report layer; none of them runs a
//! container, so none imports the engine.

pub mod fuzz;
pub mod readme;
pub mod scaffold;
pub mod test;
