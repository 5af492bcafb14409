//! Memory the search area keeps between the queries of a process: what
//! belongs to one database at one revision (`Keyed`, started afresh when
//! either moves), and maps bounded in bytes (`Bounded`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

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
    map: HashMap<K, V>,
}

impl<K: std::hash::Hash + Eq, V: Clone> Bounded<K, V> {
    pub fn new(limit: usize) -> Bounded<K, V> {
        Bounded {
            limit,
            bytes: 0,
            map: HashMap::new(),
        }
    }

    pub fn get(&self, key: &K) -> Option<V> {
        self.map.get(key).cloned()
    }

    pub fn insert(&mut self, key: K, value: V, size: usize) {
        if size > self.limit / 8 {
            return;
        }
        if self.bytes + size > self.limit {
            self.map.clear();
            self.bytes = 0;
        }
        if self.map.insert(key, value).is_none() {
            self.bytes += size;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
