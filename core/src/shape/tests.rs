use super::*;
use serde_json::{json, Value as Json};

fn shaped(schema: Json, mut value: Json) -> Json {
    let shape = CompiledShape::compile(&schema).unwrap();
    filter_json(&mut value, shape.root());
    value
}

#[test]
fn undeclared_properties_are_left_out_at_every_depth() {
    let schema = json!({
        "type": "object",
        "properties": {"id": {"type": "integer"}, "friends": {"type": "array", "items": {"type": "object", "properties": {"name": {}}}}},
    });
    let value = json!({"id": 1, "password": "x", "friends": [{"name": "a", "password": "y"}, 3]});
    assert_eq!(shaped(schema, value), json!({"id": 1, "friends": [{"name": "a"}, 3]}));
}

#[test]
fn additional_and_pattern_properties_let_keys_through() {
    let open = json!({"properties": {"id": {}}, "additionalProperties": true});
    assert_eq!(shaped(open, json!({"id": 1, "extra": 2})), json!({"id": 1, "extra": 2}));
    let mapping = json!({"type": "object", "additionalProperties": {"properties": {"name": {}}}});
    assert_eq!(shaped(mapping, json!({"a": {"name": "x", "secret": 1}})), json!({"a": {"name": "x"}}));
    let patterned = json!({"properties": {"id": {}}, "patternProperties": {"^x-": {}}});
    assert_eq!(shaped(patterned, json!({"id": 1, "x-trace": 2, "y": 3})), json!({"id": 1, "x-trace": 2}));
    let closed = json!({"type": "object", "additionalProperties": false});
    assert_eq!(shaped(closed, json!({"a": 1})), json!({}));
}

#[test]
fn an_object_schema_without_properties_keeps_everything() {
    assert_eq!(shaped(json!({"type": "object"}), json!({"a": {"b": 1}})), json!({"a": {"b": 1}}));
    assert!(CompiledShape::compile(&json!({"type": "string"})).unwrap().root().keeps_everything());
    assert!(CompiledShape::compile(&json!(true)).unwrap().root().keeps_everything());
}

#[test]
fn references_are_followed_and_recursive_models_end() {
    let schema = json!({
        "$ref": "#/$defs/Node",
        "$defs": {"Node": {"type": "object", "properties": {"name": {}, "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}}}},
    });
    let value = json!({"name": "a", "x": 1, "children": [{"name": "b", "x": 2, "children": [{"name": "c", "x": 3}]}]});
    assert_eq!(shaped(schema, value), json!({"name": "a", "children": [{"name": "b", "children": [{"name": "c"}]}]}));
    let itself = json!({"$defs": {"A": {"allOf": [{"$ref": "#/$defs/A"}]}}, "$ref": "#/$defs/A"});
    assert_eq!(shaped(itself, json!({"k": 1})), json!({"k": 1}));
}

#[test]
fn an_optional_model_keeps_the_models_fields_and_unions_keep_each_branchs() {
    let optional = json!({"anyOf": [{"type": "object", "properties": {"id": {}}}, {"type": "null"}]});
    assert_eq!(shaped(optional.clone(), json!({"id": 1, "password": "x"})), json!({"id": 1}));
    assert_eq!(shaped(optional, json!(null)), json!(null));
    let either = json!({"oneOf": [{"properties": {"a": {}}}, {"properties": {"b": {}}}]});
    assert_eq!(shaped(either, json!({"a": 1, "b": 2, "c": 3})), json!({"a": 1, "b": 2}));
    let loose = json!({"anyOf": [{"properties": {"a": {}}}, {"type": "object"}]});
    assert_eq!(shaped(loose, json!({"a": 1, "c": 3})), json!({"a": 1, "c": 3}));
    let parts = json!({"allOf": [{"properties": {"a": {}}}, {"properties": {"b": {}}}]});
    assert_eq!(shaped(parts, json!({"a": 1, "b": 2, "c": 3})), json!({"a": 1, "b": 2}));
}

#[test]
fn tuples_shape_items_by_position() {
    let schema = json!({"type": "array", "prefixItems": [{"properties": {"a": {}}}], "items": {"properties": {"b": {}}}});
    assert_eq!(shaped(schema, json!([{"a": 1, "b": 1}, {"a": 2, "b": 2}])), json!([{"a": 1}, {"b": 2}]));
}

#[test]
fn many_properties_are_looked_up_in_a_map() {
    let properties: serde_json::Map<String, Json> = (0..40).map(|i| (format!("f{i}"), json!({}))).collect();
    let shape = CompiledShape::compile(&json!({"properties": properties})).unwrap();
    assert!(shape.root().field("f39").is_some());
    assert!(shape.root().field("f40").is_none());
}

#[test]
fn a_reference_outside_the_schema_is_refused_when_compiled() {
    let error = CompiledShape::compile(&json!({"properties": {"a": {"$ref": "other.json#/User"}}})).unwrap_err();
    assert!(error.contains("other.json#/User"), "{error}");
    assert!(CompiledShape::compile(&json!({"$ref": "#/$defs/Missing"})).is_err());
}

#[test]
fn statuses_pick_exact_then_class_then_default() {
    let (a, b, c) = (json!({"properties": {"a": {}}}), json!({"properties": {"b": {}}}), json!({"properties": {"c": {}}}));
    let compile = |pairs: Vec<(&'static str, &Json)>| {
        let spec = crate::spec::RouteSpec { responses: pairs.into_iter().map(|(k, s)| (k.to_owned(), crate::spec::ResponseSpec { schema: s.clone(), description: None })).collect(), ..crate::spec::RouteSpec::get("/") };
        ResponseShapes::compile(&spec)
    };
    let shapes = compile(vec![("201", &a), ("2xx", &b), ("default", &c)]).unwrap();
    let kept = |status| shapes.for_status(status).unwrap().field("a").is_some();
    assert!(kept(201));
    assert!(!kept(200));
    assert!(shapes.for_status(200).unwrap().field("b").is_some());
    assert!(shapes.for_status(404).unwrap().field("c").is_some());
    assert!(compile(vec![("201", &a)]).unwrap().for_status(200).is_none());
    for key in ["20", "600", "2XY", "ok", "099"] {
        assert!(compile(vec![(key, &a)]).is_err(), "{key}");
    }
}
