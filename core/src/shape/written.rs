//! The record a writer keeps of one object's members while it writes them, and what completing
//! the object can find wrong.

/// Which of an object's completed properties (see [`super::Shape::completes`]) were written: a
/// bit each, the first 64 without an allocation (a model with more defaulted and required
/// properties than that is rare, and pays for a `Vec`).
#[derive(Debug, Default)]
pub struct Written {
    first: u64,
    more: Vec<u64>,
}

impl Written {
    pub(super) fn set(&mut self, at: usize) {
        match at.checked_sub(64) {
            None => self.first |= 1 << at,
            Some(past) => {
                let word = past / 64;
                if self.more.len() <= word {
                    self.more.resize(word + 1, 0);
                }
                self.more[word] |= 1 << (past % 64);
            }
        }
    }

    /// Whether every bit of `bits` (among the first 64) is set.
    pub(super) fn covers(&self, bits: u64) -> bool {
        self.first & bits == bits
    }

    pub(super) fn has(&self, at: usize) -> bool {
        match at.checked_sub(64) {
            None => self.first & (1 << at) != 0,
            Some(past) => self.more.get(past / 64).is_some_and(|word| word & (1 << (past % 64)) != 0),
        }
    }
}

/// Why a result cannot be written with its declared shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Incomplete {
    /// An object lacks a property its schema requires.
    Missing(Box<str>),
    /// A value of a kind the schema does not admit, where it filters (see
    /// [`super::Shape::admits`]).
    Kind { found: Container, declared: Container },
    /// A null where the schema admits none, for a writer that asks ([`super::Shape::admits_null`]).
    Null,
    /// A scalar of a kind the schema's `type` does not admit, for a writer that asks
    /// ([`super::Shape::admits_scalar`]).
    Scalar(Scalar),
}

/// The kinds of scalar a writer finds in its language's values, as a schema's `type` names
/// them; an integer and a float apart, as pydantic reads them (an `int` field refuses `2.5`
/// and writes `2.0` as `2`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scalar {
    Bool,
    Integer,
    Float,
    String,
}

impl Scalar {
    /// This kind's bit in a shape's set of admitted scalars.
    pub(super) const fn bit(self) -> u8 {
        match self {
            Scalar::Bool => 1,
            Scalar::Integer => 2,
            Scalar::Float => 4,
            Scalar::String => 8,
        }
    }

    /// Every kind: what a schema that says nothing of `type` admits.
    pub(super) const ALL: u8 = 1 | 2 | 4 | 8;
}

impl std::fmt::Display for Scalar {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Scalar::Bool => "a boolean",
            Scalar::Integer => "an integer",
            Scalar::Float => "a float",
            Scalar::String => "a string",
        })
    }
}

/// The kinds of value a shape filters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Container {
    Object,
    Array,
}

impl std::fmt::Display for Container {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Container::Object => "an object",
            Container::Array => "an array",
        })
    }
}

impl std::fmt::Display for Incomplete {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Incomplete::Missing(name) => write!(f, "the result lacks `{name}`, which its response schema requires"),
            Incomplete::Kind { found, declared } => write!(f, "the result has {found} where its response schema declares {declared}"),
            Incomplete::Null => f.write_str("the result has null where its response schema admits none"),
            Incomplete::Scalar(found) => write!(f, "the result has {found} where its response schema admits none"),
        }
    }
}

impl std::error::Error for Incomplete {}

#[cfg(test)]
mod tests {
    use super::Written;

    #[test]
    fn bits_past_the_first_word_are_kept_apart() {
        let mut written = Written::default();
        for at in [0, 63, 64, 200] {
            written.set(at);
        }
        for at in [0, 63, 64, 200] {
            assert!(written.has(at), "{at}");
        }
        for at in [1, 62, 65, 127, 128, 199, 201, 1000] {
            assert!(!written.has(at), "{at}");
        }
    }
}
