//! The engine's imports run one way (docs/architecture.md): model <- the rules
//! (regulate, policy, interference) <- analysis and sim, siblings <- optimize
//! <- generate <- study; import (other tools' models) names only model. A
//! module naming a layer above its own (or its sibling) by path fails here,
//! so a back-edge cannot come back unnoticed.

use std::fs;
use std::path::{Path, PathBuf};

/// Each layer and the modules it must never name.
const RULES: &[(&str, &[&str])] = &[
    ("model", &["regulate", "policy", "interference", "analysis", "sim", "optimize", "generate", "study", "import"]),
    ("import", &["regulate", "policy", "interference", "analysis", "sim", "optimize", "generate", "study"]),
    ("regulate", &["analysis", "sim", "optimize", "generate", "study"]),
    ("policy", &["analysis", "sim", "optimize", "generate", "study"]),
    ("interference", &["analysis", "sim", "optimize", "generate", "study"]),
    ("analysis", &["sim", "optimize", "generate", "study"]),
    ("sim", &["analysis", "optimize", "generate", "study"]),
    ("optimize", &["generate", "study"]),
    ("generate", &["study"]),
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `crate::NAME` occurrences outside comments, as (line number, module named).
fn crate_paths(text: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(at) = rest.find("crate::") {
            let after = &rest[at + "crate::".len()..];
            let name: String = after.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            found.push((i + 1, name));
            rest = after;
        }
    }
    found
}

#[test]
fn the_engine_imports_run_one_way() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut violations = Vec::new();
    let mut walked = 0;
    for (layer, forbidden) in RULES {
        let mut files = Vec::new();
        rust_files(&src.join(layer), &mut files);
        assert!(!files.is_empty(), "no sources under src/{layer}");
        for file in files {
            walked += 1;
            let text = fs::read_to_string(&file).unwrap();
            for (line, name) in crate_paths(&text) {
                if forbidden.contains(&name.as_str()) {
                    violations.push(format!("{}:{line}: {layer} names crate::{name}", file.display()));
                }
            }
        }
    }
    assert!(walked > 20, "walked only {walked} files");
    assert!(violations.is_empty(), "back-edges:\n{}", violations.join("\n"));
}

#[test]
fn the_scanner_sees_paths_in_code_and_not_in_comments() {
    let text = "use crate::sim::sched::SchedulerKind;\n// crate::analysis in a comment\nlet x = crate::policy::a(crate::model::B);";
    let names: Vec<String> = crate_paths(text).into_iter().map(|(_, n)| n).collect();
    assert_eq!(names, ["sim", "policy", "model"]);
}
