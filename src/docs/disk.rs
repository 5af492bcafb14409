//! Documents on disk, reached only beneath their mount's directory handle
//! (cap-std): reading, stating, and durable replacement (a temporary file in
//! the same folder, fsync, rename, fsync of the folder). A path that a
//! symlink leads out of the mount is refused by the resolver, whatever the
//! text of the path looked like.

use cap_std::ambient_authority;
use cap_std::fs::{Dir, MetadataExt, OpenOptions, OpenOptionsExt};
use std::io::{ErrorKind, Write};

use super::mounts::Mount;
pub use super::offload::Unsynced;
use super::paths::{BeyondSchema, DocPath, refused_beyond_schema};
use crate::tools::ToolError;

/// What the hub compares to notice an edit made outside it without reading the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stat {
    pub size: i64,
    pub mtime_ns: i64,
}

/// Suffix of the hub's temporary files; listings skip them, a restart sweeps them.
pub const TEMP_SUFFIX: &str = ".cos-tmp";

/// A mount's folder, opened.
pub struct MountDir {
    dir: Dir,
}

/// Opens the mount's folder; `None` when it does not exist and `create` is false.
pub fn open(mount: &Mount, create: bool) -> Result<Option<MountDir>, ToolError> {
    if create {
        std::fs::create_dir_all(&mount.root).map_err(|error| {
            ToolError::io(
                format!("creating the mount folder {}", mount.root.display()),
                error,
            )
        })?;
    }
    match Dir::open_ambient_dir(&mount.root, ambient_authority()) {
        Ok(dir) => Ok(Some(MountDir { dir })),
        Err(error) if error.kind() == ErrorKind::NotFound => Ok(None),
        Err(error) => Err(ToolError::io(
            format!("opening the mount folder {}", mount.root.display()),
            error,
        )),
    }
}

/// True when the error is the resolver refusing to leave the mount.
fn is_escape(error: &std::io::Error) -> bool {
    error.raw_os_error() == Some(libc::EXDEV)
        || error.raw_os_error() == Some(libc::ELOOP)
        || (error.kind() == ErrorKind::PermissionDenied
            && error.to_string().contains("outside of the filesystem"))
}

fn failed(path: &DocPath, doing: &str, error: std::io::Error) -> ToolError {
    if is_escape(&error) {
        return refused_beyond_schema(
            "path",
            path.as_str(),
            "leads outside the mount (through a symbolic link)",
            BeyondSchema::Symlink,
        );
    }
    ToolError::io(format!("{doing} {}", path.as_str()), error)
}

fn stat_of(metadata: &cap_std::fs::Metadata) -> Stat {
    Stat {
        size: i64::try_from(metadata.len()).unwrap_or(i64::MAX),
        mtime_ns: metadata
            .mtime()
            .saturating_mul(1_000_000_000)
            .saturating_add(metadata.mtime_nsec()),
    }
}

impl MountDir {
    /// The file's size and time, `None` when there is no file there.
    pub fn stat(&self, path: &DocPath) -> Result<Option<Stat>, ToolError> {
        match self.dir.symlink_metadata(path.as_path()) {
            Ok(metadata) if metadata.file_type().is_symlink() => {
                match self.dir.metadata(path.as_path()) {
                    Ok(target) if target.is_file() => Ok(Some(stat_of(&target))),
                    Ok(_) => Ok(None),
                    Err(error) if error.kind() == ErrorKind::NotFound => Ok(None),
                    Err(error) => Err(failed(path, "reading", error)),
                }
            }
            Ok(metadata) if metadata.is_file() => Ok(Some(stat_of(&metadata))),
            Ok(_) => Ok(None),
            Err(error) if error.kind() == ErrorKind::NotFound => Ok(None),
            Err(error) if error.raw_os_error() == Some(libc::ENOTDIR) => Ok(None),
            Err(error) => Err(failed(path, "reading", error)),
        }
    }

