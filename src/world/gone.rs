//! When a table keyed by entity looks for the entities gone from the world, so that
//! a game that spawns and despawns things every turn does not grow it without end.

/// When a table keyed by entity should look for entries of entities gone: once it
/// holds twice as many as its last look kept (at least [`FIRST_LOOK`](Self::FIRST_LOOK)), so that
/// looking costs little however many come and go.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ForgetGone {
    look_at: usize,
}

impl Default for ForgetGone {
    fn default() -> Self {
        Self {
            look_at: Self::FIRST_LOOK,
        }
    }
}

impl ForgetGone {
    /// The fewest entries that make a table look for entities gone.
    pub(crate) const FIRST_LOOK: usize = 64;

    /// Whether a table of `held` entries should look now.
    pub(crate) fn is_due(&self, held: usize) -> bool {
        held >= self.look_at
    }

    /// Notes that a look kept `kept` entries.
    pub(crate) fn looked(&mut self, kept: usize) {
        self.look_at = (2 * kept).max(Self::FIRST_LOOK);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_looks_once_it_doubled_since_the_last_look() {
        let mut forget = ForgetGone::default();
        assert!(!forget.is_due(ForgetGone::FIRST_LOOK - 1));
        assert!(forget.is_due(ForgetGone::FIRST_LOOK));
        forget.looked(100);
        assert!(!forget.is_due(199));
        assert!(forget.is_due(200));
        forget.looked(3);
        assert!(
            !forget.is_due(ForgetGone::FIRST_LOOK - 1),
            "never sooner than the first"
        );
    }
}
