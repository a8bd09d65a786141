//! An `async def` handler that cannot wait runs to its end at once, as a `def` handler does,
//! inside a task that stands in for its route ([`StandIn`]).
//!
//! A coroutine suspends only where its own code yields: `await`, `async for` and `async with`
//! each compile to a yield, so a handler whose code has none (`ferrule.app`'s `_cannot_wait`
//! reads its bytecode once, at registration) returns or raises in its first step. Making an
//! `asyncio.Task` for that one step is most of what such a request costs above `def` (see
//! `handler_task.rs`: on Python 3.11 the task's entry in asyncio's `WeakSet` of all tasks, its
//! first `call_soon`, its step on the next turn of the loop and its deallocation, about 7,700
//! instructions of the 8,400 the async ÷ sync budget allows on path-simple).
//!
//! What such a handler sees of asyncio stays true: `asyncio.current_task()` is a running
//! `asyncio.Task` named after the route (made by the loop's task factory if it has one), entered
//! as the loop's current task for the handler's step, so `asyncio.create_task`, sniffio and
//! anything that asks for the current task work as in a task of its own; the handler runs in a
//! context of its own (`crate::request_context`), and fails as a task's handler fails (`crate::handler_task::Ended`).
//! What differs: that task is the route's stand-in, shared by up to 1,024 of its requests on
//! this loop (then a new one takes over), waiting on a future until it is cancelled. So what is
//! kept per task (a done callback, a `WeakKeyDictionary` entry) is kept for those requests, and
//! a callback runs when the stand-in is cancelled: when it has served its share, when a handler
//! cancels it (the next request gets a new one), or when the server's drain is over (after
//! `shutdown()` or a signal, before the shutdown steps, which so never wait for it). Such a handler cannot be cancelled at its
//! deadline, as a `def` handler cannot: it has no point where a cancellation could be thrown in.

use crate::handler_task::{self, Stepped, TaskStarter};
use crate::route::PyRoute;
use ferrule_core::host::{lock, HostRoute};
use pyo3::exceptions::{PyRuntimeError, PyStopIteration, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

type Route = Arc<HostRoute<PyRoute>>;

/// How many requests one stand-in serves before a new one takes over. What handlers attach to
/// their current task (done callbacks, keys of a `WeakKeyDictionary`) stays with it until it
/// ends; retired, it ends, and that much is let go.
const REQUESTS_PER_STAND_IN: u32 = 1024;

/// Each route's stand-in task on one loop, made on first use, with its coroutine.
#[derive(Default)]
pub struct StandIns {
    by_route: Mutex<HashMap<usize, StandInTask, BuildHasherDefault<AddressHasher>>>,
}

struct StandInTask {
    task: Py<PyAny>,
    coroutine: Py<StandIn>,
    served: u32,
}

/// The loop's current task while a handler runs; left when dropped.
pub struct Entered<'py> {
    event_loop: Bound<'py, PyAny>,
    task: Bound<'py, PyAny>,
    coroutine: Bound<'py, StandIn>,
}

impl StandIns {
    /// Enters `route`'s stand-in as the loop's current task. `None` when it cannot be: the
    /// loop is running a task's step right now (the handler then gets a task of its own), or
    /// the task could not be made.
    pub fn enter<'py>(&self, py: Python<'py>, tasks: &TaskStarter, route: &Route) -> Option<Entered<'py>> {
        let event_loop = tasks.event_loop(py).clone();
        let (task, coroutine) = self.task(py, tasks, route).map_err(|error| error.write_unraisable(py, None)).ok()?;
        let enter = ENTER_TASK.import(py, "asyncio.tasks", "_enter_task").ok()?;
        // Refused when another task is current: nothing was entered, and the handler runs as a
        // task of its own instead.
        enter.call1((&event_loop, &task)).ok()?;
        coroutine.get().executing.store(true, Ordering::Relaxed);
        Some(Entered { event_loop, task, coroutine })
    }

    /// `route`'s stand-in: a new one when there is none yet, its last one has ended (a handler
    /// cancelled it) or has served its share of requests.
    fn task<'py>(&self, py: Python<'py>, tasks: &TaskStarter, route: &Route) -> PyResult<(Bound<'py, PyAny>, Bound<'py, StandIn>)> {
        let key = Arc::as_ptr(route) as usize;
        let retiring = {
            let mut by_route = lock(&self.by_route);
            match by_route.get_mut(&key) {
                Some(held) if !held.coroutine.get().ended.load(Ordering::Relaxed) && held.served < REQUESTS_PER_STAND_IN => {
                    held.served += 1;
                    return Ok((held.task.bind(py).clone(), held.coroutine.bind(py).clone()));
                }
                _ => by_route.remove(&key),
            }
        };
        if let Some(retiring) = retiring {
            retire(py, &retiring.task);
        }
        let coroutine = Bound::new(py, StandIn { waits_on: Mutex::new(None), executing: AtomicBool::new(false), ended: AtomicBool::new(false) })?;
        let task = tasks.start(coroutine.clone().into_any(), &route.data.task_name(py, &route.label))?;
        lock(&self.by_route).insert(key, StandInTask { task: task.clone().unbind(), coroutine: coroutine.clone().unbind(), served: 1 });
        Ok((task, coroutine))
    }

    /// Cancels every stand-in, once no request will come (the server's drain is over, a test
    /// client is closing): they end in the loop's next turn, so that they are not among the
    /// tasks a shutdown step waits for.
    pub fn retire_all(&self, py: Python<'_>) {
        let retiring: Vec<_> = lock(&self.by_route).drain().map(|(_, held)| held).collect();
        for held in retiring {
            retire(py, &held.task);
        }
    }
}

