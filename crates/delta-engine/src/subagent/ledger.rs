//! The budgets of a run tree: a sub-agent spends from its own budget and from every
//! ancestor's, so that a child cannot outspend what its parent has left.
//!
//! Each run has a [`Ledger`] node linked to its parent's. An LLM call's cost and tokens
//! are added to the run's node and to every ancestor's, so a node always holds what its
//! whole subtree spent; the run checks its own node and then each ancestor's before every
//! LLM call and tool. Time is each node's own active time: a parent is active while its
//! children run, so its duration budget bounds theirs through its deadline.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::budget::{Budget, Exceeded, Spent};
use crate::run::RunId;

/// Money and tokens spent by a run and its descendants.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Spend {
    /// Estimated US dollars.
    pub cost_usd: f64,
    /// Input plus output tokens.
    pub tokens: u64,
}

/// One run's place in its tree's shared budgets. Cloning shares the node.
#[derive(Debug, Clone)]
pub struct Ledger(Arc<Node>);

#[derive(Debug)]
struct Node {
    run_id: RunId,
    parent: Option<Ledger>,
    budget: Budget,
    spent: Mutex<Spend>,
    /// Active time of the processes that drove the run before this one.
    before: Duration,
    /// When this process began driving it.
    since: Instant,
}

impl Ledger {
    /// The node of run `run_id` under `parent` (none for a top-level run), with its
    /// `budget`, what its subtree had `spent` before this process and its active time
    /// `before`.
    #[must_use]
    pub fn new(
        run_id: RunId,
        parent: Option<Ledger>,
        budget: Budget,
        spent: Spend,
        before: Duration,
    ) -> Self {
        Self(Arc::new(Node {
            run_id,
            parent,
            budget,
            spent: Mutex::new(spent),
            before,
            since: Instant::now(),
        }))
    }

    /// The same node with another budget and parent, for a run whose limits and tree are
    /// decided after it was created (before it starts any child).
    #[must_use]
    pub fn rebuilt(&self, budget: Budget, parent: Option<Ledger>) -> Self {
        Self(Arc::new(Node {
            run_id: self.0.run_id.clone(),
            parent,
            budget,
            spent: Mutex::new(self.spend_so_far()),
            before: self.0.before,
            since: self.0.since,
        }))
    }

    /// The run's own budget.
    #[must_use]
    pub fn budget(&self) -> Budget {
        self.0.budget
    }

    /// The node of the run's parent.
    #[must_use]
    pub fn parent(&self) -> Option<&Ledger> {
        self.0.parent.as_ref()
    }

    /// Adds an LLM call's cost and tokens to this run and every ancestor.
    pub fn spend(&self, cost_usd: f64, tokens: u64) {
        let mut node = Some(self);
        while let Some(ledger) = node {
            let mut spent = ledger
                .0
                .spent
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            spent.cost_usd += cost_usd;
            spent.tokens += tokens;
            drop(spent);
            node = ledger.parent();
        }
    }

    fn spend_so_far(&self) -> Spend {
        *self.0.spent.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// What the run's subtree has spent, and the run's active time.
    #[must_use]
    pub fn spent(&self) -> Spent {
        let spend = self.spend_so_far();
        Spent {
            cost_usd: spend.cost_usd,
            tokens: spend.tokens,
            duration: self.0.before + self.0.since.elapsed(),
        }
    }

    /// The first spent budget: the run's own, else the nearest ancestor's, with that
    /// ancestor's id.
    #[must_use]
    pub fn exceeded(&self) -> Option<(Exceeded, Option<RunId>)> {
        if let Some(exceeded) = self.0.budget.exceeded(self.spent()) {
            return Some((exceeded, None));
        }
        let mut node = self.parent();
        while let Some(ledger) = node {
            if let Some(exceeded) = ledger.0.budget.exceeded(ledger.spent()) {
                return Some((exceeded, Some(ledger.0.run_id.clone())));
            }
            node = ledger.parent();
        }
        None
    }

    /// When the first duration budget along the chain runs out, if any has one.
    #[must_use]
    pub fn deadline(&self) -> Option<Instant> {
        let mut earliest: Option<Instant> = None;
        let mut node = Some(self);
        while let Some(ledger) = node {
            if let Some(limit) = ledger.0.budget.max_duration {
                let at = ledger.0.since + limit.saturating_sub(ledger.0.before);
                earliest = Some(earliest.map_or(at, |e| e.min(at)));
            }
            node = ledger.parent();
        }
        earliest
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(text: &str) -> RunId {
        RunId::parse(text).unwrap()
    }

    fn tokens(limit: u64) -> Budget {
        Budget {
            max_tokens: Some(limit),
            ..Budget::default()
        }
    }

    #[test]
    fn a_child_spends_from_every_ancestor() {
        let root = Ledger::new(id("p"), None, tokens(100), Spend::default(), Duration::ZERO);
        let child = Ledger::new(
            id("p.1"),
            Some(root.clone()),
            Budget::default(),
            Spend::default(),
            Duration::ZERO,
        );
        let grandchild = Ledger::new(
            id("p.1.1"),
            Some(child.clone()),
            tokens(1000),
            Spend::default(),
            Duration::ZERO,
        );
        grandchild.spend(0.25, 60);
        child.spend(0.5, 30);
        assert_eq!(root.spent().tokens, 90);
        assert!((root.spent().cost_usd - 0.75).abs() < 1e-12);
        assert_eq!(child.spent().tokens, 90);
        assert_eq!(grandchild.spent().tokens, 60);
        assert_eq!(grandchild.exceeded(), None);
        grandchild.spend(0.0, 10);
        let (exceeded, by) = grandchild.exceeded().unwrap();
        assert_eq!(by, Some(id("p")));
        assert_eq!(exceeded.limit, 100.0);
        assert_eq!(exceeded.used, 100.0);
        assert_eq!(root.exceeded().unwrap().1, None);
    }

    #[test]
    fn the_earliest_deadline_of_the_chain_applies() {
        let budget = |secs| Budget {
            max_duration: Some(Duration::from_secs(secs)),
            ..Budget::default()
        };
        let root = Ledger::new(
            id("p"),
            None,
            budget(10),
            Spend::default(),
            Duration::from_secs(8),
        );
        let child = Ledger::new(
            id("p.1"),
            Some(root.clone()),
            budget(60),
            Spend::default(),
            Duration::ZERO,
        );
        let deadline = child.deadline().unwrap();
        assert!(deadline <= Instant::now() + Duration::from_secs(2));
        assert_eq!(root.rebuilt(Budget::default(), None).deadline(), None);
    }
}
