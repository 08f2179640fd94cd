//! The request to stop a run early: SIGINT or SIGTERM, or a caller's trigger.
//!
//! A [`Shutdown`] is a cheap, clonable receiver; the loop races every LLM call, tool and
//! context generator against it and abandons the loser. Abandoning is enough to cancel:
//! dropping the HTTP future closes the connection, and dropping a process future kills
//! its process group.

use std::fmt;

use tokio::sync::watch;

/// Why a run is asked to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopSignal {
    /// SIGINT (Ctrl+C).
    Interrupt,
    /// SIGTERM.
    Terminate,
}

impl StopSignal {
    /// The signal's name, `SIGINT` or `SIGTERM`.
    pub fn name(self) -> &'static str {
        match self {
            StopSignal::Interrupt => "SIGINT",
            StopSignal::Terminate => "SIGTERM",
        }
    }
}

impl fmt::Display for StopSignal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Receives the stop request.
#[derive(Debug, Clone)]
pub struct Shutdown(watch::Receiver<Option<StopSignal>>);

/// Sends the stop request (for callers and tests that stop a run without a signal).
#[derive(Debug)]
pub struct ShutdownTrigger(watch::Sender<Option<StopSignal>>);

impl ShutdownTrigger {
    /// Asks the run to stop as if `signal` had arrived. Later calls change nothing.
    pub fn trigger(&self, signal: StopSignal) {
        self.0.send_if_modified(|current| {
            if current.is_none() {
                *current = Some(signal);
                true
            } else {
                false
            }
        });
    }
}

impl Shutdown {
    /// A pair for stopping the run by hand.
    pub fn manual() -> (ShutdownTrigger, Shutdown) {
        let (sender, receiver) = watch::channel(None);
        (ShutdownTrigger(sender), Shutdown(receiver))
    }

    /// A shutdown that never comes.
    pub fn never() -> Shutdown {
        Shutdown::manual().1
    }

    /// Stops on the first SIGINT or SIGTERM. Installing the handlers replaces the default
    /// action (terminate at once), so the run gets to journal how it ended; a second
    /// signal while it does so is ignored, as the shutdown is already under way.
    ///
    /// Must be called inside a tokio runtime.
    ///
    /// # Errors
    /// When a signal handler cannot be installed.
    pub fn on_signals() -> std::io::Result<Shutdown> {
        use tokio::signal::unix::{SignalKind, signal};
        let mut interrupt = signal(SignalKind::interrupt())?;
        let mut terminate = signal(SignalKind::terminate())?;
        let (trigger, shutdown) = Shutdown::manual();
        tokio::spawn(async move {
            loop {
                let received = tokio::select! {
                    Some(()) = interrupt.recv() => StopSignal::Interrupt,
                    Some(()) = terminate.recv() => StopSignal::Terminate,
                    else => break,
                };
                trigger.trigger(received);
            }
        });
        Ok(shutdown)
    }

    /// The stop request, if one has arrived.
    pub fn requested(&self) -> Option<StopSignal> {
        *self.0.borrow()
    }

    /// Waits for the stop request; never returns when none can come.
    pub async fn wait(&mut self) -> StopSignal {
        if let Ok(signal) = self.0.wait_for(Option::is_some).await
            && let Some(signal) = *signal
        {
            return signal;
        }
        // The trigger is gone without firing: no request can come any more.
        std::future::pending().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn trigger_is_seen_by_every_clone_and_the_first_signal_wins() {
        let (trigger, mut shutdown) = Shutdown::manual();
        let mut other = shutdown.clone();
        assert_eq!(shutdown.requested(), None);
        trigger.trigger(StopSignal::Terminate);
        trigger.trigger(StopSignal::Interrupt);
        assert_eq!(shutdown.wait().await, StopSignal::Terminate);
        assert_eq!(other.wait().await, StopSignal::Terminate);
    }

    #[tokio::test]
    async fn never_does_not_fire() {
        let mut shutdown = Shutdown::never();
        let waited =
            tokio::time::timeout(std::time::Duration::from_millis(20), shutdown.wait()).await;
        assert!(waited.is_err());
    }
}
