//! The coroutine an `async def` handler's task runs, and the task itself.
//!
//! [`HandlerRun`] builds the handler's arguments when its task first steps, passes the
//! handler's awaits through to the task, and sends the answer from the step in which the
//! handler returns or raises, while the request's objects are fresh. It is what an
//! `async def` wrapper around `await call.start()` and `call.finish(result)` was, without
//! that wrapper's frame and its two calls back into this module.
//!
//! The task is an `asyncio.Task` named after the route (`GET /items/{item_id}`), made by
//! calling `asyncio.Task` itself unless the loop has a task factory. Python 3.11 names an
//! unnamed task `Task-<n>` by formatting a string in its constructor, and `loop.create_task`
//! (uvloop's included) sets a given name only after that.
//!
//! What an async request costs above a `def` one, in instructions per request (callgrind,
//! path-simple, 3,000 requests at 50 connections, the Python thread and the runtime's):
//! 16,350 with the Python wrapper and `loop.create_task`; 15,000 with this coroutine; 12,350
//! with the task also named at once. What is left is mostly asyncio's own: the task's
//! constructor (4,400, of which its entry in the `WeakSet` of all tasks and its first
//! `call_soon`), its step (900) and its deallocation (2,000, most of it leaving that
//! `WeakSet`), and the handler's own coroutine (1,000).
//!
//! An `async def` whose code cannot wait gets no task of its own (`crate::inline_run`).
//!
//! The task sees an ordinary coroutine (`collections.abc.Coroutine`: `send`, `throw`, `close`,
//! `__await__`), so `asyncio.current_task()`, cancellation and `asyncio.timeout()` behave in a
//! handler as in any task; `cr_frame` is the handler's own, so `task.print_stack()` shows it.

use crate::dispatch::PendingCall;
use ferrule_core::host::lock;
use pyo3::exceptions::{PyException, PyRuntimeError, PyStopIteration, PyTypeError, PyValueError};
use pyo3::ffi::PySendResult;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyString};
use pyo3::{PyTraverseError, PyVisit};
use std::sync::Mutex;

/// One request to an `async def` handler, as the coroutine of its task.
#[pyclass(module = "ferrule._ferrule", frozen)]
pub struct HandlerRun {
    call: PendingCall,
    state: Mutex<State>,
}

enum State {
    /// The task has not stepped yet: no argument is built.
    Ready,
    /// The handler's coroutine (or its awaitable's iterator), between two steps.
    Waiting(Py<PyAny>),
    /// A step is running: the handler's code is on the stack.
    Stepping(Py<PyAny>),
    Done,
}

/// How the task resumes the handler.
enum Resume<'a, 'py> {
    Send(&'a Bound<'py, PyAny>),
    Throw(&'a Bound<'py, PyAny>, Option<&'a Bound<'py, PyAny>>, Option<&'a Bound<'py, PyAny>>),
}

