//! JSON Schema → Python type annotations and model classes, in the three styles the Python
//! servers use: TypedDict + `ferrule.Field` (Ferrule), pydantic `BaseModel` + `Field`
//! (FastAPI), msgspec `Struct` + `Meta` (Spikard, Robyn, Granian). Same constraints in each,
//! so every framework validates the same things.

use super::code::Code;
use serde_json::Value as Json;

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Style {
    Ferrule,
    Pydantic,
    Msgspec,
}

pub struct Types {
    style: Style,
    /// Class definitions, dependencies first.
    classes: Vec<String>,
}

/// JSON Schema keyword → the keyword argument all three libraries use for it.
const CONSTRAINTS: &[(&str, &str)] = &[
    ("minimum", "ge"),
    ("maximum", "le"),
    ("exclusiveMinimum", "gt"),
    ("exclusiveMaximum", "lt"),
    ("multipleOf", "multiple_of"),
    ("minLength", "min_length"),
    ("maxLength", "max_length"),
    ("minItems", "min_length"),
    ("maxItems", "max_length"),
    ("pattern", "pattern"),
];

/// A JSON value as a Python literal.
pub fn literal(value: &Json) -> String {
    match value {
        Json::Null => "None".into(),
        Json::Bool(true) => "True".into(),
        Json::Bool(false) => "False".into(),
        Json::Number(n) => n.to_string(),
        Json::String(s) => format!("{s:?}"),
        Json::Array(items) => format!("[{}]", items.iter().map(literal).collect::<Vec<_>>().join(", ")),
        Json::Object(map) => format!("{{{}}}", map.iter().map(|(k, v)| format!("{k:?}: {}", literal(v))).collect::<Vec<_>>().join(", ")),
    }
}

/// `ge=1, max_length=10` for the schema's constraints.
pub fn constraint_args(schema: &Json) -> Vec<String> {
    CONSTRAINTS
        .iter()
        .filter_map(|(keyword, arg)| schema.get(*keyword).map(|v| format!("{arg}={}", literal(v))))
        .collect()
}

fn class_name(hint: &str) -> String {
    hint.split(['_', '-', ' '])
        .map(|part| {
            let mut chars = part.chars();
            chars.next().map(|c| c.to_ascii_uppercase().to_string() + chars.as_str()).unwrap_or_default()
        })
        .collect()
}

impl Types {
    pub fn new(style: Style) -> Self {
        Types { style, classes: Vec::new() }
    }

    /// The type without constraints: `int`, `UUID`, `list[str]`, `Literal["a", "b"]`, or a
    /// class generated for an object schema (named from `hint`).
    pub fn base(&mut self, schema: &Json, hint: &str) -> String {
        if let Some(values) = schema.get("enum").and_then(Json::as_array) {
            return format!("Literal[{}]", values.iter().map(literal).collect::<Vec<_>>().join(", "));
        }
        match schema.get("type").and_then(Json::as_str) {
            Some("integer") => "int".into(),
            Some("number") => "float".into(),
            Some("boolean") => "bool".into(),
            Some("string") => match schema.get("format").and_then(Json::as_str) {
                Some("uuid") => "UUID".into(),
                Some("date") => "date".into(),
                Some("date-time") => "datetime".into(),
                Some("binary") => "UploadFile".into(),
                _ => "str".into(),
            },
            Some("array") => {
                let item = self.annotated(&schema["items"], &format!("{hint}_item"));
                format!("list[{item}]")
            }
            Some("object") if schema.get("properties").is_some() => self.class(schema, hint),
            Some("object") => "dict".into(),
            _ => "Any".into(),
        }
    }

    /// The type with its constraints: `Annotated[int, Field(ge=1)]`.
    pub fn annotated(&mut self, schema: &Json, hint: &str) -> String {
        let base = self.base(schema, hint);
        let args = constraint_args(schema);
        if args.is_empty() {
            return base;
        }
        let marker = match self.style {
            Style::Ferrule | Style::Pydantic => "Field",
            Style::Msgspec => "Meta",
        };
        format!("Annotated[{base}, {marker}({})]", args.join(", "))
    }

    /// A model class for an object schema; returns its name.
    pub fn class(&mut self, schema: &Json, hint: &str) -> String {
        let name = class_name(hint);
        let mut code = Code::default();
        code.line(match self.style {
            Style::Ferrule => format!("class {name}(TypedDict):"),
            Style::Pydantic => format!("class {name}(BaseModel):"),
            Style::Msgspec => format!("class {name}(msgspec.Struct, kw_only=True, omit_defaults=True):"),
        });
        code.indent();
        let fields = super::fields(schema);
        if fields.is_empty() {
            code.line("pass");
        }
        for (field, sub, required) in fields {
            let ann = self.annotated(sub, &format!("{hint}_{field}"));
            match (required, self.style) {
                (true, _) => code.line(format!("{field}: {ann}")),
                (false, Style::Ferrule) => code.line(format!("{field}: NotRequired[{ann}]")),
                (false, _) => code.line(format!("{field}: Optional[{ann}] = None")),
            };
        }
        self.classes.push(code.finish());
        name
    }

    pub fn write_classes(&self, code: &mut Code) {
        for class in &self.classes {
            code.blank();
            code.lines(class);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn constraints_and_optional_fields_per_style() {
        let schema = json!({"type": "object", "required": ["id"], "properties": {
            "id": {"type": "integer", "minimum": 1},
            "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 3}}});
        let mut ferrule = Types::new(Style::Ferrule);
        assert_eq!(ferrule.base(&schema, "item"), "Item");
        let class = &ferrule.classes[0];
        assert!(class.contains("id: Annotated[int, Field(ge=1)]"), "{class}");
        assert!(class.contains("tags: NotRequired[Annotated[list[str], Field(max_length=3)]]"), "{class}");
        let mut msgspec = Types::new(Style::Msgspec);
        msgspec.base(&schema, "item");
        assert!(msgspec.classes[0].contains("tags: Optional[Annotated[list[str], Meta(max_length=3)]] = None"));
    }

    #[test]
    fn enums_are_literals() {
        let mut types = Types::new(Style::Pydantic);
        assert_eq!(types.base(&json!({"enum": ["asc", "desc"]}), "sort"), "Literal[\"asc\", \"desc\"]");
    }
}
