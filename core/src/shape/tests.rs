use super::*;
use super::Required;
use serde_json::{json, Value as Json};

fn shaped(schema: Json, mut value: Json) -> Json {
    let shape = CompiledShape::compile(&schema).unwrap();
    filtered(&mut value, shape.root()).unwrap();
    value
}

/// [`filter_json`], checked against the document's writer ([`ShapedNode`]): both write the same
/// JSON, or both refuse.
fn filtered(value: &mut Json, shape: Shape<'_>) -> Result<(), Incomplete> {
    let document = crate::document::Document::from_tree(value);
    let written = serde_json::to_vec(&ShapedNode { node: document.root(), shape });
    let result = filter_json(value, shape);
    match (&result, written) {
        (Ok(()), Ok(written)) => assert_eq!(String::from_utf8(written).unwrap(), serde_json::to_string(value).unwrap()),
        (Err(_), Err(_)) => {}
        (result, written) => panic!("filter_json gave {result:?}, the document's writer {written:?}"),
    }
    result
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
        ResponseShapes::compile(&spec, Required::Fail)
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

fn user_out() -> Json {
    json!({
        "type": "object",
        "properties": {
            "id": {"type": "integer"},
            "note": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null},
            "tags": {"type": "array", "items": {"type": "string"}, "default": []},
            "inner": {"$ref": "#/$defs/Inner", "default": {}},
            "items": {"type": "array", "items": {"$ref": "#/$defs/Inner"}},
        },
        "required": ["id"],
        "$defs": {"Inner": {"type": "object", "properties": {"k": {"type": "integer", "default": 7}}}},
    })
}

#[test]
fn defaults_fill_what_the_result_lacks_at_every_depth() {
    // FastAPI's response_model and fast-json-stringify both answer this (checked against both).
    let value = json!({"id": 3, "secret": "x", "items": [{}, {"k": 1}]});
    let expected = json!({"id": 3, "note": null, "tags": [], "inner": {"k": 7}, "items": [{"k": 7}, {"k": 1}]});
    assert_eq!(shaped(user_out(), value), expected);
    // What the result has is kept, a null included.
    let value = json!({"id": 3, "note": "n", "tags": ["a"], "inner": {"k": 2, "x": 1}});
    assert_eq!(shaped(user_out(), value), json!({"id": 3, "note": "n", "tags": ["a"], "inner": {"k": 2}}));
}

#[test]
fn a_missing_required_property_fails_unless_the_validator_checks_it() {
    let shape = CompiledShape::compile(&user_out()).unwrap();
    let mut value = json!({"note": "x"});
    assert_eq!(filtered(&mut value, shape.root()), Err(Incomplete::Missing("id".into())));
    let nested = json!({"type": "array", "items": {"properties": {"a": {}}, "required": ["a"]}});
    let mut value = json!([{"a": 1}, {"b": 2}]);
    assert_eq!(filtered(&mut value, CompiledShape::compile(&nested).unwrap().root()), Err(Incomplete::Missing("a".into())));
    let validated = compile::compile(&user_out(), Required::Validated).unwrap();
    let mut value = json!({"note": "x"});
    filtered(&mut value, validated.root()).unwrap();
    assert_eq!(value, json!({"note": "x", "tags": [], "inner": {"k": 7}}), "defaults are still filled");
}

