//! An area as the runtime sees it: the tables it brings, the revision counter
//! that says its data changed, the tools it registers and what it offers
//! search. The hub lists its
//! areas once (`hub::AREAS`); the store, the answer cache and the change feed
//! learn every area from that list, never by name.

use crate::store::{Migration, Store, StoreError};

use super::{Module, Registry};

/// Reads an area's revision: a counter bumped inside every transaction that
/// changes the area's data, by any process.
/// It takes the hub's state, whose `store` or `shared` holds the area's tables.
pub type RevisionReader = fn(&super::HubState) -> Result<i64, StoreError>;

#[derive(Clone, Copy)]
pub struct Area {
    /// The area's name: its schema's, its cache namespace's and its change
    /// feed entry's.
    pub id: &'static str,
    /// The switch its tools answer to.
    pub module: Module,
    /// The migrations that build its tables, in order.
    pub migrations: &'static [Migration],
    /// For an area whose state a team shares: its tables as PostgreSQL
    /// builds them and the tables a copy moves. With a team database its
    /// tools keep their state there (through `HubState::shared`). None for
    /// an area that stays with each hub.
    pub team: Option<&'static Team>,
    /// `None` for an area that keeps no data a client shows.
    pub revision: Option<RevisionReader>,
    pub register: fn(&mut Registry),
    /// What it offers search, if anything.
    pub search: Option<&'static super::searchable::Searchable>,
    /// What agents may read of it as resources.
    pub resources: &'static [super::offers::ResourceKind],
    /// Prompts for its workflows.
    pub prompts: &'static [super::offers::PromptSpec],
    /// What it adds to the hub's health, if anything.
    pub health: Option<HealthCheck>,
}

/// An area's shared state: its migrations for a team database, its
/// tables in the order `cos database copy` moves them, and its settings
/// files in the state folder that a team shares (kept in the team database,
/// read through `settings::shared_text`).
pub struct Team {
    pub migrations: &'static [Migration],
    pub tables: &'static [crate::store::copy::SharedTable],
    pub files: &'static [&'static str],
}

/// An area's part of the hub's health: what it reports, and the problems
/// that make the hub `degraded`.
pub type HealthCheck = fn(&super::ToolContext) -> AreaHealth;

#[derive(Debug, Default)]
pub struct AreaHealth {
    pub report: serde_json::Map<String, serde_json::Value>,
    pub problems: Vec<String>,
}

impl std::fmt::Debug for Area {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Area")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

/// Runs `prepare` the first time this process asks for `what` on this
/// database (an area's recovery after a crash, say), holding a lock for
/// that `what` while it runs so no other caller of the process goes ahead
/// of it; `prepare` may itself ask for another `what`. A failure is not
/// remembered: the next call tries again.
pub fn once_per_database<E>(
    store: &Store,
    what: &'static str,
    prepare: impl FnOnce() -> Result<(), E>,
) -> Result<(), E> {
    use std::collections::HashMap;
    use std::path::PathBuf;
    use std::sync::{Arc, Mutex, OnceLock};
    type Done = Arc<Mutex<bool>>;
    static ALL: OnceLock<Mutex<HashMap<(PathBuf, &'static str), Done>>> = OnceLock::new();
    let done: Done = ALL
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .entry((store.path().to_path_buf(), what))
        .or_default()
        .clone();
    let mut done = done.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if !*done {
        prepare()?;
        *done = true;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_once_may_ask_for_another_and_each_runs_once() {
        let state = tempfile::tempdir().unwrap();
        let store = Store::open(state.path(), &[]).unwrap();
        let mut runs = Vec::new();
        for _ in 0..2 {
            once_per_database(&store, "outer test step", || {
                runs.push("outer");
                once_per_database(&store, "inner test step", || Ok::<(), ()>(()))
            })
            .unwrap();
        }
        assert_eq!(runs, ["outer"]);
        let mut inner_again = false;
        once_per_database(&store, "inner test step", || {
            inner_again = true;
            Ok::<(), ()>(())
        })
        .unwrap();
        assert!(!inner_again, "done inside the outer one");
    }
}
