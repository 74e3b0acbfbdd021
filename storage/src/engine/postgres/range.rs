//! A range of a tree of the PostgreSQL engine, read page by page from either end.

use std::collections::VecDeque;

use super::tree::{column, PgTree};
use super::{wait, Conn};
use crate::engine::Bytes;

/// Rows read by the first page of a range, doubled at each next page up to [`MAX_PAGE`]: a range read for
/// its first or last key reads a handful, a scan reads big pages.
const FIRST_PAGE: i64 = 16;
const MAX_PAGE: i64 = 1024;

/// A range read page by page, from either end.
pub(crate) struct PgIter {
    tree: PgTree,
    /// Keys at or after `low` and before `high` are still to come.
    low: Vec<u8>,
    high: Option<Vec<u8>>,
    front: VecDeque<(Bytes, Bytes)>,
    back: VecDeque<(Bytes, Bytes)>,
    front_page: i64,
    back_page: i64,
    front_done: bool,
    back_done: bool,
}

impl PgIter {
    /// The keys at or after `low` and before `high` (no end: `None`).
    pub(super) fn new(tree: PgTree, low: Vec<u8>, high: Option<Vec<u8>>) -> PgIter {
        PgIter {
            tree,
            low,
            high,
            front: VecDeque::new(),
            back: VecDeque::new(),
            front_page: FIRST_PAGE,
            back_page: FIRST_PAGE,
            front_done: false,
            back_done: false,
        }
    }

    fn within(&self, key: &[u8]) -> bool {
        key >= self.low.as_slice() && self.high.as_deref().is_none_or(|high| key < high)
    }

    fn fill(&mut self, forward: bool) -> sled::Result<()> {
        let limit = if forward {
            self.front_page
        } else {
            self.back_page
        };
        let page = self.tree.page(Page {
            low: &self.low,
            high: self.high.as_deref(),
            forward,
            limit,
        })?;
        let (done, size, buffer) = if forward {
            (&mut self.front_done, &mut self.front_page, &mut self.front)
        } else {
            (&mut self.back_done, &mut self.back_page, &mut self.back)
        };
        *done = (page.len() as i64) < limit;
        *size = (*size * 2).min(MAX_PAGE);
        buffer.extend(page);
        Ok(())
    }

    fn step(&mut self, forward: bool) -> Option<sled::Result<(Bytes, Bytes)>> {
        loop {
            let buffered = if forward {
                self.front.pop_front()
            } else {
                self.back.pop_front()
            };
            match buffered {
                Some((key, value)) => {
                    if !self.within(&key) {
                        // The other end has passed it already.
                        self.front_done = true;
                        self.back_done = true;
                        return None;
                    }
                    if forward {
                        let mut low = key.to_vec();
                        low.push(0);
                        self.low = low;
                    } else {
                        self.high = Some(key.to_vec());
                    }
                    return Some(Ok((key, value)));
                }
                None => {
                    let done = if forward {
                        self.front_done
                    } else {
                        self.back_done
                    };
                    if done {
                        return None;
                    }
                    if let Err(e) = self.fill(forward) {
                        self.front_done = true;
                        self.back_done = true;
                        return Some(Err(e));
                    }
                    let empty = if forward {
                        self.front.is_empty()
                    } else {
                        self.back.is_empty()
                    };
                    if empty {
                        return None;
                    }
                }
            }
        }
    }
}

impl Iterator for PgIter {
    type Item = sled::Result<(Bytes, Bytes)>;

    fn next(&mut self) -> Option<Self::Item> {
        self.step(true)
    }
}

impl DoubleEndedIterator for PgIter {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.step(false)
    }
}

/// One page of a range: up to `limit` rows of `[low, high)` (no end: `None`), from the low end when
/// `forward`.
#[derive(Clone, Copy)]
pub(super) struct Page<'a> {
    low: &'a [u8],
    high: Option<&'a [u8]>,
    forward: bool,
    limit: i64,
}

impl PgTree {
    /// The rows of `page`; after a conflict, again after a pause.
    pub(super) fn page(&self, page: Page<'_>) -> sled::Result<Vec<(Bytes, Bytes)>> {
        let name = self.name();
        self.retried(|conn| wait(page_rows(conn, name, page)))
    }

    /// [`PgTree::page`], awaited.
    pub(super) async fn page_async(&self, page: Page<'_>) -> sled::Result<Vec<(Bytes, Bytes)>> {
        let name = self.name();
        self.retried_async(|conn| async move { page_rows(&conn, name, page).await })
            .await
    }

    /// Up to `limit` rows of `[low, high)`, from the high end when `reverse`, read a page at a time
    /// without holding the thread.
    pub(crate) async fn read_range(
        &self,
        mut low: Vec<u8>,
        mut high: Option<Vec<u8>>,
        reverse: bool,
        limit: usize,
    ) -> sled::Result<Vec<(Bytes, Bytes)>> {
        let mut rows = Vec::new();
        let mut page = FIRST_PAGE;
        while rows.len() < limit {
            let wanted = page.min((limit - rows.len()).try_into().unwrap_or(MAX_PAGE));
            let read = self
                .page_async(Page {
                    low: &low,
                    high: high.as_deref(),
                    forward: !reverse,
                    limit: wanted,
                })
                .await?;
            let done = (read.len() as i64) < wanted;
            if let Some((last, _)) = read.last() {
                if reverse {
                    high = Some(last.to_vec());
                } else {
                    low = last.to_vec();
                    low.push(0);
                }
            }
            rows.extend(read);
            if done {
                break;
            }
            page = (page * 2).min(MAX_PAGE);
        }
        Ok(rows)
    }
}

/// The statement of `page` of tree `name`, on `conn`.
async fn page_rows(
    conn: &Conn,
    name: &str,
    page: Page<'_>,
) -> Result<Vec<(Bytes, Bytes)>, tokio_postgres::Error> {
    let Page {
        low,
        high,
        forward,
        limit,
    } = page;
    let statement = match (high.is_some(), forward) {
        (true, true) => &conn.forward,
        (false, true) => &conn.forward_open,
        (true, false) => &conn.backward,
        (false, false) => &conn.backward_open,
    };
    let rows = match high {
        Some(high) => {
            conn.client
                .query(statement, &[&name, &low, &high, &limit])
                .await
        }
        None => conn.client.query(statement, &[&name, &low, &limit]).await,
    }?;
    Ok(rows
        .iter()
        .map(|row| (column(row, 0), column(row, 1)))
        .collect())
}
