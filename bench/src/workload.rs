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
    pub content_type: Option<String>,
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
        let body = match (&self.request.body_file, &self.request.body_text) {
            (Some(file), _) => {
                let path = fixtures.join("benchmarks").join(file);
                std::fs::read(&path).map_err(|e| format!("{}: cannot read {}: {e}", self.name, path.display()))?
            }
            (None, Some(text)) => text.clone().into_bytes(),
            (None, None) => Vec::new(),
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