/// What one step of the handler's coroutine came to.
pub(crate) enum Stepped<'py> {
    Yielded(Bound<'py, PyAny>),
    Returned(Bound<'py, PyAny>),
}

impl HandlerRun {
    pub fn new(call: PendingCall) -> Self {
        HandlerRun { call, state: Mutex::new(State::Ready) }
    }

    pub fn call(&self) -> &PendingCall {
        &self.call
    }

    /// Runs one step; `None` when the handler is over (its answer sent, unless cancelled).
    fn step(&self, py: Python<'_>, resume: Resume<'_, '_>) -> PyResult<Option<Py<PyAny>>> {
        let coroutine = {
            let mut state = lock(&self.state);
            match std::mem::replace(&mut *state, State::Done) {
                State::Waiting(coroutine) => {
                    *state = State::Stepping(coroutine.clone_ref(py));
                    Some(coroutine)
                }
                State::Ready => None,
                running @ State::Stepping(_) => {
                    *state = running;
                    return Err(PyValueError::new_err("coroutine already executing"));
                }
                State::Done => return Err(PyRuntimeError::new_err("cannot reuse already awaited coroutine")),
            }
        };
        let coroutine = match coroutine {
            Some(coroutine) => coroutine.into_bound(py),
            None => match resume {
                Resume::Send(value) if value.is_none() => match self.call.start(py).and_then(|awaitable| awaited(&awaitable)) {
                    Ok(coroutine) => {
                        *lock(&self.state) = State::Stepping(coroutine.clone().unbind());
                        coroutine
                    }
                    Err(error) => return self.ended(py, Err(error)),
                },
                Resume::Send(_) => {
                    // Refused as CPython refuses it: the handler has still not started.
                    *lock(&self.state) = State::Ready;
                    return Err(PyTypeError::new_err("can't send non-None value to a just-started coroutine"));
                }
                // Thrown in before the handler started: it never runs, and nobody is answered
                // (only a cancellation or the loop's end does this).
                Resume::Throw(kind, value, _) => return Err(exception(kind, value)),
            },
        };
        let stepped = match resume {
            Resume::Send(value) => send(&coroutine, value),
            Resume::Throw(kind, value, traceback) => throw(&coroutine, kind, value, traceback),
        };
        match stepped {
            Ok(Stepped::Yielded(awaited)) => {
                *lock(&self.state) = State::Waiting(coroutine.unbind());
                Ok(Some(awaited.unbind()))
            }
            Ok(Stepped::Returned(result)) => self.ended(py, Ok(result)),
            Err(error) => self.ended(py, Err(error)),
        }
    }

    /// The handler is over: its result or exception is answered. A cancellation is not (the
    /// client has its 504, or the loop is closing) and goes on up to the task; so does an
    /// interpreter exit (`SystemExit`, `KeyboardInterrupt`), after its 500.
    fn ended(&self, py: Python<'_>, outcome: PyResult<Bound<'_, PyAny>>) -> PyResult<Option<Py<PyAny>>> {
        *lock(&self.state) = State::Done;
        match Ended::of(py, outcome) {
            Ended::Answer(outcome) => {
                self.call.answer(py, outcome);
                Ok(None)
            }
            Ended::Cancelled(error) => Err(error),
            Ended::Fatal(error) => {
                self.call.answer(py, Err(error.clone_ref(py)));
                // Now: the loop stops with this error before a flush queued for its turn.
                self.call.flush_now();
                Err(error)
            }
        }
    }
}

/// How an `async def` handler ended, as its task ([`HandlerRun::ended`]) and a handler run at
/// once (`crate::inline_run`) both tell it apart, so that the two fail alike.
pub enum Ended<'py> {
    /// Its result, or an `Exception` it raised: answered as such.
    Answer(PyResult<Bound<'py, PyAny>>),
    /// A `CancelledError`: nobody answers (the core answers the dropped reply as a failed
    /// handler); a task ends cancelled with it.
    Cancelled(PyErr),
    /// `SystemExit`, `KeyboardInterrupt`: answered as a failure, then raised out of the loop's
    /// callback, which stops the loop, as out of a task's step.
    Fatal(PyErr),
}

impl<'py> Ended<'py> {
    pub fn of(py: Python<'py>, outcome: PyResult<Bound<'py, PyAny>>) -> Self {
        match outcome {
            Ok(result) => Ended::Answer(Ok(result)),
            Err(error) if error.is_instance_of::<PyException>(py) => Ended::Answer(Err(error)),
            Err(error) if cancelled_error(py).is_ok_and(|cancelled| error.is_instance(py, cancelled.as_any())) => Ended::Cancelled(error),
            Err(error) => Ended::Fatal(error),
        }
    }
}

#[pymethods]
impl HandlerRun {
    fn send(&self, py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.step(py, Resume::Send(value))?.ok_or_else(|| PyStopIteration::new_err(()))
    }

    #[pyo3(signature = (kind, value=None, traceback=None))]
    fn throw(&self, py: Python<'_>, kind: &Bound<'_, PyAny>, value: Option<&Bound<'_, PyAny>>, traceback: Option<&Bound<'_, PyAny>>) -> PyResult<Py<PyAny>> {
        self.step(py, Resume::Throw(kind, value, traceback))?.ok_or_else(|| PyStopIteration::new_err(()))
    }

    /// Closes the handler's coroutine where it waits. Nothing is answered: the request's
    /// reply is dropped with the call, which the core answers as a failed handler.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        let coroutine = match std::mem::replace(&mut *lock(&self.state), State::Done) {
            State::Waiting(coroutine) => coroutine,
            State::Stepping(coroutine) => {
                *lock(&self.state) = State::Stepping(coroutine);
                return Err(PyValueError::new_err("coroutine already executing"));
            }
            State::Ready | State::Done => return Ok(()),
        };
        let coroutine = coroutine.bind(py);
        if coroutine.hasattr(pyo3::intern!(py, "close"))? {
            coroutine.call_method0(pyo3::intern!(py, "close"))?;
        }
        Ok(())
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        self.step(py, Resume::Send(&py.None().into_bound(py)))
    }

    fn __await__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __iter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    /// The handler's frame while it waits or runs (`task.get_stack()` reads it).
    #[getter]
    fn cr_frame(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let coroutine = match &*lock(&self.state) {
            State::Waiting(coroutine) | State::Stepping(coroutine) => coroutine.clone_ref(py),
            State::Ready | State::Done => return Ok(py.None()),
        };
        match coroutine.bind(py).getattr(pyo3::intern!(py, "cr_frame")) {
            Ok(frame) => Ok(frame.unbind()),
            Err(_) => Ok(py.None()),
        }
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        // Never blocks: the state is only locked for moments under the GIL, which the
        // collector holds.
        if let Ok(state) = self.state.try_lock() {
            if let State::Waiting(coroutine) | State::Stepping(coroutine) = &*state {
                visit.call(coroutine)?;
            }
        }
        Ok(())
    }

    fn __clear__(&self) {
        if let Ok(mut state) = self.state.try_lock() {
            if let State::Waiting(_) = &*state {
                *state = State::Done;
            }
        }
    }
}