/// Cancels a stand-in task (nothing happens to one that has ended).
fn retire(py: Python<'_>, task: &Py<PyAny>) {
    if let Err(error) = task.bind(py).call_method0(pyo3::intern!(py, "cancel")) {
        error.write_unraisable(py, Some(task.bind(py)));
    }
}

/// Hashes a route's address, unique while the route lives: no need for SipHash's defences.
#[derive(Default)]
struct AddressHasher(u64);

impl Hasher for AddressHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for byte in bytes {
            self.0 = (self.0 << 8 | u64::from(*byte)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_usize(&mut self, address: usize) {
        // Allocations are aligned: the low bits carry nothing.
        self.0 = ((address >> 4) as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

impl Drop for Entered<'_> {
    fn drop(&mut self) {
        self.coroutine.get().executing.store(false, Ordering::Relaxed);
        let py = self.task.py();
        let left = LEAVE_TASK.import(py, "asyncio.tasks", "_leave_task").and_then(|leave| leave.call1((&self.event_loop, &self.task)));
        if let Err(error) = left {
            error.write_unraisable(py, Some(&self.task));
        }
    }
}

/// Calls the handler and runs its coroutine's one step: its result, or what it raised.
pub fn run_to_end<'py>(py: Python<'py>, route: &Route, request: ferrule_core::RequestData) -> PyResult<Bound<'py, PyAny>> {
    let coroutine = route.data.call(py, request, None)?;
    match handler_task::send(&coroutine, &py.None().into_bound(py))? {
        Stepped::Returned(result) => Ok(result),
        Stepped::Yielded(_) => {
            // Its code has no yield: only a handler whose code was swapped after registration
            // gets here.
            coroutine.call_method0(pyo3::intern!(py, "close"))?;
            Err(PyRuntimeError::new_err(format!("{}: the handler waited, though its code had no await when it was registered", route.label)))
        }
    }
}

/// The coroutine of a stand-in task: it waits on a future of its loop until the task is
/// cancelled (by the loop's end, or by a handler). While a handler runs as its task, it is
/// that task's coroutine executing, and refuses to be stepped as a running coroutine does.
#[pyclass(module = "ferrule._ferrule", frozen)]
pub struct StandIn {
    waits_on: Mutex<Option<Py<PyAny>>>,
    executing: AtomicBool,
    /// Set once its task has ended (cancelled): the route needs a new stand-in.
    ended: AtomicBool,
}

impl StandIn {
    fn not_executing(&self) -> PyResult<()> {
        match self.executing.load(Ordering::Relaxed) {
            true => Err(PyValueError::new_err("coroutine already executing")),
            false => Ok(()),
        }
    }
}

#[pymethods]
impl StandIn {
    /// The first step yields a future of the running loop for the task to wait on; a step after
    /// it ends the coroutine.
    fn send(&self, py: Python<'_>, _value: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.not_executing()?;
        let mut waits_on = lock(&self.waits_on);
        if waits_on.is_some() {
            self.ended.store(true, Ordering::Relaxed);
            return Err(PyStopIteration::new_err(()));
        }
        let future = GET_RUNNING_LOOP.import(py, "asyncio", "get_running_loop")?.call0()?.call_method0(pyo3::intern!(py, "create_future"))?;
        // What `await future` sets before yielding it: the task waits for it to be done.
        future.setattr(pyo3::intern!(py, "_asyncio_future_blocking"), true)?;
        *waits_on = Some(future.clone().unbind());
        Ok(future.unbind())
    }

    /// A cancellation (what a task throws in) ends the coroutine with it.
    #[pyo3(signature = (kind, value=None, _traceback=None))]
    fn throw(&self, kind: &Bound<'_, PyAny>, value: Option<&Bound<'_, PyAny>>, _traceback: Option<&Bound<'_, PyAny>>) -> PyResult<Py<PyAny>> {
        self.not_executing()?;
        self.ended.store(true, Ordering::Relaxed);
        Err(handler_task::exception(kind, value))
    }

    fn close(&self) -> PyResult<()> {
        self.not_executing()?;
        self.ended.store(true, Ordering::Relaxed);
        Ok(())
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self.send(py, &py.None().into_bound(py))
    }

    fn __await__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __iter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[getter]
    fn cr_frame(&self, py: Python<'_>) -> Py<PyAny> {
        py.None()
    }
}

static ENTER_TASK: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static LEAVE_TASK: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
static GET_RUNNING_LOOP: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
