//! The table layout this crate writes: column names, the schema, the schema metadata that
//! records the embedding model, and the check that an existing table matches what a caller
//! asks for.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use arrow_schema::{DataType, Field, Schema, SchemaRef};

use crate::error::{IndexSpec, Op, VectorError};

/// The memory id column (UUIDv7 text, but any non-empty string works).
pub(crate) const ID_COLUMN: &str = "id";
/// The embedding column: a fixed-size list of `dim` f32.
pub(crate) const VECTOR_COLUMN: &str = "vector";

/// Schema metadata key holding the embedding model name.
const META_MODEL: &str = "echo_desk.model";
/// Schema metadata key holding the vector dimension (redundant with the column type; kept so
/// the table describes itself).
const META_DIM: &str = "echo_desk.dim";
/// Schema metadata key holding this crate's layout version.
const META_FORMAT: &str = "echo_desk.vector_format";
/// The layout written by this crate.
const FORMAT_VERSION: &str = "1";
/// Lance field metadata marking a column as (position 1 of) the unenforced primary key
/// (`lance_core::datatypes::LANCE_UNENFORCED_PRIMARY_KEY_POSITION`).
const PRIMARY_KEY_POSITION: &str = "lance-schema:unenforced-primary-key:position";

/// The schema of a table holding `spec`, with `spec` recorded in its metadata. Callers check
/// `spec.dim` fits in an `i32` first.
pub(crate) fn schema(spec: &IndexSpec) -> SchemaRef {
    let dim = i32::try_from(spec.dim).unwrap_or(i32::MAX);
    let fields = vec![
        // The unenforced primary key makes Lance's merge_insert record the keys it inserts,
        // so two writers inserting the same id concurrently conflict and retry instead of
        // both appending a row (measured: without it, concurrent upserts of one id duplicate).
        Field::new(ID_COLUMN, DataType::Utf8, false).with_metadata(HashMap::from([(
            PRIMARY_KEY_POSITION.to_owned(),
            "1".to_owned(),
        )])),
        Field::new(
            VECTOR_COLUMN,
            DataType::FixedSizeList(Arc::new(Field::new("item", DataType::Float32, true)), dim),
            false,
        ),
    ];
    let metadata = HashMap::from([
        (META_MODEL.to_owned(), spec.model.clone()),
        (META_DIM.to_owned(), spec.dim.to_string()),
        (META_FORMAT.to_owned(), FORMAT_VERSION.to_owned()),
    ]);
    Arc::new(Schema::new_with_metadata(fields, metadata))
}

/// Checks that the table on disk is ours and holds `wanted`.
pub(crate) fn check(
    dir: &Path,
    op: Op,
    found: &Schema,
    wanted: &IndexSpec,
) -> Result<(), VectorError> {
    let incompatible = |detail: String| VectorError::Incompatible {
        dir: dir.to_path_buf(),
        op,
        detail,
    };
    let field = |name: &str| {
        found
            .field_with_name(name)
            .map_err(|_| incompatible(format!("no column {name:?}")))
    };
    let id = field(ID_COLUMN)?;
    if !matches!(id.data_type(), DataType::Utf8) {
        return Err(incompatible(format!(
            "column {ID_COLUMN:?} is {}, not Utf8",
            id.data_type()
        )));
    }
    let vector = field(VECTOR_COLUMN)?;
    let dim = match vector.data_type() {
        DataType::FixedSizeList(item, size) if matches!(item.data_type(), DataType::Float32) => {
            usize::try_from(*size)
                .map_err(|_| incompatible(format!("column {VECTOR_COLUMN:?} has size {size}")))?
        }
        other => {
            return Err(incompatible(format!(
                "column {VECTOR_COLUMN:?} is {other}, not a fixed-size list of Float32"
            )));
        }
    };
    let metadata: &HashMap<String, String> = found.metadata();
    let model = metadata.get(META_MODEL).cloned().unwrap_or_default();
    let found = IndexSpec { dim, model };
    if &found != wanted {
        return Err(VectorError::IndexMismatch {
            dir: dir.to_path_buf(),
            op,
            found,
            wanted: wanted.clone(),
        });
    }
    Ok(())
}
