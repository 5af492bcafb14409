//! The indexed files, kept in memory between the queries of a process: their
//! table (id, path, language, place in path order), so the trigram prefilter
//! reads only row ids, and their texts, so a code-text scan reads memory
//! instead of SQLite pages. Keyed by the database and the revision of the
//! source the files come from (the graph): a task or a document written
//! keeps them. Texts are bounded (64 MiB); everything is dropped whole when
//! the files move to a new revision, so what is kept is always the indexed.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rusqlite::Connection;

use super::records;
use crate::store::StoreError;

/// Bytes of text kept at most.
const MAX_BYTES: usize = 64 << 20;

struct Kept {
    database: PathBuf,
    revision: i64,
    bytes: usize,
    texts: HashMap<i64, Arc<str>>,
    files: Option<Arc<FileTable>>,
}

impl Kept {
    fn is_for(&self, database: &Path, revision: i64) -> bool {
        self.revision == revision && self.database == database
    }
}

/// Every indexed file by row id, with its place in path order.
pub struct FileTable {
    by_id: HashMap<i64, (usize, records::KeptFile)>,
}

impl FileTable {
    fn of(files: Vec<records::KeptFile>) -> FileTable {
        FileTable {
            by_id: files
                .into_iter()
                .enumerate()
                .map(|(place, file)| (file.id, (place, file)))
                .collect(),
        }
    }

    /// The files of `ids` (every file when None) in path order; ids the
    /// table does not hold are left out.
    pub fn in_path_order(&self, ids: Option<&[i64]>) -> Vec<&records::KeptFile> {
        let mut files: Vec<&(usize, records::KeptFile)> = match ids {
            Some(ids) => ids.iter().filter_map(|id| self.by_id.get(id)).collect(),
            None => self.by_id.values().collect(),
        };
        files.sort_unstable_by_key(|(place, _)| *place);
        files.into_iter().map(|(_, file)| file).collect()
    }
}

/// The table of the files indexed at `revision` of the database at `database`.
pub fn files(c: &Connection, database: &Path, revision: i64) -> Result<Arc<FileTable>, StoreError> {
    if let Some(files) = current(&mut lock(), database, revision).files.clone() {
        return Ok(files);
    }
    let files = Arc::new(FileTable::of(records::all_files(c)?));
    current(&mut lock(), database, revision).files = Some(files.clone());
    Ok(files)
}

/// The kept state for `database` at `revision`, started afresh when what
/// was kept belongs to another.
fn current<'k>(kept: &'k mut Option<Kept>, database: &Path, revision: i64) -> &'k mut Kept {
    if !kept.as_ref().is_some_and(|k| k.is_for(database, revision)) {
        *kept = None;
    }
    kept.get_or_insert_with(|| Kept {
        database: database.to_path_buf(),
        revision,
        bytes: 0,
        texts: HashMap::new(),
        files: None,
    })
}

static KEPT: Mutex<Option<Kept>> = Mutex::new(None);

/// File `id`'s text in the index at `revision` of the database at `database`.
pub fn text(
    c: &Connection,
    database: &Path,
    revision: i64,
    id: i64,
) -> Result<Option<Arc<str>>, StoreError> {
    if let Some(text) = kept(database, revision, id) {
        return Ok(Some(text));
    }
    let Some(text) = records::with_text(c, id, |text| Arc::<str>::from(text))? else {
        return Ok(None);
    };
    keep(database, revision, id, &text);
    Ok(Some(text))
}

fn lock() -> std::sync::MutexGuard<'static, Option<Kept>> {
    KEPT.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn kept(database: &Path, revision: i64, id: i64) -> Option<Arc<str>> {
    let kept = lock();
    let kept = kept.as_ref().filter(|k| k.is_for(database, revision))?;
    kept.texts.get(&id).cloned()
}

fn keep(database: &Path, revision: i64, id: i64, text: &Arc<str>) {
    if text.len() > MAX_BYTES / 8 {
        return;
    }
    let mut kept = lock();
    let kept = current(&mut kept, database, revision);
    if kept.bytes + text.len() > MAX_BYTES {
        kept.texts.clear();
        kept.bytes = 0;
    }
    if kept.texts.insert(id, text.clone()).is_none() {
        kept.bytes += text.len();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(id: i64, path: &str) -> records::KeptFile {
        records::KeptFile {
            id,
            path: path.into(),
            lang: "python".into(),
        }
    }

    #[test]
    fn a_file_table_gives_the_asked_files_in_path_order() {
        // as the database hands them: by path
        let table = FileTable::of(vec![file(7, "a.py"), file(3, "b/c.py"), file(9, "z.py")]);
        let paths = |files: Vec<&records::KeptFile>| -> Vec<String> {
            files.into_iter().map(|f| f.path.clone()).collect()
        };
        assert_eq!(
            paths(table.in_path_order(Some(&[9, 7, 42]))),
            ["a.py", "z.py"],
            "path order, and an id the table lacks is left out"
        );
        assert_eq!(paths(table.in_path_order(None)), ["a.py", "b/c.py", "z.py"]);
    }

    #[test]
    fn what_is_kept_belongs_to_one_database_and_revision() {
        let mut kept = None;
        let here = Path::new("/nowhere/texts-test.db");
        current(&mut kept, here, 4)
            .texts
            .insert(1, Arc::from("text"));
        assert!(current(&mut kept, here, 4).texts.contains_key(&1));
        assert!(
            current(&mut kept, here, 5).texts.is_empty(),
            "another revision"
        );
        current(&mut kept, here, 5)
            .texts
            .insert(1, Arc::from("text"));
        let elsewhere = Path::new("/nowhere/other.db");
        assert!(
            current(&mut kept, elsewhere, 5).texts.is_empty(),
            "another database"
        );
    }
}
