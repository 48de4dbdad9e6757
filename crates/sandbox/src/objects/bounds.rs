//! How much one sandbox may keep.

/// How much one sandbox may keep, in all its collections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Bounds {
    /// Objects at most.
    pub(crate) objects: u64,
    /// Bytes of their JSON at most.
    pub(crate) bytes: u64,
}

impl Default for Bounds {
    /// 10 000 objects and 16 MiB: a test's worth, and 1 000 sandboxes still fit a small machine
    /// only when few fill theirs (the bound is per sandbox, a backstop against a runaway loop).
    fn default() -> Self {
        Self {
            objects: 10_000,
            bytes: 16 << 20,
        }
    }
}

impl Bounds {
    /// `Ok` when `objects` and `bytes` fit.
    pub(crate) fn check(&self, objects: u64, bytes: u64) -> Result<(), super::error::ObjectsError> {
        if objects > self.objects {
            return Err(super::error::ObjectsError::Full {
                what: "objects",
                held: objects,
                bound: self.objects,
            });
        }
        if bytes > self.bytes {
            return Err(super::error::ObjectsError::Full {
                what: "bytes",
                held: bytes,
                bound: self.bytes,
            });
        }
        Ok(())
    }
}
