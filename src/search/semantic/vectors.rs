//! Vectors as the index keeps them, quantised to one signed byte a
//! dimension with the scale that undoes it (a quarter of the room of
//! floats; the order of cosine similarities barely moves), and the items'
//! vectors held in memory for a scan that scores them all.

use rusqlite::Connection;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::records;
use crate::store::StoreError;

/// A unit vector, quantised.
#[derive(Debug, Clone, PartialEq)]
pub struct Vector {
    scale: f32,
    values: Box<[i8]>,
}

impl Vector {
    /// `values` normalised to unit length, then quantised.
    pub fn of(values: &[f32]) -> Vector {
        let length = values.iter().map(|v| v * v).sum::<f32>().sqrt();
        let largest = values.iter().fold(0f32, |m, v| m.max(v.abs()));
        if length == 0.0 || largest == 0.0 || !length.is_finite() {
            return Vector {
                scale: 0.0,
                values: vec![0; values.len()].into(),
            };
        }
        let scale = largest / length / 127.0;
        let values = values
            .iter()
            .map(|v| (v / length / scale).round().clamp(-127.0, 127.0) as i8)
            .collect();
        Vector { scale, values }
    }

    /// As stored: None when the bytes are not a vector.
    pub fn from_stored(scale: f64, bytes: &[u8]) -> Option<Vector> {
        (scale.is_finite() && !bytes.is_empty()).then(|| Vector {
            scale: scale as f32,
            values: bytes.iter().map(|b| *b as i8).collect(),
        })
    }

    pub fn scale(&self) -> f64 {
        f64::from(self.scale)
    }

    pub fn bytes(&self) -> Vec<u8> {
        self.values.iter().map(|v| *v as u8).collect()
    }

    pub fn dimensions(&self) -> usize {
        self.values.len()
    }

    /// Adds this vector, times `weight`, to `sum`.
    pub fn add_to(&self, sum: &mut [f32], weight: f32) {
        let factor = self.scale * weight;
        for (total, value) in sum.iter_mut().zip(self.values.iter()) {
            *total += f32::from(*value) * factor;
        }
    }
}

/// The cosine similarity of two quantised unit vectors.
fn dot(a: &[i8], b: &[i8]) -> i32 {
    a.iter()
        .zip(b)
        .map(|(x, y)| i32::from(*x) * i32::from(*y))
        .sum()
}

/// Every item vector of one database, in one block for the scan.
#[derive(Default)]
pub struct Matrix {
    dimensions: usize,
    ids: Vec<i64>,
    scales: Vec<f32>,
    values: Vec<i8>,
}

impl Matrix {
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// A matrix of `rows` (id, values), ascending by id.
    #[cfg(test)]
    pub fn for_tests(rows: &[(i64, &[f32])]) -> Matrix {
        let mut matrix = Matrix::default();
        for (id, values) in rows {
            matrix.push(*id, &Vector::of(values));
        }
        matrix
    }

    fn push(&mut self, id: i64, vector: &Vector) {
        if self.ids.is_empty() {
            self.dimensions = vector.dimensions();
        }
        if vector.dimensions() != self.dimensions {
            return;
        }
        self.ids.push(id);
        self.scales.push(vector.scale);
        self.values.extend_from_slice(&vector.values);
    }

    /// The similarity of item `id` to `query`, when it has a vector.
    pub fn similarity(&self, id: i64, query: &Vector) -> Option<f32> {
        let at = self.ids.binary_search(&id).ok()?;
        let values = self
            .values
            .get(at * self.dimensions..(at + 1) * self.dimensions)?;
        (query.dimensions() == self.dimensions)
            .then(|| dot(values, &query.values) as f32 * self.scales[at] * query.scale)
    }