#[test]
fn a_default_is_written_as_its_property_shapes_it() {
    let schema = json!({"properties": {"o": {"properties": {"a": {}, "b": {"default": 2}}, "default": {"a": 1, "secret": 0}}}});
    assert_eq!(shaped(schema, json!({})), json!({"o": {"a": 1, "b": 2}}));
    // A tree whose every node defaults its children to one more node: the default met again
    // inside its own expansion is written there as declared.
    let endless = json!({"properties": {"n": {"type": "array", "items": {"$ref": "#"}, "default": [{}]}}});
    assert_eq!(shaped(endless, json!({})), json!({"n": [{"n": [{"n": [{}]}]}]}));
    // Two such properties per level would double at each.
    let doubling = json!({"properties": {"a": {"$ref": "#", "default": {}}, "b": {"$ref": "#", "default": {}}, "c": {}}});
    let filled = shaped(doubling, json!({"c": 1}));
    assert!(filled.to_string().len() < 200, "{filled}");
    // The same through a model and a `$ref` with a default (Fastify writes such a default).
    let meta = json!({"properties": {"meta": {"$ref": "#/$defs/Meta", "default": {}}}, "$defs": {"Meta": {"properties": {"parent": {"$ref": "#/$defs/Meta", "default": {}}}}}});
    assert_eq!(shaped(meta, json!({})), json!({"meta": {"parent": {"parent": {}}}}));
    // Ten such properties could nest 10! ways: the count stops it.
    let properties: serde_json::Map<String, Json> = (0..10).map(|i| (format!("p{i}"), json!({"$ref": "#", "default": {}}))).collect();
    let started = std::time::Instant::now();
    let wide = CompiledShape::compile(&json!({"properties": properties})).unwrap();
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    let mut value = json!({});
    filtered(&mut value, wide.root()).unwrap();
    // A default is written as declared otherwise: a required property it lacks is no error,
    // whichever mode the route is compiled in.
    let meta = json!({"properties": {"meta": {"properties": {"v": {}, "w": {"default": 1}}, "required": ["v"], "default": {}}}});
    assert_eq!(shaped(meta, json!({})), json!({"meta": {"w": 1}}));
}

#[test]
fn all_of_completes_by_every_part_and_a_union_of_objects_by_none() {
    let parts = json!({"allOf": [{"properties": {"a": {}}, "required": ["a"]}, {"properties": {"a": {"default": 1}, "b": {"default": 2}}}]});
    assert_eq!(shaped(parts, json!({})), json!({"a": 1, "b": 2}), "a default answers a requirement");
    let either = json!({"anyOf": [{"properties": {"a": {}}, "required": ["a"]}, {"properties": {"b": {"default": 2}}}]});
    assert_eq!(shaped(either, json!({"c": 1})), json!({}));
    let optional = json!({"anyOf": [{"properties": {"a": {"default": 1}}}, {"type": "null"}]});
    assert_eq!(shaped(optional.clone(), json!({})), json!({"a": 1}));
    assert_eq!(shaped(optional, json!(null)), json!(null));
}

/// The writers' side of the same rule: what a binding's writer calls as it walks an object.
#[test]
fn a_writer_completes_an_object_after_its_own_members() {
    let shape = CompiledShape::compile(&user_out()).unwrap();
    let root = shape.root();
    assert!(root.completes());
    assert!(!root.field("id").unwrap().completes() && !root.field("tags").unwrap().completes());
    let mut out = b"{\"id\":3".to_vec();
    let mut written = Written::default();
    assert!(root.member("id", &mut written).is_some());
    assert!(root.member("note", &mut written).is_some());
    assert!(root.member("secret", &mut written).is_none());
    root.complete(&written, &mut out, true).unwrap();
    out.push(b'}');
    let sent: Json = serde_json::from_slice(&out).unwrap();
    assert_eq!(sent, json!({"id": 3, "tags": [], "inner": {"k": 7}}), "{}", String::from_utf8_lossy(&out));
    let mut out = b"{".to_vec();
    let error = root.complete(&Written::default(), &mut out, false).unwrap_err();
    assert_eq!(error.to_string(), "the result lacks `id`, which its response schema requires");
    let mut inner = b"{".to_vec();
    root.field("inner").unwrap().complete(&Written::default(), &mut inner, false).unwrap();
    assert_eq!(inner, b"{\"k\":7");
}

#[test]
fn a_required_name_only_additional_properties_declare_is_noted_by_name() {
    let schema = json!({"properties": {"a": {"default": 1}}, "additionalProperties": true, "required": ["z"]});
    assert_eq!(shaped(schema.clone(), json!({"z": 0})), json!({"a": 1, "z": 0}));
    let mut value = json!({"y": 0});
    assert_eq!(filtered(&mut value, CompiledShape::compile(&schema).unwrap().root()), Err(Incomplete::Missing("z".into())));
    // Many properties: the same through the index.
    let mut properties: serde_json::Map<String, Json> = (0..40).map(|i| (format!("f{i}"), json!({}))).collect();
    properties.insert("f39".into(), json!({"default": "d"}));
    let many = json!({"properties": properties, "required": ["f3"]});
    assert_eq!(shaped(many.clone(), json!({"f3": 3})), json!({"f3": 3, "f39": "d"}));
    let mut value = json!({"f39": 0});
    assert_eq!(filtered(&mut value, CompiledShape::compile(&many).unwrap().root()), Err(Incomplete::Missing("f3".into())));
}

