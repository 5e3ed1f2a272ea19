//! Reader behaviour beyond the golden vectors: errors that say what is
//! wrong, unknown classes, the schema requirement, string back-references.

use crate::common;

use common::{dialects, schemas};
use kryo::{Class, DecodeError, Decoder, Encoder, Schemas, Value};

#[test]
fn an_unregistered_class_id_is_named_with_the_dialect() {
    for (_, d) in dialects() {
        // Class id 40 (+2): LinkedList etc. are registered by Dubbo but not read here.
        let err = Decoder::new(&[42, 1], d)
            .read_value(&schemas())
            .unwrap_err();
        assert!(
            matches!(err, DecodeError::UnknownClassId { id: 40, .. }),
            "{err}"
        );
        assert!(err.to_string().contains(d.name));
    }
}

#[test]
fn an_object_without_a_schema_is_an_error_naming_its_class() {
    for (_, d) in dialects() {
        let mut e = Encoder::new(d);
        e.begin_object("com.example.Unknown");
        e.write_int_field(1);
        let bytes = e.finish();
        let err = Decoder::new(&bytes, d)
            .read_value(&Schemas::new())
            .unwrap_err();
        assert!(
            matches!(&err, DecodeError::NoSchema { class, .. } if class == "com.example.Unknown"),
            "{err}"
        );
    }
}

#[test]
fn string_back_references_resolve() {
    for (_, d) in dialects() {
        let mut e = Encoder::new(d);
        let mode = e.begin_array_list(3, Some((Class::Id(kryo::ids::STRING), false)));
        let first = e.begin_element(mode, Class::Id(kryo::ids::STRING));
        e.write_string(Some("shared"));
        // Tagged elements carry their class before the marker.
        if mode == kryo::ListMode::Tagged {
            e.write_class(Class::Id(kryo::ids::STRING));
        }
        e.write_back_reference(first);
        if mode == kryo::ListMode::Tagged {
            e.write_class(Class::Id(kryo::ids::STRING));
        }
        e.write_back_reference(first);
        let bytes = e.finish();
        let v = Decoder::new(&bytes, d).read_value(&schemas()).unwrap();
        assert_eq!(v, Value::List(vec![Value::string("shared"); 3]));
    }
}

#[test]
fn a_back_reference_beyond_the_table_is_an_error() {
    for (_, d) in dialects() {
        // String class, then reference id 5 in an empty graph.
        let err = Decoder::new(&[3, 7], d).read_value(&schemas()).unwrap_err();
        assert!(
            matches!(
                err,
                DecodeError::BadReference {
                    id: 5,
                    known: 0,
                    ..
                }
            ),
            "{err}"
        );
    }
}

#[test]
fn a_class_name_id_out_of_sequence_is_an_error() {
    for (_, d) in dialects() {
        let err = Decoder::new(&[1, 3], d).read_value(&schemas()).unwrap_err();
        assert!(
            matches!(err, DecodeError::UnknownNameId { id: 3, .. }),
            "{err}"
        );
    }
}

#[test]
fn truncated_input_reports_where() {
    for (_, d) in dialects() {
        let mut e = Encoder::new(d);
        e.write_string_object("hello world, a longer string");
        let bytes = e.finish();
        let err = Decoder::new(&bytes[..bytes.len() - 3], d)
            .read_value(&schemas())
            .unwrap_err();
        assert!(
            matches!(err, DecodeError::Eof { .. } | DecodeError::Length { .. }),
            "{err}"
        );
    }
}

#[test]
fn an_unpaired_surrogate_is_an_error_not_a_panic() {
    // Java can write a lone surrogate (U+D800 as ED A0 80); Rust strings cannot hold it.
    for (_, d) in dialects() {
        let err = Decoder::new(&[0x82, 0xed, 0xa0, 0x80], d)
            .read_string()
            .unwrap_err();
        assert!(matches!(err, DecodeError::BadString { .. }), "{err}");
    }
}