/// The coroutine to step for `awaitable`, as `await` finds it: a coroutine itself, else what
/// its `__await__` returns.
fn awaited<'py>(awaitable: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let py = awaitable.py();
    static COROUTINE: PyOnceLock<Py<pyo3::types::PyType>> = PyOnceLock::new();
    let coroutine_type = COROUTINE.import(py, "types", "CoroutineType")?;
    if awaitable.get_type().is(coroutine_type) {
        return Ok(awaitable.clone());
    }
    match awaitable.getattr(pyo3::intern!(py, "__await__")) {
        Ok(await_method) => await_method.call0(),
        Err(_) => Err(PyTypeError::new_err(format!("a handler declared async returned {}, which can't be awaited", awaitable.get_type().name()?))),
    }
}

/// `coroutine.send(value)`, told apart as a yield or a return without raising StopIteration.
pub(crate) fn send<'py>(coroutine: &Bound<'py, PyAny>, value: &Bound<'py, PyAny>) -> PyResult<Stepped<'py>> {
    let py = coroutine.py();
    let mut result = std::ptr::null_mut();
    // SAFETY: both objects are alive for the call; on NEXT and RETURN `result` is a new
    // reference, which `from_owned_ptr` takes over; on ERROR an exception is set.
    let status = unsafe { pyo3::ffi::PyIter_Send(coroutine.as_ptr(), value.as_ptr(), &mut result) };
    match status {
        PySendResult::PYGEN_NEXT => Ok(Stepped::Yielded(unsafe { Bound::from_owned_ptr(py, result) })),
        PySendResult::PYGEN_RETURN => Ok(Stepped::Returned(unsafe { Bound::from_owned_ptr(py, result) })),
        PySendResult::PYGEN_ERROR => Err(PyErr::fetch(py)),
    }
}