    /// The items most like `query`, best first, with their similarity
    /// (-1 to 1): those `keep` lets through, at most `most`.
    pub fn nearest(
        &self,
        query: &Vector,
        most: usize,
        keep: impl Fn(i64) -> bool,
    ) -> Vec<(i64, f32)> {
        if self.dimensions != query.dimensions() || self.dimensions == 0 {
            return Vec::new();
        }
        let mut scored: Vec<(f32, usize)> = self
            .values
            .chunks_exact(self.dimensions)
            .zip(&self.scales)
            .enumerate()
            .map(|(at, (values, scale))| {
                (dot(values, &query.values) as f32 * scale * query.scale, at)
            })
            .collect();
        // best first; ties by row id, so answers are the same every time
        let order = |a: &(f32, usize), b: &(f32, usize)| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1));
        let mut wanted = most.saturating_mul(4).max(64);
        loop {
            if wanted < scored.len() {
                scored.select_nth_unstable_by(wanted, order);
            }
            let end = wanted.min(scored.len());
            let head = &mut scored[..end];
            head.sort_unstable_by(order);
            let kept: Vec<(i64, f32)> = head
                .iter()
                .map(|(score, at)| (self.ids[*at], *score))
                .filter(|(id, _)| keep(*id))
                .take(most)
                .collect();
            if kept.len() == most || wanted >= scored.len() {
                return kept;
            }
            wanted = wanted.saturating_mul(4);
        }
    }
}

/// What the matrix of a database was read up to.
struct Held {
    matrix: Arc<Matrix>,
    /// The highest item id read.
    through: i64,
    /// The vectors' count of changes when it was read.
    changes: i64,
}

static HELD: Mutex<Option<HashMap<PathBuf, Held>>> = Mutex::new(None);

/// The item vectors of the database at `database` made by `model`, as `c`
/// sees them (none when they are another model's): kept
/// while their count of changes stays; then rows added since the last
/// read are read alone, and a row gone (or a model changed) reads all.
pub fn matrix(c: &Connection, database: &Path, model: &str) -> Result<Arc<Matrix>, StoreError> {
    // vectors of another model (the pass has not adopted this one yet) are none
    let changes = match records::vectors_state(c)? {
        Some((stored, changes)) if stored == model => changes,
        _ => return Ok(Arc::new(Matrix::default())),
    };
    let mut held = HELD.lock().unwrap_or_else(|p| p.into_inner());
    let held = held.get_or_insert_with(HashMap::new);
    if let Some(kept) = held.get(database)
        && kept.changes == changes
    {
        return Ok(kept.matrix.clone());
    }
    let (count, highest) = records::vectors_held(c)?;
    let mut matrix = Matrix::default();
    let mut from = 0;
    if let Some(kept) = held.remove(database)
        && kept.matrix.len() as i64 + records::vectors_after(c, kept.through)? == count
    {
        matrix = Arc::try_unwrap(kept.matrix).unwrap_or_else(|shared| Matrix {
            dimensions: shared.dimensions,
            ids: shared.ids.clone(),
            scales: shared.scales.clone(),
            values: shared.values.clone(),
        });
        from = kept.through;
    }
    records::each_vector_after(c, from, |id, scale, bytes| {
        if let Some(vector) = Vector::from_stored(scale, bytes) {
            matrix.push(id, &vector);
        }
    })?;
    let matrix = Arc::new(matrix);
    held.insert(
        database.to_path_buf(),
        Held {
            matrix: matrix.clone(),
            through: highest,
            changes,
        },
    );
    Ok(matrix)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantised_vectors_keep_the_order_of_similarities() {
        let a = Vector::of(&[1.0, 0.0, 0.0]);
        let b = Vector::of(&[0.9, 0.1, 0.0]);
        let c = Vector::of(&[0.0, 1.0, 0.2]);
        let mut matrix = Matrix::default();
        matrix.push(1, &b);
        matrix.push(2, &c);
        matrix.push(3, &a);
        let nearest = matrix.nearest(&a, 3, |_| true);
        let ids: Vec<i64> = nearest.iter().map(|(id, _)| *id).collect();
        assert_eq!(ids, [3, 1, 2]);
        assert!((nearest[0].1 - 1.0).abs() < 0.02, "{nearest:?}");
        let kept = matrix.nearest(&a, 1, |id| id != 3);
        assert_eq!(kept[0].0, 1, "what keep leaves out is skipped");
    }

    #[test]
    fn a_vector_survives_its_storage() {
        let v = Vector::of(&[0.3, -0.2, 0.5, 0.0]);
        assert_eq!(Vector::from_stored(v.scale(), &v.bytes()), Some(v));
        assert_eq!(
            Vector::of(&[0.0, 0.0]).scale(),
            0.0,
            "a zero vector stays zero"
        );
    }
}