    /// The file's bytes and stat, `None` when there is no file there.
    pub fn read(&self, path: &DocPath) -> Result<Option<(Vec<u8>, Stat)>, ToolError> {
        let mut file = match self.dir.open(path.as_path()) {
            Ok(file) => file,
            Err(error)
                if error.kind() == ErrorKind::NotFound
                    || error.raw_os_error() == Some(libc::ENOTDIR)
                    || error.raw_os_error() == Some(libc::EISDIR) =>
            {
                return Ok(None);
            }
            Err(error) => return Err(failed(path, "reading", error)),
        };
        let metadata = file
            .metadata()
            .map_err(|error| failed(path, "reading", error))?;
        if !metadata.is_file() {
            return Ok(None);
        }
        let mut bytes = Vec::with_capacity(usize::try_from(metadata.len()).unwrap_or(0));
        std::io::Read::read_to_end(&mut file, &mut bytes)
            .map_err(|error| failed(path, "reading", error))?;
        let stat = stat_of(
            &file
                .metadata()
                .map_err(|error| failed(path, "reading", error))?,
        );
        Ok(Some((bytes, stat)))
    }

    /// Refuses a write through a symbolic link: replacing it would turn the
    /// link into a file, and following it may lead anywhere.
    pub fn refuse_symlink(&self, path: &DocPath) -> Result<(), ToolError> {
        match self.dir.symlink_metadata(path.as_path()) {
            Ok(metadata) if metadata.file_type().is_symlink() => Err(refused_beyond_schema(
                "path",
                path.as_str(),
                "is a symbolic link; the hub writes only regular files",
                BeyondSchema::Symlink,
            )),
            Ok(_) => Ok(()),
            Err(error)
                if error.kind() == ErrorKind::NotFound
                    || error.raw_os_error() == Some(libc::ENOTDIR) =>
            {
                Ok(())
            }
            Err(error) => Err(failed(path, "checking", error)),
        }
    }

    /// Writes `bytes` to a new temporary file beside `path` and syncs it;
    /// returns the temporary file's name (relative to the mount), its stat,
    /// and the file, not yet synced: its writer syncs it beside the commit
    /// (write.rs), anyone else before renaming it (sync::finish).
    pub fn write_temp(
        &self,
        path: &DocPath,
        bytes: &[u8],
    ) -> Result<(String, Stat, Unsynced), ToolError> {
        let parent = path.parent();
        if !parent.is_empty() {
            self.dir
                .create_dir_all(parent)
                .map_err(|error| failed(path, "creating the folder of", error))?;
        }
        let temp_name = format!(
            ".{}.{}{TEMP_SUFFIX}",
            path.file_name(),
            uuid::Uuid::new_v4().simple()
        );
        let temp = if parent.is_empty() {
            temp_name
        } else {
            format!("{parent}/{temp_name}")
        };
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        let mut file = self
            .dir
            .open_with(&temp, &options)
            .map_err(|error| failed(path, "writing", error))?;
        file.write_all(bytes)
            .map_err(|error| failed(path, "writing", error))?;
        let stat = stat_of(
            &file
                .metadata()
                .map_err(|error| failed(path, "writing", error))?,
        );
        Ok((temp, stat, Unsynced::from(file)))
    }

