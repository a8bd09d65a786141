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

// Found by a probe: two routes choosing one operationId were written with it twice, and a
// documented 204 carried a JSON body the server never sends.
#[test]
fn a_chosen_operation_id_is_one_routes_and_a_204_documents_no_content() {
    let first = RouteSpec { operation_id: Some("same".into()), ..RouteSpec::get("/a") };
    let second = RouteSpec { operation_id: Some("same".into()), ..RouteSpec::post("/b") };
    let error = document(&AppConfig::default(), [(&first, 200), (&second, 200)]).unwrap_err();
    assert_eq!(error, "operation_id \"same\" is given to two routes (GET /a and POST /b); each needs its own");
    let hidden = RouteSpec { include_in_schema: false, ..second.clone() };
    assert!(document(&AppConfig::default(), [(&first, 200), (&hidden, 200)]).is_ok(), "an undocumented route takes no id");
    let deleted = RouteSpec {
        responses: [("204".to_owned(), crate::spec::ResponseSpec { schema: json!({"type": "null"}), description: Some("Deleted".into()) })].into_iter().collect(),
        ..RouteSpec::delete("/items/{id}")
    };
    let doc = document(&AppConfig::default(), [(&deleted, 204)]).unwrap();
    assert_eq!(doc["paths"]["/items/{id}"]["delete"]["responses"]["204"], json!({"description": "Deleted"}));
    assert!(doc["components"]["schemas"]["Problem"]["properties"]["detail"].get("type").is_none(), "a Python detail may be any JSON value");
}

fn requiring(name: &str, scopes: &[&str]) -> Option<Vec<std::collections::BTreeMap<String, Vec<String>>>> {
    Some(vec![[(name.to_owned(), scopes.iter().map(|s| s.to_string()).collect())].into_iter().collect()])
}

#[test]
fn security_requirements_name_the_apps_schemes_and_those_routes_bring() {
    let config = AppConfig { security_schemes: [("bearerAuth".to_owned(), json!({"type": "http", "scheme": "bearer"}))].into_iter().collect(), ..AppConfig::default() };
    let password = json!({"type": "oauth2", "flows": {"password": {"tokenUrl": "token", "scopes": {"me": "Read yourself"}}}});
    let bearer = RouteSpec { security: requiring("bearerAuth", &[]), ..RouteSpec::get("/me") };
    let scoped = RouteSpec {
        security: requiring("OAuth2PasswordBearer", &["me"]),
        security_schemes: [("OAuth2PasswordBearer".to_owned(), password.clone())].into_iter().collect(),
        ..RouteSpec::get("/items")
    };
    let open = RouteSpec { security: Some(vec![]), ..RouteSpec::get("/health") };
    let doc = document(&config, [(&bearer, 200), (&scoped, 200), (&open, 200), (&RouteSpec::get("/plain"), 200)]).unwrap();
    assert_eq!(doc["paths"]["/me"]["get"]["security"], json!([{"bearerAuth": []}]));
    assert_eq!(doc["paths"]["/items"]["get"]["security"], json!([{"OAuth2PasswordBearer": ["me"]}]));
    assert_eq!(doc["paths"]["/health"]["get"]["security"], json!([]), "an explicit empty list says: none needed");
    assert!(doc["paths"]["/plain"]["get"].get("security").is_none());
    assert_eq!(doc["components"]["securitySchemes"], json!({"OAuth2PasswordBearer": password, "bearerAuth": {"type": "http", "scheme": "bearer"}}));
    let none = document(&AppConfig::default(), [(&RouteSpec::get("/plain"), 200)]).unwrap();
    assert!(none["components"].get("securitySchemes").is_none(), "no schemes, no empty map");
}

#[test]
fn a_scheme_no_one_defines_or_one_name_defined_twice_is_refused_by_name() {
    let unknown = RouteSpec { security: requiring("apiKey", &[]), ..RouteSpec::get("/me") };
    let error = document(&AppConfig::default(), [(&unknown, 200)]).unwrap_err();
    assert!(error.contains("GET /me: security names the scheme apiKey") && error.contains("none is defined"), "{error}");
    let first = RouteSpec { security_schemes: [("key".to_owned(), json!({"type": "apiKey", "in": "header", "name": "x-key"}))].into_iter().collect(), ..RouteSpec::get("/a") };
    let second = RouteSpec { security_schemes: [("key".to_owned(), json!({"type": "apiKey", "in": "query", "name": "key"}))].into_iter().collect(), ..RouteSpec::get("/b") };
    let mut schemes = super::security::Schemes::of_app(&AppConfig::default());
    schemes.admit(&first).unwrap();
    let error = schemes.admit(&second).unwrap_err();
    assert!(error.contains("GET /b: security scheme key is already defined otherwise, by GET /a"), "{error}");
    assert!(schemes.admit(&first).is_ok(), "the same definition twice is one scheme");
    // A route refused for its requirement leaves no scheme of its own behind.
    let refused = RouteSpec { security: requiring("nobody", &[]), security_schemes: [("later".to_owned(), json!({"type": "mutualTLS"}))].into_iter().collect(), ..RouteSpec::get("/c") };
    assert!(schemes.admit(&refused).is_err());
    let uses_later = RouteSpec { security: requiring("later", &[]), ..RouteSpec::get("/d") };
    assert!(schemes.admit(&uses_later).unwrap_err().contains("security names the scheme later"));
}

