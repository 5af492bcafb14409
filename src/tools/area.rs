//! An area as the runtime sees it: the tables it brings, the revision counter
//! that says its data changed, and the tools it registers. The hub lists its
//! areas once (`hub::AREAS`); the store, the answer cache and the change feed
//! learn every area from that list, never by name.

use crate::store::{Migration, Store, StoreError};

use super::{Module, Registry};

/// Reads an area's revision: a counter bumped inside every transaction that
/// changes the area's data, by any process.
pub type RevisionReader = fn(&Store) -> Result<i64, StoreError>;

#[derive(Clone, Copy)]
pub struct Area {
    /// The area's name: its schema's, its cache namespace's and its change
    /// feed entry's.
    pub id: &'static str,
    /// The switch its tools answer to.
    pub module: Module,
    /// The migrations that build its tables, in order.
    pub migrations: &'static [Migration],
    /// `None` for an area that keeps no data a client shows.
    pub revision: Option<RevisionReader>,
    pub register: fn(&mut Registry),
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
/// database (an area's recovery after a crash, say), holding a lock while it
/// runs so no other caller of the process goes ahead of it. A failure is not
/// remembered: the next call tries again.
pub fn once_per_database<E>(
    store: &Store,
    what: &'static str,
    prepare: impl FnOnce() -> Result<(), E>,
) -> Result<(), E> {
    use std::collections::HashSet;
    use std::path::PathBuf;
    use std::sync::{Mutex, OnceLock};
    static DONE: OnceLock<Mutex<HashSet<(PathBuf, &'static str)>>> = OnceLock::new();
    let mut done = DONE
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let key = (store.path().to_path_buf(), what);
    if !done.contains(&key) {
        prepare()?;
        done.insert(key);
    }
    Ok(())
}