    /// Makes a temporary file someone else wrote durable before it is
    /// renamed: synced when it holds `hash`, else (torn by a crash before
    /// its writer synced it) written anew from `whole`, the content the
    /// history kept. `Ok(false)` when it is gone.
    pub fn settle_temp(
        &self,
        temp: &str,
        hash: &str,
        whole: impl FnOnce() -> Result<Option<Vec<u8>>, ToolError>,
    ) -> Result<bool, ToolError> {
        let path = DocPath::trusted(temp);
        let mut options = OpenOptions::new();
        options.read(true).write(true);
        // one handle throughout: renamed meanwhile by its writer, it is still this file
        let mut file = match self.dir.open_with(temp, &options) {
            Ok(file) => file,
            Err(error) if error.kind() == ErrorKind::NotFound => return Ok(false),
            Err(error) => return Err(failed(&path, "syncing", error)),
        };
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut file, &mut bytes)
            .map_err(|error| failed(&path, "syncing", error))?;
        if super::chain::content_hash(&bytes) != hash {
            let Some(whole) = whole()? else {
                // nothing to make it whole from: never rename a torn file over a document
                self.discard(temp);
                return Ok(false);
            };
            file.set_len(0)
                .and_then(|()| std::io::Seek::rewind(&mut file))
                .and_then(|()| file.write_all(&whole))
                .map_err(|error| failed(&path, "rewriting", error))?;
        }
        file.sync_all()
            .map_err(|error| failed(&path, "syncing", error))?;
        Ok(true)
    }

    /// Renames the synced temporary file over `path` and syncs the folder, so
    /// the new directory entry survives a power cut. A temporary file that is
    /// already gone was published by someone else: `Ok(false)`.
    pub fn publish(&self, temp: &str, path: &DocPath) -> Result<bool, ToolError> {
        let replaced = self.hold(path);
        match self.dir.rename(temp, &self.dir, path.as_path()) {
            Ok(()) => {}
            Err(error) if error.kind() == ErrorKind::NotFound => return Ok(false),
            Err(error) => return Err(failed(path, "replacing", error)),
        }
        // freed after the folder's sync, so that freeing (a discard sent to
        // the device) is not queued ahead of the sync's flush
        let synced = self.sync_folder(path);
        if let Some(replaced) = replaced {
            super::offload::close_later(replaced);
        }
        synced?;
        Ok(true)
    }

    /// The file at `path` as a handle that reads nothing and never blocks
    /// (`O_PATH`, not following a symlink), held across its replacement so
    /// that it is freed by the closing thread; `None` when there is none.
    fn hold(&self, path: &DocPath) -> Option<cap_std::fs::File> {
        let mut options = OpenOptions::new();
        options
            .read(true)
            .custom_flags(libc::O_PATH | libc::O_NOFOLLOW);
        self.dir.open_with(path.as_path(), &options).ok()
    }

    /// Removes a temporary file a failed write left; absent is fine.
    pub fn discard(&self, temp: &str) {
        let _ = self.dir.remove_file(temp);
    }

    /// Removes the document and syncs its folder; `Ok(false)` when it was not there.
    pub fn remove(&self, path: &DocPath) -> Result<bool, ToolError> {
        let removed = self.hold(path);
        match self.dir.remove_file(path.as_path()) {
            Ok(()) => {}
            Err(error) if error.kind() == ErrorKind::NotFound => return Ok(false),
            Err(error) => return Err(failed(path, "deleting", error)),
        }
        let synced = self.sync_folder(path);
        if let Some(removed) = removed {
            super::offload::close_later(removed);
        }
        synced?;
        Ok(true)
    }

    /// Moves a document to `to` (its folder made as needed), syncing both
    /// folders; `Ok(false)` when the source was not there.
    pub fn rename(&self, from: &DocPath, to: &DocPath) -> Result<bool, ToolError> {
        if !to.parent().is_empty() {
            self.dir
                .create_dir_all(to.parent())
                .map_err(|error| failed(to, "creating the folder of", error))?;
        }
        match self.dir.rename(from.as_path(), &self.dir, to.as_path()) {
            Ok(()) => {}
            Err(error) if error.kind() == ErrorKind::NotFound => return Ok(false),
            Err(error) => return Err(failed(from, "moving", error)),
        }
        self.sync_folder(to)?;
        if from.parent() != to.parent() {
            self.sync_folder(from)?;
        }
        Ok(true)
    }

    fn sync_folder(&self, path: &DocPath) -> Result<(), ToolError> {
        // a directory handle cap-std opens for lookups may not sync (O_PATH);
        // open the folder for reading to fsync it
        let parent = path.parent();
        let mut options = OpenOptions::new();
        options.read(true).custom_flags(libc::O_DIRECTORY);
        self.dir
            .open_with(if parent.is_empty() { "." } else { parent }, &options)
            .and_then(|folder| folder.sync_all())
            .map_err(|error| failed(path, "syncing the folder of", error))
    }

    /// Removes the hub's temporary files in `folder` (relative) older than
    /// `age`: what a crash left before its commit. Younger ones may belong
    /// to a write under way in another process.
    pub fn sweep_temps(&self, folder: &str, age: std::time::Duration) {
        let entries = if folder.is_empty() {
            self.dir.entries()
        } else {
            self.dir.read_dir(folder)
        };
        let Ok(entries) = entries else {
            return;
        };
        let now = std::time::SystemTime::now();
        for entry in entries.filter_map(Result::ok) {
            let Ok(name) = entry.file_name().into_string() else {
                continue;
            };
            if !(name.starts_with('.') && name.ends_with(TEMP_SUFFIX)) {
                continue;
            }
            let old = entry
                .metadata()
                .and_then(|m| m.modified())
                .map(|modified| {
                    now.duration_since(modified.into_std())
                        .is_ok_and(|elapsed| elapsed > age)
                })
                .unwrap_or(false);
            if old {
                let path = if folder.is_empty() {
                    name
                } else {
                    format!("{folder}/{name}")
                };
                let _ = self.dir.remove_file(path);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::docs::chain::content_hash;

    fn a_mount_folder() -> (tempfile::TempDir, MountDir) {
        let folder = tempfile::tempdir().expect("a folder");
        let dir = open(&Mount::for_tests(folder.path()), false)
            .expect("opens")
            .expect("exists");
        (folder, dir)
    }

    #[test]
    fn a_temporary_file_found_by_someone_else_is_synced_or_made_whole_before_its_rename() {
        let (_folder, dir) = a_mount_folder();
        let whole = b"# Guide\nwhole content\n".to_vec();
        let hash = content_hash(&whole);
        let stored = || Ok(Some(whole.clone()));
        let path = DocPath::trusted("guide.md");

        // intact: synced, kept as it is
        let (temp, _, _unsynced) = dir.write_temp(&path, &whole).expect("written");
        assert!(dir.settle_temp(&temp, &hash, stored).expect("settled"));
        let read = |temp: &str| dir.read(&DocPath::trusted(temp)).expect("read");
        assert_eq!(read(&temp).map(|(bytes, _)| bytes), Some(whole.clone()));

        // torn by a crash before its writer synced it: written anew from the history
        let (torn, _, _unsynced) = dir.write_temp(&path, b"# Gui").expect("written");
        assert!(dir.settle_temp(&torn, &hash, stored).expect("settled"));
        assert_eq!(read(&torn).map(|(bytes, _)| bytes), Some(whole.clone()));

        // torn, and nothing to make it whole from: removed, never renamed over the document
        let (lost, _, _unsynced) = dir.write_temp(&path, b"").expect("written");
        assert!(!dir.settle_temp(&lost, &hash, || Ok(None)).expect("settled"));
        assert_eq!(read(&lost), None);

        // gone: someone published it already
        assert!(!dir.settle_temp(&lost, &hash, stored).expect("settled"));
    }

    #[test]
    fn a_publication_replaces_the_document_without_opening_what_it_replaces() {
        let (folder, dir) = a_mount_folder();
        let path = DocPath::trusted("guide.md");
        // a reader's open of a FIFO waits for a writer: holding the replaced
        // file must not read it
        let fifo = std::ffi::CString::new(
            folder
                .path()
                .join("guide.md")
                .into_os_string()
                .into_encoded_bytes(),
        )
        .expect("a path without NUL");
        // SAFETY: mkfifo reads the NUL-terminated path and nothing else
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        let (temp, _, unsynced) = dir.write_temp(&path, b"# Guide\n").expect("written");
        unsynced.sync().expect("synced");
        let (done, published) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = done.send(dir.publish(&temp, &path).map(|_| dir));
        });
        let dir = published
            .recv_timeout(std::time::Duration::from_secs(10))
            .expect("the publication did not wait on the FIFO it replaced")
            .expect("published");
        let read = dir.read(&DocPath::trusted("guide.md")).expect("read");
        assert_eq!(read.map(|(bytes, _)| bytes), Some(b"# Guide\n".to_vec()));
    }
}
