//! The directory that static-file checks serve, and the paths they ask it for
//! (`fixtures/traversal.json`): the reliability probe `traversal` writes them on a socket to
//! every binding's server, and the fuzz target `static` starts from them.

use serde::Deserialize;
use std::path::{Path, PathBuf};

#[derive(Debug, Deserialize)]
pub struct Traversal {
    #[allow(dead_code)] // documentation for readers of the file
    pub description: String,
    /// What `secret.txt` (beside the directory), `.env` and `link.txt` hold: never to be sent.
    pub secret: String,
    /// Paths answered with a file: `[path, its content]`.
    pub served: Vec<(String, String)>,
    /// Paths that must be refused (404 or 400), the secret nowhere in the answer.
    pub refused: Vec<String>,
}

impl Traversal {
    pub fn load(fixtures: &Path) -> Result<Traversal, String> {
        let path = fixtures.join("traversal.json");
        let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Makes, under `root` (emptied first), `public/` — the directory to serve — with its
    /// files, and the secret beside it; returns `public/`.
    pub fn make_tree(&self, root: &Path) -> std::io::Result<PathBuf> {
        let _ = std::fs::remove_dir_all(root);
        let public = root.join("public");
        std::fs::create_dir_all(public.join("sub"))?;
        std::fs::write(public.join("ok.txt"), "probe-ok")?;
        std::fs::write(public.join("sub/inner.txt"), "probe-inner")?;
        std::fs::write(public.join(".env"), &self.secret)?;
        std::fs::write(root.join("secret.txt"), &self.secret)?;
        std::os::unix::fs::symlink(root.join("secret.txt"), public.join("link.txt"))?;
        Ok(public)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tree_holds_what_the_paths_ask_for() {
        let traversal = Traversal::load(&crate::fixtures_dir()).unwrap();
        let base = std::env::var_os("TEST_TMPDIR").map(PathBuf::from).unwrap_or_else(std::env::temp_dir);
        let root = base.join(format!("ferrule-traversal-{}", std::process::id()));
        let public = traversal.make_tree(&root).unwrap();
        for (path, content) in &traversal.served {
            let relative = percent_decoded(path.strip_prefix("/files/").unwrap());
            assert_eq!(&std::fs::read_to_string(public.join(relative)).unwrap(), content, "{path}");
        }
        assert_eq!(std::fs::read_to_string(public.join("link.txt")).unwrap(), traversal.secret, "the symlink leads out");
        assert!(traversal.refused.len() >= 15);
        std::fs::remove_dir_all(root).unwrap();
    }

    fn percent_decoded(text: &str) -> String {
        let (bytes, mut out, mut i) = (text.as_bytes(), Vec::new(), 0);
        while i < bytes.len() {
            match (bytes[i], text.get(i + 1..i + 3).and_then(|hex| u8::from_str_radix(hex, 16).ok())) {
                (b'%', Some(byte)) => {
                    out.push(byte);
                    i += 3;
                }
                (byte, _) => {
                    out.push(byte);
                    i += 1;
                }
            }
        }
        String::from_utf8(out).unwrap()
    }
}
