//! Decoding that allocates no more than its input holds.
//!
//! bincode decodes an owned `String` (or byte buffer) by allocating the length read
//! from the input and only then reading the bytes, so eight crafted bytes can ask for
//! any amount of memory. [`Bounded`] wraps the deserializer and reads every string
//! and byte buffer through the borrowing path instead, which checks the length
//! against the bytes left before anything is copied. Sequences and maps need no
//! guard: serde preallocates at most 1 MiB from a length hint and then grows by the
//! elements actually decoded, each of which consumes input.

use std::fmt;

use serde::Deserialize;
use serde::de::{DeserializeSeed, Deserializer, EnumAccess, MapAccess, SeqAccess, VariantAccess, Visitor};

/// A value decoded through [`Guard`]: its strings and byte buffers never allocate
/// more than the input holds.
pub(crate) struct Bounded<T>(pub T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Bounded<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        T::deserialize(Guard(deserializer)).map(Bounded)
    }
}

/// Wraps each layer of serde's deserialization (deserializer, visitor, seed and
/// accessors) so that every nested value is read through [`Guard`]'s deserializer.
struct Guard<T>(T);

/// Deserializer methods that take only a visitor, forwarded with the visitor guarded.
macro_rules! forward_deserialize {
    ($($method:ident)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
            self.0.$method(Guard(visitor))
        }
    )*};
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Guard<D> {
    type Error = D::Error;

    forward_deserialize! {
        deserialize_any deserialize_bool
        deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64 deserialize_i128
        deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64 deserialize_u128
        deserialize_f32 deserialize_f64 deserialize_char deserialize_str deserialize_bytes
        deserialize_option deserialize_unit deserialize_seq deserialize_map
        deserialize_identifier deserialize_ignored_any
    }

    // The two owned reads go through the borrowed ones: same bytes, length checked first.
    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_str(Guard(visitor))
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_bytes(Guard(visitor))
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(self, name: &'static str, visitor: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_unit_struct(name, Guard(visitor))
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(self, name: &'static str, visitor: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_newtype_struct(name, Guard(visitor))
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_tuple(len, Guard(visitor))
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_tuple_struct(name, len, Guard(visitor))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_struct(name, fields, Guard(visitor))
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_enum(name, variants, Guard(visitor))
    }

    fn is_human_readable(&self) -> bool {
        self.0.is_human_readable()
    }
}

/// Visitor methods that take a plain value, forwarded unchanged.
macro_rules! forward_visit {
    ($($method:ident: $ty:ty)*) => {$(
        fn $method<E: serde::de::Error>(self, v: $ty) -> Result<Self::Value, E> {
            self.0.$method(v)
        }
    )*};
}

impl<'de, V: Visitor<'de>> Visitor<'de> for Guard<V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.expecting(f)
    }

    forward_visit! {
        visit_bool: bool
        visit_i8: i8 visit_i16: i16 visit_i32: i32 visit_i64: i64 visit_i128: i128
        visit_u8: u8 visit_u16: u16 visit_u32: u32 visit_u64: u64 visit_u128: u128
        visit_f32: f32 visit_f64: f64 visit_char: char
        visit_str: &str visit_borrowed_str: &'de str visit_string: String
        visit_bytes: &[u8] visit_borrowed_bytes: &'de [u8] visit_byte_buf: Vec<u8>
    }

    fn visit_none<E: serde::de::Error>(self) -> Result<Self::Value, E> {
        self.0.visit_none()
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
        self.0.visit_unit()
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        self.0.visit_some(Guard(deserializer))
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        self.0.visit_newtype_struct(Guard(deserializer))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        self.0.visit_seq(Guard(seq))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        self.0.visit_map(Guard(map))
    }

    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<Self::Value, A::Error> {
        self.0.visit_enum(Guard(data))
    }
}

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for Guard<S> {
    type Value = S::Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        self.0.deserialize(Guard(deserializer))
    }
}

impl<'de, A: SeqAccess<'de>> SeqAccess<'de> for Guard<A> {
    type Error = A::Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>, A::Error> {
        self.0.next_element_seed(Guard(seed))
    }

    fn size_hint(&self) -> Option<usize> {
        self.0.size_hint()
    }
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Guard<A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, A::Error> {
        self.0.next_key_seed(Guard(seed))
    }

    fn next_value_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<T::Value, A::Error> {
        self.0.next_value_seed(Guard(seed))
    }

    fn size_hint(&self) -> Option<usize> {
        self.0.size_hint()
    }
}

