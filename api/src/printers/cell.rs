//! Table cells, and a row's cells kept as JSON between Tables.
//!
//! A cell that says how long ago something happened (an Age, a Job's
//! running duration, a Pod's last restart) keeps the instant, not the text:
//! it is written against the time of the response. So a row is made once
//! per version of an object and every later Table of it writes the kept
//! row, where making it needs the object's tree.

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::values::human_duration;

/// One cell of a Table row.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    /// A cell that does not depend on the time.
    Fixed(Value),
    Since(Since),
}

/// How long before the response `at` was, between `before` and `after`
/// ("3 (" and " ago)" make a Pod's "3 (5m ago)"); "<unknown>" alone
/// without an instant, as upstream prints a missing one.
#[derive(Debug, Clone, PartialEq)]
pub struct Since {
    pub before: Box<str>,
    pub at: Option<DateTime<Utc>>,
    pub after: &'static str,
}

impl Since {
    fn text(&self, now: DateTime<Utc>) -> String {
        match self.at {
            Some(at) => format!("{}{}{}", self.before, human_duration(now - at), self.after),
            None => "<unknown>".to_string(),
        }
    }
}

impl Cell {
    /// How long before the response `at` was.
    pub fn since(at: Option<DateTime<Utc>>) -> Self {
        Cell::Since(Since {
            before: "".into(),
            at,
            after: "",
        })
    }

    /// The cell as a response made at `now` shows it.
    pub fn at(&self, now: DateTime<Utc>) -> Value {
        match self {
            Cell::Fixed(value) => value.clone(),
            Cell::Since(since) => Value::String(since.text(now)),
        }
    }
}

impl<T: Into<Value>> From<T> for Cell {
    fn from(value: T) -> Self {
        Cell::Fixed(value.into())
    }
}

/// Cells as a response made at `now` shows them.
pub fn cells_at(cells: &[Cell], now: DateTime<Utc>) -> Vec<Value> {
    cells.iter().map(|cell| cell.at(now)).collect()
}

/// A row's cells as the JSON array they serialize to, written at any later
/// time: the cells that do not depend on the time as their bytes, the
/// others as their instants, written into those bytes where they stand.
#[derive(Debug)]
pub struct RowJson {
    fixed: Box<[u8]>,
    since: Box<[SinceAt]>,
}

/// A time-dependent cell and where in the fixed bytes it is written.
#[derive(Debug)]
struct SinceAt {
    offset: usize,
    since: Since,
}

impl RowJson {
    pub fn of(cells: &[Cell]) -> Self {
        let mut fixed = vec![b'['];
        let mut since = Vec::new();
        for (i, cell) in cells.iter().enumerate() {
            if i > 0 {
                fixed.push(b',');
            }
            match cell {
                // A tree writes into a Vec without failing.
                Cell::Fixed(value) => {
                    let _ = serde_json::to_writer(&mut fixed, value);
                }
                Cell::Since(cell) => since.push(SinceAt {
                    offset: fixed.len(),
                    since: cell.clone(),
                }),
            }
        }
        fixed.push(b']');
        RowJson {
            fixed: fixed.into_boxed_slice(),
            since: since.into_boxed_slice(),
        }
    }

    /// The cells' JSON array as a response made at `now` shows them.
    pub fn write(&self, now: DateTime<Utc>, out: &mut Vec<u8>) {
        let mut written = 0;
        for cell in self.since.iter() {
            out.extend_from_slice(&self.fixed[written..cell.offset]);
            written = cell.offset;
            let _ = serde_json::to_writer(&mut *out, &cell.since.text(now));
        }
        out.extend_from_slice(&self.fixed[written..]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeDelta;
    use serde_json::json;

    fn now() -> DateTime<Utc> {
        DateTime::parse_from_rfc3339("2024-06-01T12:00:00Z")
            .map(|t| t.with_timezone(&Utc))
            .expect("valid test timestamp")
    }

    #[test]
    fn a_since_cell_is_written_against_the_time_of_the_response() {
        let created = now() - TimeDelta::seconds(200);
        let cell = Cell::since(Some(created));
        assert_eq!(cell.at(now()), json!("3m20s"));
        assert_eq!(cell.at(now() + TimeDelta::hours(3)), json!("3h3m"));
        assert_eq!(Cell::since(None).at(now()), json!("<unknown>"));
        let restarts = Cell::Since(Since {
            before: "3 (".into(),
            at: Some(created),
            after: " ago)",
        });
        assert_eq!(restarts.at(now()), json!("3 (3m20s ago)"));
    }

    #[test]
    fn a_kept_row_writes_what_its_cells_serialize_to_at_any_time() {
        let created = now() - TimeDelta::seconds(90);
        let rows: Vec<Vec<Cell>> = vec![
            vec![],
            vec![Cell::since(Some(created))],
            vec!["a\"b".into(), 3.into(), Cell::since(Some(created))],
            vec![
                Cell::since(None),
                json!({"k": [1, null]}).into(),
                Cell::since(Some(created)),
                Cell::since(Some(created)),
                true.into(),
            ],
        ];
        for cells in rows {
            let kept = RowJson::of(&cells);
            for later in [0, 59, 3600, 86400 * 3] {
                let at = now() + TimeDelta::seconds(later);
                let mut written = Vec::new();
                kept.write(at, &mut written);
                let expected = serde_json::to_vec(&cells_at(&cells, at)).expect("serializes");
                assert_eq!(
                    String::from_utf8_lossy(&written),
                    String::from_utf8_lossy(&expected)
                );
            }
        }
    }
}
