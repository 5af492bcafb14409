//! What changed, as git sees it: the files of a diff (added, modified,
//! deleted, renamed, binary) with the line ranges each side's hunks touch,
//! and each side's text. Read with the `git` command: the diff a person
//! sees in a shell, with the repository's own settings (attributes, rename
//! detection), at no cost of a second git implementation in the binary.

use std::path::Path;
use std::process::Command;

use crate::envelope::{Category, Code};
use crate::tools::ToolError;

/// Bytes of diff read at most: past this the change is refused as too large
/// to map symbol by symbol.
const MAX_DIFF_BYTES: usize = 64 << 20;

/// What a diff compares.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Against {
    /// The working tree (untracked files included) against `HEAD`.
    WorkingTree,
    /// The index against `HEAD`.
    Staged,
    /// `from..to`, or `from` against the working tree when `to` is None.
    Range { from: String, to: Option<String> },
}

impl Against {
    pub fn describe(&self) -> String {
        match self {
            Against::WorkingTree => "the working tree against HEAD".into(),
            Against::Staged => "the staged changes against HEAD".into(),
            Against::Range { from, to: Some(to) } => format!("{to} against {from}"),
            Against::Range { from, to: None } => format!("the working tree against {from}"),
        }
    }

    /// The old side's revision, for `git show REV:path`.
    fn old_revision(&self) -> &str {
        match self {
            Against::WorkingTree | Against::Staged => "HEAD",
            Against::Range { from, .. } => from,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileStatus {
    Added,
    Modified,
    Deleted,
    Renamed,
}

impl FileStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            FileStatus::Added => "added",
            FileStatus::Modified => "modified",
            FileStatus::Deleted => "deleted",
            FileStatus::Renamed => "renamed",
        }
    }
}

/// One changed file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    pub path: String,
    /// Where a renamed file was.
    pub old_path: Option<String>,
    pub status: FileStatus,
    pub binary: bool,
    /// 1-based inclusive line ranges the hunks remove (old side) and add (new side).
    pub old_lines: Vec<(u32, u32)>,
    pub new_lines: Vec<(u32, u32)>,
}

/// Refuses a range that is not refs: it reaches the `git` command line.
pub fn parse_range(range: &str) -> Result<Against, ToolError> {
    let refused = || {
        ToolError::invalid(
            "range",
            "A..B or one ref (a branch, tag, commit or HEAD~N), without spaces or a leading -",
        )
    };
    let valid = |part: &str| {
        !part.is_empty()
            && !part.starts_with('-')
            && part
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_./~^@{}-".contains(c))
    };
    match range.split_once("..") {
        Some((from, to)) if valid(from) && valid(to) && !to.contains("..") => Ok(Against::Range {
            from: from.into(),
            to: Some(to.into()),
        }),
        None if valid(range) => Ok(Against::Range {
            from: range.into(),
            to: None,
        }),
        _ => Err(refused()),
    }
}

fn git(repo: &Path, args: &[&str]) -> Result<std::process::Output, ToolError> {
    Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .output()
        .map_err(|error| {
            ToolError::fail(
                Category::Unavailable,
                Code::E_UNAVAILABLE,
                format!(
                    "the git command could not run ({error}); cos_changes reads diffs with git"
                ),
            )
        })
}

/// Checks that `repo` is a git work tree and each ref of `against` names a commit.
pub fn check(repo: &Path, against: &Against) -> Result<(), ToolError> {
    let inside = git(repo, &["rev-parse", "--is-inside-work-tree"])?;
    if !inside.status.success() {
        return Err(ToolError::fail(
            Category::Unavailable,
            Code::E_UNAVAILABLE,
            "the repository is not a git work tree, so it has no changes to read",
        ));
    }
    let refs: Vec<&str> = match against {
        Against::WorkingTree | Against::Staged => vec!["HEAD"],
        Against::Range { from, to } => std::iter::once(from.as_str())
            .chain(to.as_deref())
            .collect(),
    };
    for name in refs {
        let commit = format!("{name}^{{commit}}");
        let found = git(
            repo,
            &[
                "rev-parse",
                "--verify",
                "--quiet",
                "--end-of-options",
                &commit,
            ],
        )?;
        if !found.status.success() {
            let field = if matches!(against, Against::Range { .. }) {
                "range"
            } else {
                "staged"
            };
            return Err(ToolError::not_found(
                Code::E_NOT_FOUND,
                format!(
                    "{field}: `{name}` names no commit (a repository without commits has no HEAD)"
                ),
            )
            .with_details(serde_json::json!({"field": field, "ref": name})));
        }
    }
    Ok(())
}