impl<'de, A: EnumAccess<'de>> EnumAccess<'de> for Guard<A> {
    type Error = A::Error;
    type Variant = Guard<A::Variant>;

    fn variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<(T::Value, Self::Variant), A::Error> {
        let (value, variant) = self.0.variant_seed(Guard(seed))?;
        Ok((value, Guard(variant)))
    }
}

impl<'de, A: VariantAccess<'de>> VariantAccess<'de> for Guard<A> {
    type Error = A::Error;

    fn unit_variant(self) -> Result<(), A::Error> {
        self.0.unit_variant()
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, A::Error> {
        self.0.newtype_variant_seed(Guard(seed))
    }

    fn tuple_variant<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, A::Error> {
        self.0.tuple_variant(len, Guard(visitor))
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, A::Error> {
        self.0.struct_variant(fields, Guard(visitor))
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, HashMap};
    use std::path::PathBuf;

    use serde::{Deserialize, Serialize};

    use crate::framed::{decode, encode};

    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    enum Shape {
        Dot,
        Named(String),
        Pair(u8, String),
        Box { name: Option<String>, size: [f32; 3] },
    }

    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct Unit;

    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct Wrapper(Vec<String>);

    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct Everything {
        name: String,
        path: PathBuf,
        shapes: Vec<Shape>,
        by_name: BTreeMap<String, Shape>,
        counts: HashMap<u32, i64>,
        wide: (u128, i128, char, bool),
        bytes: Vec<u8>,
        unit: Unit,
        wrapper: Wrapper,
        nothing: Option<Box<Everything>>,
    }

    fn everything() -> Everything {
        Everything {
            name: "grüße".into(),
            path: PathBuf::from("scenes/forest.ron"),
            shapes: vec![
                Shape::Dot,
                Shape::Named("n".into()),
                Shape::Pair(3, "p".into()),
                Shape::Box {
                    name: Some("b".into()),
                    size: [1.0, 2.0, 3.0],
                },
                Shape::Box {
                    name: None,
                    size: [0.0; 3],
                },
            ],
            by_name: BTreeMap::from([("k".to_owned(), Shape::Dot)]),
            counts: HashMap::from([(7, -9)]),
            wide: (u128::MAX, i128::MIN, 'λ', true),
            bytes: vec![0, 255, 7],
            unit: Unit,
            wrapper: Wrapper(vec!["a".into(), String::new()]),
            nothing: None,
        }
    }

    #[test]
    fn every_kind_of_value_round_trips_through_the_guard() {
        let mut nested = everything();
        nested.nothing = Some(Box::new(everything()));
        let bytes = encode(&nested).unwrap();
        assert_eq!(decode::<Everything>(&bytes).unwrap(), nested);
    }

    /// A bincode varint of `n`: the marker 253, then eight little-endian bytes.
    fn varint(n: u64) -> Vec<u8> {
        let mut v = vec![253];
        v.extend_from_slice(&n.to_le_bytes());
        v
    }

    #[test]
    fn a_crafted_length_is_an_error_before_anything_is_allocated() {
        // Unguarded, each of these asks the allocator for a terabyte and aborts the process.
        for len in [1u64 << 40, u64::MAX >> 1] {
            let mut string = varint(len);
            string.extend_from_slice(b"short");
            let e = decode::<String>(&string).unwrap_err().to_string();
            assert!(e.contains("UnexpectedEnd"), "{e}");
            assert!(decode::<PathBuf>(&string).is_err());
            let mut named = vec![1];
            named.extend_from_slice(&string);
            assert!(decode::<Shape>(&named).is_err());
            let mut optional = vec![2, 1];
            optional.extend_from_slice(&string);
            assert!(
                decode::<Shape>(&optional).is_err(),
                "a string inside an option inside a struct variant"
            );
            let mut listed = varint(1);
            listed.extend_from_slice(&string);
            assert!(decode::<Wrapper>(&listed).is_err(), "a string inside a sequence");
            assert!(decode::<Vec<u64>>(&string).is_err(), "a sequence");
            assert!(decode::<BTreeMap<u8, u8>>(&string).is_err(), "a map");
        }
    }
}
