//! The basics every layer may use: facts about the host ([`host`]), the CPU
//! sets of each role ([`cpus`]), the roles themselves ([`role`]), how every
//! container is confined ([`confine`]), which orchestrator owns the lab's
//! containers ([`owner`]), a run's id as they carry it ([`run_id`]), the progress bar ([`progress`]) and the files under
//! a folder ([`tree`]). They import nothing of the crate
//! but each other.

pub mod confine;
pub mod cpus;
pub mod host;
pub mod owner;
pub mod progress;
pub mod role;
pub mod run_id;
pub mod tree;