#[test]
fn a_model_with_an_optional_field_of_its_own_type_is_shaped_at_every_level() {
    // pydantic's `class Node: name: str; parent: Optional["Node"] = None`.
    let schema = json!({
        "$ref": "#/$defs/Node",
        "$defs": {"Node": {"type": "object", "required": ["name"], "properties": {
            "name": {"type": "string"},
            "parent": {"anyOf": [{"$ref": "#/$defs/Node"}, {"type": "null"}], "default": null},
        }}},
    });
    let value = json!({"name": "a", "x": 1, "parent": {"name": "b", "secret": 1}});
    assert_eq!(shaped(schema.clone(), value), json!({"name": "a", "parent": {"name": "b", "parent": null}}));
    let mut value = json!({"name": "a", "parent": {"secret": 1}});
    assert_eq!(filtered(&mut value, CompiledShape::compile(&schema).unwrap().root()), Err(Incomplete::Missing("name".into())));
}

#[test]
fn a_required_name_the_schema_leaves_out_is_present_when_the_result_has_it() {
    let schema = json!({"properties": {"a": {}}, "required": ["a", "b"]});
    assert_eq!(shaped(schema.clone(), json!({"a": 1, "b": 2})), json!({"a": 1}));
    let shape = CompiledShape::compile(&schema).unwrap();
    let mut written = Written::default();
    assert!(shape.root().member("a", &mut written).is_some());
    assert!(shape.root().member("b", &mut written).is_none(), "not sent");
    assert_eq!(shape.root().complete(&written, &mut Vec::new(), true), Ok(()), "but there");
    let mut value = json!({"a": 1});
    assert_eq!(filtered(&mut value, shape.root()), Err(Incomplete::Missing("b".into())));
}

#[test]
fn a_union_branch_that_only_requires_keeps_everything_as_before() {
    let schema = json!({
        "anyOf": [{"$ref": "#/$defs/User"}, {"type": "object", "required": ["error"]}],
        "$defs": {"User": {"properties": {"name": {}, "friend": {"properties": {"name": {}}}}}},
    });
    let value = json!({"error": "x", "friend": {"name": "a", "code": 1}, "more": 2});
    assert_eq!(shaped(schema, value.clone()), value);
}

#[test]
fn an_object_schema_that_only_requires_keeps_everything_and_checks() {
    for schema in [json!({"type": "object", "required": ["id"]}), json!({"required": ["id"], "additionalProperties": true})] {
        assert_eq!(shaped(schema.clone(), json!({"id": 1, "x": {"y": 2}})), json!({"id": 1, "x": {"y": 2}}));
        let mut value = json!({"x": 1});
        assert_eq!(filtered(&mut value, CompiledShape::compile(&schema).unwrap().root()), Err(Incomplete::Missing("id".into())));
    }
    let based = json!({"allOf": [{"$ref": "#/$defs/Base"}, {"required": ["x"]}], "$defs": {"Base": {"properties": {"x": {}, "y": {}}}}});
    assert_eq!(shaped(based.clone(), json!({"x": 1, "z": 3})), json!({"x": 1}));
    let mut value = json!({"y": 1});
    assert_eq!(filtered(&mut value, CompiledShape::compile(&based).unwrap().root()), Err(Incomplete::Missing("x".into())));
    let validated = compile::compile(&json!({"type": "object", "required": ["id"]}), Required::Validated).unwrap();
    assert!(validated.root().keeps_everything(), "left to the validator, nothing to shape");
}

#[test]
fn a_default_past_the_first_64_properties_is_filled() {
    let mut properties: serde_json::Map<String, Json> = (0..80).map(|i| (format!("f{i:02}"), json!({}))).collect();
    properties.insert("f70".into(), json!({"default": "d"}));
    let schema = json!({"properties": properties});
    let shape = CompiledShape::compile(&schema).unwrap();
    let mut written = Written::default();
    let mut out = b"{".to_vec();
    for i in 0..70 {
        shape.root().member(&format!("f{i:02}"), &mut written).unwrap();
    }
    shape.root().complete(&written, &mut out, false).unwrap();
    assert_eq!(out, b"{\"f70\":\"d\"");
    shape.root().member("f70", &mut written).unwrap();
    let mut out = Vec::new();
    shape.root().complete(&written, &mut out, true).unwrap();
    assert!(out.is_empty());
}

