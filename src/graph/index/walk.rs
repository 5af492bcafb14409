//! Finding and reading what to index: the repository walked the way git
//! sees it (ignored files left out, oversized, binary and minified files
//! noted with why), and each file read and parsed by its language.

use super::*;

/// Every source file git would see (ignores .gitignore'd and hidden paths), repository-relative.
/// The files the graph reads, and the Rust manifests (`Cargo.toml`) beside
/// them, as git sees the tree.
pub(super) fn walk(root: &Path) -> (Vec<(String, Language)>, Vec<String>) {
    let mut files = Vec::new();
    let mut manifests = Vec::new();
    let entries = ignore::WalkBuilder::new(root)
        .hidden(true)
        .require_git(false)
        .build()
        .filter_map(Result::ok)
        .filter(|entry| entry.file_type().is_some_and(|t| t.is_file()));
    for entry in entries {
        let Some(relative) = entry
            .path()
            .strip_prefix(root)
            .ok()
            .and_then(Path::to_str)
            .map(|path| path.replace('\\', "/"))
        else {
            continue;
        };
        if let Some(language) = Language::of(&relative) {
            files.push((relative, language));
        } else if relative == "Cargo.toml" || relative.ends_with("/Cargo.toml") {
            manifests.push(relative);
        }
    }
    files.sort_by(|a, b| a.0.cmp(&b.0));
    (files, manifests)
}

pub(super) fn leave_out(path: &str, why: &str) -> Seen {
    tracing::debug!(path, why, "left out of the graph");
    Seen::Skipped(LeftOut {
        path: path.to_string(),
        why: why.to_string(),
    })
}

pub(super) fn read_and_parse(
    root: &Path,
    path: &str,
    language: Language,
    libraries: &Libraries,
    known: &HashMap<String, Known>,
) -> Seen {
    let full = root.join(path);
    let modified_ns = match std::fs::metadata(&full) {
        Ok(meta) if meta.len() <= MAX_FILE_BYTES => {
            let modified_ns = meta
                .modified()
                .ok()
                .and_then(|time| time.duration_since(std::time::UNIX_EPOCH).ok())
                .map(|since| since.as_nanos() as i64);
            let before = known.get(path);
            if before.is_some_and(|before| {
                before.bytes == meta.len()
                    && before.modified_ns.is_some()
                    && before.modified_ns == modified_ns
            }) {
                // same size and modification time as when it was indexed: not read again
                return Seen::Unchanged(path.to_string());
            }
            modified_ns
        }
        Ok(_) => return leave_out(path, "larger than 1 MiB"),
        Err(_) => return leave_out(path, "unreadable"),
    };
    let Ok(bytes) = std::fs::read(&full) else {
        return leave_out(path, "unreadable");
    };
    if let Some(why) = left_out::reason(path, language, &bytes) {
        return leave_out(path, why);
    }
    let hash = blake3::hash(&bytes).to_hex().to_string();
    if known.get(path).is_some_and(|before| before.hash == hash) {
        return Seen::Touched(path.to_string(), modified_ns);
    }
    let text = String::from_utf8_lossy(&bytes);
    let extraction = extract::extract_in(path, language, &text, libraries.for_file(path));
    Seen::Changed(Box::new(Parsed {
        path: path.to_string(),
        language,
        hash,
        bytes: bytes.len() as u64,
        modified_ns,
        extraction,
    }))
}
