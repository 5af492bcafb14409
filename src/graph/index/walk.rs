//! Finding and reading what to index: the repository walked the way git
//! sees it (ignored files left out, oversized, binary and minified files
//! noted with why), and each file read and parsed by its language.

use super::*;

/// Every file git would see (ignored and hidden paths left out),
/// repository-relative, with the language the graph reads it as (text when
/// it parses none), and the Rust manifests (`Cargo.toml`) among them.
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
        if relative == "Cargo.toml" || relative.ends_with("/Cargo.toml") {
            manifests.push(relative.clone());
        }
        let language = Language::of_any(&relative);
        files.push((relative, language));
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

/// A file's bytes, or only its first block when that shows it is binary:
/// a binary file is never kept, and every run looks at it again (it has no
/// row to say it is unchanged), so its rest is not read.
fn read_unless_binary(full: &Path, size: u64) -> Option<Vec<u8>> {
    use std::io::Read;
    let mut file = std::fs::File::open(full).ok()?;
    let mut bytes = Vec::with_capacity(size as usize);
    (&mut file)
        .take(left_out::BINARY_PROBE_BYTES as u64)
        .read_to_end(&mut bytes)
        .ok()?;
    if !left_out::is_binary(&bytes) {
        file.read_to_end(&mut bytes).ok()?;
    }
    Some(bytes)
}

pub(super) fn read_and_parse(
    root: &Path,
    path: &str,
    language: Language,
    libraries: &Libraries,
    known: &HashMap<String, Known>,
) -> Seen {
    let full = root.join(path);
    let (modified_ns, size) = match std::fs::metadata(&full) {
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
            (modified_ns, meta.len())
        }
        Ok(_) => return leave_out(path, "larger than 1 MiB"),
        Err(_) => return leave_out(path, "unreadable"),
    };
    let Some(bytes) = read_unless_binary(&full, size) else {
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
    let facet = match language {
        Language::Text => text_languages::of(&full),
        parsed => parsed.name(),
    };
    Seen::Changed(Box::new(Parsed {
        path: path.to_string(),
        language,
        facet,
        hash,
        bytes: bytes.len() as u64,
        modified_ns,
        extraction,
    }))
}