#[test]
fn more_than_64_required_properties_are_each_checked() {
    let properties: serde_json::Map<String, Json> = (0..70).map(|i| (format!("f{i}"), json!({}))).collect();
    let required: Vec<String> = (0..70).map(|i| format!("f{i}")).collect();
    let schema = json!({"properties": properties, "required": required});
    let shape = CompiledShape::compile(&schema).unwrap();
    let all: serde_json::Map<String, Json> = (0..70).map(|i| (format!("f{i}"), json!(i))).collect();
    for missing in ["f3", "f68"] {
        let mut value = Json::Object(all.clone());
        value.as_object_mut().unwrap().remove(missing);
        assert_eq!(filtered(&mut value, shape.root()), Err(Incomplete::Missing(missing.into())));
        // The writers' way: every member but the missing one looked up.
        let mut written = Written::default();
        for key in all.keys().filter(|key| *key != missing) {
            shape.root().member(key, &mut written).unwrap();
        }
        assert_eq!(shape.root().complete(&written, &mut Vec::new(), true), Err(Incomplete::Missing(missing.into())));
    }
    let mut value = Json::Object(all);
    assert_eq!(filtered(&mut value, shape.root()), Ok(()));
}

#[test]
fn a_value_of_a_kind_the_schema_does_not_admit_is_refused_where_it_filters() {
    let refused = |schema: Json, mut value: Json| filtered(&mut value, CompiledShape::compile(&schema).unwrap().root()).unwrap_err();
    let user = json!({"type": "object", "properties": {"id": {}}});
    let (object, array) = (Container::Object, Container::Array);
    assert_eq!(refused(user.clone(), json!([{"id": 1, "password": "x"}])), Incomplete::Kind { found: array, declared: object });
    let users = json!({"type": "array", "items": user.clone()});
    assert_eq!(refused(users, json!({"id": 1, "password": "x"})), Incomplete::Kind { found: object, declared: array });
    // Through a reference in an Optional, and in a property.
    let optional = json!({"anyOf": [{"$ref": "#/$defs/U"}, {"type": "null"}], "$defs": {"U": user.clone()}});
    assert_eq!(refused(optional, json!([])), Incomplete::Kind { found: array, declared: object });
    let nested = json!({"type": "object", "properties": {"address": user.clone()}});
    assert_eq!(refused(nested, json!({"address": [{"id": 1}]})), Incomplete::Kind { found: array, declared: object });
    // A schema that admits both kinds, or filters nothing, keeps what it kept.
    let either = json!({"anyOf": [user, {"type": "array"}]});
    assert_eq!(shaped(either, json!([{"id": 1, "x": 2}])), json!([{"id": 1, "x": 2}]));
    assert_eq!(shaped(json!({"properties": {"id": {}}}), json!([{"id": 1, "x": 2}])), json!([{"id": 1, "x": 2}]));
    assert_eq!(shaped(json!({"type": "string"}), json!({"a": 1})), json!({"a": 1}));
    assert_eq!(shaped(json!({"type": "object"}), json!([1])), json!([1]));
    // The writers' question, as asked before each object and array.
    let shape = CompiledShape::compile(&json!({"type": "object", "properties": {"id": {}}})).unwrap();
    assert!(shape.root().admits(Container::Object).is_ok());
    assert!(shape.root().admits(Container::Array).is_err());
    assert!(Shape::any().admits(Container::Array).is_ok());
}

