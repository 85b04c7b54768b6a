//! A pool of the library's own threads for the sharded learner: a fixed set of workers,
//! started once, that run the tasks of one call at a time, task `t` always on thread
//! `t % threads` (the caller is thread 0).
//!
//! Why not `rayon`: a job handed to rayon's pool from outside goes through its global
//! injector, a queue of blocks of 63 slots from `crossbeam-deque`, which allocates a new
//! block each time one fills, so a training step would allocate every few dozen steps (the
//! learner promises none after the first). Work stealing would also move a shard from one
//! thread to another between steps, and with it the per-thread pools of blocks that the
//! activations come from; a fixed assignment warms each thread's pool in the first step. What
//! is left is a round counter, a mutex and two condition variables: no allocation per call.

use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long a thread polls for the next round, or for the end of this one, before it sleeps
/// on a condition variable: a training loop hands out a round every few hundred
/// microseconds, and a wake-up from sleep costs about as much as a small shard.
const SPIN: Duration = Duration::from_micros(100);

/// Polls `ready` until it holds or [`SPIN`] has passed; whether it holds.
fn spin(ready: impl Fn() -> bool) -> bool {
    let start = Instant::now();
    loop {
        // The clock is read once per 64 polls (a `pause` takes tens of cycles, a clock read
        // a few dozen nanoseconds).
        for _ in 0..64 {
            if ready() {
                return true;
            }
            core::hint::spin_loop();
        }
        if start.elapsed() >= SPIN {
            return ready();
        }
    }
}

/// One round's work: `call(data, t)` for the tasks `t` of a thread.
#[derive(Clone, Copy)]
struct Job {
    data: *const (),
    call: unsafe fn(*const (), usize),
    tasks: usize,
    /// The threads taking part: thread `w` runs tasks `w, w + width, ...` if `w < width`.
    width: usize,
}

// SAFETY: `data` points to a `Sync` closure (`run`'s bound) that outlives the round: `run`
// returns only after every worker has finished with it (the `pending` count).
unsafe impl Send for Job {}

/// What the workers read under the lock.
struct State {
    job: Option<Job>,
    quit: bool,
    /// The first panic of a worker this round, to be raised again on the caller's thread.
    panic: Option<Box<dyn core::any::Any + Send>>,
}

struct Shared {
    state: Mutex<State>,
    /// Bumped (under the lock) when a round starts: the workers poll it before they sleep.
    round: AtomicU64,
    /// Workers still running this round.
    pending: AtomicUsize,
    wake: Condvar,
    done: Condvar,
    threads: usize,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic never happens while the lock is held (tasks run outside it), so a poisoned
        // lock holds a consistent state.
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// A fixed set of threads that run the tasks of [`Pool::run`], task `t` on thread
/// `t % threads`, the calling thread being thread 0.
pub struct Pool {
    shared: Arc<Shared>,
    workers: Vec<JoinHandle<()>>,
}

impl Pool {
    /// `threads` threads in all: the caller and `threads - 1` workers (`threads` of 0 is 1).
    ///
    /// # Panics
    /// If the operating system refuses to start a thread.
    pub fn new(threads: usize) -> Self {
        let threads = threads.max(1);
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                job: None,
                quit: false,
                panic: None,
            }),
            round: AtomicU64::new(0),
            pending: AtomicUsize::new(0),
            wake: Condvar::new(),
            done: Condvar::new(),
            threads,
        });
        let workers = (1..threads)
            .map(|w| {
                let shared = Arc::clone(&shared);
                std::thread::Builder::new()
                    .name(format!("paralens-{w}"))
                    .spawn(move || work(&shared, w))
                    .unwrap_or_else(|e| panic!("cannot start a worker thread: {e}"))
            })
            .collect();
        Self { shared, workers }
    }

    /// The number of threads, the caller's included.
    pub fn threads(&self) -> usize {
        self.shared.threads
    }

    /// Runs `f(t)` for every `t` in `0..tasks`, task `t` on thread `t % width` (`width` of
    /// the pool's threads take part, at least 1), and returns when all have. A panic in a task
    /// is raised again here, after every thread has stopped using `f`.
    pub fn run<F: Fn(usize) + Sync>(&self, width: usize, tasks: usize, f: &F) {
        let n = width.clamp(1, self.shared.threads);
        if n == 1 || tasks <= 1 {
            (0..tasks).for_each(f);
            return;
        }
        /// Calls the closure behind `data` (a `&F`).
        ///
        /// # Safety
        /// `data` is a `&F` that is live for the call.
        unsafe fn call<F: Fn(usize)>(data: *const (), t: usize) {
            // SAFETY: the caller passes the `&F` that `run` was given, live for the round.
            let f = unsafe { &*data.cast::<F>() };
            f(t);
        }
        let job = Job {
            data: core::ptr::from_ref(f).cast(),
            call: call::<F>,
            tasks,
            width: n,
        };
        {
            let mut state = self.shared.lock();
            state.job = Some(job);
            self.shared.pending.store(n - 1, Ordering::Release);
            self.shared.round.fetch_add(1, Ordering::Release);
            self.shared.wake.notify_all();
        }
        let mine = catch_unwind(AssertUnwindSafe(|| {
            (0..tasks).step_by(n).for_each(f);
        }));
        // The workers are done with `f` only when `pending` reaches 0: wait for that even
        // when a task of this thread panicked.
        spin(|| self.shared.pending.load(Ordering::Acquire) == 0);
        let mut state = self.shared.lock();
        while self.shared.pending.load(Ordering::Acquire) != 0 {
            state = self
                .shared
                .done
                .wait(state)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
        }
        state.job = None;
        let theirs = state.panic.take();
        drop(state);
        if let Err(p) = mine {
            resume_unwind(p);
        }
        if let Some(p) = theirs {
            resume_unwind(p);
        }
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.shared.lock().quit = true;
        self.shared.round.fetch_add(1, Ordering::Release);
        self.shared.wake.notify_all();
        for w in self.workers.drain(..) {
            // A worker catches its tasks' panics, so it ends normally.
            let _ = w.join();
        }
    }
}

