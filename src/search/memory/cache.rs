//! Memory the search area keeps between the queries of a process: what
//! belongs to one database at one revision (`Keyed`, on a `Shelf`, started
//! afresh or brought level when either moves), indexes of rows brought
//! level by the row ids that came and went (`Rows`), maps bounded in bytes
//! (`Bounded`), and what an index works out from itself and keeps beside
//! itself until it changes (`Memo`).

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

/// Where one kind of kept value waits between queries.
pub struct Shelf<T>(Mutex<Option<Keyed<T>>>);

impl<T> Shelf<T> {
    pub const fn new() -> Shelf<T> {
        Shelf(Mutex::new(None))
    }

    /// The shelf, to read or change; a query that panicked holding it
    /// left nothing half-changed worth refusing.
    pub fn lock(&self) -> MutexGuard<'_, Option<Keyed<T>>> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// An index kept over the rows of a table whose row ids are never reused
/// (`AUTOINCREMENT`): an id names one row for good, so the index is
/// brought level by the ids that came and went.
/// Each row held has a slot; a removed row's slot stays, emptied, until the
/// index is built afresh.
pub trait Rows: Default {
    /// The slot of each row held, by row id.
    fn slots_by_id(&self) -> &foldhash::HashMap<i64, u32>;
    fn slots_by_id_mut(&mut self) -> &mut foldhash::HashMap<i64, u32>;
    /// Slots taken, removed rows' included.
    fn slots(&self) -> usize;
    /// Empties `slot`, whose row was removed.
    fn let_go(&mut self, slot: u32);

    fn ids(&self) -> Vec<i64> {
        self.slots_by_id().keys().copied().collect()
    }

    fn holds(&self, id: i64) -> bool {
        self.slots_by_id().contains_key(&id)
    }

    fn remove(&mut self, id: i64) {
        if let Some(slot) = self.slots_by_id_mut().remove(&id) {
            self.let_go(slot);
        }
    }

    /// Rows held.
    fn live(&self) -> usize {
        self.slots_by_id().len()
    }

    /// Slots of rows removed.
    fn dead(&self) -> usize {
        self.slots() - self.live()
    }
}

/// Lets go of the rows of `index` not in `ids` (ascending), starts it
/// afresh when the removed ones take more than `allowance` beyond the live
/// ones, and answers the ids it does not hold: those to read.
pub fn rows_to_read<I: Rows>(index: &mut I, ids: Vec<i64>, allowance: usize) -> Vec<i64> {
    for id in index.ids() {
        if ids.binary_search(&id).is_err() {
            index.remove(id);
        }
    }
    if index.dead() > index.live() + allowance {
        *index = I::default();
    }
    ids.into_iter().filter(|id| !index.holds(*id)).collect()
}

/// `value`, kept for the database at `database` at `revision`.
pub struct Keyed<T> {
    database: PathBuf,
    revision: i64,
    value: T,
}

impl<T> Keyed<T> {
    fn is_for(&self, database: &Path, revision: i64) -> bool {
        self.revision == revision && self.database == database
    }
}

/// The value kept, when it is for `database` at `revision`.
pub fn for_them<'k, T>(
    kept: Option<&'k mut Keyed<T>>,
    database: &Path,
    revision: i64,
) -> Option<&'k mut T> {
    kept.filter(|k| k.is_for(database, revision))
        .map(|k| &mut k.value)
}

/// The value kept for `database` at any revision, taken out: what a moved
/// revision can be brought level from, instead of made afresh.
pub fn take_for<T>(kept: &mut Option<Keyed<T>>, database: &Path) -> Option<T> {
    kept.take()
        .filter(|k| k.database == database)
        .map(|k| k.value)
}

/// `value`, kept for `database` at `revision`.
pub fn keep<T>(kept: &mut Option<Keyed<T>>, database: &Path, revision: i64, value: T) {
    *kept = Some(Keyed {
        database: database.to_path_buf(),
        revision,
        value,
    });
}

/// The value kept for `database` at `revision`, made afresh by `fresh`
/// when what was kept belongs to another.
pub fn current<'k, T>(
    kept: &'k mut Option<Keyed<T>>,
    database: &Path,
    revision: i64,
    fresh: impl FnOnce() -> T,
) -> &'k mut T {
    if !kept.as_ref().is_some_and(|k| k.is_for(database, revision)) {
        *kept = None;
    }
    let kept = kept.get_or_insert_with(|| Keyed {
        database: database.to_path_buf(),
        revision,
        value: fresh(),
    });
    &mut kept.value
}

/// A map holding at most `limit` bytes of values: emptied whole when the
/// next value would pass it, and never given one over an eighth of it.
pub struct Bounded<K, V> {
    limit: usize,
    bytes: usize,
    map: foldhash::HashMap<K, V>,
}

impl<K: std::hash::Hash + Eq, V: Clone> Bounded<K, V> {
    pub fn new(limit: usize) -> Bounded<K, V> {
        Bounded {
            limit,
            bytes: 0,
            map: foldhash::HashMap::default(),
        }
    }