#[test]
fn an_objects_declared_names_are_what_a_writer_reads_from_attributes() {
    let shape = CompiledShape::compile(&json!({
        "type": "object",
        "properties": {"id": {}, "owner": {"anyOf": [{"type": "null"}, {"properties": {"name": {}}}]}, "tags": {"items": {"properties": {"label": {}}}}},
    }))
    .unwrap();
    let root = shape.root();
    assert_eq!(root.declared_names().collect::<Vec<_>>(), ["id", "owner", "tags"]);
    assert_eq!(root.field("owner").unwrap().declared_names().collect::<Vec<_>>(), ["name"]);
    assert_eq!(root.field("tags").unwrap().item(0).declared_names().collect::<Vec<_>>(), ["label"]);
    assert_eq!(root.field("id").unwrap().declared_names().count(), 0, "a value that is no object's declares none");
    assert_eq!(Shape::any().declared_names().count(), 0);
    assert!(Fields::declared_names(Everything).is_empty());
    assert!(root.field("tags").unwrap().is_array() && !root.is_array() && !Shape::any().is_array());
    assert!(!Fields::is_array(Everything));
}

/// A Rust handler's JSON text under a declared response is read into a document and written
/// by [`ShapedNode`] (`rules.rs`); the text the tree's way wrote must not change: numbers as
/// serde_json writes them, strings re-escaped as serde_json escapes them. Text the document
/// refuses is left to the tree's way.
#[test]
fn a_handlers_json_text_is_written_by_the_document_as_the_tree_wrote_it() {
    let schema = json!({"type": "object", "properties": {
        "n": {}, "s": {}, "list": {"type": "array", "items": {"type": "object", "properties": {"id": {}}}},
        "with_default": {"default": {"a": 1}},
    }});
    let shape = CompiledShape::compile(&schema).unwrap();
    let texts = [
        r#"{"n": 1e2, "s": "caf\u00e9 \/ \n \u001f \ud83d\ude00 \"q\"", "secret": 1}"#,
        r#"{"n": -0, "list": [{"id": 1.0, "x": 2}, {"id": 18446744073709551615}, {"id": -9223372036854775808}]}"#,
        r#"{"n": 0.1, "s": 1.7976931348623157e308, "list": []}"#,
        r#"{"n": [1.5e-7, 123456789012345678, 2.50], "s": {"deep": [true, false, null]}}"#,
        "  {\"n\"\t:\n 5 }  ",
    ];
    for text in texts {
        let mut tree: Json = serde_json::from_str(text).unwrap();
        filter_json(&mut tree, shape.root()).unwrap();
        let document = crate::body::json::parse(text.as_bytes(), crate::body::json::MAX_DEPTH).unwrap();
        let written = serde_json::to_vec(&ShapedNode { node: document.root(), shape: shape.root() }).unwrap();
        assert_eq!(String::from_utf8(written).unwrap(), serde_json::to_string(&tree).unwrap(), "{text}");
    }
    for refused in [r#"{"n": 1, "n": 2}"#, r#"{"n": 123456789012345678901234567890}"#, "NaN", "{"] {
        assert!(crate::body::json::parse(refused.as_bytes(), crate::body::json::MAX_DEPTH).is_err(), "{refused}");
    }
}

#[test]
fn null_is_admitted_where_the_type_enum_const_or_a_branch_says_so() {
    // pydantic's schemas for `Item`, `Optional[Item]`, `list[Optional[str]]`, `Literal`s and a
    // recursive `parent: Optional["Node"]`.
    let schema = json!({
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "note": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null},
            "item": {"$ref": "#/$defs/Item"},
            "maybe": {"anyOf": [{"$ref": "#/$defs/Item"}, {"type": "null"}]},
            "names": {"type": "array", "items": {"anyOf": [{"type": "string"}, {"type": "null"}]}},
            "counts": {"type": "array", "items": {"type": "integer"}},
            "mode": {"enum": ["a", "b"]},
            "none": {"const": null},
            "either": {"enum": ["a", null]},
            "loose": {},
            "typed_null": {"type": ["integer", "null"]},
            "all": {"allOf": [{"$ref": "#/$defs/Item"}]},
            "never": false,
            "node": {"$ref": "#/$defs/Node"}
        },
        "$defs": {
            "Item": {"type": "object", "properties": {"id": {"type": "integer"}}},
            "Node": {"type": "object", "properties": {"parent": {"anyOf": [{"$ref": "#/$defs/Node"}, {"type": "null"}]}, "v": {"type": "integer"}}}
        }
    });
    let shape = CompiledShape::compile(&schema).unwrap();
    let root = shape.root();
    assert_eq!(root.admits_null(), Err(Incomplete::Null));
    let admits = |name: &str| root.field(name).unwrap().admits_null().is_ok();
    for (name, admitted) in [
        ("name", false), ("note", true), ("item", false), ("maybe", true), ("counts", false), ("mode", false),
        ("none", true), ("either", true), ("loose", true), ("typed_null", true), ("all", false), ("never", false), ("node", false),
    ] {
        assert_eq!(admits(name), admitted, "{name}");
    }
    assert!(root.field("names").unwrap().item(0).admits_null().is_ok());
    assert_eq!(root.field("counts").unwrap().item(3).admits_null(), Err(Incomplete::Null));
    // An optional model keeps the model's shape, and its own fields still refuse null.
    let maybe = root.field("maybe").unwrap();
    assert_eq!(maybe.field("secret").map(|_| ()), None);
    assert_eq!(maybe.field("id").unwrap().admits_null(), Err(Incomplete::Null));
    // A recursive optional field: null at any depth, the model's fields below it as declared.
    let parent = root.field("node").unwrap().field("parent").unwrap();
    assert!(parent.admits_null().is_ok());
    assert!(parent.field("parent").unwrap().admits_null().is_ok());
    assert_eq!(parent.field("parent").unwrap().field("v").unwrap().admits_null(), Err(Incomplete::Null));
    // An undeclared response admits anything.
    assert!(Shape::any().admits_null().is_ok());
}