#[test]
fn a_scheme_openapi_would_not_take_is_refused_with_what_it_needs() {
    for (scheme, expected) in [
        (json!("bearer"), "x: a security scheme is an object"),
        (json!({"type": "http"}), "x: an http scheme needs \"scheme\""),
        (json!({"type": "apiKey", "name": "k", "in": "body"}), "x: an apiKey scheme needs \"in\""),
        (json!({"type": "oauth2", "flows": {}}), "x: an oauth2 scheme needs \"flows\""),
        (json!({"type": "oauth2", "flows": {"password": {}}}), "x: the password flow needs \"tokenUrl\""),
        (json!({"type": "oauth2", "flows": {"password": {"tokenUrl": "token"}}}), "x: the password flow needs \"scopes\""),
        (json!({"type": "oauth2", "flows": {"authorizationCode": {"tokenUrl": "t", "scopes": {}}}}), "x: the authorizationCode flow needs \"authorizationUrl\""),
        (json!({"type": "oauth2", "flows": {"device": {}}}), "x: an oauth2 flow is implicit, password, clientCredentials or authorizationCode, not `device`"),
        (json!({"type": "basic"}), "x: \"type\" must be apiKey, http, oauth2, openIdConnect or mutualTLS, not `basic`"),
    ] {
        let error = super::security::check_scheme("x", &scheme).unwrap_err();
        assert!(error.starts_with(expected), "{error}");
    }
    let config = AppConfig { security_schemes: [("x".to_owned(), json!({"type": "http"}))].into_iter().collect(), ..AppConfig::default() };
    assert!(config.check().unwrap_err().starts_with("security_schemes.x: an http scheme needs"));
}

#[test]
fn documented_responses_join_the_document_and_merge_into_what_it_says() {
    let message = json!({"title": "Message", "type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]});
    let route = RouteSpec::get("/items/{id}")
        .response("200", json!({"title": "Item", "type": "object", "properties": {"id": {"type": "integer"}}}))
        .documented_response("404", json!({"description": "Item not found", "content": {"application/json": {"schema": message}}}))
        .documented_response("200", json!({"description": "The item, or its picture", "content": {"image/png": {}}}))
        .documented_response("5xx", json!({"headers": {"retry-after": {"schema": {"type": "integer"}}}}));
    let doc = document(&AppConfig::default(), [(&route, 200)]).unwrap();
    let responses = &doc["paths"]["/items/{id}"]["get"]["responses"];
    assert_eq!(responses["404"], json!({"description": "Item not found", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Message"}}}}));
    assert_eq!(doc["components"]["schemas"]["Message"]["required"], json!(["message"]), "a documented model is a component");
    assert_eq!(
        responses["200"],
        json!({"description": "The item, or its picture", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Item"}}, "image/png": {}}}),
        "merged into the declared 200, object into object"
    );
    assert_eq!(responses["5XX"]["description"], "A server error (nothing of the handler's own leaks)");
    assert_eq!(responses["5XX"]["headers"]["retry-after"]["schema"]["type"], "integer");

    let only_documented = RouteSpec::get("/a").documented_response("404", json!({"description": "Gone"}));
    let doc = document(&AppConfig::default(), [(&only_documented, 201)]).unwrap();
    let responses = &doc["paths"]["/a"]["get"]["responses"];
    assert_eq!(responses["404"], json!({"description": "Gone"}));
    assert_eq!(responses["201"]["description"], "Successful response", "the route's own success is still there");
}

#[test]
fn a_documented_response_is_refused_at_start_when_it_cannot_be_written() {
    let refused = |route: RouteSpec| document(&AppConfig::default(), [(&route, 200)]).unwrap_err();
    assert_eq!(
        refused(RouteSpec::get("/a").documented_response("40", json!({}))),
        "GET /a: documented response status \"40\" is not a status (100-599), a class such as \"2XX\", or \"default\""
    );
    assert_eq!(refused(RouteSpec::get("/a").documented_response("404", json!("Not found"))), "GET /a: the documented response \"404\" is not an object (an OpenAPI Response Object)");
    assert!(refused(RouteSpec::get("/a").documented_response("404", json!({"content": {"application/json": "x"}}))).contains("`content` that is not an object of media types"));
}

#[test]
fn a_documented_response_filters_nothing() {
    use crate::shape::{Required, ResponseShapes};
    let route = RouteSpec::get("/a").documented_response("200", json!({"content": {"application/json": {"schema": {"type": "object", "properties": {}}}}}));
    assert!(ResponseShapes::compile(&route, Required::Fail).unwrap().is_empty());
}
