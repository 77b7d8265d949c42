//! The repository cites nothing outside it (issue 24): a paper is cited by its
//! name and section (`mcti-task-isolation §4 rule 5`), a fact the papers only
//! cite by `docs/references.md` and its section. A file beside the repository
//! (`../shared/...`, the notes `shared/notes/...` or `notes/<name>.md`, a
//! paper's text `papers/<name>.txt`, the design `DESIGN.md`) is not there for
//! a reader of a clone, so no file of README.md, docs/, examples/, crates/,
//! include/, python/ or tests/ may name one.

use std::fs;
use std::path::{Path, PathBuf};

const WALKED: [&str; 7] = ["README.md", "docs", "examples", "crates", "include", "python", "tests"];
/// Build output and environments, not sources.
const SKIPPED_DIRS: [&str; 4] = ["target", ".venv", "__pycache__", "node_modules"];

const THIS_FILE: &str = "crates/criticore/tests/no_outside_citations.rs";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Characters of a file name in a cited path.
fn name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')
}

/// True when the text before a match ends a word, so `release-notes/x.md` or
/// `docs/papers/x.txt` (paths inside some other folder) are not taken for the
/// notes or the papers.
fn starts_token(before: &str) -> bool {
    before.chars().next_back().is_none_or(|c| !(name_char(c) || c == '/'))
}

/// Every citation of a file outside the repository in `text`: (line, what).
fn citations(text: &str) -> Vec<(usize, String)> {
    // (folder, extension): `notes/<name>.md`, `papers/<name>.txt`.
    let folders = [("notes/", ".md"), ("papers/", ".txt")];
    let mut found = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        for needle in ["../shared/", "shared/notes"] {
            if line.contains(needle) {
                found.push((n, needle.to_string()));
            }
        }
        for (at, _) in line.match_indices("DESIGN.md") {
            if starts_token(&line[..at]) {
                found.push((n, "DESIGN.md".to_string()));
            }
        }
        for (folder, ext) in folders {
            for (at, _) in line.match_indices(folder) {
                let rest = &line[at + folder.len()..];
                let name: String = rest.chars().take_while(|&c| name_char(c)).collect();
                if starts_token(&line[..at]) && name.len() > ext.len() && name.ends_with(ext) {
                    found.push((n, format!("{folder}{name}")));
                }
            }
        }
    }
    found
}

/// Every text file under `path` (or `path` itself), build output skipped.
fn walk(path: &Path, files: &mut Vec<PathBuf>) {
    if path.is_file() {
        files.push(path.to_path_buf());
        return;
    }
    let mut entries: Vec<PathBuf> = fs::read_dir(path).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for p in entries {
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if p.is_dir() && (SKIPPED_DIRS.contains(&name.as_str()) || name.starts_with('.')) {
            continue;
        }
        walk(&p, files);
    }
}

#[test]
fn the_scanner_finds_each_kind_of_citation() {
    let text = [
        "plain line",
        "see ../shared/DESIGN.md here",
        "(shared/notes/mc2-analysis-reference.md)",
        "(notes/runtime-anchors.md §2)",
        "in papers/mcti-task-isolation.txt §4",
        "DESIGN.md \"Simulator\"",
        "docs/references.md, Runtime §2; mc2-hardware-management §2",
        "release-notes/x.md, docs/papers/x.txt, notes/, papers/.txt, MY_DESIGN.md",
    ]
    .join("\n");
    let got: Vec<(usize, String)> = citations(&text);
    let want: Vec<(usize, String)> = vec![
        (2, "../shared/".into()),
        (3, "shared/notes".into()),
        (4, "notes/runtime-anchors.md".into()),
        (5, "papers/mcti-task-isolation.txt".into()),
        (6, "DESIGN.md".into()),
    ];
    assert_eq!(got, want);
}

#[test]
fn no_file_cites_outside_the_repository() {
    let root = root();
    let mut files = Vec::new();
    for top in WALKED {
        walk(&root.join(top), &mut files);
    }
    // The walk reached the sources (an empty walk would pass vacuously).
    let has = |rel: &str| files.iter().any(|f| f.ends_with(rel));
    assert!(has("docs/references.md") && has("crates/criticore/src/lib.rs") && has("include/criticore.h") && has(THIS_FILE));
    let mut bad = Vec::new();
    for f in &files {
        // Images and other binary files are not text and cite nothing.
        let Ok(text) = fs::read_to_string(f) else { continue };
        let rel = f.strip_prefix(&root).unwrap().display().to_string();
        // This file names the patterns it looks for.
        if rel == THIS_FILE {
            continue;
        }
        for (line, what) in citations(&text) {
            bad.push(format!("{rel}:{line}: {what}"));
        }
    }
    assert!(
        bad.is_empty(),
        "{} citation(s) of files outside the repository (cite the paper by name and section, or docs/references.md):\n{}",
        bad.len(),
        bad.join("\n")
    );
}