    pub fn get<Q>(&self, key: &Q) -> Option<V>
    where
        K: std::borrow::Borrow<Q>,
        Q: std::hash::Hash + Eq + ?Sized,
    {
        self.map.get(key).cloned()
    }

    pub fn insert(&mut self, key: K, value: V, size: usize) {
        if size > self.limit / 8 {
            return;
        }
        if self.bytes + size > self.limit {
            self.clear();
        }
        if self.map.insert(key, value).is_none() {
            self.bytes += size;
        }
    }

    /// Empties it; what it held was only ever a copy.
    pub fn clear(&mut self) {
        if !self.map.is_empty() {
            self.map.clear();
            self.bytes = 0;
        }
    }
}

/// What an index works out from itself alone and keeps beside itself (a
/// frequent word's hits): at most LIMIT bytes (as `Bounded`), emptied by
/// every change of the index (`clear`), and never copied with it, since a
/// copy is made to be changed.
pub struct Memo<K, V, const LIMIT: usize>(Mutex<Bounded<K, V>>);

impl<K: std::hash::Hash + Eq, V: Clone, const LIMIT: usize> Default for Memo<K, V, LIMIT> {
    fn default() -> Self {
        Memo(Mutex::new(Bounded::new(LIMIT)))
    }
}

impl<K: std::hash::Hash + Eq, V: Clone, const LIMIT: usize> Memo<K, V, LIMIT> {
    fn lock(&self) -> MutexGuard<'_, Bounded<K, V>> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub fn get<Q>(&self, key: &Q) -> Option<V>
    where
        K: std::borrow::Borrow<Q>,
        Q: std::hash::Hash + Eq + ?Sized,
    {
        self.lock().get(key)
    }

    pub fn keep(&self, key: K, value: V, size: usize) {
        self.lock().insert(key, value, size);
    }

    pub fn clear(&mut self) {
        self.0.get_mut().unwrap_or_else(|p| p.into_inner()).clear();
    }
}

impl<K: std::hash::Hash + Eq, V: Clone, const LIMIT: usize> Clone for Memo<K, V, LIMIT> {
    fn clone(&self) -> Self {
        Memo::default()
    }
}

impl<K, V, const LIMIT: usize> std::fmt::Debug for Memo<K, V, LIMIT> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Memo")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows by slot, the slots of removed ones emptied.
    #[derive(Default)]
    struct Held {
        by_id: foldhash::HashMap<i64, u32>,
        slots: Vec<Option<i64>>,
    }

    impl Held {
        fn add(&mut self, id: i64) {
            self.by_id.insert(id, self.slots.len() as u32);
            self.slots.push(Some(id));
        }
    }

    impl Rows for Held {
        fn slots_by_id(&self) -> &foldhash::HashMap<i64, u32> {
            &self.by_id
        }
        fn slots_by_id_mut(&mut self) -> &mut foldhash::HashMap<i64, u32> {
            &mut self.by_id
        }
        fn slots(&self) -> usize {
            self.slots.len()
        }
        fn let_go(&mut self, slot: u32) {
            self.slots[slot as usize] = None;
        }
    }

    #[test]
    fn rows_are_brought_level_and_built_afresh_past_the_allowance() {
        let mut held = Held::default();
        for id in [1, 2, 3] {
            held.add(id);
        }
        assert_eq!(rows_to_read(&mut held, vec![2, 3, 4, 5], 1), [4, 5]);
        let mut ids = held.ids();
        ids.sort_unstable();
        assert_eq!((ids, held.dead(), held.slots[0]), (vec![2, 3], 1, None));
        // 2 and 3 go: three removed beside no live row pass an allowance of one
        assert_eq!(rows_to_read(&mut held, vec![6], 1), [6]);
        assert_eq!((held.live(), held.dead()), (0, 0), "built afresh");
    }

    #[test]
    fn a_memo_is_emptied_by_a_change_and_not_copied() {
        let mut memo: Memo<i32, &str, 80> = Memo::default();
        memo.keep(1, "a", 10);
        assert_eq!(memo.get(&1), Some("a"));
        assert_eq!(memo.clone().get(&1), None, "a copy starts empty");
        memo.clear();
        assert_eq!(memo.get(&1), None);
        memo.keep(2, "b", 11);
        assert_eq!(memo.get(&2), None, "over an eighth of its bound");
    }

    #[test]
    fn a_bounded_shelf_empties_before_it_would_pass_its_limit() {
        let mut shelf = Bounded::new(80);
        for key in 0..8 {
            shelf.insert(key, "a", 10);
        }
        assert_eq!((shelf.map.len(), shelf.bytes), (8, 80));
        shelf.insert(8, "c", 5);
        assert_eq!((shelf.map.len(), shelf.bytes), (1, 5), "emptied, then kept");
        shelf.insert(9, "d", 11);
        assert!(!shelf.map.contains_key(&9), "over an eighth of the limit");
    }
}