/// Worker `w`'s loop: wait for a round, run tasks `w, w + threads, ...`, report.
fn work(shared: &Shared, w: usize) {
    let mut seen = 0;
    loop {
        spin(|| shared.round.load(Ordering::Acquire) != seen);
        let job = {
            let mut state = shared.lock();
            while shared.round.load(Ordering::Acquire) == seen && !state.quit {
                state = shared
                    .wake
                    .wait(state)
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
            }
            if state.quit {
                return;
            }
            seen = shared.round.load(Ordering::Acquire);
            state.job
        };
        let Some(job) = job.filter(|j| w < j.width) else {
            continue;
        };
        let ran = catch_unwind(AssertUnwindSafe(|| {
            let mut t = w;
            while t < job.tasks {
                // SAFETY: `job.data` is the `&F` of the `run` call that published this round,
                // which waits for this worker (`pending`) before it returns.
                unsafe { (job.call)(job.data, t) };
                t += job.width;
            }
        }));
        if let Err(p) = ran {
            shared.lock().panic.get_or_insert(p);
        }
        if shared.pending.fetch_sub(1, Ordering::AcqRel) == 1 {
            // Under the lock, so that the caller cannot miss it between its check and its wait.
            let _state = shared.lock();
            shared.done.notify_all();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Pool;
    use std::sync::Mutex;

    #[test]
    fn every_task_runs_once_on_its_thread() {
        for threads in 1..=4 {
            let pool = Pool::new(threads);
            let seen: Vec<Mutex<Vec<String>>> = (0..10).map(|_| Mutex::new(Vec::new())).collect();
            for _ in 0..50 {
                pool.run(threads, 10, &|t| {
                    let name = std::thread::current().name().unwrap_or("").to_string();
                    seen[t].lock().unwrap().push(name);
                });
            }
            for (t, names) in seen.iter().enumerate() {
                let names = names.lock().unwrap();
                assert_eq!(names.len(), 50, "task {t} at {threads} threads");
                let want = if t % threads == 0 {
                    std::thread::current().name().unwrap_or("").to_string()
                } else {
                    format!("paralens-{}", t % threads)
                };
                assert!(names.iter().all(|n| *n == want), "task {t}: {names:?}");
            }
        }
    }

    #[test]
    fn a_panic_in_a_worker_reaches_the_caller_after_the_round() {
        let pool = Pool::new(3);
        let done = Mutex::new(0);
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            pool.run(3, 6, &|t| {
                if t == 4 {
                    panic!("task four");
                }
                *done.lock().unwrap() += 1;
            });
        }));
        let msg = caught.unwrap_err();
        assert_eq!(msg.downcast_ref::<&str>(), Some(&"task four"));
        assert_eq!(*done.lock().unwrap(), 5);
        // The pool keeps working after a panic.
        let count = Mutex::new(0);
        pool.run(3, 6, &|_| *count.lock().unwrap() += 1);
        assert_eq!(*count.lock().unwrap(), 6);
    }

    #[test]
    fn a_narrower_round_uses_the_first_threads_only() {
        let pool = Pool::new(4);
        for width in 1..=4 {
            let seen: Vec<Mutex<String>> = (0..9).map(|_| Mutex::new(String::new())).collect();
            pool.run(width, 9, &|t| {
                *seen[t].lock().unwrap() = std::thread::current().name().unwrap_or("").into();
            });
            for (t, name) in seen.iter().enumerate() {
                let name = name.lock().unwrap();
                let want = if t % width == 0 {
                    std::thread::current().name().unwrap_or("").to_string()
                } else {
                    format!("paralens-{}", t % width)
                };
                assert_eq!(*name, want, "task {t} at width {width}");
            }
        }
    }
}
