//! Test support for the black-box purge test: what a request's data looks like on disk, and whether such
//! bytes still open with the keys the store holds.

use crate::requests::member_slot;
use crate::seal::Sealed;
use crate::{RequestId, StorageError, Store};

/// The tree, key and sealed bytes of a stored value.
pub type SealedBytes = (&'static str, Vec<u8>, Vec<u8>);

/// Test support: what a request's data looks like on disk, and whether such bytes still open.
impl Store {
    /// The stored (sealed) bytes that hold request `id` now: its own record, or its batch's chunk; with
    /// the tree and key they are stored under.
    #[doc(hidden)]
    pub fn sealed_bytes_for_tests(
        &self,
        id: &RequestId,
    ) -> Result<Option<SealedBytes>, StorageError> {
        if let Some(bytes) = self.group.requests.get(id.as_bytes())? {
            return Ok(Some((
                crate::trees::REQUESTS,
                id.as_bytes().to_vec(),
                bytes.to_vec(),
            )));
        }
        let Some((key, _)) = member_slot(id) else {
            return Ok(None);
        };
        Ok(self
            .group
            .intake
            .get(&key)?
            .map(|bytes| (crate::trees::INTAKE, key, bytes.to_vec())))
    }

    /// Whether `bytes`, once stored under `key` in `tree`, open with the keys this store holds now.
    #[doc(hidden)]
    pub fn opens_for_tests(&self, tree: &str, key: &[u8], bytes: &[u8]) -> bool {
        let tree = match tree {
            crate::trees::REQUESTS => Sealed::Requests,
            crate::trees::INTAKE => Sealed::Intake,
            _ => Sealed::Deliveries,
        };
        self.sealer.open(tree, key, bytes).is_ok()
    }
}
