//! The `traversal` probe: a served directory's neighbours stay unreachable whatever the path's
//! encoding. The harness makes the directory of `fixtures/traversal.json`; every Ferrule server
//! under test serves it at `/files` (bench/src/generate/faults.rs). The requests are written on
//! the socket byte for byte, so no client library normalises the paths on the way.

use super::clients::{read_all, status_of, Verdict};
use ferrule_conformance::traversal::Traversal;
use std::path::{Path, PathBuf};

/// The probe's directory, in a scratch place removed on drop.
pub struct Tree {
    root: PathBuf,
    public: PathBuf,
    pub paths: Traversal,
}

impl Tree {
    pub fn create(fixtures: &Path) -> Result<Tree, String> {
        let paths = Traversal::load(fixtures)?;
        let base = std::env::var_os("TEST_TMPDIR").map(PathBuf::from).unwrap_or_else(std::env::temp_dir);
        let root = base.join(format!("ferrule-probe-files-{}", std::process::id()));
        let public = paths.make_tree(&root).map_err(|e| format!("cannot make the traversal probe's files in {}: {e}", root.display()))?;
        Ok(Tree { root, public, paths })
    }

    pub fn served(&self) -> &Path {
        &self.public
    }
}

impl Drop for Tree {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

async fn get(port: u16, path: &str) -> (Option<u16>, String) {
    let request = format!("GET {path} HTTP/1.1\r\nHost: probe\r\nConnection: close\r\n\r\n");
    match read_all(port, request.as_bytes()).await {
        Ok(answer) => (status_of(&answer), String::from_utf8_lossy(&answer).into_owned()),
        Err(e) => (None, e.to_string()),
    }
}

pub async fn traversal(port: u16, paths: &Traversal) -> Verdict {
    let mut wrong = Vec::new();
    for (path, expected) in &paths.served {
        match get(port, path).await {
            (Some(200), body) if body.ends_with(expected.as_str()) => {}
            (status, _) => wrong.push(format!("{path}: {status:?}, not the file")),
        }
    }
    let mut refused = 0;
    for path in &paths.refused {
        let (status, answer) = get(port, path).await;
        if answer.contains(&paths.secret) {
            wrong.push(format!("{path}: THE SECRET WAS SENT ({status:?})"));
        } else if matches!(status, Some(400 | 404)) {
            refused += 1;
        } else {
            wrong.push(format!("{path}: {status:?}"));
        }
    }
    let detail = format!("{refused} of {} climbing or hidden paths refused, {} files inside served", paths.refused.len(), paths.served.len());
    if wrong.is_empty() {
        (true, detail)
    } else {
        (false, format!("{detail}; {}", wrong.join("; ")))
    }
}
