//! Recording a device graph while other threads use the same process's devices.
//!
//! A CubeCL device runs every command of every thread on one device thread, and CUDA records a
//! graph in its global capture mode: while one stream records, an allocation or a synchronising
//! call that another stream's command makes on that thread fails, and so does the recording.
//! So recordings take turns with other device work: [`Trainer::new`](super::Trainer::new),
//! [`Trainer::warm_up`](super::Trainer::warm_up), each [`Trainer::step`](super::Trainer::step),
//! [`Trainer::run`](super::Trainer::run) and [`fit`](super::fit) hold this thread's
//! [`DeviceShare`] while they run; a recording (the first steady iteration a trainer replays,
//! see [`FitOptions::replay`](super::FitOptions::replay)) runs only while no other thread holds
//! one; and a thread that holds a share for longer lets a waiting recording in at the start of
//! each step. A recording is one iteration, twice per image (the warm-up's and the fit's), so
//! the others wait a few milliseconds.
//!
//! A thread that does other device work (renders, reads of a trainer's sites) while trainers on
//! other threads may record takes a [`DeviceShare`] around it. ([`fit_many`](crate::sad::dataset::fit_many) launches its fits in flight op by op, which
//! measured faster, so its workers record nothing.)

use std::cell::RefCell;
use std::marker::PhantomData;
use std::sync::{Mutex, PoisonError, RwLock, RwLockReadGuard};

/// Held in shared mode by every thread that fits while others may record, and exclusively by a
/// recording.
static GATE: RwLock<()> = RwLock::new(());

/// Held by a recording from before it waits for the gate until it is done; a thread passes it
/// before each shared hold of the gate, so that a waiting recording gets in at the others' next
/// iterations whatever the platform's lock prefers.
static TURNSTILE: Mutex<()> = Mutex::new(());

thread_local! {
    /// This thread's share of the devices, while a [`DeviceShare`] of it lives.
    static HELD: RefCell<Option<RwLockReadGuard<'static, ()>>> = const { RefCell::new(None) };
}

/// This thread's share of the process's devices: while it lives, no other thread records a
/// device graph, except while this thread is between two iterations of a
/// [`Trainer`](super::Trainer) or records one itself. Take one on every thread that uses a
/// device while other threads fit with [`FitOptions::replay`](super::FitOptions::replay) on;
/// dropping it gives the share back. Not `Send`: it belongs to the thread that took it.
#[must_use = "the share lasts as long as the value"]
pub struct DeviceShare {
    /// Whether this value took the thread's share (a nested one leaves it to the outer one).
    outermost: bool,
    _not_send: PhantomData<*const ()>,
}

impl DeviceShare {
    /// Takes this thread's share, waiting while another thread records.
    pub fn take() -> Self {
        let outermost = HELD.with_borrow_mut(|held| {
            let outermost = held.is_none();
            if outermost {
                *held = Some(read_gate());
            }
            outermost
        });
        Self {
            outermost,
            _not_send: PhantomData,
        }
    }
}

impl Drop for DeviceShare {
    fn drop(&mut self) {
        if self.outermost {
            HELD.with_borrow_mut(|held| *held = None);
        }
    }
}

/// Lets a waiting recording in: gives this thread's share back and takes it again (nothing
/// without a share). Call it only where this thread has no work in flight that a recording must
/// not see interleaved: between iterations.
pub(crate) fn let_recordings_in() {
    HELD.with_borrow_mut(|held| {
        if held.take().is_some() {
            *held = Some(read_gate());
        }
    });
}

/// Runs `record` while no other thread holds a share: this thread's own share, if it has one,
/// is set aside meanwhile and taken again afterwards.
pub(crate) fn exclusive<R>(record: impl FnOnce() -> R) -> R {
    let had_share = HELD.with_borrow_mut(|held| held.take().is_some());
    let result = {
        let _first = TURNSTILE.lock().unwrap_or_else(PoisonError::into_inner);
        let _alone = GATE.write().unwrap_or_else(PoisonError::into_inner);
        record()
    };
    if had_share {
        HELD.with_borrow_mut(|held| *held = Some(read_gate()));
    }
    result
}

/// A shared hold of the gate; a panic while it was held poisons nothing it guards.
fn read_gate() -> RwLockReadGuard<'static, ()> {
    drop(TURNSTILE.lock().unwrap_or_else(PoisonError::into_inner));
    GATE.read().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Barrier};
    use std::time::Duration;

    #[test]
    fn a_recording_waits_for_shares_and_shares_nest() {
        let outer = DeviceShare::take();
        let inner = DeviceShare::take();
        drop(inner);
        // The outer share still holds the gate.
        assert!(GATE.try_write().is_err());
        let recorded = Arc::new(AtomicBool::new(false));
        let started = Arc::new(Barrier::new(2));
        let recorder = {
            let (recorded, started) = (recorded.clone(), started.clone());
            std::thread::spawn(move || {
                started.wait();
                exclusive(|| recorded.store(true, Ordering::SeqCst));
            })
        };
        started.wait();
        std::thread::sleep(Duration::from_millis(50));
        assert!(
            !recorded.load(Ordering::SeqCst),
            "recorded while a share was held"
        );
        // Between iterations the recording gets in (once the recorder is waiting).
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while !recorded.load(Ordering::SeqCst) {
            assert!(
                std::time::Instant::now() < deadline,
                "the recording never got in"
            );
            let_recordings_in();
            std::thread::sleep(Duration::from_millis(1));
        }
        recorder.join().unwrap();
        // A thread with a share records itself, and keeps its share afterwards.
        assert_eq!(exclusive(|| 7), 7);
        assert!(GATE.try_write().is_err());
        drop(outer);
        assert!(GATE.try_write().is_ok());
    }
}