/// The files `against` changed, in path order.
pub fn changed_files(repo: &Path, against: &Against) -> Result<Vec<FileChange>, ToolError> {
    let mut args = vec!["diff", "--no-color", "--no-ext-diff", "-U0", "-M"];
    if *against == Against::Staged {
        args.push("--cached");
    }
    args.push("--end-of-options");
    match against {
        Against::WorkingTree | Against::Staged => args.push("HEAD"),
        Against::Range { from, to } => {
            args.push(from);
            args.extend(to.as_deref());
        }
    }
    // what follows is paths, never another ref
    args.push("--");
    let output = git(repo, &args)?;
    if !output.status.success() {
        return Err(ToolError::invalid(
            "range",
            format!(
                "a diff git can read: {}",
                String::from_utf8_lossy(&output.stderr).trim()
            ),
        ));
    }
    if output.stdout.len() > MAX_DIFF_BYTES {
        return Err(ToolError::fail(
            Category::Validation,
            Code::E_TOO_LARGE,
            format!(
                "the diff is over {} MiB: name a narrower range",
                MAX_DIFF_BYTES >> 20
            ),
        ));
    }
    let mut files = parse(&String::from_utf8_lossy(&output.stdout));
    if matches!(
        against,
        Against::WorkingTree | Against::Range { to: None, .. }
    ) {
        files.extend(untracked(repo)?);
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    files.dedup_by(|a, b| a.path == b.path);
    Ok(files)
}

/// Files git does not track yet (and does not ignore): added, every line new.
fn untracked(repo: &Path) -> Result<Vec<FileChange>, ToolError> {
    let output = git(repo, &["ls-files", "--others", "--exclude-standard", "-z"])?;
    Ok(output
        .stdout
        .split(|b| *b == 0)
        .filter(|path| !path.is_empty())
        .map(|path| FileChange {
            path: String::from_utf8_lossy(path).into_owned(),
            old_path: None,
            status: FileStatus::Added,
            binary: false,
            old_lines: Vec::new(),
            new_lines: vec![(1, u32::MAX)],
        })
        .collect())
}

/// The files of a unified diff with `-U0` hunks.
pub fn parse(diff: &str) -> Vec<FileChange> {
    let mut files: Vec<FileChange> = Vec::new();
    for line in diff.lines() {
        if let Some(rest) = line.strip_prefix("diff --git ") {
            let path = rest.rsplit_once(" b/").map_or(rest, |(_, b)| b);
            files.push(FileChange {
                path: unquote(path),
                old_path: None,
                status: FileStatus::Modified,
                binary: false,
                old_lines: Vec::new(),
                new_lines: Vec::new(),
            });
            continue;
        }
        let Some(file) = files.last_mut() else {
            continue;
        };
        if line.starts_with("new file mode") {
            file.status = FileStatus::Added;
        } else if line.starts_with("deleted file mode") {
            file.status = FileStatus::Deleted;
        } else if let Some(from) = line.strip_prefix("rename from ") {
            file.status = FileStatus::Renamed;
            file.old_path = Some(unquote(from));
        } else if let Some(to) = line.strip_prefix("rename to ") {
            file.path = unquote(to);
        } else if line.starts_with("Binary files ") {
            file.binary = true;
        } else if let Some(header) = line.strip_prefix("@@ ")
            && let Some((old, new)) = hunk(header)
        {
            file.old_lines.extend(old);
            file.new_lines.extend(new);
        }
    }
    files
}

/// Lines `first..=last` of one side, 1-based; None for a hunk of no lines.
type Lines = Option<(u32, u32)>;

/// `-a,b +c,d @@ ...`: the old and new line ranges (none for a count of 0).
fn hunk(header: &str) -> Option<(Lines, Lines)> {
    let mut parts = header.split_whitespace();
    let old = parts.next()?.strip_prefix('-')?;
    let new = parts.next()?.strip_prefix('+')?;
    let range = |spec: &str| -> Option<Lines> {
        let (start, count) = match spec.split_once(',') {
            Some((start, count)) => (start.parse::<u32>().ok()?, count.parse::<u32>().ok()?),
            None => (spec.parse::<u32>().ok()?, 1),
        };
        Some((count > 0).then(|| (start, start + count - 1)))
    };
    Some((range(old)?, range(new)?))
}

/// A path as git prints it, C-quoted when it holds unusual characters.
fn unquote(path: &str) -> String {
    match path.strip_prefix('"').and_then(|p| p.strip_suffix('"')) {
        Some(quoted) => quoted.replace("\\\"", "\"").replace("\\\\", "\\"),
        None => path.to_string(),
    }
}

/// Each changed file's two texts, (old, new), in the order of `files`; None
/// where a side has none (an added or deleted file), is binary or is not
/// UTF-8. Every blob comes through one `git cat-file --batch`, not a
/// process per file.
pub fn texts(
    repo: &Path,
    against: &Against,
    files: &[FileChange],
) -> Result<Vec<Sides>, ToolError> {
    let mut wanted: Vec<String> = Vec::new();
    let mut sides = Vec::new();
    for file in files {
        let old_path = file.old_path.as_deref().unwrap_or(&file.path);
        let old = (file.status != FileStatus::Added && !file.binary).then(|| {
            wanted.push(format!("{}:{old_path}", against.old_revision()));
            wanted.len() - 1
        });
        let new = match (file.status, against, file.binary) {
            (FileStatus::Deleted, _, _) | (_, _, true) => Side::None,
            (_, Against::Staged, _) => Side::Blob(push(&mut wanted, format!(":{}", file.path))),
            (_, Against::Range { to: Some(to), .. }, _) => {
                Side::Blob(push(&mut wanted, format!("{to}:{}", file.path)))
            }
            _ => Side::Disk,
        };
        sides.push((old, new));
    }
    let mut blobs = blobs(repo, &wanted)?;
    Ok(files
        .iter()
        .zip(sides)
        .map(|(file, (old, new))| {
            let old = old.and_then(|at| blobs[at].take());
            let new = match new {
                Side::None => None,
                Side::Blob(at) => blobs[at].take(),
                Side::Disk => std::fs::read(repo.join(&file.path))
                    .ok()
                    .and_then(|bytes| String::from_utf8(bytes).ok()),
            };
            (old, new)
        })
        .collect())
}

/// A changed file's old and new text.
pub type Sides = (Option<String>, Option<String>);

/// Where a file's new side is read from.
enum Side {
    None,
    /// The blob at this place of the batch.
    Blob(usize),
    Disk,
}

fn push(wanted: &mut Vec<String>, spec: String) -> usize {
    wanted.push(spec);
    wanted.len() - 1
}

/// The blobs `specs` name (`REV:path`, `:path`), through one `git cat-file
/// --batch`; None for one git does not have or that is not UTF-8.
fn blobs(repo: &Path, specs: &[String]) -> Result<Vec<Option<String>>, ToolError> {
    use std::io::Write;
    if specs.is_empty() {
        return Ok(Vec::new());
    }
    let unavailable = |error: std::io::Error| {
        ToolError::fail(
            Category::Unavailable,
            Code::E_UNAVAILABLE,
            format!("git cat-file could not run ({error})"),
        )
    };
    let mut child = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(["cat-file", "--batch"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map_err(unavailable)?;
    // a path with a line break cannot be asked in batch mode: it stays unread
    let asked: String = specs
        .iter()
        .map(|spec| {
            if spec.contains('\n') {
                "-\n".to_string()
            } else {
                format!("{spec}\n")
            }
        })
        .collect();
    let mut input = child
        .stdin
        .take()
        .ok_or_else(|| unavailable(std::io::Error::other("no stdin")))?;
    let writer = std::thread::spawn(move || input.write_all(asked.as_bytes()));
    let output = child.wait_with_output().map_err(unavailable)?;
    let _ = writer.join();
    Ok(parse_batch(&output.stdout, specs.len()))
}

/// `git cat-file --batch` output: per object `<oid> <type> <size>\n<bytes>\n`,
/// or `<spec> missing\n`.
fn parse_batch(mut output: &[u8], count: usize) -> Vec<Option<String>> {
    let mut found = Vec::with_capacity(count);
    while found.len() < count && !output.is_empty() {
        let Some(end) = output.iter().position(|b| *b == b'\n') else {
            break;
        };
        let header = String::from_utf8_lossy(&output[..end]).into_owned();
        output = &output[end + 1..];
        let size = header
            .rsplit(' ')
            .next()
            .and_then(|size| size.parse::<usize>().ok())
            .filter(|_| header.split(' ').count() == 3 && !header.ends_with(" missing"));
        match size {
            Some(size) if size <= output.len() => {
                found.push(String::from_utf8(output[..size].to_vec()).ok());
                output = output.get(size + 1..).unwrap_or_default();
            }
            _ => found.push(None),
        }
    }
    found.resize(count, None);
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_diff_gives_each_files_status_and_hunk_lines() {
        let diff = "\
diff --git a/app.py b/app.py
index 1..2 100644
--- a/app.py
+++ b/app.py
@@ -3,2 +3,0 @@ def a():
@@ -10 +8,3 @@ def b():
diff --git a/new.py b/new.py
new file mode 100644
@@ -0,0 +1,4 @@
diff --git a/old.py b/old.py
deleted file mode 100644
@@ -1,2 +0,0 @@
diff --git a/x.py b/y.py
similarity index 90%
rename from x.py
rename to y.py
@@ -5 +5 @@
diff --git a/logo.png b/logo.png
Binary files a/logo.png and b/logo.png differ
";
        let files = parse(diff);
        assert_eq!(files.len(), 5);
        assert_eq!(
            (files[0].old_lines.clone(), files[0].new_lines.clone()),
            (vec![(3, 4), (10, 10)], vec![(8, 10)])
        );
        assert_eq!(files[1].status, FileStatus::Added);
        assert_eq!(files[1].new_lines, [(1, 4)]);
        assert_eq!(files[2].status, FileStatus::Deleted);
        assert_eq!(
            (
                files[3].status,
                files[3].path.as_str(),
                files[3].old_path.as_deref()
            ),
            (FileStatus::Renamed, "y.py", Some("x.py"))
        );
        assert!(files[4].binary);
    }

    #[test]
    fn a_batch_of_blobs_reads_each_and_a_missing_one_as_none() {
        let output = b"aa blob 5\nhello\nHEAD:gone missing\nbb blob 0\n\n";
        assert_eq!(
            parse_batch(output, 3),
            [Some("hello".to_string()), None, Some(String::new())]
        );
        assert_eq!(parse_batch(b"", 2), [None, None]);
    }

    /// The pattern the spec publishes for `range` (ChangesInput).
    fn published(range: &str) -> bool {
        let schema = crate::tools::schema::json_schema::<super::super::ChangesInput>();
        let pattern = &schema["properties"]["range"]["pattern"];
        let validator =
            jsonschema::validator_for(&serde_json::json!({"type": "string", "pattern": pattern}))
                .unwrap();
        validator.is_valid(&serde_json::json!(range))
    }

    proptest::proptest! {
        #[test]
        fn the_published_pattern_takes_exactly_the_ranges_the_hub_takes(
            range in "[a-c.~^@{}/ -]{0,8}",
        ) {
            proptest::prop_assert_eq!(published(&range), parse_range(&range).is_ok(), "{:?}", range);
        }
    }

    #[test]
    fn a_range_is_refs_and_nothing_a_command_line_would_take_for_an_option() {
        assert!(matches!(
            parse_range("main..feature"),
            Ok(Against::Range { to: Some(_), .. })
        ));
        assert!(matches!(
            parse_range("HEAD~3"),
            Ok(Against::Range { to: None, .. })
        ));
        for bad in [
            "--output=/tmp/x",
            "a b",
            "a..-b",
            "",
            "..",
            "a..b..c",
            "$(rm)",
        ] {
            let error = parse_range(bad).unwrap_err().to_body("t");
            assert!(
                error.message.starts_with("range:"),
                "{bad}: {}",
                error.message
            );
        }
    }
}
