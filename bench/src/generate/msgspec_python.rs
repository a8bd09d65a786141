//! Pieces shared by the generators whose frameworks do not validate by themselves (Robyn,
//! Granian's raw RSGI): parameters are collected as text and converted by msgspec into typed
//! Structs with the workload's constraints (`msgspec.convert(..., strict=False)` turns "2"
//! into 2), bodies are decoded by msgspec straight into Structs.

use super::code::Code;
use super::python_types::{constraint_args, literal, Types};
use super::typed_python::scalar;
use super::Route;
use serde_json::Value as Json;

/// A Struct for the path or query parameters of a route; returns its name.
pub fn params_struct(types: &mut Types, code: &mut Code, name: &str, params: &[(String, Json, bool)]) -> String {
    code.blank();
    code.line(format!("class {name}(msgspec.Struct, kw_only=True):"));
    code.indent();
    for (field, schema, required) in params {
        let base = types.base(schema, field);
        let args = constraint_args(schema);
        let ann = if args.is_empty() { base } else { format!("Annotated[{base}, Meta({})]", args.join(", ")) };
        match (schema.get("default"), required) {
            (Some(default), _) => code.line(format!("{field}: {ann} = {}", literal(default))),
            (None, false) => code.line(format!("{field}: Optional[{ann}] = None")),
            (None, true) => code.line(format!("{field}: {ann}")),
        };
    }
    code.dedent();
    name.to_owned()
}

/// `(name, schema, required)` for a route's path parameters.
pub fn path_fields(route: &Route<'_>) -> Vec<(String, Json, bool)> {
    route
        .path_params
        .iter()
        .map(|(name, kind)| {
            let schema = match scalar(*kind) {
                "int" => serde_json::json!({"type": "integer"}),
                "float" => serde_json::json!({"type": "number"}),
                "bool" => serde_json::json!({"type": "boolean"}),
                "UUID" => serde_json::json!({"type": "string", "format": "uuid"}),
                "date" => serde_json::json!({"type": "string", "format": "date"}),
                "datetime" => serde_json::json!({"type": "string", "format": "date-time"}),
                _ => serde_json::json!({"type": "string"}),
            };
            (name.clone(), schema, true)
        })
        .collect()
}

pub fn query_fields(route: &Route<'_>) -> Vec<(String, Json, bool)> {
    route.query.iter().map(|p| (p.name.clone(), p.schema.clone(), p.is_required())).collect()
}

/// Names of the query parameters that collect repeated keys.
pub fn array_params(route: &Route<'_>) -> Vec<String> {
    route.query.iter().filter(|p| p.schema.get("type").and_then(Json::as_str) == Some("array")).map(|p| p.name.clone()).collect()
}

pub fn class_prefix(route: &Route<'_>) -> String {
    route.ident.split('_').map(|p| p[..1].to_ascii_uppercase() + &p[1..]).collect()
}

pub const IMPORTS: &str = "import sys
from datetime import date, datetime
from decimal import Decimal
from typing import Annotated, Any, Literal, Optional
from urllib.parse import parse_qs, parse_qsl, unquote, unquote_plus
from uuid import UUID

import msgspec
from msgspec import Meta";
