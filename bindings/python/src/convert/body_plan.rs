//! A body's conversion to the handler's types, done while the body is built from JSON.
//!
//! A handler that takes `body: Order`, a `TypedDict` with an `order_id: UUID` and a
//! `created_at: datetime`, wants those two as objects, not as the strings JSON has. Python's
//! converter for it (`ferrule.schema`) copied the built dict and replaced the two strings: a
//! Python frame, a second dict, two strings made and dropped, and a frame per field. For a
//! `list[Event]` it did that per item, through a generator. json-medium's body paid 8,600
//! instructions a request for it (callgrind, 2,000 requests), 4% of the request.
//!
//! Built here instead (callgrind, instructions per request): json-medium 208,100 → 205,200; a
//! `list[Event]` of 100 (a UUID, a datetime and a string each, `TestClient`) 1,655,500 →
//! 1,237,600, a quarter less. What is left per converted value is the object itself: about
//! 2,100 for a UUID (its `int` alone is 960: a 128-bit int is two 64-bit ones and a shift
//! under the limited API) and 1,900 for a datetime (one `fromisoformat` call).
//!
//! `ferrule.schema` describes the same conversion as a plan (`TypeInfo.native`) whenever every
//! part of it is one of these; the route keeps the plan, and [`super::to_python`] builds each
//! converted value in place of its string, at the key or item the plan names. A `dataclass`,
//! an `Enum`, a `Decimal`, a set or a tuple anywhere in the type leaves the whole body to
//! Python's converter.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyTuple};

/// What a body's value becomes (the Python side's `TypeInfo.native`).
#[derive(Debug, PartialEq)]
pub enum BodyPlan {
    /// A string → `uuid.UUID`.
    Uuid,
    /// A string → `datetime.datetime`.
    DateTime,
    /// A string → `datetime.date`.
    Date,
    /// An object whose named members are converted; the others are left as they are.
    Members(Vec<(Box<str>, BodyPlan)>),
    /// A list whose every item is converted.
    Items(Box<BodyPlan>),
    /// An object whose every member's value is converted (`dict[str, X]`).
    Values(Box<BodyPlan>),
}

impl BodyPlan {
    /// The plan from its Python description; anything else is an error naming it, found when
    /// the route is declared.
    pub fn from_python(plan: &Bound<'_, PyAny>) -> PyResult<BodyPlan> {
        if let Ok(leaf) = plan.cast::<PyString>() {
            return Ok(match leaf.to_str()? {
                "uuid" => BodyPlan::Uuid,
                "datetime" => BodyPlan::DateTime,
                "date" => BodyPlan::Date,
                other => return Err(unknown(other)),
            });
        }
        if let Ok(members) = plan.cast::<PyDict>() {
            let mut plans = Vec::with_capacity(members.len());
            for (key, member) in members.iter() {
                plans.push((key.extract::<String>()?.into_boxed_str(), BodyPlan::from_python(&member)?));
            }
            return Ok(BodyPlan::Members(plans));
        }
        if let Ok(pair) = plan.cast::<PyTuple>() {
            if let Ok((kind, inner)) = pair.extract::<(String, Bound<'_, PyAny>)>() {
                let inner = Box::new(BodyPlan::from_python(&inner)?);
                return match kind.as_str() {
                    "list" => Ok(BodyPlan::Items(inner)),
                    "values" => Ok(BodyPlan::Values(inner)),
                    other => Err(unknown(other)),
                };
            }
        }
        Err(unknown(&plan.repr()?.to_string()))
    }

    /// The plan of an object's member `key`, when it has one.
    pub fn member(&self, key: &str) -> Option<&BodyPlan> {
        match self {
            BodyPlan::Members(members) => members.iter().find(|(name, _)| &**name == key).map(|(_, plan)| plan),
            BodyPlan::Values(plan) => Some(plan),
            _ => None,
        }
    }
}

fn unknown(what: &str) -> PyErr {
    pyo3::exceptions::PyValueError::new_err(format!("unknown body conversion {what}"))
}
