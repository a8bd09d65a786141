use super::document;
use crate::spec::{AppConfig, BodySpec, ParamSpec, RouteSpec};
use serde_json::json;

fn routes() -> Vec<RouteSpec> {
    let user = json!({
        "title": "User", "type": "object",
        "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/Address"}},
        "required": ["name"],
        "$defs": {"Address": {"title": "Address", "type": "object", "properties": {"city": {"type": "string"}}}}
    });
    vec![
        RouteSpec {
            summary: Some("One user".into()),
            tags: vec!["users".into()],
            ..RouteSpec::get("/users/{id:int}").query("verbose", json!({"type": "boolean", "default": false}))
        },
        RouteSpec { deprecated: true, operation_id: Some("createUser".into()), body: Some(BodySpec::json(user)), ..RouteSpec::post("/users") },
        RouteSpec { headers: vec![ParamSpec::new("x-token", json!({"type": "string", "description": "who asks"}))], ..RouteSpec::get("/files/{rest:path}") },
        RouteSpec { include_in_schema: false, ..RouteSpec::get("/internal") },
        RouteSpec::websocket("/ws", &[]),
        RouteSpec::get("/health"),
    ]
}

#[test]
fn every_route_is_an_operation_with_its_parameters_body_and_problem_responses() {
    let config = AppConfig { title: "Shop".into(), version: "2.1".into(), ..AppConfig::default() };
    let doc = document(&config, routes().iter().map(|spec| (spec, 200))).unwrap();
    assert_eq!(doc["openapi"], "3.1.0");
    assert_eq!(doc["info"], json!({"title": "Shop", "version": "2.1"}));
    let paths = doc["paths"].as_object().unwrap();
    assert_eq!(paths.keys().collect::<Vec<_>>(), ["/users/{id}", "/users", "/files/{rest}", "/health"], "in declaration order, as FastAPI and @fastify/swagger list them; no /internal, no /ws");

    let get_user = &doc["paths"]["/users/{id}"]["get"];
    assert_eq!(get_user["summary"], "One user");
    assert_eq!(get_user["tags"], json!(["users"]));
    assert_eq!(get_user["operationId"], "get_users_id");
    assert_eq!(
        get_user["parameters"],
        json!([
            {"name": "id", "in": "path", "required": true, "schema": {"type": "integer"}},
            {"name": "verbose", "in": "query", "required": false, "schema": {"type": "boolean", "default": false}}
        ])
    );
    assert_eq!(get_user["responses"]["422"]["content"]["application/problem+json"]["schema"]["$ref"], "#/components/schemas/Problem");

    let create = &doc["paths"]["/users"]["post"];
    assert_eq!((create["operationId"].as_str(), create["deprecated"].as_bool()), (Some("createUser"), Some(true)));
    assert_eq!(create["requestBody"], json!({"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/User"}}}}));
    let schemas = &doc["components"]["schemas"];
    assert_eq!(schemas["User"]["properties"]["address"]["$ref"], "#/components/schemas/Address");
    assert_eq!(schemas["Address"]["properties"]["city"]["type"], "string");
    assert_eq!(schemas["Problem"]["required"], json!(["title", "status"]));

    let files = &doc["paths"]["/files/{rest}"]["get"]["parameters"];
    assert_eq!(files[1], json!({"name": "x-token", "in": "header", "required": true, "description": "who asks", "schema": {"type": "string", "description": "who asks"}}));
    // Nothing of /health is validated: no 422, the client and server errors still documented.
    let health = doc["paths"]["/health"]["get"]["responses"].as_object().unwrap();
    assert_eq!(health.keys().collect::<Vec<_>>(), ["200", "4XX", "5XX"]);
}

#[test]
fn app_settings_fill_info_servers_and_tags() {
    let config = AppConfig {
        description: Some("Sells things.".into()),
        servers: vec![json!({"url": "https://api.example.com"})],
        openapi_tags: vec![json!({"name": "users", "description": "People"})],
        ..AppConfig::default()
    };
    let doc = document(&config, []).unwrap();
    assert_eq!(doc["info"], json!({"title": "Ferrule", "version": "0.1.0", "description": "Sells things."}));
    assert_eq!(doc["servers"], json!([{"url": "https://api.example.com"}]));
    assert_eq!(doc["tags"][0]["name"], "users");
    assert_eq!(doc["paths"], json!({}));
}

#[test]
fn declared_responses_carry_their_schemas_as_components() {
    let user_out = json!({"title": "UserOut", "type": "object", "properties": {"id": {"type": "integer"}}});
    let route = RouteSpec::post("/users").response("201", user_out);
    let mut with_words = route.clone();
    with_words.responses.get_mut("201").unwrap().description = Some("The new user".into());
    let doc = document(&AppConfig::default(), [(&with_words, 201)]).unwrap();
    let responses = &doc["paths"]["/users"]["post"]["responses"];
    assert_eq!(responses["201"], json!({"description": "The new user", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/UserOut"}}}}));
    assert!(responses.get("200").is_none(), "a declared success replaces the generic 200");
    assert_eq!(doc["components"]["schemas"]["UserOut"]["properties"]["id"]["type"], "integer");
    let route = RouteSpec::get("/a").response("4xx", json!({"type": "object"}));
    let classed = document(&AppConfig::default(), [(&route, 202)]).unwrap();
    let responses = &classed["paths"]["/a"]["get"]["responses"];
    assert_eq!(responses["4XX"]["description"], "Client error");
    assert_eq!(responses["202"]["description"], "Successful response", "the route's own status for its plain results");
    // By status, the success first (found on review: the declared ones came first once the
    // document kept the order it was built in).
    let route = RouteSpec::get("/b").query("n", json!({"type": "integer"})).response("404", json!({"type": "object"}));
    let doc = document(&AppConfig::default(), [(&route, 200)]).unwrap();
    let statuses: Vec<_> = doc["paths"]["/b"]["get"]["responses"].as_object().unwrap().keys().cloned().collect();
    assert_eq!(statuses, ["200", "404", "422", "4XX", "5XX"]);
}

#[test]
fn made_up_operation_ids_are_unique_and_a_default_response_stays_lower_case() {
    let default_only = RouteSpec {
        responses: [("default".to_owned(), crate::spec::ResponseSpec { schema: json!({"type": "object"}), description: None })].into_iter().collect(),
        ..RouteSpec::get("/x")
    };
    let chosen = RouteSpec { operation_id: Some("get_a_b".into()), ..RouteSpec::get("/later") };
    let routes = [RouteSpec::get("/a-b"), RouteSpec::get("/a_b"), RouteSpec::get("/a/b"), default_only, chosen];
    let doc = document(&AppConfig::default(), routes.iter().map(|spec| (spec, 200))).unwrap();
    let ids: Vec<&str> = ["/a-b", "/a_b", "/a/b", "/later"].iter().map(|path| doc["paths"][path]["get"]["operationId"].as_str().unwrap()).collect();
    assert_eq!(ids, ["get_a_b_2", "get_a_b_3", "get_a_b_4", "get_a_b"], "an id a route chose, even later, is its own");
    let responses = doc["paths"]["/x"]["get"]["responses"].as_object().unwrap();
    assert!(responses.contains_key("default") && !responses.contains_key("DEFAULT"), "{responses:?}");
}
