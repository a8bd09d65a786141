//! Workloads as fixtures (fixtures/benchmarks/workloads.json): the route each framework serves
//! and the request the load generator sends.

use ferrule_core::RouteSpec;
use serde::Deserialize;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Deserialize)]
pub struct Workload {
    pub name: String,
    pub description: String,
    pub route: RouteSpec,
    pub request: WorkloadRequest,
    /// Allowed `[min, max]` request body size; a payload outside it is refused.
    pub request_body_bytes: [usize; 2],
    /// One of the 14 workloads of the reference framework's published Rust/Python ratios.
    #[serde(default)]
    pub reference: bool,
}

#[derive(Debug, Clone, Deserialize)]
pub struct WorkloadRequest {
    pub method: String,
    pub path: String,
    #[serde(default)]
    pub body_file: Option<String>,
    #[serde(default)]
    pub body_text: Option<String>,
    #[serde(default)]
    pub body_multipart: Option<Multipart>,
    #[serde(default)]
    pub content_type: Option<String>,
}

/// A multipart/form-data body the harness builds: text parts, and file parts of `size`
/// deterministic pseudo-random bytes (the same bytes on every run and machine).
#[derive(Debug, Clone, Deserialize)]
pub struct Multipart {
    pub boundary: String,
    pub parts: Vec<Part>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Part {
    pub name: String,
    #[serde(default)]
    pub text: Option<String>,
    #[serde(default)]
    pub filename: Option<String>,
    #[serde(default)]
    pub content_type: Option<String>,
    #[serde(default)]
    pub size: usize,
}

impl Multipart {
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for part in &self.parts {
            out.extend_from_slice(format!("--{}\r\n", self.boundary).as_bytes());
            match &part.filename {
                Some(filename) => out.extend_from_slice(
                    format!("Content-Disposition: form-data; name=\"{}\"; filename=\"{filename}\"\r\n", part.name).as_bytes(),
                ),
                None => out.extend_from_slice(format!("Content-Disposition: form-data; name=\"{}\"\r\n", part.name).as_bytes()),
            }
            if let Some(content_type) = &part.content_type {
                out.extend_from_slice(format!("Content-Type: {content_type}\r\n").as_bytes());
            }
            out.extend_from_slice(b"\r\n");
            match &part.text {
                Some(text) => out.extend_from_slice(text.as_bytes()),
                None => out.extend(pseudo_random_bytes(part.size)),
            }
            out.extend_from_slice(b"\r\n");
        }
        out.extend_from_slice(format!("--{}--\r\n", self.boundary).as_bytes());
        out
    }
}

/// xorshift64: incompressible-looking bytes, identical everywhere.
fn pseudo_random_bytes(len: usize) -> impl Iterator<Item = u8> {
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15 ^ len as u64;
    (0..len).map(move |_| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 24) as u8
    })
}

#[derive(Debug, Deserialize)]
struct WorkloadFile {
    workloads: Vec<Workload>,
}

pub fn default_fixtures_dir() -> PathBuf {
    std::env::var_os("FERRULE_FIXTURES_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fixtures"))
}

pub fn load(fixtures: &Path) -> Result<Vec<Workload>, String> {
    let path = fixtures.join("benchmarks/workloads.json");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let file: WorkloadFile = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(file.workloads)
}

impl Workload {
    /// The request body bytes, checked against the workload's declared size.
    pub fn body(&self, fixtures: &Path) -> Result<Vec<u8>, String> {
        let request = &self.request;
        let body = match (&request.body_file, &request.body_text, &request.body_multipart) {
            (Some(file), _, _) => {
                let path = fixtures.join("benchmarks").join(file);
                std::fs::read(&path).map_err(|e| format!("{}: cannot read {}: {e}", self.name, path.display()))?
            }
            (None, Some(text), _) => text.clone().into_bytes(),
            (None, None, Some(multipart)) => multipart.encode(),
            (None, None, None) => Vec::new(),
        };
        let [min, max] = self.request_body_bytes;
        if body.len() < min || body.len() > max {
            return Err(format!(
                "{}: request body is {} bytes, outside its definition [{min}, {max}]; fix the payload",
                self.name,
                body.len()
            ));
        }
        Ok(body)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_workload_payload_matches_its_definition() {
        let fixtures = default_fixtures_dir();
        let workloads = load(&fixtures).unwrap();
        assert!(workloads.len() >= 19, "14 reference workloads, 3 multipart, mixed, unvalidated");
        assert_eq!(workloads.iter().filter(|w| w.reference).count(), 14);
        for w in &workloads {
            w.body(&fixtures).unwrap_or_else(|e| panic!("{e}"));
        }
    }

    #[test]
    fn multipart_bodies_are_deterministic_and_sized() {
        let fixtures = default_fixtures_dir();
        let workloads = load(&fixtures).unwrap();
        let large = workloads.iter().find(|w| w.name == "multipart-large").unwrap();
        let a = large.body(&fixtures).unwrap();
        assert_eq!(a, large.body(&fixtures).unwrap());
        assert!(a.len() > 100 * 1024);
    }
}