/// `coroutine.throw(...)`, with the same arguments the task gave.
fn throw<'py>(coroutine: &Bound<'py, PyAny>, kind: &Bound<'py, PyAny>, value: Option<&Bound<'py, PyAny>>, traceback: Option<&Bound<'py, PyAny>>) -> PyResult<Stepped<'py>> {
    let py = coroutine.py();
    let Ok(throw) = coroutine.getattr(pyo3::intern!(py, "throw")) else {
        // An iterator without `throw`: the exception is raised where it is awaited.
        return Err(exception(kind, value));
    };
    let thrown = match (value, traceback) {
        (None, None) => throw.call1((kind,)),
        (value, None) => throw.call1((kind, value)),
        (value, traceback) => throw.call1((kind, value, traceback)),
    };
    match thrown {
        Ok(yielded) => Ok(Stepped::Yielded(yielded)),
        Err(error) if error.is_instance_of::<PyStopIteration>(py) => Ok(Stepped::Returned(error.value(py).getattr(pyo3::intern!(py, "value"))?)),
        Err(error) => Err(error),
    }
}

/// The exception `throw(kind, value)` raises: `kind` itself when it is one, else `kind(value)`.
pub(crate) fn exception(kind: &Bound<'_, PyAny>, value: Option<&Bound<'_, PyAny>>) -> PyErr {
    if kind.is_instance_of::<pyo3::exceptions::PyBaseException>() {
        return PyErr::from_value(kind.clone());
    }
    let made = match value {
        Some(value) if value.is_instance_of::<pyo3::exceptions::PyBaseException>() => Ok(value.clone()),
        Some(value) if !value.is_none() => kind.call1((value,)),
        _ => kind.call0(),
    };
    match made {
        Ok(exception) if exception.is_instance_of::<pyo3::exceptions::PyBaseException>() => PyErr::from_value(exception),
        Ok(_) => PyTypeError::new_err("exceptions must derive from BaseException"),
        Err(error) => error,
    }
}

pub(crate) fn cancelled_error(py: Python<'_>) -> PyResult<&Bound<'_, pyo3::types::PyType>> {
    static CANCELLED: PyOnceLock<Py<pyo3::types::PyType>> = PyOnceLock::new();
    CANCELLED.import(py, "asyncio", "CancelledError")
}

/// Starts the tasks of one loop: `asyncio.Task` itself, named at once (see the module's notes),
/// unless the loop has a task factory, which makes its tasks.
///
/// The keywords `Task` is called with (`loop` and `name`) live in one dict made with the
/// starter, and only `name` changes from task to task: `Task`'s constructor reads its keywords
/// and keeps no reference to the dict (a task factory gets a dict of its own, as it may keep
/// one). Making the dict for each task cost an `async def` request 1.4% of its instructions
/// (callgrind, path-simple, 3,000 requests at 50 connections, two runs each: 43,354 → 42,751 a
/// request; starting the task itself 5,968 → 5,491).
pub struct TaskStarter {
    event_loop: Py<PyAny>,
    keywords: Py<PyDict>,
}

impl TaskStarter {
    pub fn new(event_loop: &Bound<'_, PyAny>) -> PyResult<Self> {
        let py = event_loop.py();
        let keywords = PyDict::new(py);
        keywords.set_item(pyo3::intern!(py, "loop"), event_loop)?;
        Ok(TaskStarter { event_loop: event_loop.clone().unbind(), keywords: keywords.unbind() })
    }

    /// The loop its tasks run on.
    pub fn event_loop<'py>(&self, py: Python<'py>) -> &Bound<'py, PyAny> {
        self.event_loop.bind(py)
    }

    /// Starts `coroutine` as a task named `name`.
    pub fn start<'py>(&self, coroutine: Bound<'py, PyAny>, name: &Bound<'py, PyString>) -> PyResult<Bound<'py, PyAny>> {
        let py = coroutine.py();
        let event_loop = self.event_loop.bind(py);
        if !event_loop.call_method0(pyo3::intern!(py, "get_task_factory"))?.is_none() {
            let kwargs = PyDict::new(py);
            kwargs.set_item(pyo3::intern!(py, "name"), name)?;
            return event_loop.call_method(pyo3::intern!(py, "create_task"), (coroutine,), Some(&kwargs));
        }
        static TASK: PyOnceLock<Py<pyo3::types::PyType>> = PyOnceLock::new();
        let keywords = self.keywords.bind(py);
        keywords.set_item(pyo3::intern!(py, "name"), name)?;
        TASK.import(py, "asyncio", "Task")?.call((coroutine,), Some(keywords))
    }
}
