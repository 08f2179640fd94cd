//! The documentation as a user reads it: what it cites must exist in the repository.

use std::fs;
use std::path::{Path, PathBuf};

use crate::support::harness::ROOT;

/// Every file under `dir` (recursively), skipping build output and installed packages.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let Ok(entries) = fs::read_dir(dir) else {
        return found;
    };
    for entry in entries {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            // Built or installed trees (`npm ci` fills tests/mcp-server/node_modules)
            // hold other projects' pages, not the repository's.
            if !["target", "workspaces", "node_modules"]
                .iter()
                .any(|skipped| path.ends_with(skipped))
            {
                found.extend(files_under(&path));
            }
        } else {
            found.push(path);
        }
    }
    found.sort();
    found
}

/// The pages and files a user reads: README, docs (but the pages written for implementers
/// who hold the specification: decisions.md, conformance.md and docs/conformance/), the examples, mock-llm's
/// README and the published schemas (editors show their descriptions).
fn user_facing_files() -> Vec<PathBuf> {
    let root = Path::new(ROOT);
    let mut files = vec![
        root.join("README.md"),
        root.join("crates/mock-llm/README.md"),
    ];
    files.extend(files_under(&root.join("docs")).into_iter().filter(|path| {
        !path.ends_with("decisions.md")
            && !path.ends_with("conformance.md")
            && !path.starts_with(Path::new(ROOT).join("docs/conformance"))
    }));
    files.extend(files_under(&root.join("examples")));
    files.extend(files_under(&root.join("schemas")));
    files
}

// Regression for issue 12 item 15: docs cited "seed 00x §…" sections and the
// missing-context.yaml error cited docs/architecture/v1.9-unified-agent-structure.md,
// none of which a user of this repository has.
#[test]
fn user_facing_text_cites_only_what_the_repository_has() {
    let mut problems = Vec::new();
    for path in user_facing_files() {
        let Ok(text) = fs::read_to_string(&path) else {
            continue;
        };
        for (n, line) in text.lines().enumerate() {
            let lower = line.to_lowercase();
            if lower.contains("seed 00") || lower.contains("docs/architecture") {
                problems.push(format!("{}:{}: {line}", path.display(), n + 1));
            }
        }
    }
    // Messages the engine prints: string literals, not comments.
    let sources = fs::read_dir(Path::new(ROOT).join("crates"))
        .expect("list crates/")
        .flat_map(|krate| files_under(&krate.expect("a crate").path().join("src")));
    for path in sources {
        let text = fs::read_to_string(&path).unwrap_or_default();
        for (n, line) in text.lines().enumerate() {
            let code = line.trim_start();
            if !code.starts_with("//") && code.contains("docs/architecture") {
                problems.push(format!("{}:{}: {line}", path.display(), n + 1));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

// Regression for issue 12 item 15: every relative link of the Markdown pages leads to a
// file of the repository.
#[test]
fn every_relative_link_of_the_pages_leads_to_a_file() {
    let mut pages: Vec<PathBuf> = files_under(Path::new(ROOT))
        .into_iter()
        .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
        .filter(|path| !path.starts_with(format!("{ROOT}/target")))
        .collect();
    pages.sort();
    let mut broken = Vec::new();
    for page in pages {
        let text = fs::read_to_string(&page).expect("read page");
        for (start, _) in text.match_indices("](") {
            let rest = &text[start + 2..];
            let Some(end) = rest.find(')') else { continue };
            let target = &rest[..end];
            let file = target.split('#').next().unwrap_or("");
            if file.is_empty() || file.contains("://") || file.contains(' ') {
                continue;
            }
            let dir = page.parent().expect("a page is in a directory");
            if !dir.join(file).exists() {
                broken.push(format!("{}: {target}", page.display()));
            }
        }
    }
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}
