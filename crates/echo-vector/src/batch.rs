//! Arrow conversions: the record batch written by an upsert, and the ids and distances read
//! back from queries. Inputs are validated by the caller before they get here.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::{
    Array, FixedSizeListArray, Float32Array, RecordBatch, StringArray, cast::AsArray,
    types::Float32Type,
};
use arrow_schema::{ArrowError, DataType, Field, SchemaRef};

use crate::layout::ID_COLUMN;

/// Column LanceDB adds to vector search results (asked for by name: LanceDB warns that it
/// will stop adding it unasked).
pub(crate) const DISTANCE_COLUMN: &str = "_distance";

/// The items with duplicate ids collapsed to the last occurrence, in first-seen order. A
/// `merge_insert` source must not match one target row twice.
pub(crate) fn last_per_id(items: &[(String, Vec<f32>)]) -> Vec<(&str, &[f32])> {
    let mut position: HashMap<&str, usize> = HashMap::with_capacity(items.len());
    let mut rows: Vec<(&str, &[f32])> = Vec::with_capacity(items.len());
    for (id, vector) in items {
        match position.get(id.as_str()) {
            Some(&at) => rows[at].1 = vector,
            None => {
                position.insert(id, rows.len());
                rows.push((id, vector));
            }
        }
    }
    rows
}

/// One record batch of `rows`, every vector already checked to have `dim` values.
pub(crate) fn rows(
    schema: &SchemaRef,
    dim: usize,
    rows: &[(&str, &[f32])],
) -> Result<RecordBatch, ArrowError> {
    let size = i32::try_from(dim)
        .map_err(|_| ArrowError::InvalidArgumentError(format!("dimension {dim} too large")))?;
    let ids = StringArray::from_iter_values(rows.iter().map(|(id, _)| *id));
    let mut values = Vec::with_capacity(rows.len() * dim);
    for (_, vector) in rows {
        values.extend_from_slice(vector);
    }
    let item = Arc::new(Field::new("item", DataType::Float32, true));
    let vectors =
        FixedSizeListArray::try_new(item, size, Arc::new(Float32Array::from(values)), None)?;
    RecordBatch::try_new(schema.clone(), vec![Arc::new(ids), Arc::new(vectors)])
}

/// `(id, similarity)` from vector search results, where similarity = 1 − cosine distance.
pub(crate) fn hits(batches: &[RecordBatch]) -> Result<Vec<(String, f32)>, ArrowError> {
    let mut hits = Vec::new();
    for batch in batches {
        let ids = string_column(batch, ID_COLUMN)?;
        let distances = batch
            .column_by_name(DISTANCE_COLUMN)
            .ok_or_else(|| missing(DISTANCE_COLUMN))?
            .as_primitive_opt::<Float32Type>()
            .ok_or_else(|| wrong_type(DISTANCE_COLUMN, "Float32"))?;
        for row in 0..batch.num_rows() {
            if ids.is_null(row) || distances.is_null(row) {
                continue;
            }
            let similarity = (1.0 - distances.value(row)).clamp(-1.0, 1.0);
            hits.push((ids.value(row).to_owned(), similarity));
        }
    }
    Ok(hits)
}

/// The ids of plain query results.
pub(crate) fn ids(batches: &[RecordBatch]) -> Result<Vec<String>, ArrowError> {
    let mut ids = Vec::new();
    for batch in batches {
        let column = string_column(batch, ID_COLUMN)?;
        ids.extend(column.iter().flatten().map(str::to_owned));
    }
    Ok(ids)
}

fn string_column<'a>(batch: &'a RecordBatch, name: &str) -> Result<&'a StringArray, ArrowError> {
    batch
        .column_by_name(name)
        .ok_or_else(|| missing(name))?
        .as_string_opt::<i32>()
        .ok_or_else(|| wrong_type(name, "Utf8"))
}

fn missing(name: &str) -> ArrowError {
    ArrowError::SchemaError(format!("result has no column {name:?}"))
}

fn wrong_type(name: &str, wanted: &str) -> ArrowError {
    ArrowError::SchemaError(format!("result column {name:?} is not {wanted}"))
}
