//! Handlers in the FastAPI style, shared by the Ferrule (Python) and FastAPI generators: the
//! two APIs agree on `Query`/`Form`/`File` markers, `UploadFile` and typed path parameters,
//! and differ only in their model classes (TypedDict vs pydantic) and path syntax.

use super::code::Code;
use super::python_types::{constraint_args, literal, Types};
use super::Route;
use ferrule_core::params::ScalarKind;
use ferrule_core::BodyKind;

pub struct Options {
    pub asynchronous: bool,
    /// Keep Ferrule's typed template (`{n:int}`) instead of a plain `{n}`.
    pub typed_template: bool,
}

pub fn scalar(kind: ScalarKind) -> &'static str {
    match kind {
        ScalarKind::Int => "int",
        ScalarKind::Float => "float",
        ScalarKind::Bool => "bool",
        ScalarKind::Uuid => "UUID",
        ScalarKind::Date => "date",
        ScalarKind::DateTime => "datetime",
        ScalarKind::Str | ScalarKind::Binary => "str",
        // No workload declares one; the generated apps import it.
        ScalarKind::Decimal => "Decimal",
        // No workload declares a union; written as the core reads one.
        ScalarKind::Union { int, float, bool } => match (int, float, bool) {
            (true, false, true) => "int | bool",
            (true, true, false) => "int | float",
            (false, true, true) => "float | bool",
            _ => "int | float | bool",
        },
    }
}

struct Param {
    text: String,
    has_default: bool,
}

/// One parameter declared with a marker: `name: Annotated[int, Query(ge=1)] = 10`.
fn marked(types: &mut Types, name: &str, schema: &serde_json::Value, required: bool, marker: &str, hint: &str) -> Param {
    let base = types.base(schema, hint);
    let args = constraint_args(schema);
    let args = args.join(", ");
    // The marker stays outermost: FastAPI does not look for it inside `Optional[...]`, and
    // would take an unmarked `list[str]` for a second body parameter.
    match (schema.get("default"), required) {
        (Some(default), _) => Param { text: format!("{name}: Annotated[{base}, {marker}({args})] = {}", literal(default)), has_default: true },
        (None, false) => Param { text: format!("{name}: Annotated[Optional[{base}], {marker}({args})] = None"), has_default: true },
        (None, true) => Param { text: format!("{name}: Annotated[{base}, {marker}({args})]"), has_default: false },
    }
}

pub fn handlers(code: &mut Code, types: &mut Types, routes: &[Route<'_>], options: &Options) {
    for route in routes {
        let mut params: Vec<Param> = Vec::new();
        let mut echo: Vec<String> = Vec::new();
        if !route.path_params.is_empty() {
            for (name, kind) in &route.path_params {
                params.push(Param { text: format!("{name}: {}", scalar(*kind)), has_default: false });
            }
            let values: Vec<String> = route.path_params.iter().map(|(n, _)| format!("{n:?}: {n}")).collect();
            echo.push(format!("\"path\": {{{}}}", values.join(", ")));
        }
        if !route.query.is_empty() {
            for spec in route.query {
                params.push(marked(types, &spec.name, &spec.schema, spec.is_required(), "Query", &spec.name));
            }
            let values: Vec<String> = route.query.iter().map(|p| format!("{:?}: {}", p.name, p.name)).collect();
            echo.push(format!("\"query\": {{{}}}", values.join(", ")));
        }
        match (route.body_kind(), route.body_schema()) {
            (Some(BodyKind::Json), Some(schema)) => {
                let class = types.base(schema, &format!("{}_body", route.ident));
                params.push(Param { text: format!("body: {class}"), has_default: false });
                echo.push("\"body\": body".into());
            }
            (Some(BodyKind::Json), None) => {
                params.push(Param { text: "body: Annotated[Any, Body()]".into(), has_default: false });
                echo.push("\"body\": body".into());
            }
            (Some(BodyKind::Form | BodyKind::Multipart), Some(schema)) => {
                let mut values = Vec::new();
                for (field, sub, required) in super::fields(schema) {
                    if sub.get("format").and_then(|f| f.as_str()) == Some("binary") {
                        params.push(Param { text: format!("{field}: Annotated[UploadFile, File()]"), has_default: false });
                        values.push(format!(
                            "{field:?}: {{\"filename\": {field}.filename, \"content_type\": {field}.content_type, \"size\": {field}.size}}"
                        ));
                    } else {
                        params.push(marked(types, field, sub, required, "Form", field));
                        values.push(format!("{field:?}: {field}"));
                    }
                }
                echo.push(format!("\"body\": {{{}}}", values.join(", ")));
            }
            (Some(other), _) => panic!("{}: no typed-Python echo for {other:?} bodies", route.ident),
            (None, _) => {}
        }
        // Python wants parameters without defaults first; the echo keeps the declared order.
        params.sort_by_key(|p| p.has_default);
        let path = if options.typed_template { route.template.to_owned() } else { route.plain_path(true) };
        code.blank();
        code.line(format!("@app.{}({path:?})", route.method.to_ascii_lowercase()));
        let signature = params.iter().map(|p| p.text.as_str()).collect::<Vec<_>>().join(", ");
        let def = if options.asynchronous { "async def" } else { "def" };
        // A declared response is the return annotation: FastAPI's response_model and Ferrule's
        // both filter the echo by it.
        let returns = match route.response {
            Some(schema) => format!(" -> {}", types.base(schema, &format!("{}_response", route.ident))),
            None => String::new(),
        };
        code.line(format!("{def} {}({signature}){returns}:", route.ident));
        code.indent().line(format!("return {{{}}}", echo.join(", "))).dedent();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use super::super::python_types::Style;
    use serde_json::json;

    #[test]
    fn optional_parameters_keep_their_marker_outermost() {
        let mut types = Types::new(Style::Pydantic);
        let schema = json!({"type": "array", "items": {"type": "string"}, "maxItems": 5});
        let param = marked(&mut types, "tags", &schema, false, "Query", "tags");
        assert_eq!(param.text, "tags: Annotated[Optional[list[str]], Query(max_length=5)] = None");
        assert!(param.has_default);
    }
}
