//! The baseline's JSON value: serde_json's `Value` as an axum user has it, with each object in
//! a `BTreeMap`. The workspace turns on serde_json's `preserve_order` for the core (schemas
//! and the OpenAPI document keep the order they were written in), and that feature reaches
//! every crate built with it, so `serde_json::Value` here would hold each object in an
//! `IndexMap` hashed with SipHash: 19% more instructions to parse and write the json-small,
//! json-medium and json-large payloads (callgrind, release build: 975 → 1,164 million for 300
//! large, 3,000 medium and 3,000 small). Plain axum is measured doing what it does by default,
//! so its `Json<Value>` is spelt out here, and costs what serde_json's own does without the
//! feature (982 million on the same run, +0.7%): the same visitor and the same map serde_json
//! uses without the feature.

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use std::collections::BTreeMap;
use std::fmt;

pub enum PlainJson {
    Null,
    Bool(bool),
    Number(serde_json::Number),
    String(String),
    Array(Vec<PlainJson>),
    Object(BTreeMap<String, PlainJson>),
}

impl<'de> Deserialize<'de> for PlainJson {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<PlainJson, D::Error> {
        deserializer.deserialize_any(PlainVisitor)
    }
}

struct PlainVisitor;

impl<'de> Visitor<'de> for PlainVisitor {
    type Value = PlainJson;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("any valid JSON value")
    }

    fn visit_bool<E>(self, value: bool) -> Result<PlainJson, E> {
        Ok(PlainJson::Bool(value))
    }

    fn visit_i64<E>(self, value: i64) -> Result<PlainJson, E> {
        Ok(PlainJson::Number(value.into()))
    }

    fn visit_u64<E>(self, value: u64) -> Result<PlainJson, E> {
        Ok(PlainJson::Number(value.into()))
    }

    fn visit_f64<E>(self, value: f64) -> Result<PlainJson, E> {
        Ok(serde_json::Number::from_f64(value).map_or(PlainJson::Null, PlainJson::Number))
    }

    fn visit_str<E>(self, value: &str) -> Result<PlainJson, E> {
        Ok(PlainJson::String(value.to_owned()))
    }

    fn visit_string<E>(self, value: String) -> Result<PlainJson, E> {
        Ok(PlainJson::String(value))
    }

    fn visit_unit<E>(self) -> Result<PlainJson, E> {
        Ok(PlainJson::Null)
    }

    fn visit_none<E>(self) -> Result<PlainJson, E> {
        Ok(PlainJson::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<PlainJson, D::Error> {
        Deserialize::deserialize(deserializer)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut items: A) -> Result<PlainJson, A::Error> {
        let mut out = Vec::with_capacity(items.size_hint().unwrap_or(0));
        while let Some(item) = items.next_element()? {
            out.push(item);
        }
        Ok(PlainJson::Array(out))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut members: A) -> Result<PlainJson, A::Error> {
        let mut out = BTreeMap::new();
        while let Some((key, value)) = members.next_entry()? {
            out.insert(key, value);
        }
        Ok(PlainJson::Object(out))
    }
}

impl Serialize for PlainJson {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            PlainJson::Null => serializer.serialize_unit(),
            PlainJson::Bool(value) => serializer.serialize_bool(*value),
            PlainJson::Number(number) => number.serialize(serializer),
            PlainJson::String(text) => serializer.serialize_str(text),
            PlainJson::Array(items) => {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            PlainJson::Object(members) => {
                let mut map = serializer.serialize_map(Some(members.len()))?;
                for (key, value) in members {
                    map.serialize_entry(key, value)?;
                }
                map.end()
            }
        }
    }
}