#[test]
fn a_shape_admits_the_scalars_its_type_enum_or_union_names() {
    // pydantic's serialization schemas: a Decimal is written as a string, an IntEnum is a $ref.
    let schema = json!({
        "$defs": {"Level": {"enum": [1, 2], "title": "Level", "type": "integer"}},
        "type": "object",
        "properties": {
            "count": {"type": "integer"},
            "price": {"type": "number"},
            "name": {"type": "string"},
            "flag": {"type": "boolean"},
            "amount": {"type": "string"},
            "maybe": {"anyOf": [{"type": "number"}, {"type": "null"}]},
            "either": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
            "mode": {"enum": ["fast", 1]},
            "level": {"$ref": "#/$defs/Level"},
            "exact": {"const": true},
            "kinds": {"type": ["string", "boolean", "null"]},
            "both": {"allOf": [{"type": "number"}, {"type": "integer"}]},
            "anything": {},
            "never": false,
            "tags": {"type": "array", "items": {"type": "string"}},
        },
    });
    let shape = CompiledShape::compile(&schema).unwrap();
    let root = shape.root();
    let admitted = |name: &str| {
        let field = root.field(name).unwrap();
        [Scalar::Bool, Scalar::Integer, Scalar::Float, Scalar::String].into_iter().filter(|&kind| field.admits_scalar(kind).is_ok()).collect::<Vec<_>>()
    };
    use Scalar::{Bool, Float, Integer, String};
    assert_eq!(admitted("count"), [Integer], "an int field writes 2.0 as 2 and refuses 2.5");
    assert_eq!(admitted("price"), [Integer, Float], "a number may be written as an integer");
    assert_eq!(admitted("name"), [String]);
    assert_eq!(admitted("flag"), [Bool]);
    assert_eq!(admitted("amount"), [String]);
    assert_eq!(admitted("maybe"), [Integer, Float]);
    assert_eq!(admitted("either"), [Integer, String]);
    assert_eq!(admitted("mode"), [Integer, String], "the kinds an enum lists");
    assert_eq!(admitted("level"), [Integer]);
    assert_eq!(admitted("exact"), [Bool]);
    assert_eq!(admitted("kinds"), [Bool, String]);
    assert_eq!(admitted("both"), [Integer], "every part of an allOf");
    assert_eq!(admitted("anything"), [Bool, Integer, Float, String]);
    assert_eq!(admitted("never"), Vec::<Scalar>::new());
    assert_eq!(root.field("tags").unwrap().item(0).admits_scalar(Integer), Err(Incomplete::Scalar(Integer)));
    assert_eq!(root.admits_scalar(String), Err(Incomplete::Scalar(String)), "an object's schema admits no scalar");
    assert!(Shape::any().admits_scalar(Float).is_ok(), "an undeclared response admits anything");
    assert_eq!(Incomplete::Scalar(Float).to_string(), "the result has a float where its response schema admits none");
}
